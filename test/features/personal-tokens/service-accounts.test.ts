/**
 * Service accounts in Unleash's shapes: accounts that are not people, with a root role and tokens
 * of their own that act as the account and stop with it.
 */
import { describe, expect, test } from 'bun:test'
import { expectError, expectOk, freshApiPerTest, newUser, signIn, asSession, tokenFor, type Api } from '../../helpers'

const FUTURE = '2099-01-01T00:00:00.000Z'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Account {
  id: number
  username: string
  name: string | null
  rootRole: number
  isAPI: boolean
}

async function account(username: string, rootRole = 'Editor') {
  const made = await api.post<Account>('/api/admin/service-account', { username, name: 'Bot', rootRole })
  expectOk(made, 201)
  const token = await api.post<{ id: number; secret: string }>(`/api/admin/service-account/${made.body.id}/token`, {
    description: 'deploys',
    expiresAt: FUTURE,
  })
  expectOk(token, 201)
  return { account: made.body, token: token.body }
}

describe('service accounts', () => {
  test('are made, listed and changed in Unleash shapes, each change recorded', async () => {
    const since = api.lastEventId()
    const { account: bot } = await account('ci-bot')
    expect(bot).toMatchObject({ username: 'ci-bot', name: 'Bot', rootRole: 2, isAPI: true })
    const list = await api.get<{ serviceAccounts: Account[]; rootRoles: unknown[] }>('/api/admin/service-account')
    expect(list.body.serviceAccounts.map(entry => entry.username)).toEqual(['ci-bot'])
    expect(list.body.rootRoles).toHaveLength(3)
    const changed = await api.put<Account>(`/api/admin/service-account/${bot.id}`, { rootRole: 'Viewer' })
    expect(changed.body.rootRole).toBe(3)
    expect(api.eventsSince(since).map(event => event.type)).toEqual([
      'service-account-created',
      'pat-created',
      'service-account-updated',
    ])
    // Not people: the users list does not hold them.
    const users = await api.get<{ users: { username: string }[] }>('/api/admin/user-admin')
    expect(users.body.users.map(user => user.username)).not.toContain('ci-bot')
  })

  test("a token acts as the account: the account's name and id on events, its role at each request", async () => {
    const { account: bot, token } = await account('ci-bot')
    const since = api.lastEventId()
    expectOk(await api.createFlag('default', 'by-bot', {}, { token: token.secret }), 201)
    expect(api.eventsSince(since)[0]).toMatchObject({ createdBy: 'ci-bot', createdByUserId: bot.id })
    const me = await api.get<{ user: Record<string, unknown> }>('/api/admin/user', { token: token.secret })
    expect(me.body.user).toMatchObject({ username: 'ci-bot', isAPI: true })
    // Not a person: no personal tokens, and no admin rights as an editor.
    expectError(await api.get('/api/admin/user/tokens', { token: token.secret }), 403, 'NoAccessError')
    expectError(await api.get('/api/admin/service-account', { token: token.secret }), 403, 'NoAccessError')
    expectOk(await api.put(`/api/admin/service-account/${bot.id}`, { rootRole: 'Viewer' }))
    expectError(await api.createFlag('default', 'no', {}, { token: token.secret }), 403, 'NoAccessError')
    expectOk(await api.get('/api/admin/projects', { token: token.secret }))
  })

  test('deleting the token or the account stops its tokens at once', async () => {
    const { account: bot, token } = await account('ci-bot')
    const second = await api.post<{ id: number; secret: string }>(`/api/admin/service-account/${bot.id}/token`, {
      description: 'other',
      expiresAt: FUTURE,
    })
    const tokens = await api.get<{ pats: { id: number }[] }>(`/api/admin/service-account/${bot.id}/token`)
    expect(tokens.body.pats.map(pat => pat.id)).toEqual([token.id, second.body.id])
    expectOk(await api.delete(`/api/admin/service-account/${bot.id}/token/${token.id}`))
    expectError(await api.get('/api/admin/projects', { token: token.secret }), 401, 'AuthenticationRequired')
    expectOk(await api.get('/api/admin/projects', { token: second.body.secret }))
    expectOk(await api.delete(`/api/admin/service-account/${bot.id}`))
    expectError(await api.get('/api/admin/projects', { token: second.body.secret }), 401, 'AuthenticationRequired')
    expect(Object.keys(api.services.store.state.personalTokens)).toEqual([])
  })

  test('refusals: a taken name (409), a person id (404), an editor (403), none writing anything', async () => {
    const alice = await newUser(api, { username: 'alice', rootRole: 'Editor', password: 'Correct-horse-7' })
    const cookie = await signIn(api, 'alice', 'Correct-horse-7')
    const editorToken = await tokenFor(api, 'ed', { role: 'editor' })
    const before = api.lastEventId()
    expectError(
      await api.post('/api/admin/service-account', { username: 'alice', rootRole: 'Viewer' }),
      409,
      'NameExistsError',
    )
    expectError(
      await api.post(`/api/admin/service-account/${alice.id}/token`, { description: 'x', expiresAt: FUTURE }),
      404,
      'NotFoundError',
    )
    expectError(await api.get(`/api/admin/service-account/${alice.id}/token`), 404, 'NotFoundError')
    expectError(
      await api.post('/api/admin/service-account', { username: 'bot', rootRole: 'Viewer' }, { token: editorToken }),
      403,
      'NoAccessError',
    )
    expectError(
      await api.post('/api/admin/service-account', { username: 'bot', rootRole: 'Viewer' }, asSession(cookie)),
      403,
      'NoAccessError',
    )
    expectError(
      await api.post('/api/admin/service-account', { username: 'bot', rootRole: 'Owner' }),
      400,
      'ValidationError',
    )
    expect(api.lastEventId()).toBe(before)
  })
})
