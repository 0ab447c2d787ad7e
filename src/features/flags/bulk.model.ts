/** Request schemas of the bulk flag operations and of the variant routes added beside them, with Unleash's schema names. */
import { t } from 'elysia'
import { LIMITS } from '../limits'
import { TagInput } from './flags.model'
import { VariantInput } from './strategy.model'
import { jsonPatchBody } from './patch.model'

/** As many names as the bulk toggles take. */
const MAX_FEATURES = 10_000
/** Tags one request may add or remove per flag: twice what a flag may hold, so a full swap fits. */
const MAX_TAG_CHANGES = LIMITS.tagsPerFlag.max * 2

const FeatureNameList = (description: string) =>
  t.Array(t.String({ minLength: 1, maxLength: 100, description: 'Flag name' }), { maxItems: MAX_FEATURES, description })

export const BatchFeatures = t.Object(
  { features: FeatureNameList('Names of flags of the project; duplicates count once') },
  { description: 'A list of flags to act on, all or none', examples: [{ features: [] }] },
)

export const BatchStale = t.Object(
  {
    features: FeatureNameList('Names of flags of the project; duplicates count once'),
    stale: t.Boolean({ description: 'true marks them stale, false not stale' }),
  },
  { description: 'Flags to mark stale or not stale, all or none', examples: [{ features: [], stale: true }] },
)

const tagChanges = {
  addedTags: t.Array(TagInput, {
    maxItems: MAX_TAG_CHANGES,
    description: 'Tags to add; a tag the flag already has is left as it is',
  }),
  removedTags: t.Array(TagInput, {
    maxItems: MAX_TAG_CHANGES,
    description: 'Tags to remove, after the additions; a tag the flag does not have is ignored',
  }),
}

export const UpdateTags = t.Object(tagChanges, {
  description: 'Tags to add to and remove from a flag, all or none',
  examples: [{ addedTags: [{ type: 'simple', value: 'reviewed' }], removedTags: [] }],
})

export const TagsBulkAdd = t.Object(
  {
    features: FeatureNameList('Names of flags of the project; duplicates count once'),
    tags: t.Object(tagChanges, { description: 'Tags to add to and remove from each flag' }),
  },
  {
    description: 'Tag changes for several flags of a project, all or none',
    examples: [{ features: [], tags: { addedTags: [{ type: 'simple', value: 'reviewed' }], removedTags: [] } }],
  },
)

export const VariantListInput = t.Array(VariantInput, {
  maxItems: LIMITS.variantsPerFlagEnvironment.max,
  description: `The new variant list; at most ${LIMITS.variantsPerFlagEnvironment.max} (variantsPerFlagEnvironment)`,
  examples: [[{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }]],
})

export const PushVariants = t.Object(
  {
    variants: t.Optional(VariantListInput),
    environments: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 100, description: 'Environment name' }), {
        maxItems: LIMITS.environments.max,
        description: 'Environments of the flag whose variants to replace; at least one',
      }),
    ),
  },
  {
    description: 'One variant list for several environments of a flag',
    examples: [
      {
        variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }],
        environments: ['development'],
      },
    ],
  },
)

/** A JSON Patch on a variant list: checked as the flag PATCH is, first only as an array of objects. */
export const VariantPatches = jsonPatchBody({
  path: 'JSON pointer into the variant list: /0, /0/weight, or /- to add at the end',
  operation: 'One JSON-Patch (RFC 6902) operation on the variant list',
  description:
    'Operations applied in order to the variant list, all or nothing; the result must be a valid variant list',
  example: [
    { op: 'add', path: '/-', value: { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' } },
  ],
})

export const bulkModels = {
  batchFeaturesSchema: BatchFeatures,
  batchStaleSchema: BatchStale,
  updateTagsSchema: UpdateTags,
  tagsBulkAddSchema: TagsBulkAdd,
  pushVariantsSchema: PushVariants,
  variantPatchesSchema: VariantPatches,
}
