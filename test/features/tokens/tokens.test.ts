/**
 * The token admin API (contract §3): list, create, delete, the secret's format and secrecy, and the
 * events written.
 */
import { afterEach, describe, expect, test } from 'bun:test'

import {
  errorOf,
  ADMIN_SECRET,
  type Api,
  makeApi,
  tempDir,
  tokenFor,
  type TokenListBody,
  expectError,
  defined,
  storeSnapshot,
  expectUnchanged,
  sharedApp,
} from '../../helpers'
import { ADMIN_SECRET_FORMAT, TOKENS, randomPart, expectNoSecret, filesUnder } from './tokens.setup'

/** One app for the file; each test opens a fresh service of its own (helpers/shared-app.ts). */
const shared = await sharedApp()
let api: Api
let cleanups: (() => void)[] = []
afterEach(async () => {
  await api?.close()
  for (const cleanup of cleanups) cleanup()
  cleanups = []
})

describe('GET /api/admin/api-tokens', () => {
  test('lists every token with its type, role, projects and environment, and never a secret', async () => {
    api = await shared.open()
    expect((await api.createProject('alpha')).status).toBe(201)
    const ops = await api.createToken({ tokenName: 'ops', type: 'admin', role: 'editor', projects: ['alpha'] })
    const sdk = await api.createToken({
      tokenName: 'sdk',
      type: 'client',
      projects: ['alpha'],
      environment: 'production',
    })
    expect([ops.status, sdk.status]).toEqual([201, 201])

    const response = await api.get<TokenListBody>(TOKENS)
    expect(response.status).toBe(200)
    const byName = Object.fromEntries(response.body.tokens.map((t: { tokenName: string }) => [t.tokenName, t]))
    expect(byName.ops).toMatchObject({
      tokenName: 'ops',
      type: 'admin',
      role: 'editor',
      projects: ['alpha'],
      expiresAt: null,
    })
    expect(byName.sdk).toMatchObject({
      tokenName: 'sdk',
      type: 'client',
      projects: ['alpha'],
      environment: 'production',
      expiresAt: null,
    })
    for (const token of response.body.tokens) expect(token).not.toHaveProperty('secret')
    expectNoSecret(response.text, ops.body.secret)
    expectNoSecret(response.text, sdk.body.secret)
    expectNoSecret(response.text, ADMIN_SECRET)
  })
})

