/** Request and response schemas of strategies, their constraints and variants, and flag variants (seed §2). */
import { t } from 'elysia'
import { Integer, literals } from '../../http/schemas'
import { LIMITS } from '../limits'
import { BUILT_IN_STRATEGIES } from '../strategy-types/built-in-strategies'
import { STRATEGY_EXAMPLE, VARIANTS_EXAMPLE } from './flags.examples'
import { CONSTRAINT_OPERATORS } from './strategy-rules'

const ShortText = (description: string, max = 100) => t.String({ description, maxLength: max })

export const Payload = t.Object(
  {
    type: literals(['json', 'csv', 'string', 'number'] as const, 'How the value is to be read'),
    value: t.String({ description: 'The payload content', maxLength: 10_000 }),
  },
  { description: 'A value handed to SDKs with the variant; value is read as its type says' },
)

export const Constraint = t.Object(
  {
    contextName: ShortText('Context field the constraint applies to, e.g. userId'),
    operator: literals(CONSTRAINT_OPERATORS, 'How the context value is compared'),
    caseInsensitive: t.Optional(t.Boolean({ description: 'Ignore case when matching (default false)' })),
    inverted: t.Optional(t.Boolean({ description: 'Negate the outcome (default false)' })),
    values: t.Optional(
      t.Array(t.String({ maxLength: 1000, description: 'One value' }), {
        maxItems: LIMITS.valuesPerConstraint.max,
        description: `Values, for IN, NOT_IN, STR_* and IN_CIDR (IP addresses or CIDR ranges); at most ${LIMITS.valuesPerConstraint.max} (valuesPerConstraint)`,
      }),
    ),
    value: t.Optional(
      t.String({
        maxLength: 1000,
        description:
          'Value, for NUM_* (a number), DATE_* (RFC 3339 date-time), SEMVER_* (strict semver, no leading v) and REGEX (RE2 syntax; cannot be inverted)',
      }),
    ),
  },
  { description: 'A condition on the SDK context: the strategy applies only when it holds' },
)

export const StrategyVariant = t.Object(
  {
    name: ShortText('Variant name, unique within the strategy'),
    weight: Integer({ minimum: 0, maximum: 1000, description: 'Share out of 1000; recomputed for variable variants' }),
    weightType: literals(['variable', 'fix'] as const, 'fix keeps the weight; variable shares what is left of 1000'),
    stickiness: ShortText('Context field that keeps a user on the same variant'),
    payload: t.Optional(Payload),
  },
  {
    description:
      'A variant of one strategy: fix variants get exactly their weight, variable ones share what is left so that all weights sum to 1000',
  },
)

/** Response shapes use plain strings where requests take an enumeration. */
const PayloadOut = t.Object(
  {
    type: t.String({ description: 'json, csv, string or number' }),
    value: t.String({ description: 'The payload content' }),
  },
  { description: 'A value handed to SDKs with the variant; value is read as its type says' },
)

export const ConstraintOut = t.Object(
  {
    contextName: t.String({ description: 'Context field the constraint applies to' }),
    operator: t.String({ description: `How the context value is compared: ${CONSTRAINT_OPERATORS.join(', ')}` }),
    caseInsensitive: t.Boolean({ description: 'Ignore case when matching' }),
    inverted: t.Boolean({ description: 'Negate the outcome' }),
    values: t.Array(t.String({ description: 'One value' }), { description: 'Values, for operators that take several' }),
    value: t.Optional(t.String({ description: 'Value, for single-value operators' })),
  },
  { description: 'A condition on the SDK context: the strategy applies only when it holds' },
)

const StrategyVariantOut = t.Object(
  {
    name: t.String({ description: 'Variant name' }),
    weight: Integer({ description: 'Share out of 1000, computed' }),
    weightType: t.String({ description: 'variable or fix' }),
    stickiness: t.String({ description: 'Stickiness context field' }),
    payload: t.Optional(PayloadOut),
  },
  { description: 'A variant of one strategy, with its computed weight (all weights sum to 1000)' },
)

