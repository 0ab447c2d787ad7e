/**
 * Single sign-on's settings: Unleash's OIDC settings API (the secret never answered), settings from
 * the environment winning over it, and password sign-in switched off with one way back at start.
 */
import { describe, expect, test } from 'bun:test'
import { DEFAULT_OIDC } from '../../../src/features/sso/sso.options'
import { readConfig } from '../../../src/config'
import { expectError, expectOk, freshApiPerTest, makeApi, newUser, type Api } from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const OIDC = { enabled: true, discoverUrl: 'https://login.example.com/realms/staff', clientId: 'flagstore' }
const login = (target: Api) =>
  target.post('/auth/simple/login', { username: 'ann', password: 'Correct-horse-7' }, { token: null })

describe('the OIDC settings', () => {
  test('are kept and answered without the secret; a secret left out keeps the one set', async () => {
    const set = await api.post<Record<string, unknown>>('/api/admin/auth/oidc/settings', {
      ...OIDC,
      secret: 'top-secret-value',
      defaultRootRole: 'editor',
      rootRoleMapping: [{ group: 'admins', rootRole: 'admin' }],
    })
    expectOk(set)
    expect(set.body).toMatchObject({ ...OIDC, hasSecret: true, defaultRootRole: 'Editor', setByEnvironment: false })
    expect(set.body.rootRoleMapping).toEqual([{ group: 'admins', rootRole: 'Admin' }])
    expectOk(await api.post('/api/admin/auth/oidc/settings', { autoCreate: true }))
    const read = await api.get<Record<string, unknown>>('/api/admin/auth/oidc/settings')
    expect(read.text).not.toContain('top-secret-value')
    expect(read.body).toMatchObject({ autoCreate: true, hasSecret: true })
    expect(api.services.store.state.ssoSettings.settings!.oidc!.secret).toBe('top-secret-value')
    const options = await api.get('/auth/options', { token: null })
    expect(options.body).toEqual({ passwordSignIn: true, oidc: true, singleSignOut: false })
  })

  test('refuses what cannot work, and editors, changing nothing', async () => {
    const editor = await api.createToken({ tokenName: 'ed', type: 'admin', role: 'editor' })
    const before = JSON.stringify(api.services.store.state.ssoSettings)
    expectError(await api.post('/api/admin/auth/oidc/settings', { enabled: true }), 400, 'ValidationError')
    expectError(
      await api.post('/api/admin/auth/oidc/settings', { discoverUrl: 'ftp://login.example.com' }),
      400,
      'ValidationError',
    )
    expectError(await api.post('/api/admin/auth/oidc/settings', { defaultRootRole: 'Owner' }), 400, 'ValidationError')
    expectError(
      await api.post('/api/admin/auth/oidc/settings', OIDC, { token: editor.body.secret }),
      403,
      'NoAccessError',
    )
    expectError(await api.get('/api/admin/auth/oidc/settings', { token: editor.body.secret }), 403, 'NoAccessError')
    expect(JSON.stringify(api.services.store.state.ssoSettings)).toBe(before)
  })

  test('set by the environment, they win and the API cannot change them (409)', async () => {
    const { sso: environment } = readConfig({
      OIDC_ENABLED: 'true',
      OIDC_DISCOVER_URL: 'https://login.example.com',
      OIDC_CLIENT_ID: 'from-env',
      OIDC_CLIENT_SECRET: 'env-secret',
      OIDC_ROOT_ROLE_MAPPING: '[{"group":"ops","rootRole":"Admin"}]',
    })
    const fromEnv = await makeApi({ sso: environment })
    const read = await fromEnv.get<Record<string, unknown>>('/api/admin/auth/oidc/settings')
    expect(read.body).toMatchObject({ clientId: 'from-env', hasSecret: true, setByEnvironment: true })
    expect(read.text).not.toContain('env-secret')
    expectError(await fromEnv.post('/api/admin/auth/oidc/settings', { clientId: 'other' }), 409, 'ConflictError')
  })

  test('environment variables with bad values stop the start, naming the variable', () => {
    expect(() => readConfig({ OIDC_ENABLED: 'maybe' })).toThrow('OIDC_ENABLED')
    expect(() => readConfig({ OIDC_ENABLED: 'true' })).toThrow('discoverUrl')
    expect(() => readConfig({ OIDC_ROOT_ROLE_MAPPING: '{"group"' })).toThrow('OIDC_ROOT_ROLE_MAPPING')
    expect(() => readConfig({ UNLEASH_URL: 'not a url' })).toThrow('UNLEASH_URL')
    expect(readConfig({}).sso).toEqual({ oidc: null, passwordSignInForced: false, publicUrl: null })
    expect(readConfig({ UNLEASH_URL: 'https://flags.example.com/' }).sso.publicUrl).toBe('https://flags.example.com')
    expect(readConfig({ OIDC_CLIENT_ID: 'x' }).sso.oidc).toEqual({ ...DEFAULT_OIDC, clientId: 'x' })
  })
})

describe('password sign-in switched off', () => {
  test('only while OIDC is on; then a password sign-in is refused, even a right one', async () => {
    await newUser(api, { username: 'ann', rootRole: 'Admin', password: 'Correct-horse-7' })
    expectError(await api.put('/api/admin/auth/simple/settings', { disabled: true }), 400, 'ValidationError')
    expectOk(await api.post('/api/admin/auth/oidc/settings', OIDC))
    expectOk(await api.put('/api/admin/auth/simple/settings', { disabled: true }))
    const refused = await login(api)
    expectError(refused, 403, 'NoAccessError')
    expect(refused.text).toContain('PASSWORD_SIGN_IN=on')
    expect((await api.get('/auth/options', { token: null })).body).toMatchObject({ passwordSignIn: false })
    // OIDC cannot be switched off while it is the only way in.
    expectError(await api.post('/api/admin/auth/oidc/settings', { enabled: false }), 409, 'ConflictError')
    expectOk(await api.put('/api/admin/auth/simple/settings', { disabled: false }))
    expectOk(await login(api))
  })

  test('PASSWORD_SIGN_IN=on at start lets passwords in whatever is stored: the way back', async () => {
    const dir = await import('node:fs').then(fs => fs.mkdtempSync('/tmp/flagstore-sso-'))
    try {
      const first = await makeApi({ dataDir: dir })
      await newUser(first, { username: 'ann', rootRole: 'Admin', password: 'Correct-horse-7' })
      expectOk(await first.post('/api/admin/auth/oidc/settings', OIDC))
      expectOk(await first.put('/api/admin/auth/simple/settings', { disabled: true }))
      await first.close()
      const locked = await makeApi({ dataDir: dir })
      expectError(await login(locked), 403, 'NoAccessError')
      await locked.close()
      const back = await makeApi({ dataDir: dir, sso: readConfig({ PASSWORD_SIGN_IN: 'on' }).sso })
      expectOk(await login(back))
      expect((await back.get('/api/admin/auth/simple/settings')).body).toEqual({ disabled: false })
      await back.close()
    } finally {
      await import('node:fs').then(fs => fs.rmSync(dir, { recursive: true, force: true }))
    }
  })
})
