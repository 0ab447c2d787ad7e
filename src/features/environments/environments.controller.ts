import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, type Authorization } from '../../http/plugins'
import type { EnvironmentsService } from './environments.service'

export function environmentsController(environments: EnvironmentsService, auth: Authorization) {
  return controllerBase(auth)
    .get('/api/admin/environments', () => ({ version: 1, environments: environments.list() }), {
      auth: 'NONE',
      response: { 200: 'environmentsSchema', ...authErrors() },
      detail: { operationId: 'getAllEnvironments', summary: 'Get environments', tags: ['Environments'] },
    })
    .post('/api/admin/environments', async ({ body, caller, set }) => {
      set.status = 201
      return environments.create(body, caller)
    }, {
      auth: 'CREATE_ENVIRONMENT',
      body: 'createEnvironmentSchema',
      response: { 201: 'environmentSchema', ...bodyErrors(409) },
      detail: { operationId: 'createEnvironment', summary: 'Create an environment', tags: ['Environments'], description: 'It is connected to no project; connect it with addEnvironmentToProject.' },
    })
}
