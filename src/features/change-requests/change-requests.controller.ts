import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { projectEnvironmentParams, projectParams } from '../params'
import { changeRequestModels } from './change-requests.model'
import type { ChangeInput, ChangeRequestsService } from './change-requests.service'

const tags = ['Change requests']
const base = '/api/admin/projects/:projectId/change-requests'
const envBase = '/api/admin/projects/:projectId/environments/:environment/change-requests'
const projectId = t.String({ description: 'Project id' })
const requestParams = t.Object({ projectId, changeRequestId: t.String({ description: 'Change request id' }) })
const changeParams = t.Object({
  projectId,
  changeRequestId: t.String({ description: 'Change request id' }),
  changeId: t.String({ description: 'Change id' }),
})
const detail = (operationId: string, summary: string, description?: string) => ({
  operationId,
  summary,
  tags,
  ...(description ? { description } : {}),
})

export function changeRequestsController(requests: ChangeRequestsService, auth: Authorization) {
  return controllerBase(auth, changeRequestModels)
    .get(`${base}/config`, ({ params }) => requests.config(params.projectId), {
      auth: 'NONE',
      params: projectParams,
      response: { 200: 'changeRequestConfigSchema', ...authErrors(404) },
      detail: detail('getProjectChangeRequestConfig', 'Get the change-request setting of each environment'),
    })
    .put(
      `${envBase}/config`,
      async ({ params, body, caller }) => {
        await requests.configure(params.projectId, params.environment, body, caller)
        return noContent(204)
      },
      {
        auth: 'ADMIN',
        params: projectEnvironmentParams,
        body: 'changeRequestEnvironmentConfigSchema',
        response: { 204: t.Void({ description: 'Saved' }), ...bodyErrors(404) },
        detail: detail('updateProjectChangeRequestConfig', "Set an environment's change requests"),
      },
    )
    .post(
      envBase,
      async ({ params, body, caller }) =>
        requests.add(params.projectId, params.environment, ([] as ChangeInput[]).concat(body as never), caller),
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: projectEnvironmentParams,
        body: 'changeRequestCreateSchema',
        response: { 200: 'changeRequestSchema', ...bodyErrors(404) },
        detail: detail(
          'addChangeToDraft',
          'Add changes to your draft',
          'Each change is checked as its direct route checks its body (400 or 404 naming it), and nothing is changed until the request is applied.',
        ),
      },
    )
    .get(`${base}/open`, ({ params }) => requests.open(params.projectId), {
      auth: 'NONE',
      params: projectParams,
      response: { 200: 'changeRequestsSchema', ...authErrors(404) },
      detail: detail('getOpenChangeRequests', 'Get the open change requests of a project'),
    })
    .get(`${base}/pending/:featureName`, ({ params }) => requests.pending(params.projectId, params.featureName), {
      auth: 'NONE',
      params: t.Object({ projectId, featureName: t.String({ description: 'Flag name' }) }),
      response: { 200: 'changeRequestsSchema', ...authErrors(404) },
      detail: detail('getOpenChangeRequestsForFeature', 'Get the open change requests touching a flag'),
    })
    .get(`${base}/:changeRequestId`, ({ params }) => requests.get(params.projectId, params.changeRequestId), {
      auth: 'NONE',
      params: requestParams,
      response: { 200: 'changeRequestSchema', ...authErrors(404) },
      detail: detail(
        'getChangeRequest',
        'Get a change request',
        'Each flag shows `conflict` when what it changes moved since.',
      ),
    })
    .delete(
      `${base}/:changeRequestId`,
      async ({ params, caller }) => {
        await requests.discard(params.projectId, params.changeRequestId, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: requestParams,
        response: { 200: t.Void({ description: 'Discarded' }), ...authErrors(400, 404) },
        detail: detail('deleteChangeRequest', 'Discard a draft'),
      },
    )
    .put(
      `${base}/:changeRequestId/state`,
      ({ params, body, caller }) => requests.setState(params.projectId, params.changeRequestId, body, caller),
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: requestParams,
        body: 'changeRequestStateSchema',
        response: { 200: 'changeRequestSchema', ...bodyErrors(404, 409) },
        detail: detail(
          'changeRequestStateChange',
          'Move a change request on: to review, approve, apply, schedule, reject, cancel',
          'Approval needs people other than the author; applying is one write of every change or none (409 on a conflict).',
        ),
      },
    )
    .put(
      `${base}/:changeRequestId/title`,
      async ({ params, body, caller }) => {
        await requests.setTitle(params.projectId, params.changeRequestId, body.title, caller)
        return noContent(204)
      },
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: requestParams,
        body: 'changeRequestTitleSchema',
        response: { 204: t.Void({ description: 'Saved' }), ...bodyErrors(404, 409) },
        detail: detail('updateChangeRequestTitle', 'Change the title'),
      },
    )
    .post(
      `${base}/:changeRequestId/comments`,
      ({ params, body, caller }) => requests.comment(params.projectId, params.changeRequestId, body.text, caller),
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: requestParams,
        body: 'changeRequestAddCommentSchema',
        response: { 200: 'changeRequestSchema', ...bodyErrors(404) },
        detail: detail('addChangeRequestComment', 'Comment on a change request'),
      },
    )
    .put(
      `${base}/:changeRequestId/changes/:changeId`,
      ({ params, body, caller }) =>
        requests.editChange(params.projectId, params.changeRequestId, Number(params.changeId), body.payload, caller),
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: changeParams,
        body: 'changeRequestEditChangeSchema',
        response: { 200: 'changeRequestSchema', ...bodyErrors(404, 409) },
        detail: detail(
          'updateChangeRequestChange',
          'Edit (or refresh) a change',
          'An approved or scheduled request loses its approvals and goes back to review.',
        ),
      },
    )
    .delete(
      `${base}/:changeRequestId/changes/:changeId`,
      async ({ params, caller }) => {
        await requests.deleteChange(params.projectId, params.changeRequestId, Number(params.changeId), caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: changeParams,
        response: { 200: t.Void({ description: 'Removed' }), ...authErrors(404, 409) },
        detail: detail('deleteChange', 'Remove a change'),
      },
    )
    .get('/api/admin/search/change-requests', ({ query, caller }) => requests.search(query, caller), {
      auth: 'NONE',
      query: t.Object({
        state: t.Optional(t.String({ maxLength: 20, description: 'Only requests in this state' })),
        createdBy: t.Optional(t.String({ maxLength: 100, description: 'Only requests by this user (id or username)' })),
        requiresApprovalBy: t.Optional(
          t.String({
            maxLength: 100,
            description: 'Only requests in review that this user (id or username) may approve',
          }),
        ),
      }),
      response: { 200: 'changeRequestsSchema', ...authErrors(400) },
      detail: detail('searchChangeRequests', 'Search change requests'),
    })
}
