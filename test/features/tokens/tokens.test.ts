/**
 * The token admin API (contract §3): list, create, delete, the secret's format and secrecy, the
 * events written, and the admin tokens made at start (INIT_ADMIN_API_TOKENS, or one generated).
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../../src/app'
import { createServices, initialise, openStore } from '../../../src/services'
import {
  errorOf,
  ADMIN_SECRET,
  Api,
  BODY_LIMIT,
  makeApi,
  tempDir,
  tokenFor,
  type ApiResponse,
  type TokenListBody,
  expectError,
  defined,
  storeSnapshot,
  expectUnchanged,
} from '../../helpers'

const ADMIN_SECRET_FORMAT = /^\*:\*\.[0-9a-f]{64}$/
const TOKENS = '/api/admin/api-tokens'

let api: Api
let cleanups: (() => void)[] = []
afterEach(async () => {
  await api?.close()
  for (const cleanup of cleanups) cleanup()
  cleanups = []
})

/** The random part of a secret: what must never be written anywhere. */
function randomPart(secret: string): string {
  return secret.slice(secret.indexOf('.') + 1)
}

function expectNoSecret(text: string, secret: string) {
  expect(text).not.toContain(secret)
  expect(text).not.toContain(randomPart(secret))
}

function tokenCount(api: Api) {
  return Object.keys(api.services.store.state.tokens).length
}

/** Every file under a directory, as text. */
function filesUnder(dir: string): string[] {
  const texts: string[] = []
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) texts.push(...filesUnder(path))
    else texts.push(readFileSync(path, 'utf8'))
  }
  return texts
}

describe('GET /api/admin/api-tokens', () => {
  test('lists every token with its type, role, projects and environment, and never a secret', async () => {
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
    const a = await api.createToken({ tokenName: 'a', type: 'admin' })
    const b = await api.createToken({ tokenName: 'b', type: 'admin' })
    expect(a.body.secret).not.toBe(b.body.secret)
    expect(randomPart(a.body.secret)).not.toBe(randomPart(b.body.secret))
  })

  test('the new secret works at once', async () => {
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.createToken({ tokenName: 'weird', type: 'superuser' })
    expectError(response, 400, 'ValidationError')
    expectUnchanged(api, before)
  })

  test('an unknown project answers 400 and creates nothing', async () => {
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const response = await api.createToken({ tokenName: 'expiring', type: 'admin', expiresAt })
    expect(response.status).toBe(201)
    expect(Date.parse(response.body.expiresAt ?? '')).toBe(Date.parse(expiresAt))
    const listed = defined((await api.get<TokenListBody>(TOKENS)).body.tokens.find(t => t.tokenName === 'expiring'))
    expect(Date.parse(listed.expiresAt ?? '')).toBe(Date.parse(expiresAt))
  })
})

