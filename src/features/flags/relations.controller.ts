import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { RelationsService } from './relations.service'
import type { Authorization } from '../tokens/auth'
import { flagModels } from './flags.model'
import { featureParams, flagParams } from '../params'

export function relationsController(relations: RelationsService, auth: Authorization) {
  return controllerBase(auth, flagModels)
    .get(
      '/api/admin/features/:featureName/tags',
      ({ params }) => ({ version: 1, tags: relations.tags(params.featureName) }),
      {
        auth: 'NONE',
        params: featureParams,
        response: { 200: 'tagsSchema', ...authErrors(404) },
        detail: { operationId: 'listTags', summary: "Get a flag's tags", tags: ['Tags'] },
      },
    )
    .post(
      '/api/admin/features/:featureName/tags',
      async ({ params, body, caller, set }) => {
        set.status = 201
        return relations.addTag(params.featureName, body, caller)
      },
      {
        auth: 'UPDATE_FEATURE',
        params: featureParams,
        body: 'tagInputSchema',
        response: { 201: 'tagSchema', ...bodyErrors(404, 409) },
        detail: {
          operationId: 'addTag',
          summary: 'Tag a flag',
          tags: ['Tags'],
          description: 'Value 2 to 50 characters; type defaults to simple. 409 when the flag has the tag.',
        },
      },
    )
    .delete(
      '/api/admin/features/:featureName/tags/:type/:value',
      async ({ params, caller }) => {
        await relations.removeTag(params.featureName, params.type, params.value, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: t.Object({
          featureName: t.String({ description: 'Flag name' }),
          type: t.String({ description: 'Tag type' }),
          value: t.String({ description: 'Tag value' }),
        }),
        response: { 200: t.Void({ description: 'Removed' }), ...authErrors(404) },
        detail: { operationId: 'removeTag', summary: 'Remove a tag from a flag', tags: ['Tags'] },
      },
    )
    .post(
      '/api/admin/projects/:projectId/features/:featureName/dependencies',
      async ({ params, body, caller }) => {
        await relations.addDependency(params.projectId, params.featureName, body, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: flagParams,
        body: 'dependencySchema',
        response: { 200: t.Void({ description: 'Added' }), ...bodyErrors(404) },
        detail: {
          operationId: 'addFeatureDependency',
          summary: 'Make a flag depend on a parent',
          tags: ['Dependencies'],
          description:
            'The parent is in the same project, not the flag itself, has no parents of its own; a flag with children cannot get a parent.',
        },
      },
    )
    .delete(
      '/api/admin/projects/:projectId/features/:featureName/dependencies/:parent',
      async ({ params, caller }) => {
        await relations.removeDependency(params.projectId, params.featureName, params.parent, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: t.Object({
          projectId: t.String({ description: 'Project id' }),
          featureName: t.String({ description: 'Child flag name' }),
          parent: t.String({ description: 'Parent flag name' }),
        }),
        response: { 200: t.Void({ description: 'Removed' }), ...authErrors(404) },
        detail: { operationId: 'deleteFeatureDependency', summary: 'Remove one dependency', tags: ['Dependencies'] },
      },
    )
    .delete(
      '/api/admin/projects/:projectId/features/:featureName/dependencies',
      async ({ params, caller }) => {
        await relations.removeDependencies(params.projectId, params.featureName, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: flagParams,
        response: { 200: t.Void({ description: 'Removed' }), ...authErrors(404) },
        detail: {
          operationId: 'deleteFeatureDependencies',
          summary: 'Remove all dependencies of a flag',
          tags: ['Dependencies'],
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/features/:featureName/lifecycle/complete',
      async ({ params, body, caller }) => {
        await relations.complete(params.projectId, params.featureName, body, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: flagParams,
        body: 'completeFeatureSchema',
        response: { 200: t.Void({ description: 'Completed' }), ...bodyErrors(404) },
        detail: { operationId: 'complete', summary: 'Mark a flag completed', tags: ['Lifecycle'] },
      },
    )
    .post(
      '/api/admin/projects/:projectId/features/:featureName/lifecycle/uncomplete',
      async ({ params, caller }) => {
        await relations.uncomplete(params.projectId, params.featureName, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: flagParams,
        response: { 200: t.Void({ description: 'Back to live, pre-live or initial' }), ...authErrors(400, 404) },
        detail: { operationId: 'uncomplete', summary: 'Undo completing a flag', tags: ['Lifecycle'] },
      },
    )
}
