/**
 * What single sign-on records: its settings' changes (setting-updated, never the secret, read by
 * admins only), the people a sign-in makes or re-roles (recorded as made by that person, naming
 * the provider), and the last admin kept an admin when their groups would demote them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asSession, expectError, expectOk, freshApiPerTest, newUser, type Api } from '../../helpers'
import { startProvider, type TestProvider } from './provider'
import { callback, CALLBACK, sessionOf, startSignIn, useProvider } from './sso.setup'
import { captureLogLines } from '../../../src/log'

let provider: TestProvider
beforeAll(async () => {
  provider = await startProvider([CALLBACK])
})
afterAll(async () => await provider.close())

let api: Api
freshApiPerTest(fresh => (api = fresh))

async function signInAs(subject: string) {
  const { location, flow } = await startSignIn(api)
  return callback(api, await provider.signIn(location, subject), flow)
}

interface Me {
  user: { id: number; rootRole: number }
}

const OIDC = { enabled: true, discoverUrl: 'https://login.example.com/realms/staff', clientId: 'flagstore' }

describe('changing the settings', () => {
  test('records setting-updated without the secret; a refused change records nothing', async () => {
    let since = api.lastEventId()
    expectOk(await api.post('/api/admin/auth/oidc/settings', { ...OIDC, secret: 'top-secret-value' }))
    expect(api.services.store.state.ssoSettings.settings!.oidc).toMatchObject({ ...OIDC, secret: 'top-secret-value' })
    const [set, ...more] = api.eventsSince(since)
    expect(more).toEqual([])
    expect(set).toMatchObject({
      type: 'setting-updated',
      createdBy: 'admin-bootstrap',
      data: { id: 'unleash.enterprise.auth.oidc', ...OIDC, hasSecret: true, secretChanged: true },
      preData: { id: 'unleash.enterprise.auth.oidc', enabled: false, hasSecret: false },
    })
    expect(JSON.stringify(set)).not.toContain('top-secret-value')
    since = api.lastEventId()
    expectOk(await api.post('/api/admin/auth/oidc/settings', { autoCreate: true }))
    expect(api.eventsSince(since)).toMatchObject([
      { type: 'setting-updated', data: { autoCreate: true, hasSecret: true, secretChanged: false } },
    ])
    // Refused: a bad value, an editor, and (password sign-in off) switching OIDC off.
    const editor = await api.createToken({ tokenName: 'ed', type: 'admin', role: 'editor' })
    expectOk(await api.put('/api/admin/auth/simple/settings', { disabled: true }))
    since = api.lastEventId()
    const state = JSON.stringify(api.services.store.state.ssoSettings)
    expectError(await api.post('/api/admin/auth/oidc/settings', { discoverUrl: 'ftp://x' }), 400, 'ValidationError')
    expectError(
      await api.post('/api/admin/auth/oidc/settings', OIDC, { token: editor.body.secret }),
      403,
      'NoAccessError',
    )
    expectError(await api.post('/api/admin/auth/oidc/settings', { enabled: false }), 409, 'ConflictError')
    expect(api.lastEventId()).toBe(since)
    expect(JSON.stringify(api.services.store.state.ssoSettings)).toBe(state)
  })

  test('password sign-in switched off and on records setting-updated; a refused change records nothing', async () => {
    let since = api.lastEventId()
    expectError(await api.put('/api/admin/auth/simple/settings', { disabled: true }), 400, 'ValidationError')
    expect(api.lastEventId()).toBe(since)
    expectOk(await api.post('/api/admin/auth/oidc/settings', OIDC))
    since = api.lastEventId()
    expect((await api.put('/api/admin/auth/simple/settings', { disabled: true })).body).toEqual({ disabled: true })
    expect(api.services.store.state.ssoSettings.settings!.passwordSignInDisabled).toBe(true)
    expect((await api.put('/api/admin/auth/simple/settings', { disabled: false })).body).toEqual({ disabled: false })
    expect(api.eventsSince(since).map(event => [event.type, event.data, event.preData])).toEqual([
      [
        'setting-updated',
        { id: 'unleash.auth.simple', disabled: true },
        { id: 'unleash.auth.simple', disabled: false },
      ],
      [
        'setting-updated',
        { id: 'unleash.auth.simple', disabled: false },
        { id: 'unleash.auth.simple', disabled: true },
      ],
    ])
  })

  test('the events are listed to admins only', async () => {
    expectOk(await api.post('/api/admin/auth/oidc/settings', { ...OIDC, secret: 'top-secret-value' }))
    const admin = await api.searchEvents('?type=IS:setting-updated')
    expectOk(admin)
    expect(admin.body.total).toBe(1)
    expect(admin.text).not.toContain('top-secret-value')
    for (const role of ['editor', 'viewer']) {
      const token = await api.createToken({ tokenName: `as-${role}`, type: 'admin', role })
      const page = await api.searchEvents('?type=IS:setting-updated', { token: token.body.secret })
      expectOk(page)
      expect({ role, total: page.body.total }).toEqual({ role, total: 0 })
    }
  })
})

describe('people made or re-roled at a sign-in', () => {
  test('are recorded as changed by the person signing in, naming the provider', async () => {
    await newUser(api, { username: 'root', rootRole: 'Admin', password: 'Correct-horse-7' })
    await useProvider(api, provider.issuer, {
      enableGroupSyncing: true,
      addGroupsScope: true,
      groupJsonPath: 'groups',
      rootRoleMapping: [{ group: 'flag-editors', rootRole: 'Editor' }],
    })
    provider.accounts.set('ann', { email: 'ann@example.com', email_verified: true, groups: ['flag-editors'] })
    let since = api.lastEventId()
    const first = await signInAs('ann')
    const { user } = (await api.get<Me>('/api/admin/user', asSession(sessionOf(first)!))).body
    const who = { createdBy: 'ann@example.com', createdByUserId: user.id }
    const named = { provider: 'oidc', issuer: provider.issuer }
    expect(api.eventsSince(since)).toMatchObject([
      { type: 'user-created', ...who, data: { id: user.id, rootRole: 2, ...named } },
    ])
    provider.accounts.set('ann', { email: 'ann@example.com', email_verified: true, groups: [] })
    since = api.lastEventId()
    expect((await signInAs('ann')).status).toBe(200)
    expect(api.eventsSince(since)).toMatchObject([
      { type: 'user-updated', ...who, data: { rootRole: 3, ...named }, preData: { rootRole: 2 } },
    ])
  })
})

describe('the last admin', () => {
  test('keeps the role when their groups would demote them, signs in, and is told so; demoted once another admin exists', async () => {
    await useProvider(api, provider.issuer, {
      enableGroupSyncing: true,
      addGroupsScope: true,
      groupJsonPath: 'groups',
      rootRoleMapping: [{ group: 'flag-admins', rootRole: 'Admin' }],
    })
    provider.accounts.set('cat', { email: 'cat@example.com', email_verified: true, groups: ['flag-admins'] })
    const first = sessionOf(await signInAs('cat'))!
    const { user } = (await api.get<Me>('/api/admin/user', asSession(first))).body
    expect(user.rootRole).toBe(1)
    provider.accounts.set('cat', { email: 'cat@example.com', email_verified: true, groups: ['staff'] })
    const since = api.lastEventId()
    const logged: unknown[] = []
    const restore = captureLogLines(line => logged.push(JSON.parse(line)))
    let kept: Awaited<ReturnType<typeof signInAs>>
    try {
      kept = await signInAs('cat')
    } finally {
      restore()
    }
    expect(kept.status).toBe(200)
    expect(kept.text).toContain('last admin')
    expect(api.eventsSince(since).filter(event => event.type.startsWith('user-'))).toEqual([])
    expect(api.services.store.state.users[String(user.id)]!.rootRole).toBe('admin')
    expectOk(await api.get('/api/admin/user-admin', asSession(sessionOf(kept)!)))
    expect(logged).toMatchObject([{ level: 'warn', userId: user.id, reason: expect.stringContaining('last admin') }])
    // Another active admin: the next sign-in demotes.
    await newUser(api, { username: 'root', rootRole: 'Admin', password: 'Correct-horse-7' })
    const demoted = await signInAs('cat')
    expect(demoted.text).not.toContain('last admin')
    expect(api.services.store.state.users[String(user.id)]!.rootRole).toBe('viewer')
    expectError(await api.get('/api/admin/user-admin', asSession(first)), 403, 'NoAccessError')
  })
})
