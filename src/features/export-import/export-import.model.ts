/**
 * Request and response schemas of export and import, with Unleash's names (exportQuerySchema,
 * exportResultSchema, importTogglesSchema, importTogglesValidateSchema). The import takes what
 * Unleash's export writes, so its item schemas are Unleash's, with most fields optional; the
 * export answers in our response shapes, which the import takes back as they are.
 */
import { t } from 'elysia'
import { Constraint, Strategy, StrategyInput, StrategyVariant, Variant, VariantInput } from '../flags/strategy.model'
import { LIMITS } from '../limits'
import { ContextFieldFields } from '../context/context.model'
import { TagTypeFields } from '../tag-types/tag-types.model'

/** Every list of an import; the body limit (BODY_LIMIT) bounds them long before this does. */
const MAX_ITEMS = LIMITS.flags.max
const Name = (description: string) => t.String({ description, minLength: 1, maxLength: 100 })
const Text = (description: string, maxLength = 2000) => t.String({ description, maxLength })

const EXAMPLE_FLAG = 'imported-checkout'

export const ExportQuery = t.Object(
  {
    environment: Name('The environment whose strategies, variants and on/off state are exported'),
    features: t.Optional(
      t.Array(Name('Flag name'), {
        maxItems: MAX_ITEMS,
        description: 'Flags to export by name (unknown names are skipped); an empty list means every flag',
      }),
    ),
    tag: t.Optional(
      Text(
        'Flags to export by tag: a tag value (any type), or type:value; takes precedence over features and project',
        101,
      ),
    ),
    project: t.Optional(
      Name('Project to export the flags of, when neither tag nor a non-empty features list is given'),
    ),
    downloadFile: t.Optional(
      t.Boolean({ description: 'true answers with Content-Disposition: attachment, so that a browser saves the file' }),
    ),
  },
  {
    description: 'What to export: flags by tag, else by name, else of a project, else all',
    examples: [{ environment: 'development', project: 'default' }],
  },
)

const ExportedFlag = t.Object(
  {
    name: t.String({ description: 'Flag name' }),
    description: t.Union([t.String(), t.Null()], { description: 'Longer description' }),
    type: t.String({ description: 'Kind of flag' }),
    project: t.String({ description: "Project it was exported from (an import puts it in the import's project)" }),
    stale: t.Boolean({ description: 'Marked stale' }),
    impressionData: t.Boolean({ description: 'Whether impression data collection is on' }),
    archived: t.Boolean({ description: 'Always false: archived flags are not exported' }),
  },
  { description: "A flag's metadata" },
)

const ExportedFlagEnvironment = t.Object(
  {
    name: t.String({ description: "The flag name (Unleash writes the flag's name here too)" }),
    featureName: t.String({ description: 'Flag name' }),
    environment: t.String({ description: 'The exported environment' }),
    enabled: t.Boolean({ description: 'Whether the flag is on there' }),
    variants: t.Array(Variant, { description: "The flag's variants there" }),
  },
  { description: 'A flag in the exported environment' },
)

const FeatureTag = t.Object(
  {
    featureName: Name('Flag name'),
    tagType: t.Optional(t.String({ description: 'Tag type (default simple)', minLength: 1, maxLength: 50 })),
    tagValue: Text('Tag value', 200),
  },
  { description: 'A tag on a flag' },
)

// The same limits as the tag-type and context routes, since the import creates the missing ones with their write.
const TagType = t.Object(
  {
    name: t.String({ description: 'Tag type name', minLength: 1, maxLength: 50 }),
    description: t.Optional(
      t.Union([t.String({ maxLength: 1000 }), t.Null()], { description: 'What the type is for' }),
    ),
    icon: TagTypeFields.icon,
    color: TagTypeFields.color,
  },
  { description: 'A tag type the tags use: the import creates it when it is missing here' },
)

const ContextField = t.Object(
  {
    name: Name('Context field name'),
    ...ContextFieldFields,
    project: t.Optional(
      t.Union([Name('Project'), t.Null()], {
        description: 'Project of a project-specific field (Unleash); fields here are global, so ignored',
      }),
    ),
  },
  {
    description:
      'A context field the strategies or variants use: the import creates it when it is missing here, and refuses one whose legal values ours lack',
  },
)

