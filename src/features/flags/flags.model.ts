/** Request and response schemas of flags, tags and dependencies (seed §2); strategies and variants are in strategy.model.ts. */
import { t } from 'elysia'
import { FLAG_TYPES, LIFECYCLE_STAGES } from './flags.records'
import { NullableTimestamp, Timestamp, Integer, literals } from '../../http/schemas'
import { PatchOperations } from './patch.model'
import { StrategyInput, Strategy, VariantInput, Variant, VariantList } from './strategy.model'
import { LIMITS } from '../limits'
import { CREATE_FLAG_EXAMPLE, UPDATE_FLAG_EXAMPLE } from './flags.examples'

const Name = (description: string) =>
  t.String({ description, minLength: 1, maxLength: 100, examples: ['new-checkout'] })

export const Tag = t.Object(
  {
    type: t.String({ description: 'Tag type', minLength: 2, maxLength: 50 }),
    value: t.String({ description: 'Tag value', minLength: 2, maxLength: 50 }),
  },
  { description: 'A tag on a flag: a type and a value, each 2 to 50 characters' },
)

export const TagInput = t.Object(
  {
    type: t.Optional(t.String({ description: 'Tag type (default "simple")', minLength: 2, maxLength: 50 })),
    value: t.String({ description: 'Tag value, 2 to 50 characters', minLength: 1, maxLength: 200 }),
  },
  { description: 'A tag to add', examples: [{ type: 'simple', value: 'beta' }] },
)

export const TagList = t.Object(
  { version: Integer({ description: 'Schema version, 1' }), tags: t.Array(Tag, { description: "The flag's tags" }) },
  { description: 'The tags of a flag' },
)

const Dependency = t.Object(
  {
    feature: t.String({ description: 'Name of the parent flag' }),
    enabled: t.Boolean({ description: 'Whether the parent must be enabled (true) or disabled (false)' }),
    variants: t.Array(t.String({ description: 'Variant name' }), {
      description: 'Variants the parent must resolve to; only when enabled',
    }),
  },
  { description: 'A parent dependency: this flag is on only when the parent is enabled (or disabled) as stated' },
)

export const DependencyInput = t.Object(
  {
    feature: Name('Name of the parent flag, in the same project'),
    enabled: t.Optional(t.Boolean({ description: 'Whether the parent must be enabled (default true)' })),
    variants: t.Optional(
      t.Array(t.String({ maxLength: 100, description: 'Variant name' }), {
        maxItems: 100,
        description: 'Variants the parent must resolve to',
      }),
    ),
  },
  {
    description: 'A dependency to add or replace: the parent must exist in the same project',
    examples: [{ feature: 'checkout-parent', enabled: true }],
  },
)

const environmentEntryFields = {
  name: t.String({ description: 'Environment name' }),
  environment: t.String({ description: 'Environment name' }),
  featureName: t.String({ description: 'Flag name' }),
  type: t.String({ description: 'Environment type' }),
  enabled: t.Boolean({ description: 'Whether the flag is on in this environment' }),
  sortOrder: t.Number({ description: "Position in the flag's environment list" }),
  variantCount: t.Number({ description: 'Number of variants' }),
  lastSeenAt: NullableTimestamp(
    'Last time SDK metrics reported the flag in this environment (updated at each metrics flush); null if never',
  ),
  hasStrategies: t.Boolean({ description: 'Whether any strategy is defined' }),
  hasEnabledStrategies: t.Boolean({ description: 'Whether any strategy is not disabled' }),
}

const EnvironmentEntry = t.Object(
  {
    ...environmentEntryFields,
    strategies: t.Optional(t.Array(Strategy, { description: 'Activation strategies (single-flag reads only)' })),
    variants: t.Optional(t.Array(Variant, { description: 'Variants (single-flag reads only)' })),
  },
  { description: 'The flag in one environment of its project' },
)

