/**
 * Sign-in and sessions, cross-site protection, the sign-in throttle, refusals naming who was
 * refused, and changing one's own password. The setup shared with users.test.ts is users.setup.ts.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import { createApp } from '../../../src/app'
import { createServices, initialise } from '../../../src/services'
import { openStore } from '../../../src/open-store'
import { DEFAULT_SESSION_OPTIONS, SESSION_COOKIE } from '../../../src/features/users/sessions.service'
import { ON_POSTGRES } from '../../test-store'
import {
  ADMIN_SECRET,
  BODY_LIMIT,
  errorOf,
  expectError,
  expectOk,
  makeApi,
  signIn,
  tempDir,
  tokenFor,
} from '../../helpers'
import { api, useFreshApi, ADMIN_PASSWORD, PASSWORD, login, as, newUser } from './users.setup'

useFreshApi()

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
