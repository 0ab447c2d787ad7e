/** Request and response schemas of context fields, with Unleash's schema names. */
import { t } from 'elysia'
import { LIMITS } from '../limits'
import { Integer, Timestamp } from '../../http/schemas'

export const LegalValue = t.Object(
  {
    value: t.String({
      description: 'The value, 1 to 100 characters',
      minLength: 1,
      maxLength: 100,
      examples: ['eu-west'],
    }),
    description: t.Optional(t.String({ description: 'What the value means, up to 100 characters', maxLength: 100 })),
  },
  {
    description: 'A value a constraint on the field may use',
    examples: [{ value: 'eu-west', description: 'Ireland' }],
  },
)

/** The optional properties of a context field, as the routes and the import take them. */
export const ContextFieldFields = {
  description: t.Optional(
    t.Union([t.String({ maxLength: 250 }), t.Null()], { description: 'What the field holds, up to 250 characters' }),
  ),
  legalValues: t.Optional(
    t.Union([t.Array(LegalValue, { maxItems: LIMITS.legalValuesPerContextField.max }), t.Null()], {
      description: 'The values constraints on the field may use, each value once; empty or null: any value',
    }),
  ),
  stickiness: t.Optional(t.Boolean({ description: 'Whether the field may be used as stickiness (default false)' })),
  sortOrder: t.Optional(
    Integer({ description: 'Position in lists of fields (default 0)', minimum: -2147483648, maximum: 2147483647 }),
  ),
}

export const ContextField = t.Object(
  {
    name: t.String({ description: "Field name, as a constraint's contextName" }),
    description: t.String({ description: 'What the field holds' }),
    stickiness: t.Boolean({ description: 'Whether the field may be used as stickiness' }),
    sortOrder: Integer({ description: 'Position in lists of fields' }),
    createdAt: Timestamp('When the field was created'),
    legalValues: t.Array(
      t.Object(
        {
          value: t.String({ description: 'Value' }),
          description: t.Optional(t.String({ description: 'What it means' })),
        },
        { description: 'A legal value' },
      ),
      {
        description: 'The values constraints on the field may use; empty: any',
      },
    ),
    usedInFeatures: t.Optional(
      Integer({ description: 'Live flags with a strategy constraint on the field (list only, when not 0)' }),
    ),
    usedInProjects: t.Optional(Integer({ description: 'Projects of those flags (list only, when not 0)' })),
  },
  { description: 'A field of the Unleash context' },
)

export const CreateContextField = t.Object(
  {
    name: t.String({ description: 'Field name: 1 to 100 URL-safe characters', maxLength: 1000, examples: ['region'] }),
    ...ContextFieldFields,
  },
  {
    description: 'A context field to create',
    examples: [
      {
        name: 'region',
        description: 'Where the user is',
        legalValues: [{ value: 'eu-west', description: 'Ireland' }, { value: 'us-east' }],
        stickiness: false,
        sortOrder: 10,
      },
    ],
  },
)

export const UpdateContextField = t.Object(
  {
    name: t.Optional(t.String({ description: 'If given, the name in the path', maxLength: 1000 })),
    ...ContextFieldFields,
  },
  {
    description: 'New values for the given properties; missing ones are left alone',
    examples: [
      { description: 'Where the user is', legalValues: [{ value: 'eu-west' }, { value: 'us-east' }], stickiness: true },
    ],
  },
)

export const ContextFieldName = t.Object(
  { name: t.String({ description: 'The name to check', maxLength: 1000, examples: ['region'] }) },
  { description: 'A context field name to check', examples: [{ name: 'region' }] },
)

export const ContextFieldStrategies = t.Object(
  {
    strategies: t.Array(
      t.Object(
        {
          id: t.String({ description: 'Strategy id', examples: ['433ae8d9-dd69-4ad0-bc46-414aedbe9c55'] }),
          projectId: t.String({ description: 'Project of the flag' }),
          featureName: t.String({ description: 'The flag that holds the strategy' }),
          strategyName: t.String({ description: 'Strategy type' }),
          environment: t.String({ description: 'Environment the strategy is in' }),
        },
        { description: 'A strategy with a constraint on the field' },
      ),
      { description: 'By flag, environment and strategy order' },
    ),
  },
  { description: 'The strategies that constrain on a context field' },
)

/** The named schemas of the context routes, as routes refer to them and OpenAPI lists them. */
export const contextModels = {
  contextFieldSchema: ContextField,
  contextFieldsSchema: t.Array(ContextField, { description: 'Every context field, by name' }),
  createContextFieldSchema: CreateContextField,
  updateContextFieldSchema: UpdateContextField,
  legalValueSchema: LegalValue,
  nameSchema: ContextFieldName,
  contextFieldStrategiesSchema: ContextFieldStrategies,
}