export const Feature = t.Object(
  {
    name: t.String({ description: 'Unique flag name' }),
    type: t.String({ description: 'Kind of flag: release, experiment, operational, kill-switch or permission' }),
    description: t.Union([t.String(), t.Null()], { description: 'Longer description' }),
    project: t.String({ description: 'Owning project' }),
    enabled: t.Boolean({ description: 'True when enabled in any environment' }),
    stale: t.Boolean({ description: 'Marked stale' }),
    potentiallyStale: t.Boolean({
      description:
        'Older than the lifetime of its type (GET /api/admin/feature-types), stale or not; judged when answered',
    }),
    favorite: t.Boolean({ description: 'Favorites are per user; always false for API tokens' }),
    impressionData: t.Boolean({ description: 'Whether impression data collection is on' }),
    createdAt: NullableTimestamp('Creation time'),
    createdBy: t.Object(
      {
        id: Integer({ description: "User id (the token's user id)" }),
        name: t.String({ description: 'User name (the token name)' }),
        imageUrl: t.String({ description: 'Profile image URL (empty for tokens)' }),
      },
      { description: 'Who created the flag: the API token that made it' },
    ),
    archived: t.Boolean({ description: 'True when archived' }),
    archivedAt: NullableTimestamp('Archival time'),
    lastSeenAt: NullableTimestamp("The latest of the environments' lastSeenAt; null if never reported"),
    environments: t.Array(EnvironmentEntry, {
      description: 'One entry per environment of the project, by sortOrder then name',
    }),
    variants: t.Array(Variant, { description: 'Deprecated since v5; always empty (variants live per environment)' }),
    strategies: t.Array(Strategy, {
      description: 'Deprecated since v5; always empty (strategies live per environment)',
    }),
    tags: t.Array(Tag, { description: 'Tags' }),
    children: t.Array(t.String({ description: 'Child flag name' }), { description: 'Flags that depend on this one' }),
    dependencies: t.Array(Dependency, { description: 'Parents this flag depends on' }),
    lifecycle: t.Object(
      {
        stage: t.String({ description: `Current stage: ${LIFECYCLE_STAGES.join(', ')}` }),
        enteredStageAt: Timestamp('When the flag entered the stage'),
      },
      { description: 'Lifecycle stage: where the flag is on its way from creation to removal' },
    ),
  },
  { description: 'A feature flag with its state in every environment of its project' },
)

export const FeatureList = t.Object(
  {
    version: Integer({ description: 'Version of the feature schema, 2' }),
    features: t.Array(Feature, { description: 'The flags, by createdAt then name' }),
  },
  { description: 'Flags of a project' },
)

export const FeatureSearchQuery = t.Object(
  {
    project: t.Optional(
      t.String({
        maxLength: 2000,
        description: 'Only flags of these projects: IS:id or IS_ANY_OF:a,b',
        examples: ['IS:default'],
      }),
    ),
    query: t.Optional(
      t.String({ maxLength: 500, description: "Case-insensitive substring of the flag's name or description" }),
    ),
    sortBy: t.Optional(
      literals(
        ['name', 'type', 'createdAt', 'lastSeenAt'] as const,
        'Order by this (default createdAt; equal values by createdAt, then name)',
      ),
    ),
    sortOrder: t.Optional(literals(['asc', 'desc'] as const, 'asc (default) or desc')),
    offset: t.Optional(t.String({ description: 'Number of matches to skip (default 0)', examples: ['0'] })),
    limit: t.Optional(t.String({ description: 'Page size, 1 to 1000 (default 50)', examples: ['50'] })),
  },
  { description: 'Flag search parameters; all are optional and ANDed' },
)

export const FeatureSearchResult = t.Object(
  {
    features: t.Array(Feature, {
      description: 'The page of matching flags, in the order asked for, as the flag list shows them',
    }),
    total: Integer({ description: 'How many flags match, over all pages' }),
  },
  { description: 'One page of a flag search' },
)

