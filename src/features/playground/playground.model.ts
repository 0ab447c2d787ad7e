/**
 * Request and response schemas of the playground, with Unleash's names (playgroundRequestSchema,
 * playgroundFeatureSchema, advancedPlaygroundResponseSchema…) and shapes, plus the buckets: each
 * rollout strategy's `rollout` and `bucket`, and each weighted variant's `bucket`.
 */
import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { Integer } from '../../http/schemas'
import { Variant } from '../flags/flags.model'
import { LIMITS } from '../limits'

/** At most this many flag evaluations in one answer: flags × environments × contexts. */
export const MAX_EVALUATIONS = 1000

const EXAMPLE_CONTEXT = {
  appName: 'web',
  userId: 'user-42',
  sessionId: 'session-7',
  remoteAddress: '10.1.2.3',
  properties: { plan: 'pro' },
}

const text = (description: string, examples?: string[]) =>
  t.Optional(t.String({ description, ...(examples ? { examples } : {}) }))

export const PlaygroundContext = t.Object(
  {
    appName: text('The application asking (an SDK sends its appName)', ['web']),
    userId: text('The user, for userId constraints, userWithId and default stickiness', ['user-42']),
    sessionId: text('The session, for default stickiness when there is no userId', ['session-7']),
    remoteAddress: text('The IP address, for the remoteAddress strategy and IN_CIDR constraints', ['10.1.2.3']),
    environment: text('The environment field of the context as an SDK would send it (not the one evaluated in)'),
    currentTime: text('The time DATE_AFTER and DATE_BEFORE compare with, an RFC 3339 date-time; now when absent', [
      '2026-01-01T12:00:00Z',
    ]),
    properties: t.Optional(
      t.Record(t.String(), t.String({ description: 'A value' }), {
        description: 'Custom context fields by name (plan, email, version…), as text',
        examples: [{ plan: 'pro' }],
      }),
    ),
  },
  {
    additionalProperties: true,
    description:
      'The context as an SDK holds it. Other fields at the top level are custom fields too, read before `properties` ' +
      '(as the SDK reads them); they must be text (the advanced playground drops others and names them in warnings)',
    examples: [EXAMPLE_CONTEXT],
  },
)

const Projects = t.Optional(
  t.Union(
    [
      t.Literal('*', { description: 'Every project the caller may read' }),
      t.Array(t.String({ description: 'A project id' }), { description: 'These projects', maxItems: 500 }),
    ],
    {
      description:
        'The projects whose flags to evaluate: `*` (the default) or a list; projects that do not exist or that the caller may not read add nothing',
    },
  ),
)

export const PlaygroundRequest = t.Object(
  {
    environment: t.String({ description: 'The environment to evaluate the flags in', examples: ['development'] }),
    projects: Projects,
    context: PlaygroundContext,
  },
  {
    description: 'Evaluate every flag of some projects in one environment for one context',
    examples: [{ environment: 'development', projects: '*', context: EXAMPLE_CONTEXT }],
  },
)

export const AdvancedPlaygroundRequest = t.Object(
  {
    environments: t.Array(t.String({ description: 'An environment' }), {
      minItems: 1,
      maxItems: LIMITS.environments.max,
      description: 'The environments to evaluate the flags in',
      examples: [['development', 'production']],
    }),
    projects: Projects,
    context: PlaygroundContext,
  },
  {
    description:
      'Evaluate every flag of some projects in several environments, for one context or several: a text value with commas ' +
      '(`"userId": "a,b"`) stands for one context per value, every combination of them evaluated',
    examples: [{ environments: ['development', 'production'], projects: '*', context: EXAMPLE_CONTEXT }],
  },
)

const Payload = t.Object(
  {
    type: t.String({ description: 'json, csv, string or number' }),
    value: t.String({ description: 'The payload content' }),
  },
  { description: 'The value handed to SDKs with the variant' },
)

