import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { ROOT_ROLES } from '../users/users.service'
import { accountIdParams, accountTokenParams, personalTokenModels, tokenIdParams } from './personal-tokens.model'
import { personOf, type PersonalTokensService } from './personal-tokens.service'
import type { ServiceAccountsService } from './service-accounts.service'

const rootRoles = ROOT_ROLES.map(({ id, name, description }) => ({ id, name, description, type: 'root' }))

/** A signed-in person's own tokens (Unleash's routes). */
export function personalTokensController(tokens: PersonalTokensService, auth: Authorization) {
  const tags = ['Personal access tokens']
  return controllerBase(auth, personalTokenModels)
    .get('/api/admin/user/tokens', ({ caller }) => ({ pats: tokens.list(personOf(caller)) }), {
      auth: 'NONE',
      response: { 200: 'patsSchema', ...authErrors() },
      detail: {
        operationId: 'getPats',
        summary: 'Your personal access tokens',
        tags,
        description: 'For a person (signed in, or with one of their tokens); an API token or service account: 403.',
      },
    })
    .post(
      '/api/admin/user/tokens',
      async ({ body, caller, set }) => {
        set.status = 201
        return tokens.create(personOf(caller), body, caller)
      },
      {
        auth: 'NONE',
        body: 'createPatSchema',
        response: { 201: 'createdPatSchema', ...bodyErrors() },
        detail: {
          operationId: 'createPat',
          summary: 'Make a personal access token',
          tags,
          description:
            "The answer holds the secret (`user:…`), shown this once. The token acts as you, with your root role at each request: it stops when it is deleted or expires, and when you are deleted, disabled or demoted below a route's permission. Records pat-created.",
        },
      },
    )
    .delete(
      '/api/admin/user/tokens/:id',
      async ({ params, caller }) => {
        await tokens.delete(personOf(caller), Number(params.id), caller)
        return noContent()
      },
      {
        auth: 'NONE',
        params: tokenIdParams,
        response: { 200: t.Void({ description: 'Deleted: the token stops at once' }), ...authErrors(404) },
        detail: {
          operationId: 'deletePat',
          summary: 'Delete one of your personal access tokens',
          tags,
          description: "Another person's token answers 404, as one that does not exist. Records pat-deleted.",
        },
      },
    )
}

/** Service accounts and their tokens (Unleash's routes), for admins. */
export function serviceAccountsController(
  accounts: ServiceAccountsService,
  tokens: PersonalTokensService,
  auth: Authorization,
) {
  const tags = ['Service accounts']
  return controllerBase(auth, personalTokenModels)
    .get('/api/admin/service-account', () => ({ serviceAccounts: accounts.list(), rootRoles }), {
      auth: 'ADMIN',
      response: { 200: 'serviceAccountsSchema', ...authErrors() },
      detail: { operationId: 'getServiceAccounts', summary: 'Get service accounts', tags },
    })
    .post(
      '/api/admin/service-account',
      async ({ body, caller, set }) => {
        set.status = 201
        return accounts.create(body, caller)
      },
      {
        auth: 'ADMIN',
        body: 'createServiceAccountSchema',
        response: { 201: 'serviceAccountSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createServiceAccount',
          summary: 'Make a service account',
          tags,
          description: 'An account that is not a person and cannot sign in. Records service-account-created.',
        },
      },
    )
    .put(
      '/api/admin/service-account/:id',
      ({ params, body, caller }) => accounts.update(Number(params.id), body, caller),
      {
        auth: 'ADMIN',
        params: accountIdParams,
        body: 'updateServiceAccountSchema',
        response: { 200: 'serviceAccountSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'updateServiceAccount',
          summary: 'Change a service account',
          tags,
          description: 'Its name and root role; its tokens hold the new role at once. Records service-account-updated.',
        },
      },
    )
    .delete(
      '/api/admin/service-account/:id',
      async ({ params, caller }) => {
        await accounts.delete(Number(params.id), caller)
        return noContent()
      },
      {
        auth: 'ADMIN',
        params: accountIdParams,
        response: { 200: t.Void({ description: 'Deleted, with its tokens' }), ...authErrors(404) },
        detail: {
          operationId: 'deleteServiceAccount',
          summary: 'Delete a service account',
          tags,
          description: 'Its tokens stop at once. Records service-account-deleted.',
        },
      },
    )
    .get(
      '/api/admin/service-account/:id/token',
      ({ params }) => ({ pats: tokens.list(accounts.get(Number(params.id)).id) }),
      {
        auth: 'ADMIN',
        params: accountIdParams,
        response: { 200: 'patsSchema', ...authErrors(404) },
        detail: { operationId: 'getServiceAccountTokens', summary: "A service account's tokens", tags },
      },
    )
    .post(
      '/api/admin/service-account/:id/token',
      async ({ params, body, caller, set }) => {
        const created = await tokens.create(Number(params.id), body, caller, 'serviceAccounts')
        set.status = 201
        return created
      },
      {
        auth: 'ADMIN',
        params: accountIdParams,
        body: 'createPatSchema',
        response: { 201: 'createdPatSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'createServiceAccountToken',
          summary: 'Make a token for a service account',
          tags,
          description:
            "The answer holds the secret (`user:…`), shown this once. The token acts as the account, with the account's root role at each request. Records pat-created.",
        },
      },
    )
    .delete(
      '/api/admin/service-account/:id/token/:tokenId',
      async ({ params, caller }) => {
        accounts.get(Number(params.id))
        await tokens.delete(Number(params.id), Number(params.tokenId), caller)
        return noContent()
      },
      {
        auth: 'ADMIN',
        params: accountTokenParams,
        response: { 200: t.Void({ description: 'Deleted: the token stops at once' }), ...authErrors(404) },
        detail: { operationId: 'deleteServiceAccountToken', summary: "Delete a service account's token", tags },
      },
    )
}