describe('token names', () => {
  function expectNameRefused(response: ApiResponse, mention?: string) {
    expectError(response, 400, 'ValidationError')
    expect(errorOf(response).details?.map((detail: { path?: string }) => detail.path)).toContain('/tokenName')
    if (mention) expect(errorOf(response).message).toContain(mention)
  }

  test('names the flag rules refuse answer 400 naming /tokenName, and nothing is created', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    for (const tokenName of [
      '.',
      '..',
      '',
      ' ',
      '   ',
      '\t',
      'two words',
      ' leading',
      'trailing ',
      'new\nline',
      'nul\u0000byte',
      'bell\u0007',
      'del\u007f',
      'bidi\u202Eevil',
      'isolate\u2066x',
      'zero\u200Bwidth',
      'caf\u00e9',
      'slash/name',
      'percent%2E',
      'x'.repeat(101),
    ]) {
      const response = await api.createToken({ tokenName, type: 'admin' })
      expect({ tokenName, status: response.status }).toEqual({ tokenName, status: 400 })
      expectNameRefused(response)
    }
    expectUnchanged(api, before)
  })

  test('"system", the bootstrap names and integers are reserved in any case: 400, nothing created', async () => {
    api = await makeApi()
    // The seeding really is recorded under "system": a token so named would pass for it in events.
    expect(api.events().some(event => event.createdBy === 'system')).toBe(true)
    const before = storeSnapshot(api)
    for (const tokenName of [
      'system',
      'System',
      'SYSTEM',
      'admin-bootstrap',
      'Admin-Bootstrap',
      'admin-bootstrap-2',
      'admin-bootstrap-ci',
    ]) {
      const response = await api.createToken({ tokenName, type: 'admin' })
      expect({ tokenName, status: response.status }).toEqual({ tokenName, status: 400 })
      expectNameRefused(response, 'reserved')
    }
    for (const tokenName of ['-42', '-1337', '0', '12345']) {
      const response = await api.createToken({
        tokenName,
        type: 'client',
        projects: ['default'],
        environment: 'development',
      })
      expect({ tokenName, status: response.status }).toEqual({ tokenName, status: 400 })
      expectNameRefused(response, 'number')
    }
    expectUnchanged(api, before)
  })

  test('a name with dots, underscores, dashes and digits works, is recorded as createdBy and is deletable by its name', async () => {
    api = await makeApi()
    for (const tokenName of ['ci.deploy_bot-1', 'v2.0', 'system-reader', 'bootstrap', 'r2d2', '-']) {
      const created = await api.createToken({ tokenName, type: 'admin' })
      expect({ tokenName, status: created.status }).toEqual({ tokenName, status: 201 })
      const since = api.lastEventId()
      expect((await api.createProject(`p-${api.lastEventId()}`, {}, { token: created.body.secret })).status).toBe(201)
      for (const event of api.eventsSince(since)) expect(event.createdBy).toBe(tokenName)

      const deleted = await api.delete(`${TOKENS}/${encodeURIComponent(tokenName)}`)
      expect({ tokenName, status: deleted.status }).toEqual({ tokenName, status: 200 })
      expect(api.services.store.state.tokens[tokenName]).toBeUndefined()
      expect(api.events().at(-1)).toMatchObject({ type: 'api-token-deleted', preData: { tokenName } })
      expectError(await api.get<TokenListBody>(TOKENS, { token: created.body.secret }), 401, 'AuthenticationRequired')
    }
  })

  test('a token stored under a name the rules now refuse still loads, works and can be deleted', async () => {
    const dir = tempDir()
    cleanups.push(dir.remove)
    const first = await makeApi({ dataDir: dir.path })
    // As an earlier version could have stored them: valid tokens renamed in the store.
    const legacy = ['two words', 'bidi\u202Ename', 'System']
    const secrets: Record<string, string> = {}
    for (const [index, name] of legacy.entries()) {
      const created = await first.createToken({ tokenName: `made-${index}`, type: 'admin' })
      expect(created.status).toBe(201)
      await first.services.store.transact({ name: 'older-version', userId: 0 }, tx => {
        const record = tx.get('tokens', created.body.tokenName)!
        tx.delete('tokens', record.tokenName)
        tx.put('tokens', name, { ...record, tokenName: name })
      })
      secrets[name] = created.body.secret
    }
    await first.close()

    api = await makeApi({ dataDir: dir.path })
    const listed = (await api.get<TokenListBody>(TOKENS)).body.tokens.map(
      (token: { tokenName: string }) => token.tokenName,
    )
    for (const name of legacy) {
      expect(listed).toContain(name)
      expect((await api.get('/api/admin/projects', { token: secrets[name] })).status).toBe(200)
      const since = api.lastEventId()
      expect((await api.delete(`${TOKENS}/${encodeURIComponent(name)}`)).status).toBe(200)
      expect(api.eventsSince(since)).toMatchObject([{ type: 'api-token-deleted', preData: { tokenName: name } }])
      expect(api.services.store.state.tokens[name]).toBeUndefined()
      expectError(await api.get('/api/admin/projects', { token: secrets[name] }), 401, 'AuthenticationRequired')
    }
  })

  test('a bootstrap token may be deleted; the next start makes its INIT_ADMIN_API_TOKENS secret exist again under its name', async () => {
    const INIT = '*:*.init-secret-for-deletion-0123456789'
    api = await makeApi({ adminTokens: [INIT] })
    const other = (await api.createToken({ tokenName: 'other-admin', type: 'admin' }, { token: INIT })).body.secret
    expect(api.services.store.state.tokens['admin-bootstrap']).toBeDefined()
    expect((await api.delete(`${TOKENS}/admin-bootstrap`, { token: other })).status).toBe(200)
    expectError(await api.get<TokenListBody>(TOKENS, { token: INIT }), 401, 'AuthenticationRequired')
    // The name is still not for users.
    expectError(
      await api.createToken({ tokenName: 'admin-bootstrap', type: 'admin' }, { token: other }),
      400,
      'ValidationError',
    )

    expect(await initialise(api.services, [INIT])).toBeNull()
    expect(api.services.store.state.tokens['admin-bootstrap']).toMatchObject({ userId: -42, projects: ['*'] })
    expect((await api.get<TokenListBody>(TOKENS, { token: INIT })).status).toBe(200)
  })
})