export const VariantEvaluation = t.Object(
  {
    name: t.String({ description: 'The variant; `disabled` when the flag is off or has no variant for the context' }),
    enabled: t.Boolean({ description: 'Whether a variant was chosen' }),
    payload: t.Optional(Payload),
    bucket: t.Optional(
      Integer({
        description:
          "Where the context's stickiness value fell among the variants' weights, 1 to their total (1000 unless weights " +
          'are fixed otherwise): the variant whose share holds it was chosen. Absent when an override chose the variant, ' +
          'or none was chosen. Beyond Unleash',
        minimum: 1,
      }),
    ),
  },
  { description: 'The variant the SDK would answer for the context' },
)

export const ConstraintEvaluation = t.Object(
  {
    contextName: t.String({ description: 'Context field the constraint reads' }),
    operator: t.String({ description: 'How the context value is compared' }),
    values: t.Array(t.String({ description: 'One value' }), { description: 'Values, for operators that take several' }),
    value: t.Optional(t.String({ description: 'Value, for single-value operators' })),
    inverted: t.Boolean({ description: 'The outcome is negated' }),
    caseInsensitive: t.Boolean({ description: 'Case is ignored' }),
    result: t.Boolean({ description: 'Whether the constraint holds for the context (after inversion)' }),
  },
  { description: 'A constraint and its outcome for the context' },
)

export const SegmentEvaluation = t.Object(
  {
    id: Integer({ description: "The segment's id" }),
    name: t.String({ description: "The segment's name" }),
    result: t.Boolean({ description: 'Whether all its constraints hold (false for a segment that no longer exists)' }),
    constraints: t.Array(ConstraintEvaluation, { description: 'Its constraints and their outcomes' }),
  },
  { description: 'A segment of the strategy and its outcome for the context' },
)

export const StrategyEvaluation = t.Object(
  {
    name: t.String({ description: 'The strategy type' }),
    id: t.String({ description: "The strategy's id" }),
    title: t.Optional(t.String({ description: "The strategy's title" })),
    disabled: t.Boolean({ description: 'A disabled strategy is never applied (its constraints are still shown)' }),
    parameters: t.Record(t.String(), t.String(), { description: 'Parameter name to value' }),
    result: t.Object(
      {
        evaluationStatus: t.Union([t.Literal('complete'), t.Literal('incomplete')], {
          description: '`incomplete` for a strategy type the service cannot evaluate (one users defined)',
        }),
        enabled: t.Union([t.Boolean(), t.Literal('unknown')], {
          description:
            'Whether the strategy applies to the context: its constraints, its segments and its own test all hold. ' +
            '`unknown` for a type the service cannot evaluate whose constraints and segments hold (SDKs without it never apply it)',
        }),
        variant: t.Optional(VariantEvaluation),
      },
      { description: "The strategy's outcome, with the strategy variant it chose when it applies and has variants" },
    ),
    constraints: t.Array(ConstraintEvaluation, { description: 'Its constraints and their outcomes' }),
    segments: t.Array(SegmentEvaluation, { description: 'Its segments and their outcomes' }),
    rollout: t.Optional(
      t.Number({ description: 'Rollout strategies: the percentage of contexts it applies to. Beyond Unleash' }),
    ),
    bucket: t.Optional(
      t.Union([Integer({ minimum: 1, maximum: 100 }), t.Null()], {
        description:
          "Rollout strategies: the context's bucket, 1 to 100, the hash of the stickiness value with the groupId, as the SDKs " +
          'compute it; the strategy applies when it is at most `rollout`. Null when the context has no stickiness value ' +
          '(default stickiness then draws a random one, as does random stickiness and gradualRolloutRandom). Beyond Unleash',
      }),
    ),
  },
  { description: 'A strategy of the flag in the environment and its outcome for the context' },
)

