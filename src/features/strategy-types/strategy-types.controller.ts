import { t } from 'elysia'
import { authErrors, bodyErrors, errors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { strategyTypeModels } from './strategy-types.model'
import type { StrategyTypesService } from './strategy-types.service'

const params = t.Object({ name: t.String({ description: 'Strategy type name' }) })
const tags = ['Strategies']

export function strategyTypesController(strategyTypes: StrategyTypesService, auth: Authorization) {
  return controllerBase(auth, strategyTypeModels)
    .get('/api/admin/strategies', () => ({ version: 1, strategies: strategyTypes.list() }), {
      auth: 'NONE',
      response: { 200: 'strategiesSchema', ...authErrors() },
      detail: {
        operationId: 'getAllStrategies',
        summary: 'Get all strategy types',
        tags,
        description: 'The built-in types first, then the user-defined ones by name.',
      },
    })
    .get('/api/admin/strategies/:name', ({ params }) => strategyTypes.get(params.name), {
      auth: 'NONE',
      params,
      response: { 200: 'strategySchema', ...authErrors(404) },
      detail: { operationId: 'getStrategy', summary: 'Get a strategy type', tags },
    })
    .post(
      '/api/admin/strategies',
      async ({ body, caller, set }) => {
        set.status = 201
        return strategyTypes.create(body, caller)
      },
      {
        auth: 'CREATE_STRATEGY',
        body: 'createStrategySchema',
        response: { 201: 'strategySchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createStrategy',
          summary: 'Define a strategy type',
          tags,
          description: 'Records strategy-created. Strategies on flags may then use it; SDKs evaluate it.',
        },
      },
    )
    .put('/api/admin/strategies/:name', ({ params, body, caller }) => strategyTypes.update(params.name, body, caller), {
      auth: 'UPDATE_STRATEGY',
      params,
      body: 'updateStrategySchema',
      response: { 200: 'strategySchema', ...bodyErrors(404) },
      detail: {
        operationId: 'updateStrategy',
        summary: 'Change a user-defined strategy type',
        tags,
        description: 'Built-in types answer 400. Records strategy-updated.',
      },
    })
    .delete(
      '/api/admin/strategies/:name',
      async ({ params, caller }) => {
        await strategyTypes.delete(params.name, caller)
        return noContent()
      },
      {
        auth: 'DELETE_STRATEGY',
        params,
        response: { 200: t.Void({ description: 'Deleted' }), ...authErrors(404), ...errors(400) },
        detail: {
          operationId: 'removeStrategy',
          summary: 'Delete a user-defined strategy type',
          tags,
          description:
            'Built-in types answer 400. Unlike Unleash, a type still used by a strategy of any flag (archived ones too) is refused with 400 naming the flags, instead of leaving strategies of a type that no longer exists. Records strategy-deleted.',
        },
      },
    )
    .post(
      '/api/admin/strategies/:name/deprecate',
      ({ params, caller }) => strategyTypes.setDeprecated(params.name, true, caller),
      {
        auth: 'UPDATE_STRATEGY',
        params,
        response: { 200: 'strategySchema', ...authErrors(404), ...errors(400) },
        detail: {
          operationId: 'deprecateStrategy',
          summary: 'Deprecate a user-defined strategy type',
          tags,
          description:
            'It can no longer be added to flags; strategies that use it stay and are served. Records strategy-deprecated (nothing if it already was).',
        },
      },
    )
    .post(
      '/api/admin/strategies/:name/reactivate',
      ({ params, caller }) => strategyTypes.setDeprecated(params.name, false, caller),
      {
        auth: 'UPDATE_STRATEGY',
        params,
        response: { 200: 'strategySchema', ...authErrors(404), ...errors(400) },
        detail: {
          operationId: 'reactivateStrategy',
          summary: 'Reactivate a deprecated strategy type',
          tags,
          description: 'Records strategy-reactivated (nothing if it was not deprecated).',
        },
      },
    )
}