describe('DELETE /api/admin/api-tokens/:tokenName', () => {
  test('deleting a token removes it, stops its secret and records api-token-deleted without the secret', async () => {
    api = await makeApi()
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
    api = await makeApi()
    const before = storeSnapshot(api)
    expectError(await api.delete(`${TOKENS}/no-such-token`), 404, 'NotFoundError')
    expectUnchanged(api, before)
  })

  test('a deleted token name can be used again, with a new secret', async () => {
    api = await makeApi()
    const old = await api.createToken({ tokenName: 'reused', type: 'admin' })
    expect((await api.delete(`${TOKENS}/reused`)).status).toBe(200)
    const fresh = await api.createToken({ tokenName: 'reused', type: 'admin' })
    expect(fresh.status).toBe(201)
    expect(fresh.body.secret).not.toBe(old.body.secret)
    expectError(await api.get<TokenListBody>(TOKENS, { token: old.body.secret }), 401, 'AuthenticationRequired')
    expect((await api.get<TokenListBody>(TOKENS, { token: fresh.body.secret })).status).toBe(200)
  })
})

describe('INIT_ADMIN_API_TOKENS', () => {
  const ONE = '*:*.init-secret-one-0123456789'
  const TWO = '*:*.init-secret-two-0123456789'
  const THREE = '*:*.init-secret-three-0123456789'

  test('each init secret becomes an admin token for every project that works at once', async () => {
    api = await makeApi({ adminTokens: [ONE, TWO] })
    expect(tokenCount(api)).toBe(2)
    for (const secret of [ONE, TWO]) {
      expect((await api.get<TokenListBody>(TOKENS, { token: secret })).status).toBe(200)
    }
    const listed = (await api.get<TokenListBody>(TOKENS, { token: ONE })).body.tokens
    expect(listed).toHaveLength(2)
    for (const token of listed)
      expect(token).toMatchObject({ type: 'admin', role: 'admin', projects: ['*'], expiresAt: null })
    const created = api.events().filter(e => e.type === 'api-token-created')
    expect(created).toHaveLength(2)
    const everything = JSON.stringify(api.events()) + JSON.stringify(api.services.store.state)
    expectNoSecret(everything, ONE)
    expectNoSecret(everything, TWO)
  })

  test('events written with an init token carry createdByUserId -42, as Unleash bootstrap tokens do', async () => {
    api = await makeApi({ adminTokens: [ONE, TWO] })
    for (const secret of [ONE, TWO]) {
      const since = api.lastEventId()
      const response = await api.createProject(`by-${secret === ONE ? 'one' : 'two'}`, {}, { token: secret })
      expect(response.status).toBe(201)
      const events = await api.eventsAfter(since)
      expect(events.length).toBeGreaterThan(0)
      for (const event of events) {
        expect(event.createdByUserId).toBe(-42)
        expect(Object.keys(api.services.store.state.tokens)).toContain(event.createdBy)
      }
    }
    // The two tokens are still told apart by name.
    const creators = (await api.eventsAfter(0))
      .filter(e => e.type === 'project-created' && e.project?.startsWith('by-'))
      .map(e => e.createdBy)
    expect(new Set(creators).size).toBe(2)
  })

  test('initialising again with the same secrets creates no duplicates and no events', async () => {
    api = await makeApi({ adminTokens: [ONE, TWO] })
    const before = storeSnapshot(api)
    expect(await initialise(api.services, [ONE, TWO])).toBeNull()
    expect(await initialise(api.services, [TWO, ONE, ONE])).toBeNull()
    expectUnchanged(api, before)
  })

  test('a secret listed twice makes one token', async () => {
    api = await makeApi({ adminTokens: [ONE, ONE] })
    expect(tokenCount(api)).toBe(1)
    expect(api.events().filter(e => e.type === 'api-token-created')).toHaveLength(1)
  })

  test('a secret added to the list at a later start is created, the others are left alone', async () => {
    api = await makeApi({ adminTokens: [ONE] })
    const since = api.lastEventId()
    expect(await initialise(api.services, [ONE, THREE])).toBeNull()
    expect(tokenCount(api)).toBe(2)
    expect(api.eventsSince(since).map(e => e.type)).toEqual(['api-token-created'])
    expect((await api.get<TokenListBody>(TOKENS, { token: THREE })).status).toBe(200)
  })

  test('restarting on the same data directory with the same init secrets creates no duplicates', async () => {
    const dir = tempDir()
    cleanups.push(dir.remove)
    const first = await makeApi({ dataDir: dir.path, adminTokens: [ONE, TWO] })
    const tokensBefore = Object.keys(first.services.store.state.tokens).sort()
    const eventsBefore = first.lastEventId()
    await first.close()

    const store = await openStore(dir.path, { sync: true })
    const services = createServices(store)
    api = new Api(createApp(services, { bodyLimit: BODY_LIMIT }), services, dir.path)
    expect(await initialise(services, [ONE, TWO])).toBeNull()
    expect(Object.keys(services.store.state.tokens).sort()).toEqual(tokensBefore)
    expect(api.lastEventId()).toBe(eventsBefore)
    expect((await api.get<TokenListBody>(TOKENS, { token: ONE })).status).toBe(200)
  })
})

