import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase } from '../../http/plugins'
import type { EnvironmentsService } from './environments.service'
import type { Authorization } from '../tokens/auth'
import { environmentModels } from './environments.model'

export function environmentsController(environments: EnvironmentsService, auth: Authorization) {
  return controllerBase(auth, environmentModels)
    .get('/api/admin/environments', () => ({ version: 1, environments: environments.list() }), {
      auth: 'NONE',
      response: { 200: 'environmentsSchema', ...authErrors() },
      detail: { operationId: 'getAllEnvironments', summary: 'Get environments', tags: ['Environments'] },
    })
    .post(
      '/api/admin/environments',
      async ({ body, caller, set }) => {
        set.status = 201
        return environments.create(body, caller)
      },
      {
        auth: 'CREATE_ENVIRONMENT',
        body: 'createEnvironmentSchema',
        response: { 201: 'environmentSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createEnvironment',
          summary: 'Create an environment',
          tags: ['Environments'],
          description: 'It is connected to no project; connect it with addEnvironmentToProject.',
        },
      },
    )
}
