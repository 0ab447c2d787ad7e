/**
 * Single sign-on against a real OpenID provider (oidc-provider, started here): people made at
 * their first sign-in or matched by subject then verified email, roles from groups at each
 * sign-in, and every refusal (state forged or replayed, domain not allowed, disabled or deleted
 * users) changing nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asSession, expectError, expectOk, freshApiPerTest, newUser, type Api } from '../../helpers'
import { startProvider, type TestProvider } from './provider'
import { CALLBACK, callback, sessionOf, startSignIn, useProvider } from './sso.setup'

let provider: TestProvider
beforeAll(async () => {
  provider = await startProvider([CALLBACK])
})
afterAll(async () => await provider.close())

let api: Api
freshApiPerTest(fresh => (api = fresh))

/** Signs in through the provider as `subject`: the callback's answer. */
async function signInAs(subject: string, target = api) {
  const { location, flow } = await startSignIn(target)
  const back = await provider.signIn(location, subject)
  return callback(target, back, flow)
}

interface Me {
  user: { id: number; email: string | null; rootRole: number }
}

describe('signing in with the provider', () => {
  test('makes the person at their first sign-in, with the session cookie of a password sign-in, and finds them by subject after', async () => {
    provider.accounts.set('ann', { email: 'ann@example.com', email_verified: true, name: 'Ann' })
    await useProvider(api, provider.issuer)
    const since = api.lastEventId()
    const first = await signInAs('ann')
    expect(first.status).toBe(200)
    expect(first.text).toContain('http-equiv="refresh"')
    const cookie = sessionOf(first)!
    expect(cookie).not.toBeNull()
    const me = await api.get<Me>('/api/admin/user', asSession(cookie))
    expectOk(me)
    expect(me.body.user).toMatchObject({ email: 'ann@example.com', rootRole: 3 })
    expect(api.eventsSince(since).map(event => event.type)).toEqual(['user-created'])
    // The provider changes the email: still the same person, found by subject.
    provider.accounts.set('ann', { email: 'ann.b@example.com', email_verified: true })
    const again = await signInAs('ann')
    const me2 = await api.get<Me>('/api/admin/user', asSession(sessionOf(again)!))
    expect(me2.body.user.id).toBe(me.body.user.id)
    expect(Object.values(api.services.store.state.users).filter(user => user.passwordHash === null)).toHaveLength(1)
  })

  test('matches an existing user by verified email, never by an unverified one', async () => {
    const bea = await newUser(api, { email: 'bea@example.com', rootRole: 'Editor' })
    await useProvider(api, provider.issuer, { autoCreate: false })
    provider.accounts.set('bea-unverified', { email: 'bea@example.com', email_verified: false })
    const refused = await signInAs('bea-unverified')
    expect(refused.status).toBe(403)
    expect(sessionOf(refused)).toBeNull()
    provider.accounts.set('bea', { email: 'BEA@example.com', email_verified: true })
    const answer = await signInAs('bea')
    const me = await api.get<Me>('/api/admin/user', asSession(sessionOf(answer)!))
    expect(me.body.user).toMatchObject({ id: bea.id, rootRole: 2 })
  })

  test('refuses a domain not allowed, with a page, making nobody', async () => {
    await useProvider(api, provider.issuer, { emailDomains: 'example.com, example.org' })
    provider.accounts.set('eve', { email: 'eve@evil.test', email_verified: true })
    const users = Object.keys(api.services.store.state.users).length
    const since = api.lastEventId()
    const answer = await signInAs('eve')
    expect(answer.status).toBe(403)
    expect(answer.text).toContain('example.com, example.org')
    expect(sessionOf(answer)).toBeNull()
    expect(Object.keys(api.services.store.state.users)).toHaveLength(users)
    expect(api.lastEventId()).toBe(since)
  })

  test('derives the root role from the groups at each sign-in: leaving the admin group demotes at the next', async () => {
    // Another admin, who can sign in: cat is not the last admin (sso-events.test.ts covers that).
    await newUser(api, { username: 'root', rootRole: 'Admin', password: 'Correct-horse-7' })
    await useProvider(api, provider.issuer, {
      enableGroupSyncing: true,
      addGroupsScope: true,
      groupJsonPath: 'groups',
      rootRoleMapping: [
        { group: 'flag-admins', rootRole: 'Admin' },
        { group: 'flag-editors', rootRole: 'Editor' },
      ],
    })
    provider.accounts.set('cat', { email: 'cat@example.com', email_verified: true, groups: ['staff', 'flag-admins'] })
    const first = sessionOf(await signInAs('cat'))!
    expect((await api.get<Me>('/api/admin/user', asSession(first))).body.user.rootRole).toBe(1)
    expectOk(await api.get('/api/admin/user-admin', asSession(first)))
    provider.accounts.set('cat', { email: 'cat@example.com', email_verified: true, groups: ['flag-editors'] })
    const since = api.lastEventId()
    const second = sessionOf(await signInAs('cat'))!
    expect(api.eventsSince(since).map(event => [event.type, event.data?.rootRole])).toEqual([['user-updated', 2]])
    // Every session of the person holds the new role, the earlier one too.
    for (const cookie of [first, second])
      expectError(await api.get('/api/admin/user-admin', asSession(cookie)), 403, 'NoAccessError')
  })

  test('a user disabled or deleted here cannot come back through the provider', async () => {
    await useProvider(api, provider.issuer)
    provider.accounts.set('dan', { email: 'dan@example.com', email_verified: true })
    const cookie = sessionOf(await signInAs('dan'))!
    const { user } = (await api.get<Me>('/api/admin/user', asSession(cookie))).body
    expectOk(await api.put(`/api/admin/user-admin/${user.id}`, { disabled: true }))
    const disabled = await signInAs('dan')
    expect(disabled.status).toBe(403)
    expect(disabled.text).toContain('disabled')
    expectOk(await api.delete(`/api/admin/user-admin/${user.id}`))
    const since = api.lastEventId()
    const deleted = await signInAs('dan')
    expect(deleted.status).toBe(403)
    expect(deleted.text).toContain('deleted')
    expect(api.lastEventId()).toBe(since)
    // An admin adding them again lets them back, as the same subject.
    await newUser(api, { email: 'dan@example.com', rootRole: 'Viewer' })
    expect((await signInAs('dan')).status).toBe(200)
  })
})