describe('POST /api/admin/api-tokens', () => {
  test('an admin token is created with 201 and a secret of the form *:*.<64 hex>', async () => {
    api = await shared.open()
    const since = api.lastEventId()
    const response = await api.createToken({ tokenName: 'ci-pipeline', type: 'admin' })
    expect(response.status).toBe(201)
    expect(response.body.secret).toMatch(ADMIN_SECRET_FORMAT)
    expect(response.body).toMatchObject({
      tokenName: 'ci-pipeline',
      type: 'admin',
      role: 'admin',
      projects: ['*'],
      expiresAt: null,
    })
    expect(api.services.store.state.tokens['ci-pipeline']).toBeDefined()
    expect(api.eventsSince(since).map(e => e.type)).toEqual(['api-token-created'])
  })

  test('a client token has a secret of the form <project>:<environment>.<64 hex>', async () => {
    api = await shared.open()
    expect((await api.createProject('alpha')).status).toBe(201)
    const viaProjects = await api.createToken({
      tokenName: 'sdk-prod',
      type: 'client',
      projects: ['alpha'],
      environment: 'production',
    })
    expect(viaProjects.status).toBe(201)
    expect(viaProjects.body.secret).toMatch(/^alpha:production\.[0-9a-f]{64}$/)
    expect(viaProjects.body).toMatchObject({
      tokenName: 'sdk-prod',
      type: 'client',
      projects: ['alpha'],
      environment: 'production',
    })

    const viaProject = await api.createToken({
      tokenName: 'sdk-dev',
      type: 'client',
      project: 'default',
      environment: 'development',
    })
    expect(viaProject.status).toBe(201)
    expect(viaProject.body.secret).toMatch(/^default:development\.[0-9a-f]{64}$/)
    expect(viaProject.body).toMatchObject({ projects: ['default'], environment: 'development' })
  })

  test('every created secret is different', async () => {
    api = await shared.open()
    const a = await api.createToken({ tokenName: 'a', type: 'admin' })
    const b = await api.createToken({ tokenName: 'b', type: 'admin' })
    expect(a.body.secret).not.toBe(b.body.secret)
    expect(randomPart(a.body.secret)).not.toBe(randomPart(b.body.secret))
  })

  test('the new secret works at once', async () => {
    api = await shared.open()
    const admin = await api.createToken({ tokenName: 'fresh-admin', type: 'admin' })
    const list = await api.get<TokenListBody>(TOKENS, { token: admin.body.secret })
    expect(list.status).toBe(200)
    const created = await api.createFlag('default', 'made-by-fresh-admin', {}, { token: admin.body.secret })
    expect(created.status).toBe(201)

    const viewer = await api.createToken({ tokenName: 'fresh-viewer', type: 'admin', role: 'viewer' })
    expect((await api.listFlags('default', '', { token: viewer.body.secret })).status).toBe(200)

    // A client secret is recognised (403 for the admin API, not 401 for an unknown token).
    const client = await api.createToken({
      tokenName: 'fresh-client',
      type: 'client',
      projects: ['default'],
      environment: 'development',
    })
    expectError(await api.get('/api/admin/projects', { token: client.body.secret }), 403, 'NoAccessError')
  })

  test('the state holds only a hash of the secret, never the secret itself', async () => {
    api = await shared.open()
    const admin = await api.createToken({ tokenName: 'hashed', type: 'admin' })
    const client = await api.createToken({
      tokenName: 'hashed-client',
      type: 'client',
      projects: ['default'],
      environment: 'development',
    })
    const state = JSON.stringify(api.services.store.state)
    expectNoSecret(state, admin.body.secret)
    expectNoSecret(state, client.body.secret)
    expectNoSecret(state, ADMIN_SECRET)
    const record = api.services.store.state.tokens.hashed as unknown as Record<string, unknown>
    expect(record.secret).toBeUndefined()
    // Something derived from the secret is kept, so the token can be recognised.
    expect(JSON.stringify(record)).toMatch(/[0-9a-f]{32,}/i)
  })

  test('no file in the data directory holds a secret', async () => {
    const dir = tempDir()
    cleanups.push(dir.remove)
    api = await makeApi({ dataDir: dir.path })
    const admin = await api.createToken({ tokenName: 'on-disk', type: 'admin' })
    expect(admin.status).toBe(201)
    expect((await api.delete(`${TOKENS}/on-disk`)).status).toBe(200)
    await api.services.store.flush()
    const texts = filesUnder(dir.path)
    expect(texts.length).toBeGreaterThan(0)
    for (const text of texts) {
      expectNoSecret(text, admin.body.secret)
      expectNoSecret(text, ADMIN_SECRET)
    }
  })

  test('api-token-created names the calling token as createdBy with its user id, and holds no secret', async () => {
    api = await shared.open()
    const opsSecret = await tokenFor(api, 'ops')
    const opsUserId = api.services.store.state.tokens.ops.userId
    expect(typeof opsUserId).toBe('number')
    expect(opsUserId).not.toBe(-42)

    const since = api.lastEventId()
    const response = await api.createToken({ tokenName: 'ci', type: 'admin', role: 'editor' }, { token: opsSecret })
    expect(response.status).toBe(201)
    const events = api.eventsSince(since)
    expect(events).toHaveLength(1)
    const [event] = events
    expect(event).toMatchObject({ type: 'api-token-created', createdBy: 'ops', createdByUserId: opsUserId })
    expect(event.data).toMatchObject({ tokenName: 'ci', type: 'admin', role: 'editor' })
    expect(event.id).toBe(since + 1)
    expectNoSecret(JSON.stringify(event), response.body.secret)
    expectNoSecret(JSON.stringify(event), opsSecret)

    // The user id is stable per token and differs between tokens.
    const again = api.lastEventId()
    expect((await api.createToken({ tokenName: 'ci-2', type: 'admin' }, { token: opsSecret })).status).toBe(201)
    expect(api.eventsSince(again)[0].createdByUserId).toBe(opsUserId)
    const ciUserId = api.services.store.state.tokens.ci.userId
    expect(ciUserId).not.toBe(opsUserId)
    const third = api.lastEventId()
    expect((await api.createFlag('default', 'by-ci', {}, { token: response.body.secret })).status).toBe(201)
    for (const e of api.eventsSince(third))
      expect({ createdBy: e.createdBy, createdByUserId: e.createdByUserId }).toEqual({
        createdBy: 'ci',
        createdByUserId: ciUserId,
      })
  })

  test('a token name already taken answers 409 NameExistsError and keeps the existing token', async () => {
    api = await shared.open()
    const first = await api.createToken({ tokenName: 'twice', type: 'admin' })
    expect(first.status).toBe(201)
    const before = storeSnapshot(api)
    const second = await api.createToken({
      tokenName: 'twice',
      type: 'client',
      projects: ['default'],
      environment: 'development',
    })
    expectError(second, 409, 'NameExistsError')
    expect(second.body.secret).toBeUndefined()
    expectUnchanged(api, before)
    expect((await api.get<TokenListBody>(TOKENS, { token: first.body.secret })).status).toBe(200)
  })

  test('an unknown token type answers 400 and creates nothing', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    const response = await api.createToken({ tokenName: 'weird', type: 'superuser' })
    expectError(response, 400, 'ValidationError')
    expectUnchanged(api, before)
  })

  test('an unknown project answers 400 and creates nothing', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    expectError(
      await api.createToken({ tokenName: 'ghost-admin', type: 'admin', projects: ['no-such-project'] }),
      400,
      'ValidationError',
    )
    expectError(
      await api.createToken({
        tokenName: 'ghost-client',
        type: 'client',
        project: 'no-such-project',
        environment: 'development',
      }),
      400,
      'ValidationError',
    )
    expectUnchanged(api, before)
  })

  test('an unknown environment answers 400 and creates nothing', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    const response = await api.createToken({
      tokenName: 'no-env',
      type: 'client',
      projects: ['default'],
      environment: 'no-such-env',
    })
    expectError(response, 400, 'ValidationError')
    expectUnchanged(api, before)
  })

  test('a client or frontend token for environment * answers 400 naming /environment and creates nothing', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    for (const type of ['client', 'frontend', 'CLIENT']) {
      for (const extra of [{ projects: ['default'] }, { projects: ['*'] }, { project: 'default' }]) {
        const response = await api.createToken({ tokenName: `star-${type}`, type, environment: '*', ...extra })
        expectError(response, 400, 'ValidationError')
        expect(errorOf(response).message).toContain('one existing environment')
        expect(errorOf(response).details).toEqual([
          { message: 'must name one existing environment, not "*"', path: '/environment' },
        ])
      }
    }
    expectUnchanged(api, before)
    // Admin tokens stay environment-wide.
    const admin = await api.createToken({ tokenName: 'star-admin', type: 'admin' })
    expect({ status: admin.status, environment: admin.body.environment }).toEqual({ status: 201, environment: '*' })
  })

  test('an expiresAt in the past answers 400 and creates nothing', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    const response = await api.createToken({
      tokenName: 'stale',
      type: 'admin',
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    })
    expectError(response, 400, 'ValidationError')
    expectUnchanged(api, before)
  })

  test('an expiresAt in the future is kept and shown', async () => {
    api = await shared.open()
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const response = await api.createToken({ tokenName: 'expiring', type: 'admin', expiresAt })
    expect(response.status).toBe(201)
    expect(Date.parse(response.body.expiresAt ?? '')).toBe(Date.parse(expiresAt))
    const listed = defined((await api.get<TokenListBody>(TOKENS)).body.tokens.find(t => t.tokenName === 'expiring'))
    expect(Date.parse(listed.expiresAt ?? '')).toBe(Date.parse(expiresAt))
  })
})

