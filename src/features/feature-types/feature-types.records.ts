/** The flagTypes collection: the five kinds of flag, with the lifetime after which a flag of the kind is potentially stale. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, defineCollection } from '../../storage/records'

export const FlagTypeRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  /** Days after creation; null: never potentially stale. */
  lifetimeDays: Nullable(Type.Integer()),
})
export type FlagTypeRecord = Static<typeof FlagTypeRecordSchema>

const kind = (id: string, name: string, description: string, lifetimeDays: number | null): FlagTypeRecord => ({
  id,
  name,
  description,
  lifetimeDays,
})

/** Unleash's five types and default lifetimes; they cannot be added or removed, only their lifetimes changed. */
export const BUILT_IN_FLAG_TYPES: readonly FlagTypeRecord[] = [
  kind('release', 'Release', 'Release feature flags are used to release new features.', 40),
  kind(
    'experiment',
    'Experiment',
    'Experiment feature flags are used to test and verify multiple different versions of a feature.',
    40,
  ),
  kind('operational', 'Operational', 'Operational feature flags are used to control aspects of a rollout.', 7),
  kind(
    'kill-switch',
    'Kill switch',
    'Kill switch feature flags are used to quickly turn on or off critical functionality in your system.',
    null,
  ),
  kind('permission', 'Permission', 'Permission feature flags are used to control permissions in your system.', null),
]

/** Added with flag types: data directories made before then get Unleash's defaults, as new ones do. */
export const flagTypesCollection = defineCollection('flagTypes', FlagTypeRecordSchema, {
  addedLater: true,
  seed: () => Object.fromEntries(BUILT_IN_FLAG_TYPES.map(type => [type.id, { ...type }])),
})

declare module '../../storage/records' {
  interface CollectionRecords {
    flagTypes: FlagTypeRecord
  }
}
