import { t } from 'elysia'
import { bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { featureParams, projectParams } from '../params'
import { bulkModels } from './bulk.model'
import type { FlagBulkService } from './bulk.service'
import { flagModels } from './flags.model'

const ALL_OR_NOTHING =
  'All or nothing: an unknown project, or a flag that does not exist or is in another project (404), answers for the first such name in request order and nothing changes. ' +
  'Duplicates count once. (Unleash ignores unknown flags here; a typo is an error with us.)'

export function bulkController(bulk: FlagBulkService, auth: Authorization) {
  return controllerBase(auth, { ...flagModels, ...bulkModels })
    .post(
      '/api/admin/projects/:projectId/archive',
      async ({ params, body, caller }) => {
        await bulk.archive(params.projectId, body.features, caller)
        return noContent(202)
      },
      {
        auth: 'DELETE_FEATURE',
        params: projectParams,
        body: 'batchFeaturesSchema',
        response: { 202: t.Void({ description: 'Archived' }), ...bodyErrors(404) },
        detail: {
          operationId: 'archiveFeatures',
          summary: 'Archives a list of features',
          tags: ['Features'],
          description: `${ALL_OR_NOTHING} An already archived flag, or a parent of live flags not archived with it, is a 400. Each flag records feature-archived, as archiveFeature does.`,
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/delete',
      async ({ params, body, caller }) => {
        await bulk.delete(params.projectId, body.features, caller)
        return noContent()
      },
      {
        auth: 'DELETE_FEATURE',
        params: projectParams,
        body: 'batchFeaturesSchema',
        response: { 200: t.Void({ description: 'Deleted' }), ...bodyErrors(404) },
        detail: {
          operationId: 'deleteFeatures',
          summary: 'Deletes a list of archived features',
          tags: ['Archive'],
          description: `${ALL_OR_NOTHING} A flag that is not archived is a 400. Frees the names; each flag records feature-deleted, as deleteFeature does.`,
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/stale',
      async ({ params, body, caller }) => {
        await bulk.setStale(params.projectId, body.features, body.stale, caller)
        return noContent(202)
      },
      {
        auth: 'UPDATE_FEATURE',
        params: projectParams,
        body: 'batchStaleSchema',
        response: { 202: t.Void({ description: 'Marked' }), ...bodyErrors(404) },
        detail: {
          operationId: 'staleFeatures',
          summary: 'Mark features as stale / not stale',
          tags: ['Features'],
          description: `${ALL_OR_NOTHING} Archived flags may be marked too. A flag whose stale changes records feature-metadata-updated and feature-stale-on/-off, as patchFeature does; the others record nothing.`,
        },
      },
    )
    .put(
      '/api/admin/features/:featureName/tags',
      async ({ params, body, caller }) => ({
        version: 1,
        tags: await bulk.updateTags(params.featureName, body, caller),
      }),
      {
        auth: 'UPDATE_FEATURE',
        params: featureParams,
        body: 'updateTagsSchema',
        response: { 200: 'tagsSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'updateTags',
          summary: 'Updates multiple tags for a feature',
          tags: ['Tags'],
          description:
            "Adds addedTags, then removes removedTags, in one write; answers with the flag's tags afterwards. Adding a tag the flag has, or removing one it lacks, changes nothing (as in Unleash). " +
            'A bad tag (value not 2 to 50 characters) or going past the tags-per-flag limit is a 400 and nothing changes. One feature-tagged or feature-untagged event per change.',
        },
      },
    )
    .put(
      '/api/admin/projects/:projectId/tags',
      async ({ params, body, caller }) => {
        await bulk.tagFlags(params.projectId, body.features, body.tags, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: projectParams,
        body: 'tagsBulkAddSchema',
        response: { 200: t.Void({ description: 'Tagged' }), ...bodyErrors(404) },
        detail: {
          operationId: 'addTagToFeatures',
          summary: 'Adds and removes tags of the specified features',
          tags: ['Tags'],
          description: `${ALL_OR_NOTHING} Each flag gets the tag changes of updateTags, with the same events.`,
        },
      },
    )
}