describe('first start without init tokens', () => {
  async function bareApi() {
    const store = await openStore(null, { sync: true })
    const services = createServices(store)
    const secret = await initialise(services, [])
    api = new Api(createApp(services, { bodyLimit: BODY_LIMIT }), services, null)
    return secret
  }

  test('initialise generates one admin secret that works, and stores only its hash', async () => {
    const secret = await bareApi()
    expect(secret).toMatch(ADMIN_SECRET_FORMAT)
    expect(tokenCount(api)).toBe(1)
    expect((await api.get<TokenListBody>(TOKENS, { token: secret! })).status).toBe(200)
    const since = api.lastEventId()
    expect((await api.createToken({ tokenName: 'second', type: 'admin' }, { token: secret! })).status).toBe(201)
    // Writes made with the generated bootstrap token carry -42 like the other bootstrap tokens.
    expect(api.eventsSince(since)[0].createdByUserId).toBe(-42)
    expectNoSecret(JSON.stringify(api.services.store.state) + JSON.stringify(api.events()), secret!)
  })

  test('a second initialise returns null and creates nothing', async () => {
    const secret = await bareApi()
    expect(secret).not.toBeNull()
    const before = storeSnapshot(api)
    expect(await initialise(api.services, [])).toBeNull()
    expectUnchanged(api, before)
    expect((await api.get<TokenListBody>(TOKENS, { token: secret! })).status).toBe(200)
  })
})
