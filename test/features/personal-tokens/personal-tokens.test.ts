/**
 * Personal access tokens: a token acts as its person (their role at each request, events under
 * their name and id) and stops at once when deleted or expired, or when the person is deleted,
 * disabled or demoted below what a request needs, also for writes already waiting in the store.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import {
  asSession,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  newUser,
  signIn,
  tokenFor,
  type Api,
  type ApiResponse,
} from '../../helpers'

const PASSWORD = 'Correct-horse-7'
const FUTURE = '2099-01-01T00:00:00.000Z'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Pat {
  id: number
  secret: string
  description: string
  expiresAt: string | null
  createdAt: string
  seenAt: string | null
  userId: number
}

/** A person with `role`, signed in, and a personal token of theirs. */
async function person(username: string, rootRole = 'Editor', expiresAt = FUTURE) {
  const user = await newUser(api, { username, rootRole, password: PASSWORD })
  const cookie = await signIn(api, username, PASSWORD)
  const made = await api.post<Pat>('/api/admin/user/tokens', { description: 'script', expiresAt }, asSession(cookie))
  expectOk(made, 201)
  return { user, cookie, pat: made.body }
}

const withPat = (pat: Pat) => ({ token: pat.secret })

describe('a personal access token', () => {
  test('is shown once, acts as its person, and its writes are recorded under the person', async () => {
    const { user, cookie, pat } = await person('alice')
    expect(pat.secret).toStartWith('user:')
    expect(pat).toMatchObject({ description: 'script', expiresAt: FUTURE, userId: user.id, seenAt: null })
    const me = await api.get<{ user: Record<string, unknown> }>('/api/admin/user', withPat(pat))
    expectOk(me)
    expect(me.body.user).toMatchObject({ id: user.id, username: 'alice', isAPI: false, rootRole: 2 })
    const since = api.lastEventId()
    expectOk(await api.createFlag('default', 'made-by-pat', {}, withPat(pat)), 201)
    const [created] = api.eventsSince(since)
    expect(created).toMatchObject({ type: 'feature-created', createdBy: 'alice', createdByUserId: user.id })
    // The list never holds the secret, and says when the token was last seen.
    const list = await api.get<{ pats: Record<string, unknown>[] }>('/api/admin/user/tokens', asSession(cookie))
    expect(list.body.pats).toHaveLength(1)
    expect(list.body.pats[0]).not.toHaveProperty('secret')
    expect(list.body.pats[0]!.seenAt).toBeString()
    expect(JSON.stringify(api.services.store.state)).not.toContain(pat.secret.slice(5))
  })

  test('creation and deletion are recorded, and each person sees and deletes only their own', async () => {
    const since = api.lastEventId()
    const alice = await person('alice')
    const bob = await person('bob')
    const events = api.eventsSince(since).filter(event => event.type === 'pat-created')
    expect(events.map(event => event.createdBy)).toEqual(['alice', 'bob'])
    expect(JSON.stringify(events)).not.toContain(alice.pat.secret)
    const bobs = await api.get<{ pats: Pat[] }>('/api/admin/user/tokens', withPat(bob.pat))
    expect(bobs.body.pats.map(pat => pat.id)).toEqual([bob.pat.id])
    const before = api.lastEventId()
    expectError(await api.delete(`/api/admin/user/tokens/${alice.pat.id}`, withPat(bob.pat)), 404, 'NotFoundError')
    expect(api.lastEventId()).toBe(before)
    expectOk(await api.delete(`/api/admin/user/tokens/${alice.pat.id}`, asSession(alice.cookie)))
    expect(api.eventsSince(before).map(event => event.type)).toEqual(['pat-deleted'])
    expectError(await api.get('/api/admin/user', withPat(alice.pat)), 401, 'AuthenticationRequired')
  })

  test('an API token has no personal tokens (403), and a body without expiresAt or in the past is a 400', async () => {
    const secret = await tokenFor(api, 'ci')
    expectError(await api.get('/api/admin/user/tokens', { token: secret }), 403, 'NoAccessError')
    const { cookie } = await person('alice')
    const before = api.lastEventId()
    for (const body of [{ description: 'x' }, { description: 'x', expiresAt: '2001-01-01T00:00:00Z' }]) {
      expectError(await api.post('/api/admin/user/tokens', body, asSession(cookie)), 400, 'ValidationError')
    }
    expect(api.lastEventId()).toBe(before)
  })

  test('stops when it expires', async () => {
    const soon = new Date(Date.now() + 60_000).toISOString()
    const { pat } = await person('alice', 'Editor', soon)
    expectOk(await api.get('/api/admin/projects', withPat(pat)))
    setSystemTime(new Date(Date.now() + 61_000))
    const answer = await api.get('/api/admin/projects', withPat(pat))
    expectError(answer, 401, 'AuthenticationRequired')
    expect(errorOf(answer).message).toContain('expired')
  })

  test('stops when its person is disabled or deleted, and a demotion refuses its writes but not its reads', async () => {
    const alice = await person('alice')
    const bob = await person('bob')
    expectOk(await api.put(`/api/admin/user-admin/${alice.user.id}`, { rootRole: 'Viewer' }))
    expectOk(await api.get('/api/admin/projects', withPat(alice.pat)))
    expectError(await api.createFlag('default', 'no', {}, withPat(alice.pat)), 403, 'NoAccessError')
    expectOk(await api.put(`/api/admin/user-admin/${alice.user.id}`, { disabled: true }))
    expectError(await api.get('/api/admin/projects', withPat(alice.pat)), 401, 'AuthenticationRequired')
    // A disabled person's sessions ended, and they cannot sign in again.
    expectError(await api.get('/api/admin/projects', asSession(alice.cookie)), 401, 'AuthenticationRequired')
    expectError(
      await api.post('/auth/simple/login', { username: 'alice', password: PASSWORD }, { token: null }),
      401,
      'AuthenticationRequired',
    )
    expectOk(await api.put(`/api/admin/user-admin/${alice.user.id}`, { disabled: false }))
    expectOk(await api.get('/api/admin/projects', withPat(alice.pat)))
    expectOk(await api.delete(`/api/admin/user-admin/${bob.user.id}`))
    expectError(await api.get('/api/admin/projects', withPat(bob.pat)), 401, 'AuthenticationRequired')
  })

  test('the last admin who can sign in cannot be disabled (409), and nothing changes', async () => {
    const { user } = await person('root', 'Admin')
    const before = api.lastEventId()
    expectError(await api.put(`/api/admin/user-admin/${user.id}`, { disabled: true }), 409, 'ConflictError')
    expect(api.lastEventId()).toBe(before)
    expect(api.services.store.state.users[String(user.id)]!.disabled).toBeUndefined()
  })

  test('cannot be used on the SDK APIs', async () => {
    const { pat } = await person('alice')
    expectError(await api.get('/api/client/features', withPat(pat)), 403, 'NoAccessError')
  })
})

