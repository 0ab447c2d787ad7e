/**
 * Rights and sessions decided on the shared state, with two instances on one PostgreSQL database.
 * A write sent to B right after a revocation made on A is acknowledged reaches B before B has
 * heard of the revocation (neither the NOTIFY nor the periodic catch-up has run yet), so B's check
 * at arrival lets it in; it must still be refused, because its transaction catches up with A's
 * commit first and decides on that state. Likewise a sign-out sent to B before B has heard of the
 * sign-in on A must end the session.
 *
 * These run in the PostgreSQL run of the suite (FLAGSTORE_TEST_STORE=postgres); the same races on
 * one instance are in test/features/tokens/revocation.test.ts.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import {
  asSession,
  expectError,
  expectOk,
  makeApi,
  newUser as createUser,
  signIn as signInWith,
  tokenFor,
  waitFor,
  type Api,
} from '../helpers'
import { freshDatabase, ON_POSTGRES } from '../test-store'

const PASSWORD = 'Correct-horse-7'
const ROUNDS = 8

const opened: Api[] = []
afterEach(async () => {
  for (const api of opened.splice(0)) await api.close().catch(() => api.abandon())
})

/** Two apps on one fresh database, each seeded as at start. */
async function twoInstances(): Promise<[Api, Api]> {
  const config = await freshDatabase()
  const [a, b] = await Promise.all([makeApi({ database: config }), makeApi({ database: config })])
  opened.push(a!, b!)
  return [a!, b!]
}

/** Request options for a cookie-authenticated call from the console's own origin. */
const as = (cookie: string) => asSession(cookie)
const newUser = async (api: Api, username: string, rootRole: string) =>
  (await createUser(api, { username, rootRole, password: PASSWORD })).id
const signIn = (api: Api, username: string) => signInWith(api, username, PASSWORD)

/** Waits until `api` takes the credential (a cookie, or a token's secret). */
async function knownOn(api: Api, options: { token: string | null; headers?: Record<string, string> }, what: string) {
  await waitFor(async () => (await api.get('/api/admin/projects', options)).status === 200, `${what} known on B`)
}

/** Both instances at the same commit, so that A's event log holds every event B made. */
async function inStep(a: Api, b: Api) {
  await waitFor(
    () => a.services.store.state.commitSeq === b.services.store.state.commitSeq,
    'A and B at the same commit',
  )
}

describe.skipIf(!ON_POSTGRES)('a revocation on one instance, a write on another', () => {
  test('an admin deleted on A cannot mint an admin token on B right after the deletion is acknowledged: 401, nothing written', async () => {
    const [a, b] = await twoInstances()
    await newUser(a, 'keeper', 'Admin')
    for (let round = 0; round < ROUNDS; round++) {
      const id = await newUser(a, `boss-${round}`, 'Admin')
      const cookie = await signIn(a, `boss-${round}`)
      await knownOn(b, as(cookie), 'the session')
      expectOk(await a.delete(`/api/admin/user-admin/${id}`))
      expectError(
        await b.createToken({ tokenName: `minted-${round}`, type: 'admin' }, as(cookie)),
        401,
        'AuthenticationRequired',
      )
    }
    await inStep(a, b)
    expect(a.events().filter(event => event.createdBy.startsWith('boss-'))).toEqual([])
    expect(Object.keys(b.services.store.state.tokens).filter(name => name.startsWith('minted-'))).toEqual([])
  })

  test('an editor demoted on A cannot write on B right after the demotion is acknowledged: 403, nothing written', async () => {
    const [a, b] = await twoInstances()
    for (let round = 0; round < ROUNDS; round++) {
      const id = await newUser(a, `editor-${round}`, 'Editor')
      const cookie = await signIn(a, `editor-${round}`)
      await knownOn(b, as(cookie), 'the session')
      expectOk(await a.put(`/api/admin/user-admin/${id}`, { rootRole: 'Viewer' }))
      expectError(await b.createFlag('default', `flag-${round}`, {}, as(cookie)), 403, 'NoAccessError')
    }
    await inStep(a, b)
    expect(a.events().filter(event => event.createdBy.startsWith('editor-'))).toEqual([])
    expect(Object.keys(b.services.store.state.flags)).toEqual([])
  })

  test('a token deleted on A cannot write on B right after the deletion is acknowledged: 401, nothing written', async () => {
    const [a, b] = await twoInstances()
    for (let round = 0; round < ROUNDS; round++) {
      const secret = await tokenFor(a, `ci-${round}`, { role: 'editor' })
      await knownOn(b, { token: secret }, 'the token')
      expectOk(await a.delete(`/api/admin/api-tokens/ci-${round}`))
      expectError(
        await b.createFlag('default', `flag-${round}`, {}, { token: secret }),
        401,
        'AuthenticationRequired',
        ['deleted'],
      )
    }
    await inStep(a, b)
    expect(a.events().filter(event => event.createdBy.startsWith('ci-'))).toEqual([])
    expect(Object.keys(b.services.store.state.flags)).toEqual([])
  })
})

describe.skipIf(!ON_POSTGRES)('sign-out on another instance', () => {
  test('a sign-out sent to B right after the sign-in on A ends the session on both', async () => {
    const [a, b] = await twoInstances()
    await newUser(a, 'alice', 'Editor')
    for (let round = 0; round < ROUNDS; round++) {
      const cookie = await signIn(a, 'alice')
      const out = await b.post('/logout', undefined, as(cookie))
      expectOk(out)
      expect(out.headers.get('set-cookie')).toStartWith('unleash-session=;')
      expectError(await b.get('/api/admin/projects', as(cookie)), 401, 'AuthenticationRequired', ['session has ended'])
      // A reads its own copy of the state: it hears of the sign-out within the propagation bound (docs/postgres.md).
      await waitFor(
        async () => (await a.get('/api/admin/projects', as(cookie))).status === 401,
        'the session ended on A',
      )
    }
    await inStep(a, b)
    expect(a.services.store.state.sessions).toEqual({})
    expect(b.services.store.state.sessions).toEqual({})
  })
})
