/**
 * People: the user-admin API and its events, sign-in with a session cookie, sessions that end
 * (sign-out, expiry, deleted user, changed password) and survive a restart, the sign-in throttle,
 * cross-site protection of cookie writes, and the audit log naming the user.
 */
import { describe, expect, test } from 'bun:test'
import { passwordProblem } from '../../../src/features/users/passwords'
import { errorOf, expectError, expectOk, signIn, tokenFor } from '../../helpers'
import { api, useFreshApi, ADMIN_PASSWORD, PASSWORD, type UserBody, as, newUser } from './users.setup'

useFreshApi()

describe('the first admin', () => {
  test('is made once with the given password, records user-created by system, and signs in', async () => {
    const before = api.lastEventId()
    expect(await api.services.users.bootstrap('admin', ADMIN_PASSWORD)).toBeNull()
    expect(await api.services.users.bootstrap('admin', 'Another-pass-22')).toBeNull()
    const users = await api.get<{ users: UserBody[] }>('/api/admin/user-admin')
    expect(users.body.users).toMatchObject([{ username: 'admin', rootRole: 1, isAPI: false }])
    expect(api.eventsSince(before)).toMatchObject([
      { type: 'user-created', createdBy: 'system', data: { username: 'admin', rootRole: 1 } },
    ])
    expect(JSON.stringify(api.eventsSince(before))).not.toContain('argon2')
    const cookie = await signIn(api, 'admin', ADMIN_PASSWORD)
    expect((await api.get('/api/admin/user', as(cookie))).body).toMatchObject({
      user: { username: 'admin', rootRole: 1, isAPI: false },
    })
  })

  test('without a password gets a generated one that passes the strength rule and signs in', async () => {
    const generated = await api.services.users.bootstrap('root')
    expect(generated).toBeString()
    expect(passwordProblem(generated!)).toBeNull()
    await signIn(api, 'root', generated!)
  })
})

describe('passwords', () => {
  test('the strength rule names what is missing', () => {
    expect(passwordProblem('short')).toContain('at least 10 characters')
    expect(passwordProblem('alllowercase1!')).toContain('an upper-case letter')
    expect(passwordProblem('NoDigitsHere!')).toContain('a digit')
    expect(passwordProblem('NoSymbols123')).toContain('a character other than a letter or digit')
    expect(passwordProblem(PASSWORD)).toBeNull()
    expect(passwordProblem(`Aa1!${'x'.repeat(200)}`)).toContain('at most 128')
  })

  test('a weak password is refused at creation and at change, naming /password, and nothing is written', async () => {
    const before = api.lastEventId()
    const weak = await api.post('/api/admin/user-admin', { username: 'bob', rootRole: 'Editor', password: 'password' })
    expectError(weak, 400, 'ValidationError', ['upper-case'])
    expect(errorOf(weak).details).toEqual([{ path: '/password', message: expect.stringContaining('digit') }])
    const bob = await newUser(api, { username: 'bob', rootRole: 'Editor', password: PASSWORD })
    expectError(
      await api.post(`/api/admin/user-admin/${bob.id}/change-password`, { password: 'weak' }),
      400,
      'ValidationError',
      ['at least 10'],
    )
    expect(api.eventsSince(before).map(event => event.type)).toEqual(['user-created'])
    expect(JSON.stringify(api.services.store.state.users)).toContain('$argon2id$')
    expect(JSON.stringify(api.services.store.state.users)).not.toContain(PASSWORD)
  })
})

