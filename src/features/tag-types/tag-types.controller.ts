import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { tagTypeModels } from './tag-types.model'
import type { TagTypesService } from './tag-types.service'

const params = t.Object({ name: t.String({ description: 'Tag type name' }) })
const tags = ['Tags']

export function tagTypesController(tagTypes: TagTypesService, auth: Authorization) {
  return controllerBase(auth, tagTypeModels)
    .get('/api/admin/tag-types', () => ({ version: 1, tagTypes: tagTypes.list() }), {
      auth: 'NONE',
      response: { 200: 'tagTypesSchema', ...authErrors() },
      detail: {
        operationId: 'getTagTypes',
        summary: 'Get all tag types',
        tags,
        description: 'Every tag type, by name. A new data directory has one, simple.',
      },
    })
    .post(
      '/api/admin/tag-types',
      async ({ body, caller, set }) => {
        const created = await tagTypes.create(body, caller)
        set.status = 201
        set.headers.location = `tag-types/${encodeURIComponent(created.name)}`
        return created
      },
      {
        auth: 'CREATE_TAG_TYPE',
        body: 'createTagTypeSchema',
        response: { 201: 'tagTypeSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createTagType',
          summary: 'Create a tag type',
          tags,
          description: 'Name: 2 to 50 URL-safe characters. 409 when taken. Records tag-type-created.',
        },
      },
    )
    .post('/api/admin/tag-types/validate', ({ body }) => ({ valid: true, tagType: tagTypes.validate(body) }), {
      auth: 'NONE',
      body: 'createTagTypeSchema',
      response: { 200: 'validateTagTypeSchema', ...bodyErrors(409) },
      detail: {
        operationId: 'validateTagType',
        summary: 'Validate a tag type',
        tags,
        description:
          'The checks of createTagType, creating nothing: 400 for a bad body or name, 409 when the name is taken.',
      },
    })
    .get('/api/admin/tag-types/:name', ({ params }) => ({ version: 1, tagType: tagTypes.get(params.name) }), {
      auth: 'NONE',
      params,
      response: { 200: 'tagTypeResponseSchema', ...authErrors(404) },
      detail: { operationId: 'getTagType', summary: 'Get a tag type', tags },
    })
    .put('/api/admin/tag-types/:name', ({ params, body, caller }) => tagTypes.update(params.name, body, caller), {
      auth: 'UPDATE_TAG_TYPE',
      params,
      body: 'updateTagTypeSchema',
      response: { 200: 'tagTypeSchema', ...bodyErrors(404) },
      detail: {
        operationId: 'updateTagType',
        summary: 'Update a tag type',
        tags,
        description:
          'Changes the description, icon or colour; the name cannot change. Answers the type (Unleash answers an empty 200). An unknown type is a 404. Records tag-type-updated.',
      },
    })
    .delete(
      '/api/admin/tag-types/:name',
      async ({ params, caller }) => {
        await tagTypes.delete(params.name, caller)
        return noContent()
      },
      {
        auth: 'DELETE_TAG_TYPE',
        params,
        response: { 200: t.Void({ description: 'Deleted' }), ...authErrors(404) },
        detail: {
          operationId: 'deleteTagType',
          summary: 'Delete a tag type',
          tags,
          description:
            'Deletes the type and takes its tags off every flag, as Unleash does. Records tag-type-deleted, then feature-untagged for each tag taken off. An unknown type is a 404 (Unleash answers 200).',
        },
      },
    )
}