const SegmentRef = t.Object(
  {
    id: t.Number({ description: 'Segment id in the exporting instance' }),
    name: Text('Segment name, which the import matches', 200),
  },
  { description: 'A segment the strategies use: an import maps it by name to a segment of the same name' },
)

const DependencyTo = t.Object(
  {
    feature: Name('Parent flag name'),
    enabled: t.Optional(t.Boolean({ description: 'Whether the parent must be enabled (default true)' })),
    variants: t.Optional(
      t.Array(Text('Variant name', 100), { maxItems: 100, description: 'Variants the parent must resolve to' }),
    ),
  },
  { description: 'A parent of the flag' },
)

const FeatureDependencies = t.Object(
  {
    feature: Name('Child flag name'),
    dependencies: t.Array(DependencyTo, { maxItems: LIMITS.dependenciesPerFlag.max, description: 'Its parents' }),
  },
  { description: 'The parents of one flag' },
)

export const ExportResult = t.Object(
  {
    features: t.Array(ExportedFlag, { description: 'The exported flags, by name' }),
    featureStrategies: t.Array(Strategy, { description: 'Their strategies in the environment' }),
    featureEnvironments: t.Array(ExportedFlagEnvironment, {
      description: 'Their state in the environment (flags of projects not using it have none)',
    }),
    contextFields: t.Array(ContextField, { description: 'Context fields the strategies and variants use' }),
    featureTags: t.Array(
      t.Object(
        {
          featureName: t.String({ description: 'Flag name' }),
          tagType: t.String({ description: 'Tag type' }),
          tagValue: t.String({ description: 'Tag value' }),
        },
        { description: 'A tag on a flag' },
      ),
      { description: 'Their tags' },
    ),
    segments: t.Array(SegmentRef, { description: 'Segments the strategies use' }),
    tagTypes: t.Array(TagType, { description: 'Tag types the tags use' }),
    dependencies: t.Array(FeatureDependencies, { description: 'Their parents' }),
  },
  { description: 'Flags with what they need in one environment, as Unleash exports them' },
)

const ImportedFlag = t.Object(
  {
    name: Name('Flag name'),
    description: t.Optional(t.Union([Text('Longer description'), t.Null()], { description: 'Longer description' })),
    type: t.Optional(Text('Kind of flag (default release)', 100)),
    project: t.Optional(
      t.Union([Text('Project it was exported from; ignored', 100), t.Null()], {
        description: 'Project it was exported from; ignored',
      }),
    ),
    stale: t.Optional(t.Boolean({ description: 'Marked stale' })),
    impressionData: t.Optional(t.Boolean({ description: 'Impression data on or off' })),
    archived: t.Optional(t.Boolean({ description: 'Ignored: imported flags are live' })),
  },
  { description: 'A flag to create in the project, or to update if it is there' },
)

const ImportedStrategy = t.Object(
  {
    ...StrategyInput.properties,
    id: t.Optional(Text('Id in the exporting instance; a new one is made', 100)),
    featureName: Name('Flag the strategy belongs to'),
    segments: t.Optional(
      t.Array(t.Number({ description: 'Segment id, as listed in segments' }), {
        maxItems: LIMITS.segmentsPerStrategy.max,
        description: "Ids of the exporting instance's segments, mapped by name",
      }),
    ),
    constraints: t.Optional(
      t.Array(Constraint, {
        maxItems: LIMITS.constraintsPerStrategy.max,
        description: 'All must hold for the strategy to apply',
      }),
    ),
    variants: t.Optional(
      t.Array(StrategyVariant, { maxItems: LIMITS.variantsPerStrategy.max, description: 'Strategy-level variants' }),
    ),
  },
  { description: "A strategy of a flag in the import's environment" },
)

const ImportedFlagEnvironment = t.Object(
  {
    name: t.Optional(Name('Flag name, as Unleash writes it (featureName wins when both are given)')),
    featureName: t.Optional(Name('Flag name')),
    environment: t.Optional(Text('Environment it was exported from; ignored', 100)),
    enabled: t.Boolean({ description: "Turns the flag on or off in the import's environment" }),
    variants: t.Optional(
      t.Array(VariantInput, {
        maxItems: LIMITS.variantsPerFlagEnvironment.max,
        description: "Replace the flag's variants there when given",
      }),
    ),
  },
  { description: "A flag's state in the import's environment" },
)

