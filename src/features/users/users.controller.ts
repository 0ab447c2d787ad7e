import { t } from 'elysia'
import { NoAccessError } from '../../errors'
import { authErrors, bodyErrors, errors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import { callerAddress } from '../../http/request-log'
import type { Authorization } from '../tokens/auth'
import { fromOwnOrigin } from './request-auth'
import type { SessionsService } from './sessions.service'
import { userIdParams, userModels } from './users.model'
import { ROOT_ROLES, type UsersService } from './users.service'

const tags = ['Users']
const rootRoles = ROOT_ROLES.map(({ id, name, description }) => ({ id, name, description, type: 'root' }))

export function usersController(users: UsersService, auth: Authorization) {
  return controllerBase(auth, userModels)
    .get('/api/admin/user-admin', () => ({ users: users.list(), rootRoles }), {
      auth: 'ADMIN',
      response: { 200: 'usersSchema', ...authErrors() },
      detail: { operationId: 'getUsers', summary: 'Get users', tags },
    })
    .post(
      '/api/admin/user-admin',
      async ({ body, caller, set }) => {
        const user = await users.create(body, caller)
        set.status = 201
        set.headers.location = `user-admin/${user.id}`
        return user
      },
      {
        auth: 'ADMIN',
        body: 'createUserSchema',
        response: { 201: 'userSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createUser',
          summary: 'Create a user',
          tags,
          description:
            'The password is checked against the strength rule and stored as an argon2id hash. Records user-created.',
        },
      },
    )
    .get('/api/admin/user-admin/:id', ({ params }) => users.get(Number(params.id)), {
      auth: 'ADMIN',
      params: userIdParams,
      response: { 200: 'userSchema', ...authErrors(404) },
      detail: { operationId: 'getUser', summary: 'Get a user', tags },
    })
    .put('/api/admin/user-admin/:id', ({ params, body, caller }) => users.update(Number(params.id), body, caller), {
      auth: 'ADMIN',
      params: userIdParams,
      body: 'updateUserSchema',
      response: { 200: 'userSchema', ...bodyErrors(404, 409) },
      detail: {
        operationId: 'updateUser',
        summary: 'Update a user',
        tags,
        description:
          'Email, name, root role, and disabled (which ends the sessions and stops the personal tokens and sign-in of the user). The last admin, or the last admin who can sign in (has a password), cannot be demoted or disabled (409). Records user-updated.',
      },
    })
    .delete(
      '/api/admin/user-admin/:id',
      async ({ params, caller }) => {
        await users.delete(Number(params.id), caller)
        return noContent()
      },
      {
        auth: 'ADMIN',
        params: userIdParams,
        response: { 200: t.Void({ description: "Deleted; the user's sessions have ended" }), ...authErrors(404, 409) },
        detail: {
          operationId: 'deleteUser',
          summary: 'Delete a user',
          tags,
          description:
            "Ends the user's sessions. The last admin, or the last admin who can sign in (has a password), cannot be deleted (409). Records user-deleted.",
        },
      },
    )
    .post(
      '/api/admin/user-admin/:id/change-password',
      async ({ params, body, caller }) => {
        await users.changePassword(Number(params.id), body.password, caller)
        return noContent()
      },
      {
        auth: 'ADMIN',
        params: userIdParams,
        body: 'passwordSchema',
        response: { 200: t.Void({ description: "Changed; the user's sessions have ended" }), ...bodyErrors(404) },
        detail: {
          operationId: 'changeUserPassword',
          summary: "Change a user's password",
          tags,
          description: 'Ends every session of the user. Records user-updated (without the password).',
        },
      },
    )
    .get('/api/admin/user', ({ caller }) => ({ user: users.whoIs(caller) }), {
      auth: 'NONE',
      response: { 200: 'meSchema', ...authErrors() },
      detail: {
        operationId: 'getMe',
        summary: 'Who is calling',
        tags,
        description: 'The signed-in user, or for an API token the token as an API user (isAPI true).',
      },
    })
}

/** Sign-in and sign-out: outside /api, like Unleash's, and open to everyone. */
export function sessionsController(sessions: SessionsService, auth: Authorization) {
  return controllerBase(auth, userModels)
    .post(
      '/auth/simple/login',
      async ({ body, request, set }) => {
        const { user, cookie } = await sessions.signIn(body.username, body.password, callerAddress(request), request)
        set.headers['set-cookie'] = cookie
        return user
      },
      {
        body: 'loginSchema',
        response: { 200: 'userSchema', ...errors(400, 401, 413, 415, 429) },
        detail: {
          operationId: 'login',
          summary: 'Sign in',
          tags: ['Auth'],
          description:
            'Opens a session: the answer sets the unleash-session cookie (HttpOnly, SameSite=Strict, Secure over HTTPS or with SECURE_COOKIES), ' +
            "which authenticates the admin API with the user's role. A wrong username or password: 401, the same for both. After 5 failures for a " +
            'user (by username or email alike) or 20 from an address, 429 with Retry-After.',
        },
      },
    )
    .post(
      '/api/admin/user/change-password',
      async ({ body, caller, request }) => {
        await sessions.changeOwnPassword(caller, body, callerAddress(request))
        return noContent()
      },
      {
        auth: 'NONE',
        body: 'changeOwnPasswordSchema',
        response: {
          200: t.Void({ description: 'Changed; every session of the user has ended, this one too' }),
          ...bodyErrors(429),
        },
        detail: {
          operationId: 'changeMyPassword',
          summary: 'Change your own password',
          tags,
          description:
            "For a signed-in user (Unleash's route): oldPassword must be the current password (a wrong one is a 400 naming /oldPassword and counts " +
            'as a failed sign-in of the username: after 5, 429 with Retry-After), password must meet the password rule, confirmPassword, when given, ' +
            'must equal it. Every session of the user ends, this one too. Records user-updated (without the password). An API token has no password: 403.',
        },
      },
    )
    .post(
      '/logout',
      async ({ request }) => {
        if (request.headers.has('cookie') && !fromOwnOrigin(request))
          throw new NoAccessError("Sign-out must come from the console's own origin", 'NONE')
        const cookie = await sessions.signOut(request)
        return new Response(null, { status: 200, headers: { 'set-cookie': cookie } })
      },
      {
        response: {
          200: t.Void({ description: 'Signed out: the session has ended and the cookie is cleared' }),
          ...errors(403),
        },
        detail: { operationId: 'logout', summary: 'Sign out', tags: ['Auth'] },
      },
    )
}
