/**
 * Rights are decided inside the write: a write re-checks, on the state it is applied to, that its
 * session or token still exists and has not expired, that the session's user still exists, and that
 * the caller's role still grants the route's permission. A credential revoked while its requests
 * wait for their turn in the store writes nothing after its revocation: those writes answer 401
 * (the credential is gone) or 403 (the role no longer grants it). On PostgreSQL the same holds
 * across instances (test/storage/shared-revocation.test.ts).
 */
import { describe, expect, test } from 'bun:test'
import {
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  asSession,
  newUser as createUser,
  signIn as signInWith,
  tokenFor,
  type Api,
  type ApiResponse,
  type EventRecord,
} from '../../helpers'

const PASSWORD = 'Correct-horse-7'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface UserBody {
  id: number
  username: string | null
}

const newUser = (target: Api, body: Record<string, unknown>) => createUser<UserBody>(target, body)
const signIn = (target: Api, username: string, password = PASSWORD) => signInWith(target, username, password)
const as = (cookie: string) => asSession(cookie)

/**
 * The events `createdBy` recorded after the event `revocation` (found by type and subject) among
 * those written since `since`; the revocation itself must be there.
 */
function recordedAfter(
  events: EventRecord[],
  revocation: (event: EventRecord) => boolean,
  createdBy: string,
): EventRecord[] {
  const at = events.findIndex(revocation)
  expect(at).toBeGreaterThanOrEqual(0)
  return events.slice(at + 1).filter(event => event.createdBy === createdBy)
}

/** Every answer is a success (`ok`) or the refusal `refused`; returns how many were refused. */
function refusals(answers: ApiResponse[], ok: number, refused: number, name: string): number {
  for (const answer of answers) {
    if (answer.status === ok) continue
    expectError(answer, refused, name)
  }
  return answers.filter(answer => answer.status === refused).length
}

describe('a credential revoked while its writes are in flight', () => {
  test('an admin deleted while creating users: no user is created after the deletion, and the refused writes answer 401', async () => {
    const alice = await newUser(api, { username: 'alice', rootRole: 'Admin', password: PASSWORD })
    await newUser(api, { username: 'bob', rootRole: 'Admin', password: PASSWORD })
    const cookie = await signIn(api, 'alice')
    const since = api.lastEventId()
    // Each creation is let in, then hashes its password before its write: the deletion commits meanwhile.
    // (A password of its own each, hashed for real: a test process answers a password it has hashed
    // before at once, see test/helpers/passwords.ts.)
    const passwordOf = (i: number) => `${PASSWORD}-made-${i}`
    const creations = Array.from({ length: 10 }, (_, i) =>
      api.post<UserBody>(
        '/api/admin/user-admin',
        { username: `made-${i}`, rootRole: 'Admin', password: passwordOf(i) },
        as(cookie),
      ),
    )
    await Bun.sleep(0)
    expectOk(await api.delete(`/api/admin/user-admin/${alice.id}`))
    const answers = await Promise.all(creations)
    const events = api.eventsSince(since)
    expect(
      recordedAfter(events, event => event.type === 'user-deleted' && event.preData?.username === 'alice', 'alice'),
    ).toEqual([])
    expect(refusals(answers, 201, 401, 'AuthenticationRequired')).toBeGreaterThan(0)
    // Exactly the users answered 201 exist; none refused was made, and the refused cannot sign in.
    const made = answers
      .filter(answer => answer.status === 201)
      .map(answer => answer.body.username)
      .sort()
    const existing = Object.values(api.services.store.state.users)
      .map(user => user.username)
      .filter(name => name?.startsWith('made-'))
      .sort()
    expect(existing).toEqual(made)
    expect(
      events
        .filter(event => event.type === 'user-created')
        .map(event => event.data?.username)
        .sort(),
    ).toEqual(made)
    if (made.length < answers.length)
      expectError(
        await api.post('/auth/simple/login', { username: 'made-9', password: passwordOf(9) }, { token: null }),
        401,
        'AuthenticationRequired',
      )
  })

  test('an editor demoted to viewer while writing: nothing is written after the demotion, and the refused writes answer 403', async () => {
    const ed = await newUser(api, { username: 'ed', rootRole: 'Editor', password: PASSWORD })
    const cookie = await signIn(api, 'ed')
    const since = api.lastEventId()
    // Sent first, the demotion waits for its turn in the store while the writes are let in.
    const demotion = api.put(`/api/admin/user-admin/${ed.id}`, { rootRole: 'Viewer' })
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.createFlag('default', `flag-${i}`, {}, as(cookie))),
    )
    expectOk(await demotion)
    const events = api.eventsSince(since)
    expect(
      recordedAfter(events, event => event.type === 'user-updated' && event.data?.username === 'ed', 'ed'),
    ).toEqual([])
    const refused = refusals(answers, 201, 403, 'NoAccessError')
    expect(refused).toBeGreaterThan(0)
    expect(Object.keys(api.services.store.state.flags)).toHaveLength(20 - refused)
    for (const answer of answers.filter(answer => answer.status === 403))
      expect(errorOf(answer)).toMatchObject({ permissions: ['CREATE_FEATURE'] })
  })

  test('a token deleted while writing: nothing is written after the deletion, and the refused writes answer 401', async () => {
    for (let i = 0; i < 20; i++) await api.newFlag('default', `flag-${i}`)
    await api.newFlag('default', 'busy')
    const secret = await tokenFor(api, 'ci', { role: 'editor' })
    const since = api.lastEventId()
    // A write being committed holds the store: the deletion waits behind it, and the token's writes are let in meanwhile.
    const busy = api.toggle('default', 'busy', 'development', true)
    const deletion = api.delete('/api/admin/api-tokens/ci')
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.toggle('default', `flag-${i}`, 'development', true, { token: secret })),
    )
    expectOk(await busy)
    expectOk(await deletion)
    const events = api.eventsSince(since)
    expect(
      recordedAfter(events, event => event.type === 'api-token-deleted' && event.preData?.tokenName === 'ci', 'ci'),
    ).toEqual([])
    const refused = refusals(answers, 200, 401, 'AuthenticationRequired')
    expect(refused).toBeGreaterThan(0)
    const enabled = Object.values(api.services.store.state.flags).filter(
      flag => flag.name.startsWith('flag-') && flag.environments?.development?.enabled,
    )
    expect(enabled).toHaveLength(20 - refused)
  })
})
