/**
 * People: the user-admin API and its events, sign-in with a session cookie, sessions that end
 * (sign-out, expiry, deleted user, changed password) and survive a restart, the sign-in throttle,
 * cross-site protection of cookie writes, and the audit log naming the user.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import { createApp } from '../../src/app'
import { createServices, initialise, openStore } from '../../src/services'
import { DEFAULT_SESSION_OPTIONS, SESSION_COOKIE } from '../../src/features/users/sessions.service'
import { passwordProblem } from '../../src/features/users/passwords'
import { ON_POSTGRES } from '../test-store'
import {
  ADMIN_SECRET,
  BODY_LIMIT,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  makeApi,
  asSession,
  newUser as createUser,
  signIn,
  tempDir,
  tokenFor,
  type Api,
} from '../helpers'

const ADMIN_PASSWORD = 'First-admin-pass-1'
const PASSWORD = 'Correct-horse-7'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface UserBody {
  id: number
  username: string | null
  email: string | null
  name: string | null
  rootRole: number
  isAPI: boolean
}

function login(target: Api, username: string, password: string, headers: Record<string, string> = {}) {
  return target.post<UserBody>('/auth/simple/login', { username, password }, { token: null, headers })
}

const as = asSession
const newUser = (target: Api, body: Record<string, unknown>) => createUser<UserBody>(target, body)

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

describe('sign-in and sessions', () => {
  test('the cookie is HttpOnly and SameSite=Strict, Secure over HTTPS or behind a proxy that says so, and scoped to the path', async () => {
    await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const plain = (await login(api, 'alice', PASSWORD)).headers.get('set-cookie')!
    expect(plain).toMatch(/^unleash-session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=172800; HttpOnly; SameSite=Strict$/)
    const proxied = (await login(api, 'alice', PASSWORD, { 'x-forwarded-proto': 'https' })).headers.get('set-cookie')!
    expect(proxied).toEndWith('; Secure')
  })

  test('a wrong password and an unknown user get the same 401; an email signs in too, in any case', async () => {
    await newUser(api, { username: 'alice', email: 'alice@example.com', rootRole: 'Editor', password: PASSWORD })
    const wrong = await login(api, 'alice', 'Wrong-horse-7')
    const unknown = await login(api, 'nobody', PASSWORD)
    expectError(wrong, 401, 'AuthenticationRequired')
    expect({ status: unknown.status, message: errorOf(unknown).message }).toEqual({
      status: 401,
      message: errorOf(wrong).message,
    })
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expectOk(await login(api, 'ALICE@example.com', PASSWORD))
  })

  test("a session authenticates the admin API with the user's role, and every event names the user", async () => {
    const alice = await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const cookie = await signIn(api, 'alice', PASSWORD)
    const before = api.lastEventId()
    expectOk(await api.createProject('shop', {}, as(cookie)), 201)
    expectOk(await api.createFlag('shop', 'checkout', {}, as(cookie)), 201)
    expectOk(await api.toggle('shop', 'checkout', 'development', true, as(cookie)))
    expectOk(await api.bulkToggle('shop', 'development', ['checkout'], false, as(cookie)))
    const events = api.eventsSince(before)
    expect(events.length).toBeGreaterThan(3)
    for (const event of events)
      expect({ type: event.type, createdBy: event.createdBy, createdByUserId: event.createdByUserId }).toEqual({
        type: event.type,
        createdBy: 'alice',
        createdByUserId: alice.id,
      })
    // The event search finds them by the user.
    const found = await api.searchEvents(`?createdBy=IS:alice`)
    expect(found.body.total).toBe(events.length)
    // An editor cannot manage tokens, as an editor token cannot.
    expectError(await api.get('/api/admin/api-tokens', as(cookie)), 403, 'NoAccessError')
  })

  test('a viewer reads but cannot change anything', async () => {
    await newUser(api, { username: 'vic', rootRole: 'Viewer', password: PASSWORD })
    const cookie = await signIn(api, 'vic', PASSWORD)
    expectOk(await api.listFlags('default', '', as(cookie)))
    expectError(await api.createFlag('default', 'nope', {}, as(cookie)), 403, 'NoAccessError')
  })

  test('sign-out ends the session: the same cookie then gets 401', async () => {
    await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const cookie = await signIn(api, 'alice', PASSWORD)
    const out = await api.post('/logout', undefined, as(cookie))
    expectOk(out)
    expect(out.headers.get('set-cookie')).toMatch(/^unleash-session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/)
    expectError(await api.get('/api/admin/projects', as(cookie)), 401, 'AuthenticationRequired', ['session has ended'])
    expect(Object.keys(api.services.store.state.sessions)).toEqual([])
  })

  test("deleting the user or changing their password ends their sessions, in the same commit; other users' stay", async () => {
    const alice = await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const bob = await newUser(api, { username: 'bob', rootRole: 'Editor', password: PASSWORD })
    const aliceCookie = await signIn(api, 'alice', PASSWORD)
    const bobCookie = await signIn(api, 'bob', PASSWORD)
    expectOk(await api.post(`/api/admin/user-admin/${alice.id}/change-password`, { password: 'Another-horse-8' }))
    expectError(await api.get('/api/admin/projects', as(aliceCookie)), 401, 'AuthenticationRequired')
    expectOk(await api.get('/api/admin/projects', as(bobCookie)))
    expectError(await login(api, 'alice', PASSWORD), 401, 'AuthenticationRequired')
    await signIn(api, 'alice', 'Another-horse-8')
    expectOk(await api.delete(`/api/admin/user-admin/${bob.id}`))
    expectError(await api.get('/api/admin/projects', as(bobCookie)), 401, 'AuthenticationRequired')
    expect(Object.values(api.services.store.state.sessions).map(session => session.userId)).toEqual([alice.id])
  })

  test('a session expires after its lifetime', async () => {
    await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const cookie = await signIn(api, 'alice', PASSWORD)
    setSystemTime(new Date(Date.now() + 48 * 3600_000 + 1000))
    expectError(await api.get('/api/admin/projects', as(cookie)), 401, 'AuthenticationRequired', ['expired'])
  })

  test('a session survives a restart on the same data directory', async () => {
    const dir = tempDir('sessions-')
    try {
      const first = await makeApi({ dataDir: dir.path })
      await first.services.users.bootstrap('admin', ADMIN_PASSWORD)
      const cookie = await signIn(first, 'admin', ADMIN_PASSWORD)
      await first.close()
      const again = await makeApi({ dataDir: dir.path })
      expect((await again.get('/api/admin/user', as(cookie))).body).toMatchObject({ user: { username: 'admin' } })
      await again.close()
    } finally {
      dir.remove()
    }
  })
})

describe('cross-site protection', () => {
  test('a cookie write from another origin, or with no Origin, is 403 and changes nothing; reads and same-origin writes pass', async () => {
    await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const cookie = await signIn(api, 'alice', PASSWORD)
    const before = api.lastEventId()
    expectError(
      await api.createFlag('default', 'forged', {}, as(cookie, { origin: 'https://evil.example' })),
      403,
      'NoAccessError',
      ['cross-site'],
    )
    expectError(await api.toggle('default', 'forged', 'development', true, as(cookie, {})), 403, 'NoAccessError')
    expectError(
      await api.post('/logout', undefined, as(cookie, { origin: 'https://evil.example' })),
      403,
      'NoAccessError',
    )
    expect(api.lastEventId()).toBe(before)
    expectOk(await api.listFlags('default', '', as(cookie, {})))
    expectOk(await api.createFlag('default', 'same-site', {}, as(cookie, { 'sec-fetch-site': 'same-origin' })), 201)
    expectOk(
      await api.createFlag(
        'default',
        'proxied',
        {},
        as(cookie, {
          origin: 'https://flags.example.com',
          'x-forwarded-host': 'flags.example.com',
          'x-forwarded-proto': 'https',
        }),
      ),
      201,
    )
  })

  test('a token request is unaffected by an Origin header or a cookie', async () => {
    expectOk(
      await api.createFlag(
        'default',
        'by-token',
        {},
        { headers: { origin: 'https://elsewhere.example', cookie: `${SESSION_COOKIE}=junk` } },
      ),
      201,
    )
  })
})

describe('the sign-in throttle', () => {
  test('after 5 failures for a username, attempts get 429 with Retry-After without a password check, even the right password', async () => {
    await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    for (let i = 0; i < 5; i++)
      expectError(await login(api, 'alice', `Wrong-horse-${i}`), 401, 'AuthenticationRequired')
    const held = await login(api, 'Alice', PASSWORD)
    expectError(held, 429, 'TooManyRequestsError')
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThanOrEqual(29)
    // Another user is not held back (the address limit is higher).
    await newUser(api, { username: 'bob', rootRole: 'Editor', password: PASSWORD })
    await signIn(api, 'bob', PASSWORD)
    // Once the hold is over, one more failure holds the username back twice as long.
    setSystemTime(new Date(Date.now() + 31_000))
    expectError(await login(api, 'alice', 'Wrong-horse-9'), 401, 'AuthenticationRequired')
    expect((await login(api, 'alice', PASSWORD)).headers.get('retry-after')).toBe('60')
    setSystemTime(new Date(Date.now() + 61_000))
    await signIn(api, 'alice', PASSWORD)
  })

  test('an unknown username is held back exactly like a known one', async () => {
    for (let i = 0; i < 5; i++)
      expectError(await login(api, 'ghost', `Wrong-horse-${i}`), 401, 'AuthenticationRequired')
    expectError(await login(api, 'ghost', PASSWORD), 429, 'TooManyRequestsError')
  })

  test('a burst sent at once is held back like one sent in a row: 100 parallel guesses, at most 5 verified', async () => {
    await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => login(api, 'alice', `Wrong-horse-${i}`)))
    const counts = new Map<number, number>()
    for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1)
    expect(Object.fromEntries(counts)).toEqual({ 401: 5, 429: 95 })
  })

  test('20 failures from one address, across usernames, hold that address back, and not another', async () => {
    const store = await openStore(null)
    const services = createServices(store)
    await initialise(services, [ADMIN_SECRET])
    const app = createApp(services, { bodyLimit: BODY_LIMIT, trustProxy: true })
    const attempt = (username: string, password: string, address: string) =>
      app.handle(
        new Request('http://localhost/auth/simple/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
          body: JSON.stringify({ username, password }),
        }),
      )
    for (let i = 0; i < 20; i++) expect((await attempt(`user-${i}`, 'Wrong-horse-7', '203.0.113.9')).status).toBe(401)
    const held = await attempt('someone-else', 'Wrong-horse-7', '203.0.113.9')
    expect(held.status).toBe(429)
    expect(held.headers.get('retry-after')).toBe('30')
    expect((await attempt('someone-else', 'Wrong-horse-7', '198.51.100.7')).status).toBe(401)
    await store.close()
  })

  test('a username and its email are one person: failures under either hold back both', async () => {
    await newUser(api, { username: 'alice', email: 'alice@example.com', rootRole: 'Editor', password: PASSWORD })
    for (let i = 0; i < 3; i++)
      expectError(await login(api, 'alice', `Wrong-horse-${i}`), 401, 'AuthenticationRequired')
    for (let i = 3; i < 5; i++)
      expectError(await login(api, 'Alice@Example.com', `Wrong-horse-${i}`), 401, 'AuthenticationRequired')
    expectError(await login(api, 'alice@example.com', PASSWORD), 429, 'TooManyRequestsError')
    expectError(await login(api, 'alice', PASSWORD), 429, 'TooManyRequestsError')
    // Changing one's own password counts on the same person.
    setSystemTime(new Date(Date.now() + 31_000))
    const cookie = await signIn(api, 'alice@example.com', PASSWORD)
    for (let i = 0; i < 5; i++)
      expect(
        (
          await api.post(
            '/api/admin/user/change-password',
            { oldPassword: `Wrong-horse-${i}`, password: 'Battery-staple-8' },
            as(cookie),
          )
        ).status,
      ).toBe(400)
    expectError(await login(api, 'alice@example.com', PASSWORD), 429, 'TooManyRequestsError')
  })

  test('a flood of cheap failures from many addresses does not free a held username: its right password still answers 429', async () => {
    // On the files, a flood past the 10,000 keys (10,400 failures from 520 addresses); a tenth of it against a tenth of the room on PostgreSQL, where each attempt is two transactions.
    const { addresses, maxKeys } = ON_POSTGRES ? { addresses: 52, maxKeys: 1000 } : { addresses: 520, maxKeys: 10_000 }
    const proxied = await makeApi({ trustProxy: true, session: { ...DEFAULT_SESSION_OPTIONS, throttle: { maxKeys } } })
    await newUser(proxied, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const from = (address: string) => ({ 'x-forwarded-for': address })
    for (let i = 0; i < 5; i++)
      expectError(await login(proxied, 'alice', `Wrong-horse-${i}`, from('192.0.2.1')), 401, 'AuthenticationRequired')
    // 20 failures from each address that cost no password check (longer than any password can be), each naming a new login.
    const tooLong = `${'x'.repeat(128)}Aa1!`
    const statuses = new Map<number, number>()
    await Promise.all(
      Array.from({ length: addresses }, async (_, n) => {
        for (let i = 0; i < 20; i++) {
          const { status } = await login(proxied, `flood-${n}-${i}`, tooLong, from(`10.${n >> 8}.${n & 255}.1`))
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
        }
      }),
    )
    expect(Object.fromEntries(statuses)).toEqual({ 401: addresses * 20 })
    expectError(await login(proxied, 'alice', PASSWORD, from('198.51.100.7')), 429, 'TooManyRequestsError')
    setSystemTime(new Date(Date.now() + 31_000))
    expectOk(await login(proxied, 'alice', PASSWORD, from('198.51.100.7')))
  })

  test('when entries that hold keys back fill the room, none is dropped: a new unknown login waits, a known user still signs in', async () => {
    const small = await makeApi({
      trustProxy: true,
      session: { ...DEFAULT_SESSION_OPTIONS, throttle: { maxKeys: 10 } },
    })
    await newUser(small, { username: 'bob', rootRole: 'Editor', password: PASSWORD })
    const from = (address: string) => ({ 'x-forwarded-for': address })
    // Two addresses each hold back 4 unknown logins (5 failures each) and, with those 20 failures, themselves: 10 entries, all holding.
    for (let n = 0; n < 2; n++) {
      for (let i = 0; i < 20; i++)
        expectError(
          await login(small, `ghost-${n}-${i % 4}`, 'Wrong-horse-7', from(`10.0.0.${n}`)),
          401,
          'AuthenticationRequired',
        )
    }
    const waiting = await login(small, 'newcomer', 'Wrong-horse-7', from('10.0.1.1'))
    expectError(waiting, 429, 'TooManyRequestsError')
    expect(waiting.headers.get('retry-after')).toBe('30')
    expectOk(await login(small, 'bob', PASSWORD, from('10.0.1.2')))
    for (let n = 0; n < 2; n++)
      for (let i = 0; i < 4; i++)
        expectError(
          await login(small, `ghost-${n}-${i}`, 'Wrong-horse-7', from('10.0.1.3')),
          429,
          'TooManyRequestsError',
        )
    expectError(await login(small, 'anyone', 'Wrong-horse-7', from('10.0.0.1')), 429, 'TooManyRequestsError')
    // Once the holds are over, their entries make room.
    setSystemTime(new Date(Date.now() + 31_000))
    expectError(await login(small, 'newcomer', 'Wrong-horse-7', from('10.0.1.1')), 401, 'AuthenticationRequired')
  })
})

describe('refusals name who was refused', () => {
  test('a signed-in user is named as a user, a token as a token', async () => {
    const editorToken = await tokenFor(api, 'editor-token', { role: 'editor' })
    expect(errorOf(await api.get('/api/admin/user-admin', { token: editorToken })).message).toBe(
      'The token "editor-token" (role editor) lacks the ADMIN permission',
    )
    await newUser(api, { username: 'ed', rootRole: 'Editor', password: PASSWORD })
    const editor = await signIn(api, 'ed', PASSWORD)
    expect(errorOf(await api.get('/api/admin/user-admin', as(editor))).message).toBe(
      'The user "ed" (role editor) lacks the ADMIN permission',
    )
    await newUser(api, { username: 'vic', rootRole: 'Viewer', password: PASSWORD })
    const viewer = await signIn(api, 'vic', PASSWORD)
    const refused = await api.createProject('shop', {}, as(viewer))
    expectError(refused, 403, 'NoAccessError')
    expect(errorOf(refused).message).toStartWith('The user "vic" (role viewer) lacks')
    // An import that needs service-wide permissions names the user too.
    const imported = await api.post(
      '/api/admin/features-batch/import',
      { project: 'default', environment: 'development', data: { features: [] } },
      as(viewer),
    )
    expect(imported.status).toBe(403)
    expect(errorOf(imported).message).not.toContain('token')
  })
})

describe("changing one's own password", () => {
  const change = (cookie: string, body: Record<string, unknown>) =>
    api.post('/api/admin/user/change-password', body, as(cookie))

  test('with the current password: every session ends, the new password signs in, the old one not; the event names the user', async () => {
    const alice = await newUser(api, { username: 'alice', rootRole: 'Editor', password: PASSWORD })
    const other = await signIn(api, 'alice', PASSWORD)
    const cookie = await signIn(api, 'alice', PASSWORD)
    const since = api.events().at(-1)!.id
    expectOk(
      await change(cookie, {
        oldPassword: PASSWORD,
        password: 'Battery-staple-8',
        confirmPassword: 'Battery-staple-8',
      }),
    )
    expect((await api.get('/api/admin/user', as(cookie))).status).toBe(401)
    expect((await api.get('/api/admin/user', as(other))).status).toBe(401)
    expect((await login(api, 'alice', PASSWORD)).status).toBe(401)
    expectOk(await login(api, 'alice', 'Battery-staple-8'))
    const [event] = api.eventsSince(since)
    expect(event).toMatchObject({
      type: 'user-updated',
      createdBy: 'alice',
      createdByUserId: alice.id,
      data: { passwordChanged: true },
    })
    expect(JSON.stringify(event)).not.toContain('Battery-staple-8')
  })

  test('a wrong current password, a different confirmation or a weak password is a 400 naming the field, and nothing changes', async () => {
    await newUser(api, { username: 'bob', rootRole: 'Viewer', password: PASSWORD })
    const cookie = await signIn(api, 'bob', PASSWORD)
    const since = api.events().at(-1)!.id
    for (const [body, path] of [
      [{ oldPassword: 'Wrong-horse-7', password: 'Battery-staple-8' }, '/oldPassword'],
      [
        { oldPassword: PASSWORD, password: 'Battery-staple-8', confirmPassword: 'Battery-staple-9' },
        '/confirmPassword',
      ],
      [{ oldPassword: PASSWORD, password: 'short' }, '/password'],
    ] as const) {
      const response = await change(cookie, body)
      expectError(response, 400, 'ValidationError')
      expect(JSON.stringify(errorOf(response))).toContain(path)
    }
    expectOk(await api.get('/api/admin/user', as(cookie)))
    expectOk(await login(api, 'bob', PASSWORD))
    expect(api.eventsSince(since)).toEqual([])
  })

  test('wrong current passwords count as failed sign-ins: the sixth attempt is held back with 429', async () => {
    await newUser(api, { username: 'carol', rootRole: 'Editor', password: PASSWORD })
    const cookie = await signIn(api, 'carol', PASSWORD)
    for (let i = 0; i < 5; i++)
      expect((await change(cookie, { oldPassword: `Wrong-horse-${i}`, password: 'Battery-staple-8' })).status).toBe(400)
    const held = await change(cookie, { oldPassword: PASSWORD, password: 'Battery-staple-8' })
    expect(held.status).toBe(429)
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await login(api, 'carol', PASSWORD)).status).toBe(429)
  })

  test('an API token has no password to change: 403', async () => {
    const response = await api.post('/api/admin/user/change-password', {
      oldPassword: 'x',
      password: 'Battery-staple-8',
    })
    expectError(response, 403, 'NoAccessError')
    expect(errorOf(response).message).toContain('The token "admin-bootstrap"')
  })
})