/** Documented as an enumeration, checked by the service: its error lists the types, a union's would not. */
const FlagType = (description: string) => t.String({ description, maxLength: 100, enum: [...FLAG_TYPES] })

export const CreateFeature = t.Object(
  {
    name: Name('Flag name: 1 to 100 URL-safe characters, unique across all projects'),
    type: t.Optional(FlagType('Kind of flag (default release)')),
    description: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: 'Longer description' })),
    impressionData: t.Optional(t.Boolean({ description: 'Collect impression data (default false)' })),
    tags: t.Optional(
      t.Array(TagInput, {
        maxItems: LIMITS.tagsPerFlag.max,
        description: `Tags given to the flag as it is created; duplicates count once; at most ${LIMITS.tagsPerFlag.max} (tagsPerFlag)`,
      }),
    ),
  },
  {
    description: 'A flag to create; properties Unleash defines and this service does not use are accepted and ignored',
    examples: [CREATE_FLAG_EXAMPLE],
  },
)

export const UpdateFeature = t.Object(
  {
    name: t.Optional(t.String({ description: 'Must equal the flag name if given', maxLength: 100 })),
    project: t.Optional(
      t.String({ description: 'Must equal the project if given; moving flags is not supported', maxLength: 100 }),
    ),
    description: t.Optional(
      t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: 'New description; null clears it' }),
    ),
    type: t.Optional(FlagType('New kind of flag')),
    stale: t.Optional(t.Boolean({ description: 'Mark stale or not' })),
    impressionData: t.Optional(t.Boolean({ description: 'Impression data on or off' })),
    archived: t.Optional(t.Boolean({ description: 'true archives, false revives' })),
  },
  { description: 'Properties to replace; missing ones are left alone', examples: [UPDATE_FLAG_EXAMPLE] },
)

export const FeatureNames = t.Object(
  {
    features: t.Array(Name('Flag name'), {
      maxItems: 10_000,
      description: 'Names of the flags; duplicates count once',
    }),
  },
  { description: 'A list of flag names', examples: [{ features: ['new-checkout'] }] },
)

export const ValidateFeature = t.Object(
  {
    name: t.String({ description: 'The name to check', maxLength: 10_000, examples: ['new-checkout'] }),
    projectId: t.Optional(
      t.Union([t.String({ maxLength: 100 }), t.Null()], {
        description: "Check against this project's naming pattern too",
      }),
    ),
  },
  { description: 'A flag name to check', examples: [{ name: 'new-checkout', projectId: 'default' }] },
)

export const CompleteLifecycle = t.Object(
  {
    status: literals(['kept', 'discarded'] as const, "Whether the feature was kept or its flag's code discarded"),
    statusValue: t.Optional(t.String({ maxLength: 100, description: 'The variant kept, when there is one' })),
  },
  { description: 'How the flag was completed', examples: [{ status: 'kept' }] },
)

/** The named schemas of the flag routes (flags, strategies, relations), as routes refer to them and OpenAPI lists them. */
export const flagModels = {
  featureSchema: Feature,
  featuresSchema: FeatureList,
  featureSearchQuerySchema: FeatureSearchQuery,
  searchFeaturesSchema: FeatureSearchResult,
  featureEnvironmentSchema: EnvironmentEntry,
  createFeatureSchema: CreateFeature,
  updateFeatureSchema: UpdateFeature,
  patchesSchema: PatchOperations,
  validateFeatureSchema: ValidateFeature,
  featureNamesSchema: FeatureNames,
  featureStrategySchema: Strategy,
  createFeatureStrategySchema: StrategyInput,
  variantsSchema: VariantList,
  variantSchema: VariantInput,
  tagSchema: Tag,
  tagInputSchema: TagInput,
  tagsSchema: TagList,
  dependencySchema: DependencyInput,
  completeFeatureSchema: CompleteLifecycle,
}