/** Every answer is `ok` or the refusal `refused`; returns how many were refused. */
function refusals(answers: ApiResponse[], ok: number, refused: number, name: string): number {
  for (const answer of answers) if (answer.status !== ok) expectError(answer, refused, name)
  return answers.filter(answer => answer.status === refused).length
}

describe('revoked while its writes are in flight', () => {
  for (const revocation of ['the token deleted', 'the person disabled', 'the person demoted'] as const) {
    test(`${revocation}: nothing is written after the revocation`, async () => {
      for (let i = 0; i < 20; i++) await api.newFlag('default', `flag-${i}`)
      await api.newFlag('default', 'busy')
      const { user, cookie, pat } = await person('alice')
      const since = api.lastEventId()
      // A write being committed holds the store; half the token's writes are sent before the revocation, half after it.
      const busy = api.toggle('default', 'busy', 'development', true)
      const toggle = (i: number) => api.toggle('default', `flag-${i}`, 'development', true, withPat(pat))
      const first = Array.from({ length: 10 }, (_, i) => toggle(i))
      const revoke =
        revocation === 'the token deleted'
          ? api.delete(`/api/admin/user/tokens/${pat.id}`, asSession(cookie))
          : api.put(
              `/api/admin/user-admin/${user.id}`,
              revocation === 'the person disabled' ? { disabled: true } : { rootRole: 'Viewer' },
            )
      await Bun.sleep(1)
      const answers = await Promise.all([...first, ...Array.from({ length: 10 }, (_, i) => toggle(10 + i))])
      expectOk(await busy)
      expectOk(await revoke)
      const events = api.eventsSince(since)
      const at = events.findIndex(event => ['pat-deleted', 'user-updated'].includes(event.type))
      expect(at).toBeGreaterThanOrEqual(0)
      expect(events.slice(at + 1).filter(event => event.createdBy === 'alice')).toEqual([])
      const refused =
        revocation === 'the person demoted'
          ? refusals(answers, 200, 403, 'NoAccessError')
          : refusals(answers, 200, 401, 'AuthenticationRequired')
      expect(refused).toBeGreaterThan(0)
      const enabled = Object.values(api.services.store.state.flags).filter(
        flag => flag.name.startsWith('flag-') && flag.environments?.development?.enabled,
      )
      expect(enabled).toHaveLength(20 - refused)
    })
  }

  test('the token expiring: the writes committed after its expiry are refused (401), none written', async () => {
    for (let i = 0; i < 20; i++) await api.newFlag('default', `flag-${i}`)
    const { pat } = await person('alice', 'Editor', new Date(Date.now() + 60_000).toISOString())
    const since = api.lastEventId()
    const toggle = (i: number) => api.toggle('default', `flag-${i}`, 'development', true, withPat(pat))
    // Half are sent before the clock passes the expiry, half after; each write is decided at its commit.
    const answers = Array.from({ length: 10 }, (_, i) => toggle(i))
    setSystemTime(new Date(Date.now() + 61_000))
    answers.push(...Array.from({ length: 10 }, (_, i) => toggle(10 + i)))
    const settled = await Promise.all(answers)
    const refused = refusals(settled, 200, 401, 'AuthenticationRequired')
    expect(refused).toBeGreaterThan(0)
    const written = api.eventsSince(since).filter(event => event.createdBy === 'alice')
    expect(written).toHaveLength(20 - refused)
    for (const event of written) expect(Date.parse(event.createdAt)).toBeLessThan(Date.parse(pat.expiresAt!))
  })
})