describe('the user-admin API', () => {
  test('create, read, update, change password and delete, each with its event; Unleash role ids and names both work', async () => {
    const before = api.lastEventId()
    const alice = await newUser(api, {
      username: 'alice',
      email: 'alice@example.com',
      name: 'Alice',
      rootRole: 2,
      password: PASSWORD,
    })
    expect(alice).toMatchObject({
      username: 'alice',
      email: 'alice@example.com',
      name: 'Alice',
      rootRole: 2,
      isAPI: false,
    })
    expect((await api.get(`/api/admin/user-admin/${alice.id}`)).body).toEqual(alice)
    const updated = await api.put<UserBody>(`/api/admin/user-admin/${alice.id}`, {
      rootRole: 'viewer',
      name: 'Alice A.',
    })
    expectOk(updated)
    expect(updated.body).toMatchObject({ rootRole: 3, name: 'Alice A.', username: 'alice' })
    expectOk(await api.post(`/api/admin/user-admin/${alice.id}/change-password`, { password: 'Another-horse-8' }))
    expectOk(await api.delete(`/api/admin/user-admin/${alice.id}`))
    expectError(await api.get(`/api/admin/user-admin/${alice.id}`), 404, 'NotFoundError')
    const events = api.eventsSince(before)
    expect(events.map(event => event.type)).toEqual(['user-created', 'user-updated', 'user-updated', 'user-deleted'])
    expect(events[1]).toMatchObject({
      data: { rootRole: 3, name: 'Alice A.' },
      preData: { rootRole: 2, name: 'Alice' },
      createdBy: 'admin-bootstrap',
    })
    expect(events[2]).toMatchObject({ data: { passwordChanged: true } })
    expect(events[3]).toMatchObject({ preData: { id: alice.id, username: 'alice' } })
    expect(JSON.stringify(events)).not.toMatch(/argon2|horse/)
  })

  test('usernames and emails are unique in any case; a user needs one of them; a bad role or email is a 400', async () => {
    await newUser(api, { username: 'Carol', rootRole: 'Admin' })
    expectError(
      await api.post('/api/admin/user-admin', { username: 'carol', rootRole: 'Admin' }),
      409,
      'NameExistsError',
    )
    expectError(await api.post('/api/admin/user-admin', { email: 'CAROL', rootRole: 'Admin' }), 400, 'ValidationError')
    expectError(await api.post('/api/admin/user-admin', { rootRole: 'Admin' }), 400, 'ValidationError', [
      'username or an email',
    ])
    expectError(
      await api.post('/api/admin/user-admin', { username: 'dave', rootRole: 'Owner' }),
      400,
      'ValidationError',
      ['Admin, Editor or Viewer'],
    )
    expectError(
      await api.post('/api/admin/user-admin', { username: '42', rootRole: 'Viewer' }),
      400,
      'ValidationError',
      ['number'],
    )
    expectError(
      await api.post('/api/admin/user-admin', { username: 'system', rootRole: 'Viewer' }),
      400,
      'ValidationError',
      ['reserved'],
    )
  })

  test('the last admin user can be neither demoted nor deleted', async () => {
    await api.services.users.bootstrap('admin', ADMIN_PASSWORD)
    const [admin] = (await api.get<{ users: UserBody[] }>('/api/admin/user-admin')).body.users
    expectError(await api.put(`/api/admin/user-admin/${admin!.id}`, { rootRole: 'Editor' }), 409, 'ConflictError', [
      'last admin',
    ])
    expectError(await api.delete(`/api/admin/user-admin/${admin!.id}`), 409, 'ConflictError', ['last admin'])
    await newUser(api, { username: 'second', rootRole: 'Admin', password: PASSWORD })
    expectOk(await api.delete(`/api/admin/user-admin/${admin!.id}`))
  })

  test('admins without a password do not count: the only admin who can sign in can be neither demoted nor deleted', async () => {
    await api.services.users.bootstrap('admin', ADMIN_PASSWORD)
    const [admin] = (await api.get<{ users: UserBody[] }>('/api/admin/user-admin')).body.users
    const passwordless = [
      await newUser(api, { username: 'no-pass-1', rootRole: 'Admin' }),
      await newUser(api, { username: 'no-pass-2', rootRole: 'Admin' }),
    ]
    const since = api.lastEventId()
    expectError(await api.put(`/api/admin/user-admin/${admin!.id}`, { rootRole: 'Viewer' }), 409, 'ConflictError', [
      'last admin user who can sign in',
    ])
    expectError(await api.delete(`/api/admin/user-admin/${admin!.id}`), 409, 'ConflictError', [
      'last admin user who can sign in',
    ])
    expect(api.eventsSince(since)).toEqual([])
    await signIn(api, 'admin', ADMIN_PASSWORD)
    // The admins who cannot sign in may go; once one has a password, the first may go too.
    expectOk(await api.delete(`/api/admin/user-admin/${passwordless[0]!.id}`))
    expectOk(await api.post(`/api/admin/user-admin/${passwordless[1]!.id}/change-password`, { password: PASSWORD }))
    expectOk(await api.put(`/api/admin/user-admin/${admin!.id}`, { rootRole: 'Viewer' }))
    await signIn(api, 'no-pass-2', PASSWORD)
  })

  test('only admins manage users: an editor token or an editor user gets 403', async () => {
    const editorToken = await tokenFor(api, 'editor-token', { role: 'editor' })
    expectError(await api.get('/api/admin/user-admin', { token: editorToken }), 403, 'NoAccessError')
    await newUser(api, { username: 'ed', rootRole: 'Editor', password: PASSWORD })
    const cookie = await signIn(api, 'ed', PASSWORD)
    expectError(
      await api.post('/api/admin/user-admin', { username: 'x', rootRole: 'Admin' }, as(cookie)),
      403,
      'NoAccessError',
    )
  })

  test('GET /api/admin/user shows a token as an API user', async () => {
    expect((await api.get('/api/admin/user')).body).toEqual({
      user: {
        id: -42,
        username: 'admin-bootstrap',
        email: null,
        name: 'admin-bootstrap',
        rootRole: 1,
        createdAt: '',
        isAPI: true,
      },
    })
  })
})
