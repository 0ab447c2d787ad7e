/** Request and response schemas of strategy definitions, with Unleash's schema names. */
import { t } from 'elysia'
import { Integer } from '../../http/schemas'
import type { TLiteral } from '@sinclair/typebox'
import { PARAMETER_TYPES } from './strategy-types.records'

const ParameterType = t.Union(
  PARAMETER_TYPES.map(type => t.Literal(type)) as TLiteral<(typeof PARAMETER_TYPES)[number]>[],
  {
    description: `How the UI asks for the value: ${PARAMETER_TYPES.join(', ')}; SDKs always receive strings`,
  },
)

export const StrategyParameter = t.Object(
  {
    name: t.String({
      description: 'Parameter name, unique within the type',
      minLength: 1,
      maxLength: 100,
      examples: ['regions'],
    }),
    type: ParameterType,
    description: t.Optional(t.String({ description: 'What the parameter is for', maxLength: 1000 })),
    required: t.Optional(t.Boolean({ description: 'Whether a strategy of this type must give it (default false)' })),
  },
  { description: 'A parameter that strategies of the type carry' },
)

const ParameterOut = t.Object(
  {
    name: t.String({ description: 'Parameter name' }),
    type: t.String({ description: PARAMETER_TYPES.join(', ') }),
    description: t.String({ description: 'What the parameter is for' }),
    required: t.Boolean({ description: 'Whether a strategy of this type must give it' }),
  },
  { description: 'A parameter of a strategy type' },
)

const Parameters = t.Array(StrategyParameter, { maxItems: 50, description: 'The parameters, at most 50, names unique' })

export const StrategyType = t.Object(
  {
    name: t.String({ description: "Strategy type name, used as a strategy's name on flags" }),
    displayName: t.Union([t.String(), t.Null()], {
      description: 'Name shown to people (the title, for a user-defined type)',
    }),
    title: t.Union([t.String(), t.Null()], { description: 'Title given when defined; null for built-ins' }),
    description: t.String({ description: 'What the strategy does' }),
    editable: t.Boolean({ description: 'False for the built-in types, which cannot be changed or deprecated' }),
    deprecated: t.Boolean({
      description: 'A deprecated type cannot be added to flags; strategies already using it stay and are served',
    }),
    parameters: t.Array(ParameterOut, { description: 'The parameters strategies of the type carry' }),
  },
  { description: 'A strategy type (an activation strategy definition)' },
)

export const StrategyTypeList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    strategies: t.Array(StrategyType, { description: 'Built-in types first, then user-defined ones by name' }),
  },
  { description: 'Every strategy type' },
)

export const CreateStrategyType = t.Object(
  {
    name: t.String({
      description: 'Type name: 1 to 100 URL-safe characters, not a built-in one',
      maxLength: 1000,
      examples: ['region'],
    }),
    title: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: 'Name shown to people' })),
    description: t.Optional(
      t.String({ description: 'What the strategy does', maxLength: 1000, examples: ['On in the listed regions'] }),
    ),
    parameters: Parameters,
  },
  {
    description: 'A strategy type to define',
    examples: [
      {
        name: 'region',
        description: 'On in the listed regions',
        parameters: [{ name: 'regions', type: 'list', description: 'Region codes', required: true }],
      },
    ],
  },
)

export const UpdateStrategyType = t.Object(
  {
    name: t.Optional(t.String({ description: 'If given, the name in the path', maxLength: 1000 })),
    title: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: 'Name shown to people' })),
    description: t.Optional(t.String({ description: 'What the strategy does', maxLength: 1000 })),
    parameters: Parameters,
  },
  {
    description: 'The new definition of a user-defined strategy type; parameters replace the old ones',
    examples: [
      { description: 'On in the listed regions', parameters: [{ name: 'regions', type: 'list', required: true }] },
    ],
  },
)

/** The named schemas of the strategy-type routes, as routes refer to them and OpenAPI lists them. */
export const strategyTypeModels = {
  strategySchema: StrategyType,
  strategiesSchema: StrategyTypeList,
  createStrategySchema: CreateStrategyType,
  updateStrategySchema: UpdateStrategyType,
}
