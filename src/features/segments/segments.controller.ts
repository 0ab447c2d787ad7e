import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { segmentModels, segmentParams } from './segments.model'
import type { SegmentsService } from './segments.service'

const tags = ['Segments']

export function segmentsController(segments: SegmentsService, auth: Authorization) {
  return controllerBase(auth, segmentModels)
    .get('/api/admin/segments', ({ caller }) => ({ segments: segments.list(caller) }), {
      auth: 'NONE',
      response: { 200: 'segmentsSchema', ...authErrors() },
      detail: {
        operationId: 'getSegments',
        summary: 'Get segments',
        tags,
        description: 'A token limited to some projects sees the global segments and those of its projects.',
      },
    })
    .post(
      '/api/admin/segments',
      async ({ body, caller, set }) => {
        set.status = 201
        return segments.create(body, caller)
      },
      {
        auth: 'CREATE_SEGMENT',
        body: 'upsertSegmentSchema',
        response: { 201: 'segmentSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createSegment',
          summary: 'Create a segment',
          tags,
          description:
            "Names are unique (409 otherwise); constraints are checked as a strategy's are. Needs a token for all projects.",
        },
      },
    )
    .get('/api/admin/segments/:id', ({ params, caller }) => segments.get(params.id, caller), {
      auth: 'NONE',
      params: segmentParams,
      response: { 200: 'segmentSchema', ...authErrors(400, 404) },
      detail: {
        operationId: 'getSegment',
        summary: 'Get a segment',
        tags,
        description: 'A segment of a project the token may not see answers 404.',
      },
    })
    .put(
      '/api/admin/segments/:id',
      async ({ params, body, caller }) => {
        await segments.update(params.id, body, caller)
        return noContent(204)
      },
      {
        auth: 'UPDATE_SEGMENT',
        params: segmentParams,
        body: 'upsertSegmentSchema',
        response: { 204: t.Void({ description: 'Updated' }), ...bodyErrors(404, 409) },
        detail: {
          operationId: 'updateSegment',
          summary: 'Update a segment',
          tags,
          description: 'Replaces it whole. Moving it into a project while flags of other projects use it answers 409.',
        },
      },
    )
    .delete(
      '/api/admin/segments/:id',
      async ({ params, caller }) => {
        await segments.remove(params.id, caller)
        return noContent(204)
      },
      {
        auth: 'DELETE_SEGMENT',
        params: segmentParams,
        response: { 204: t.Void({ description: 'Deleted' }), ...authErrors(400, 404, 409) },
        detail: {
          operationId: 'removeSegment',
          summary: 'Delete a segment',
          tags,
          description: 'A segment that a strategy uses (archived flags included) answers 409 naming the flags.',
        },
      },
    )
}