export const StrategyInput = t.Object(
  {
    name: t.String({
      minLength: 1,
      maxLength: 100,
      description: `Strategy type: a built-in one (${BUILT_IN_STRATEGIES.map(s => s.name).join(', ')}) or one defined with createStrategy and not deprecated`,
      examples: ['flexibleRollout'],
    }),
    title: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: 'Descriptive title' })),
    disabled: t.Optional(
      t.Union([t.Boolean(), t.Null()], { description: 'A disabled strategy is not evaluated (default false)' }),
    ),
    sortOrder: t.Optional(
      Integer({ description: 'Position in the list; defaults to last', minimum: -1_000_000, maximum: 1_000_000 }),
    ),
    segments: t.Optional(
      t.Array(Integer({ description: 'Segment id' }), {
        maxItems: LIMITS.segmentsPerStrategy.max,
        examples: [[1, 2]],
        description: `Ids of segments whose constraints must hold too: each must exist and be global or of the flag's project; at most ${LIMITS.segmentsPerStrategy.max} (segmentsPerStrategy)`,
      }),
    ),
    constraints: t.Optional(
      t.Array(Constraint, {
        maxItems: LIMITS.constraintsPerStrategy.max,
        description: `All must hold for the strategy to apply; at most ${LIMITS.constraintsPerStrategy.max} (constraintsPerStrategy)`,
      }),
    ),
    variants: t.Optional(
      t.Array(StrategyVariant, {
        maxItems: LIMITS.variantsPerStrategy.max,
        description: `Strategy-level variants; at most ${LIMITS.variantsPerStrategy.max} (variantsPerStrategy)`,
      }),
    ),
    parameters: t.Optional(
      t.Record(t.String({ maxLength: 100 }), t.Union([t.String({ maxLength: 10_000 }), t.Number(), t.Boolean()]), {
        description: 'Parameter name to value; numbers and booleans are stored as strings',
        examples: [{ rollout: '50', stickiness: 'default', groupId: 'new-checkout' }],
      }),
    ),
  },
  {
    description:
      'An activation strategy to add or to replace one with: the flag is on for a context when an enabled strategy applies',
    examples: [STRATEGY_EXAMPLE],
  },
)

export const Strategy = t.Object(
  {
    id: t.String({ format: 'uuid', description: 'Strategy id' }),
    name: t.String({ description: 'Strategy type' }),
    title: t.Union([t.String(), t.Null()], { description: 'Descriptive title' }),
    disabled: t.Boolean({ description: 'A disabled strategy is neither evaluated nor given to SDKs' }),
    featureName: t.String({ description: 'Flag the strategy belongs to' }),
    sortOrder: t.Number({ description: 'Position in the strategy list' }),
    segments: t.Array(t.Number({ description: 'Segment id' }), { description: 'Ids of attached segments' }),
    constraints: t.Array(ConstraintOut, { description: 'Conditions on the SDK context' }),
    variants: t.Array(StrategyVariantOut, { description: 'Strategy-level variants with computed weights' }),
    parameters: t.Record(t.String(), t.String(), { description: 'Parameter name to value' }),
  },
  { description: 'An activation strategy: the flag is on for a context when an enabled strategy applies' },
)

const Override = t.Object(
  {
    contextName: ShortText('Context field'),
    values: t.Array(t.String({ maxLength: 1000, description: 'A value' }), {
      maxItems: LIMITS.valuesPerOverride.max,
      description: `Values that get this variant; at most ${LIMITS.valuesPerOverride.max} (valuesPerOverride)`,
    }),
  },
  { description: 'Gives the variant to these context values, whatever the weights' },
)

export const VariantInput = t.Object(
  {
    name: ShortText('Variant name, unique within the flag'),
    weight: Integer({ minimum: 0, maximum: 1000, description: 'Share out of 1000; recomputed for variable variants' }),
    weightType: t.Optional(
      literals(['variable', 'fix'] as const, 'fix keeps the weight; variable (default) shares what is left'),
    ),
    stickiness: t.Optional(ShortText('Context field that keeps a user on the same variant (default "default")')),
    payload: t.Optional(Payload),
    overrides: t.Optional(
      t.Array(Override, {
        maxItems: LIMITS.overridesPerVariant.max,
        description: `Overrides take precedence over weights; at most ${LIMITS.overridesPerVariant.max} (overridesPerVariant)`,
      }),
    ),
  },
  {
    description:
      'A variant of the flag in one environment: fix variants get exactly their weight, variable ones share what is left so that all weights sum to 1000',
    examples: [VARIANTS_EXAMPLE[0]],
  },
)

export const Variant = t.Object(
  {
    name: t.String({ description: 'Variant name' }),
    weight: t.Number({ description: 'Share out of 1000' }),
    weightType: t.String({ description: 'variable or fix' }),
    stickiness: t.String({ description: 'Stickiness context field' }),
    payload: t.Optional(PayloadOut),
    overrides: t.Array(Override, { description: 'Overrides' }),
  },
  { description: 'A variant of the flag in one environment, with its computed weight (all weights sum to 1000)' },
)

export const VariantList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    variants: t.Array(Variant, { description: 'The variants, weights computed' }),
  },
  { description: 'The variants of a flag in one environment' },
)

/** The body of the strategies' set-sort-order route, and of a change request's reorderStrategy. */
export const SortOrderInput = t.Array(
  t.Object({
    id: t.String({ maxLength: 100, description: 'Strategy id' }),
    sortOrder: Integer({
      minimum: -1_000_000,
      maximum: 1_000_000,
      description: 'Its new position; lower comes first',
    }),
  }),
  {
    maxItems: LIMITS.strategiesPerFlagEnvironment.max,
    description: 'Strategies and their new positions; strategies not listed keep theirs',
    examples: [[{ id: '6b5157cb-343a-41e7-bfa3-7b4ec3044840', sortOrder: 0 }]],
  },
)
