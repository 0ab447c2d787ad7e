import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { contextModels } from './context.model'
import type { ContextService } from './context.service'

const params = t.Object({ contextField: t.String({ description: 'Context field name' }) })
const tags = ['Context']

export function contextController(context: ContextService, auth: Authorization) {
  return controllerBase(auth, contextModels)
    .get('/api/admin/context', ({ caller }) => context.list(caller), {
      auth: 'NONE',
      response: { 200: 'contextFieldsSchema', ...authErrors() },
      detail: {
        operationId: 'getContextFields',
        summary: 'Gets configured context fields',
        tags,
        description:
          'Every context field by name: the built-in environment, userId, appName, currentTime and sessionId (until deleted) and those created. ' +
          'usedInFeatures and usedInProjects count only flags of projects the token may see.',
      },
    })
    .post(
      '/api/admin/context',
      async ({ body, caller, set }) => {
        const created = await context.create(body, caller)
        set.status = 201
        set.headers.location = `context/${encodeURIComponent(created.name)}`
        return created
      },
      {
        auth: 'CREATE_CONTEXT_FIELD',
        body: 'createContextFieldSchema',
        response: { 201: 'contextFieldSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createContextField',
          summary: 'Create a context field',
          tags,
          description:
            'Name: 1 to 100 URL-safe characters; 409 when taken. Legal values must be unique. Records context-field-created.',
        },
      },
    )
    .post(
      '/api/admin/context/validate',
      ({ body }) => {
        context.validateName(body.name)
        return noContent()
      },
      {
        auth: 'UPDATE_CONTEXT_FIELD',
        body: 'nameSchema',
        response: { 200: t.Void({ description: 'The name is valid and free' }), ...bodyErrors(409) },
        detail: {
          operationId: 'validateContextField',
          summary: 'Validate a context field',
          tags,
          description: '400 for a bad name, 409 when a field has it.',
        },
      },
    )
    .get('/api/admin/context/:contextField', ({ params }) => context.get(params.contextField), {
      auth: 'NONE',
      params,
      response: { 200: 'contextFieldSchema', ...authErrors(404) },
      detail: { operationId: 'getContextField', summary: 'Gets context field', tags },
    })
    .get(
      '/api/admin/context/:contextField/strategies',
      ({ params, caller }) => context.strategiesUsing(params.contextField, caller),
      {
        auth: 'NONE',
        params,
        response: { 200: 'contextFieldStrategiesSchema', ...authErrors() },
        detail: {
          operationId: 'getStrategiesByContextField',
          summary: 'Get strategies that use a context field',
          tags: ['Strategies'],
          description:
            'The strategies with a constraint on the field, of the flags of projects the token may see (archived flags included, as in Unleash). ' +
            'A field that does not exist lists none (200, not 404), as in Unleash.',
        },
      },
    )
    .put(
      '/api/admin/context/:contextField',
      ({ params, body, caller }) => context.update(params.contextField, body, caller),
      {
        auth: 'UPDATE_CONTEXT_FIELD',
        params,
        body: 'updateContextFieldSchema',
        response: { 200: 'contextFieldSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'updateContextField',
          summary: 'Update an existing context field',
          tags,
          description:
            'The given properties replace the stored ones; missing ones are left alone (Unleash resets them). Answers the field (Unleash: an empty 200). ' +
            'Constraints already saved keep values no longer legal. Records context-field-updated.',
        },
      },
    )
    .post(
      '/api/admin/context/:contextField/legal-values',
      ({ params, body, caller }) => context.putLegalValue(params.contextField, body, caller),
      {
        auth: 'UPDATE_CONTEXT_FIELD',
        params,
        body: 'legalValueSchema',
        response: { 200: 'contextFieldSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'updateContextFieldLegalValue',
          summary: 'Add or update legal value for the context field',
          tags,
          description:
            'Adds the value, or replaces the description of a value the field has. Records context-field-updated.',
        },
      },
    )
    .delete(
      '/api/admin/context/:contextField/legal-values/:legalValue',
      async ({ params, caller }) => {
        await context.deleteLegalValue(params.contextField, params.legalValue, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_CONTEXT_FIELD',
        params: t.Object({
          contextField: t.String({ description: 'Context field name' }),
          legalValue: t.String({ description: 'The legal value to remove' }),
        }),
        response: { 200: t.Void({ description: 'Removed' }), ...authErrors(404) },
        detail: {
          operationId: 'deleteContextFieldLegalValue',
          summary: 'Delete legal value for the context field',
          tags,
          description:
            'Constraints already using it keep it. A value the field does not have is a 404. Records context-field-updated.',
        },
      },
    )
    .delete(
      '/api/admin/context/:contextField',
      async ({ params, caller }) => {
        await context.delete(params.contextField, caller)
        return noContent()
      },
      {
        auth: 'DELETE_CONTEXT_FIELD',
        params,
        response: { 200: t.Void({ description: 'Deleted' }), ...authErrors(404) },
        detail: {
          operationId: 'deleteContextField',
          summary: 'Delete an existing context field',
          tags,
          description:
            'As in Unleash, constraints on the field are left as they are (and keep working in the SDKs). Records context-field-deleted.',
        },
      },
    )
}
