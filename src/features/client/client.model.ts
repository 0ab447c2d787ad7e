/** Schemas of the server-side SDK API (sdk-api-contract §1): what `unleash-client` and its siblings read and send. */
import { t } from 'elysia'
import { Integer, PATTERN_RULE } from '../../http/schemas'
import { repeatable } from '../../http/query'

const Payload = t.Object(
  {
    type: t.String({ description: 'json, csv, string or number' }),
    value: t.String({ description: 'The payload, as text' }),
  },
  { description: 'A payload the variant carries' },
)

export const Constraint = t.Object(
  {
    contextName: t.String({ description: 'The context field compared' }),
    operator: t.String({ description: 'The operator, e.g. IN or STR_STARTS_WITH' }),
    values: t.Array(t.String(), { description: 'Values of multi-value operators' }),
    value: t.Optional(t.String({ description: 'Value of single-value operators' })),
    caseInsensitive: t.Boolean({ description: 'Compare strings without case' }),
    inverted: t.Boolean({ description: 'Negate the result' }),
  },
  { description: 'A constraint, as stored' },
)

const StrategyVariant = t.Object(
  {
    name: t.String({ description: 'Variant name' }),
    weight: t.Number({ description: 'Share of 1000' }),
    weightType: t.String({ description: 'variable or fix' }),
    stickiness: t.String({ description: 'Context field the variant is chosen by' }),
    payload: t.Optional(Payload),
  },
  { description: 'A strategy variant' },
)

export const ClientStrategy = t.Object(
  {
    name: t.String({ description: 'Strategy type, e.g. flexibleRollout' }),
    constraints: t.Array(Constraint, { description: 'All must hold for the strategy to apply' }),
    parameters: t.Record(t.String(), t.String(), { description: 'Parameters of the strategy type' }),
    variants: t.Array(StrategyVariant, { description: 'Variants chosen when this strategy enables the flag' }),
    segments: t.Optional(
      t.Array(t.Number(), {
        description: 'Ids of the segments whose constraints also apply; only when there are some',
      }),
    ),
  },
  { description: 'An enabled strategy; disabled ones are not served' },
)

const FlagVariant = t.Object(
  {
    name: t.String({ description: 'Variant name' }),
    weight: t.Number({ description: 'Share of 1000' }),
    weightType: t.String({ description: 'variable or fix' }),
    stickiness: t.String({ description: 'Context field the variant is chosen by' }),
    payload: t.Optional(Payload),
    overrides: t.Array(
      t.Object(
        {
          contextName: t.String({ description: 'Context field' }),
          values: t.Array(t.String(), { description: 'Values that get this variant' }),
        },
        { description: 'An override' },
      ),
      { description: 'Context values that always get this variant' },
    ),
  },
  { description: 'A flag variant of the token environment' },
)

export const ClientFeature = t.Object(
  {
    name: t.String({ description: 'Flag name' }),
    type: t.String({ description: 'Flag type, e.g. release' }),
    enabled: t.Boolean({ description: "The flag's state in the token's environment; off flags are served too" }),
    project: t.String({ description: 'Project of the flag' }),
    stale: t.Boolean({ description: 'Marked stale' }),
    strategies: t.Array(ClientStrategy, { description: 'Enabled strategies, in their order' }),
    variants: t.Array(FlagVariant, { description: "Flag variants in the token's environment" }),
    description: t.Union([t.String(), t.Null()], { description: 'Description' }),
    impressionData: t.Boolean({ description: 'Whether SDKs emit impression events' }),
    dependencies: t.Optional(
      t.Array(
        t.Object(
          {
            feature: t.String({ description: 'Parent flag' }),
            enabled: t.Boolean({ description: 'Whether the parent must be enabled (true) or disabled (false)' }),
            variants: t.Array(t.String(), {
              description: 'Parent variants any of which must be chosen; empty for any',
            }),
          },
          { description: 'A parent' },
        ),
        { description: 'Parents; only on flags that have some' },
      ),
    ),
  },
  {
    description: 'A flag as SDKs evaluate it',
    examples: [
      {
        name: 'checkout',
        type: 'release',
        enabled: true,
        project: 'default',
        stale: false,
        strategies: [
          {
            name: 'flexibleRollout',
            constraints: [],
            parameters: { rollout: '50', stickiness: 'default', groupId: 'checkout' },
            variants: [],
          },
        ],
        variants: [],
        description: null,
        impressionData: false,
      },
    ],
  },
)

export const ClientFeatures = t.Object(
  {
    version: Integer({ description: 'Format version, 2' }),
    features: t.Array(ClientFeature, { description: 'The flags in scope, by name' }),
    segments: t.Optional(
      t.Array(
        t.Object(
          {
            id: Integer({ description: 'Segment id, as in strategies' }),
            name: t.String({ description: 'Segment name' }),
            constraints: t.Array(Constraint, { description: 'All must hold' }),
          },
          { description: 'A segment' },
        ),
        {
          description:
            'For clients that send Unleash-Client-Spec ≥ 4.2.0: the segments the served strategies refer to, by id. Other clients get no segments ' +
            'here and no segment ids on strategies: the constraints are inlined into the strategies instead',
        },
      ),
    ),
    query: t.Object(
      {
        project: t.Array(t.String(), {
          description: "Projects served: the token's, narrowed by ?project= for a * token; ['*'] for all",
        }),
        environment: t.String({ description: "The token's environment" }),
        namePrefix: t.Optional(t.String({ description: 'The name prefix asked for' })),
        tag: t.Optional(t.Array(t.String(), { description: 'The tags asked for (type:value)' })),
      },
      { description: 'The effective filter' },
    ),
    meta: t.Object(
      {
        revisionId: Integer({ description: 'The store commit the answer was made at' }),
        etag: t.String({ description: 'The ETag of this answer, quoted' }),
        queryHash: t.String({ description: 'A hash of the effective filter' }),
      },
      { description: 'What the answer was made from' },
    ),
  },
  { description: 'Every flag in the token scope, with an ETag header; 304 without a body when If-None-Match matches' },
)

export const ClientFeaturesQuery = t.Object(
  {
    project: t.Optional(
      repeatable(t.String({ maxLength: 100, description: 'Project id' }), {
        maxItems: 100,
        description: 'Only these projects (repeatable); ignored when the token names its projects',
      }),
    ),
    namePrefix: t.Optional(t.String({ maxLength: 100, description: 'Only flags whose name starts with this' })),
    tag: t.Optional(
      repeatable(
        t.String({
          maxLength: 200,
          pattern: '^[^:]+:',
          [PATTERN_RULE]: 'a tag as type:value (its type, a colon, then its value)',
          description: 'type:value',
        }),
        { maxItems: 100, description: 'Only flags with any of these tags (type:value, repeatable)' },
      ),
    ),
  },
  { description: 'Filters of the flag list' },
)

export const clientModels = {
  clientFeaturesSchema: ClientFeatures,
  clientFeatureSchema: ClientFeature,
  clientFeaturesQuerySchema: ClientFeaturesQuery,
}