export const ImportData = t.Object(
  {
    features: t.Array(ImportedFlag, { maxItems: MAX_ITEMS, description: 'Flags to create or update' }),
    featureStrategies: t.Array(ImportedStrategy, {
      maxItems: MAX_ITEMS,
      description: "The strategies of those flags: they replace the flags' strategies in the environment",
    }),
    featureEnvironments: t.Optional(
      t.Array(ImportedFlagEnvironment, { maxItems: MAX_ITEMS, description: 'On/off state and variants per flag' }),
    ),
    contextFields: t.Optional(
      t.Array(ContextField, { maxItems: MAX_ITEMS, description: 'Context fields the strategies use' }),
    ),
    featureTags: t.Optional(
      t.Array(FeatureTag, {
        maxItems: MAX_ITEMS,
        description: 'When given, the tags of the flags become exactly these',
      }),
    ),
    segments: t.Optional(
      t.Array(SegmentRef, {
        maxItems: MAX_ITEMS,
        description: 'Segments the strategies use; each must exist here under the same name',
      }),
    ),
    tagTypes: t.Array(TagType, { maxItems: MAX_ITEMS, description: 'Tag types the tags use' }),
    dependencies: t.Optional(
      t.Array(FeatureDependencies, { maxItems: MAX_ITEMS, description: 'Parents to add to the flags' }),
    ),
    links: t.Optional(
      t.Array(t.Unknown({ description: 'The links of one flag' }), {
        maxItems: MAX_ITEMS,
        description: 'Flag links, which Unleash 7 and later export; this service has none and ignores them',
      }),
    ),
  },
  { description: 'An export (exportResultSchema), as Unleash or this service writes it' },
)

const IMPORT_EXAMPLE = {
  project: 'default',
  environment: 'development',
  data: {
    features: [
      {
        name: EXAMPLE_FLAG,
        description: 'The new checkout',
        type: 'release',
        project: 'shop',
        stale: false,
        impressionData: false,
        archived: false,
      },
    ],
    featureStrategies: [
      {
        name: 'flexibleRollout',
        featureName: EXAMPLE_FLAG,
        title: null,
        disabled: false,
        sortOrder: 0,
        segments: [],
        constraints: [
          { contextName: 'userId', operator: 'IN', values: ['42', '43'], caseInsensitive: false, inverted: false },
        ],
        variants: [],
        parameters: { rollout: '50', stickiness: 'default', groupId: EXAMPLE_FLAG },
      },
    ],
    featureEnvironments: [
      {
        name: EXAMPLE_FLAG,
        featureName: EXAMPLE_FLAG,
        environment: 'staging',
        enabled: true,
        variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default', overrides: [] }],
      },
    ],
    contextFields: [],
    featureTags: [{ featureName: EXAMPLE_FLAG, tagType: 'simple', tagValue: 'checkout' }],
    segments: [],
    tagTypes: [{ name: 'simple', description: 'Used to simplify filtering of features', icon: '#' }],
    dependencies: [],
  },
}

export const ImportToggles = t.Object(
  {
    project: Name('The project to import into: need not be the one exported from'),
    environment: Name('The environment to import into (connected to the project): need not be the one exported from'),
    data: ImportData,
  },
  { description: 'An export, and where to import it', examples: [IMPORT_EXAMPLE] },
)

const ValidateItem = t.Object(
  {
    message: t.String({ description: 'What was found' }),
    affectedItems: t.Array(t.String(), { description: 'The flags, strategies, segments… it concerns' }),
  },
  { description: 'One finding of the validation' },
)

export const ImportTogglesValidate = t.Object(
  {
    errors: t.Array(ValidateItem, { description: 'Problems that make the import fail: with any, it changes nothing' }),
    warnings: t.Array(ValidateItem, {
      description:
        'What the import will do that may surprise: flags overwritten, archived flags skipped, custom strategies used',
    }),
    permissions: t.Array(ValidateItem, {
      description: 'Permissions the token lacks for this import; empty when it has them all',
    }),
  },
  { description: 'What an import would do, found without changing anything' },
)

export const exportImportModels = {
  exportQuerySchema: ExportQuery,
  exportResultSchema: ExportResult,
  importTogglesSchema: ImportToggles,
  importTogglesValidateSchema: ImportTogglesValidate,
}
