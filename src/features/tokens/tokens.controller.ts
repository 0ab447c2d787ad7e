import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { TokensService } from './tokens.service'
import type { Authorization } from './auth'
import { tokenModels } from './tokens.model'
import { tokenParams } from '../params'

const tags = ['API tokens']

export function tokensController(tokens: TokensService, auth: Authorization) {
  return controllerBase(auth, tokenModels)
    .get('/api/admin/api-tokens', () => ({ tokens: tokens.list() }), {
      auth: 'ADMIN',
      response: { 200: 'apiTokensSchema', ...authErrors() },
      detail: {
        operationId: 'getAllApiTokens',
        summary: 'Get API tokens',
        tags,
        description: 'Secrets are never shown again after creation.',
      },
    })
    .post(
      '/api/admin/api-tokens',
      async ({ body, caller, set }) => {
        set.status = 201
        return tokens.create(body, caller)
      },
      {
        auth: 'ADMIN',
        body: 'createApiTokenSchema',
        response: { 201: 'createdApiTokenSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createApiToken',
          summary: 'Create an API token',
          tags,
          description: 'The response holds the secret; only its hash is stored.',
        },
      },
    )
    .delete(
      '/api/admin/api-tokens/:tokenName',
      async ({ params, caller }) => {
        await tokens.delete(params.tokenName, caller)
        return noContent()
      },
      {
        auth: 'ADMIN',
        params: tokenParams,
        response: { 200: t.Void({ description: 'Deleted' }), ...authErrors(404) },
        detail: { operationId: 'deleteApiToken', summary: 'Delete an API token', tags },
      },
    )
}
