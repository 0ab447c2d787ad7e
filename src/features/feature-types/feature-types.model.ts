/** Request and response schemas of flag types, with Unleash's schema names. */
import { t } from 'elysia'
import { Integer } from '../../http/schemas'

export const FlagType = t.Object(
  {
    id: t.String({
      description: "The type, as a flag's type: release, experiment, operational, kill-switch or permission",
    }),
    name: t.String({ description: 'Name shown to people' }),
    description: t.String({ description: 'What flags of this type are for' }),
    lifetimeDays: t.Union([Integer(), t.Null()], {
      description: 'Days after its creation a flag of this type is potentially stale; null: never',
    }),
  },
  { description: 'A kind of flag and its expected lifetime' },
)

export const FlagTypeList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    types: t.Array(FlagType, { description: 'The five flag types' }),
  },
  { description: 'Every flag type' },
)

export const UpdateLifetime = t.Object(
  {
    lifetimeDays: t.Union([Integer({ minimum: 0, maximum: 2147483647 }), t.Null()], {
      description: 'The new lifetime in days; 0 or null: flags of the type are never potentially stale',
      examples: [7],
    }),
  },
  { description: "A flag type's new expected lifetime", examples: [{ lifetimeDays: 7 }] },
)

/** The named schemas of the flag-type routes, as routes refer to them and OpenAPI lists them. */
export const flagTypeModels = {
  featureTypeSchema: FlagType,
  featureTypesSchema: FlagTypeList,
  updateFeatureTypeLifetimeSchema: UpdateLifetime,
}