describe('the state of a sign-in', () => {
  test('a forged state, a missing or altered flow cookie, and a replayed answer are refused', async () => {
    provider.accounts.set('fay', { email: 'fay@example.com', email_verified: true })
    await useProvider(api, provider.issuer)
    const { location, flow } = await startSignIn(api)
    const back = await provider.signIn(location, 'fay')
    const forged = new URL(back)
    forged.searchParams.set('state', 'forged-state')
    const [name, value] = flow.split('=')
    const altered = `${name}=${value!.slice(0, -2)}xx`
    for (const [url, cookie] of [
      [forged, flow],
      [back, null],
      [back, altered],
    ] as const) {
      const answer = await callback(api, url, cookie)
      expect(answer.status).toBe(400)
      expect(sessionOf(answer)).toBeNull()
    }
    expect((await callback(api, back, flow)).status).toBe(200)
    const replayed = await callback(api, back, flow)
    expect(replayed.status).toBe(400)
    expect(sessionOf(replayed)).toBeNull()
  })

  test("the provider's new signing keys are followed at the next sign-in", async () => {
    provider.accounts.set('gil', { email: 'gil@example.com', email_verified: true })
    await useProvider(api, provider.issuer)
    expect((await signInAs('gil')).status).toBe(200)
    await provider.rotateKeys()
    expect((await signInAs('gil')).status).toBe(200)
  })

  test('the login redirect goes back only to a path of this service', async () => {
    await useProvider(api, provider.issuer)
    provider.accounts.set('hal', { email: 'hal@example.com', email_verified: true })
    for (const [asked, expected] of [
      ['/projects', '/projects'],
      ['https://evil.test/', '/'],
      ['//evil.test/', '/'],
    ]) {
      const started = await api.get(`/auth/oidc/login?redirect=${encodeURIComponent(asked!)}`, { token: null })
      const flow = started.headers.getSetCookie()[0]!.split(';')[0]!
      const back = await provider.signIn(started.headers.get('location')!, 'hal')
      const answer = await callback(api, back, flow)
      expect(answer.text).toContain(`content="0;url=${expected}?signed-in=sso"`)
    }
  })
})