describe('DELETE /api/admin/api-tokens/:tokenName', () => {
  test('deleting a token removes it, stops its secret and records api-token-deleted without the secret', async () => {
    api = await shared.open()
    const opsSecret = await tokenFor(api, 'ops')
    const victim = await api.createToken({ tokenName: 'victim', type: 'admin' })
    expect(victim.status).toBe(201)
    const opsUserId = api.services.store.state.tokens.ops.userId

    const since = api.lastEventId()
    const response = await api.delete(`${TOKENS}/victim`, { token: opsSecret })
    expect(response.status).toBe(200)
    expect(api.services.store.state.tokens.victim).toBeUndefined()
    const names = (await api.get<TokenListBody>(TOKENS)).body.tokens.map((t: { tokenName: string }) => t.tokenName)
    expect(names).not.toContain('victim')

    const events = api.eventsSince(since)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ type: 'api-token-deleted', createdBy: 'ops', createdByUserId: opsUserId })
    expect(JSON.stringify(events[0])).toContain('victim')
    expectNoSecret(JSON.stringify(events[0]), victim.body.secret)
    expectNoSecret(JSON.stringify(events[0]), opsSecret)

    expectError(await api.get<TokenListBody>(TOKENS, { token: victim.body.secret }), 401, 'AuthenticationRequired')
  })

  test('deleting an unknown token answers 404 NotFoundError and changes nothing', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    expectError(await api.delete(`${TOKENS}/no-such-token`), 404, 'NotFoundError')
    expectUnchanged(api, before)
  })

  test('a deleted token name can be used again, with a new secret', async () => {
    api = await shared.open()
    const old = await api.createToken({ tokenName: 'reused', type: 'admin' })
    expect((await api.delete(`${TOKENS}/reused`)).status).toBe(200)
    const fresh = await api.createToken({ tokenName: 'reused', type: 'admin' })
    expect(fresh.status).toBe(201)
    expect(fresh.body.secret).not.toBe(old.body.secret)
    expectError(await api.get<TokenListBody>(TOKENS, { token: old.body.secret }), 401, 'AuthenticationRequired')
    expect((await api.get<TokenListBody>(TOKENS, { token: fresh.body.secret })).status).toBe(200)
  })
})