const featureFields = {
  name: t.String({ description: "The flag's name" }),
  projectId: t.String({ description: 'The project the flag belongs to' }),
  isEnabled: t.Boolean({
    description: 'What the SDK answers: on in the environment, its parents satisfied and a strategy applies',
  }),
  isEnabledInCurrentEnvironment: t.Boolean({ description: 'Whether the flag is on in the environment' }),
  hasUnsatisfiedDependency: t.Boolean({
    description: 'Whether a parent flag is not as this flag requires (then it is off, whatever its strategies)',
  }),
  variant: VariantEvaluation,
  variants: t.Array(Variant, {
    description: "The variants the answer's variant comes from: the applying strategy's, else the flag's",
  }),
  strategies: t.Object(
    {
      result: t.Union([t.Boolean(), t.Literal('unknown')], {
        description:
          'Whether any strategy applies: true when one does (or when the flag has no active strategy and is on), ' +
          '`unknown` when none does but one could not be evaluated',
      }),
      data: t.Array(StrategyEvaluation, { description: 'Every strategy, in order, disabled ones included' }),
    },
    { description: "The flag's strategies in the environment and their outcomes" },
  ),
}

export const FeatureEvaluation = t.Object(featureFields, {
  description: 'A flag evaluated in the environment for the context, with why',
})

export const PlaygroundResponse = t.Object(
  {
    input: PlaygroundRequest,
    features: t.Array(FeatureEvaluation, { description: 'Every live flag of the projects, by name' }),
  },
  { description: 'The flags evaluated for the context' },
)

export const AdvancedEnvironmentEvaluation = t.Object(
  {
    ...featureFields,
    environment: t.String({ description: 'The environment evaluated in' }),
    context: PlaygroundContext,
  },
  { description: 'A flag evaluated in one environment for one of the contexts' },
)

export const AdvancedFeatureEvaluation = t.Object(
  {
    name: t.String({ description: "The flag's name" }),
    projectId: t.String({ description: 'The project the flag belongs to' }),
    environments: t.Record(t.String(), t.Array(AdvancedEnvironmentEvaluation), {
      description: 'By environment: the evaluation for each context',
    }),
  },
  { description: 'A flag evaluated in every environment asked for' },
)

export const AdvancedPlaygroundResponse = t.Object(
  {
    input: AdvancedPlaygroundRequest,
    features: t.Array(AdvancedFeatureEvaluation, { description: 'Every live flag of the projects, by name' }),
    warnings: t.Object(
      {
        invalidContextProperties: t.Array(t.String({ description: 'A field name' }), {
          description: 'Top-level context fields that were left out because their value is not text',
        }),
      },
      { description: 'What the evaluation left out' },
    ),
  },
  { description: 'The flags evaluated in each environment for each context' },
)

export type PlaygroundInput = Static<typeof PlaygroundRequest>
export type AdvancedPlaygroundInput = Static<typeof AdvancedPlaygroundRequest>
export type ContextInput = Static<typeof PlaygroundContext>
export type VariantView = Static<typeof Variant>
export type VariantEvaluation = Static<typeof VariantEvaluation>
export type ConstraintEvaluation = Static<typeof ConstraintEvaluation>
export type StrategyEvaluation = Static<typeof StrategyEvaluation>
export type FlagEvaluation = Static<typeof FeatureEvaluation>
export type AdvancedFlagEvaluation = Static<typeof AdvancedFeatureEvaluation>
export type AdvancedPlaygroundAnswer = Static<typeof AdvancedPlaygroundResponse>
export type PlaygroundAnswer = Static<typeof PlaygroundResponse>

/** The named schemas of the playground routes, as routes refer to them and OpenAPI lists them. */
export const playgroundModels = {
  playgroundRequestSchema: PlaygroundRequest,
  playgroundResponseSchema: PlaygroundResponse,
  advancedPlaygroundRequestSchema: AdvancedPlaygroundRequest,
  advancedPlaygroundResponseSchema: AdvancedPlaygroundResponse,
}
