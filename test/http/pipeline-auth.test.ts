/**
 * The request pipeline (contract §1) for callers: no or a bad token (401), a token without the
 * permission (403), each answered before the body checks, and reads scoped to a token's projects.
 */
// Store-independent: about the pipeline's answers to callers (401, 403, project scope), decided from the tokens
// in memory before a handler runs; the writes it lets through take the one commit path that the feature tests run again on PostgreSQL.
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import {
  errorOf,
  ADMIN_SECRET,
  tokenFor,
  type Api,
  type ApiResponse,
  type EnvironmentBody,
  storeSnapshot,
  expectUnchanged,
  sharedApp,
} from '../helpers'
import { expectError, CREATE_FLAG } from './pipeline.setup'

/** One app for the file; each test opens a fresh service of its own (helpers/shared-app.ts). */
const shared = await sharedApp()
let api: Api
afterEach(async () => {
  setSystemTime()
  await api?.close()
})

describe('401 AuthenticationRequired', () => {
  test('a request without an Authorization header answers 401', async () => {
    api = await shared.open()
    const read = await api.get('/api/admin/projects', { token: null })
    expectError(read, 401, 'AuthenticationRequired')
    const before = storeSnapshot(api)
    const write = await api.createFlag('default', 'no-token', {}, { token: null })
    expectError(write, 401, 'AuthenticationRequired')
    expectUnchanged(api, before)
  })

  test('an unknown token answers 401 with a message different from the missing-token one', async () => {
    api = await shared.open()
    const missing = await api.get('/api/admin/projects', { token: null })
    const before = storeSnapshot(api)
    const unknown = await api.createFlag('default', 'unknown-token', {}, { token: `*:*.${'0'.repeat(64)}` })
    expectError(unknown, 401, 'AuthenticationRequired')
    expectError(missing, 401, 'AuthenticationRequired')
    expect(errorOf(unknown).message).not.toBe(errorOf(missing).message)
    expectUnchanged(api, before)
  })

  test('an empty or blank Authorization header counts as missing and answers 401', async () => {
    api = await shared.open()
    expectError(await api.get('/api/admin/projects', { token: '' }), 401, 'AuthenticationRequired')
    expectError(await api.get('/api/admin/projects', { token: '   ' }), 401, 'AuthenticationRequired')
  })

  test('a deleted token answers 401', async () => {
    api = await shared.open()
    const secret = await tokenFor(api, 'short-lived')
    expect((await api.get('/api/admin/projects', { token: secret })).status).toBe(200)
    expect((await api.delete('/api/admin/api-tokens/short-lived')).status).toBe(200)
    const before = storeSnapshot(api)
    const response = await api.createFlag('default', 'by-deleted-token', {}, { token: secret })
    expectError(response, 401, 'AuthenticationRequired')
    expectError(await api.get('/api/admin/projects', { token: secret }), 401, 'AuthenticationRequired')
    expectUnchanged(api, before)
  })

  test('an expired token answers 401 with a message different from the missing-token one', async () => {
    api = await shared.open()
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const secret = await tokenFor(api, 'expiring', { expiresAt })
    expect((await api.get('/api/admin/projects', { token: secret })).status).toBe(200)
    setSystemTime(Date.parse(expiresAt) + 1)
    const before = storeSnapshot(api)
    const response = await api.createFlag('default', 'by-expired-token', {}, { token: secret })
    expectError(response, 401, 'AuthenticationRequired')
    const missing = await api.get('/api/admin/projects', { token: null })
    expect(errorOf(response).message).not.toBe(errorOf(missing).message)
    expectError(await api.get('/api/admin/projects', { token: secret }), 401, 'AuthenticationRequired')
    expectUnchanged(api, before)
  })

  test('a leading "Bearer " in any case is stripped from the token', async () => {
    api = await shared.open()
    for (const prefix of ['Bearer ', 'bearer ', 'BEARER ', 'BeArEr ']) {
      const response = await api.get('/api/admin/projects', { token: `${prefix}${ADMIN_SECRET}` })
      expect({ prefix, status: response.status }).toEqual({ prefix, status: 200 })
    }
    const created = await api.createFlag('default', 'by-bearer', {}, { token: `Bearer ${ADMIN_SECRET}` })
    expect(created.status).toBe(201)
  })

  test('401 answers before 415 and before schema validation', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    expectError(
      await api.request('POST', CREATE_FLAG, {
        raw: '{"name":"x"}',
        token: null,
        headers: { 'content-type': 'text/plain' },
      }),
      401,
      'AuthenticationRequired',
    )
    expectError(await api.post(CREATE_FLAG, { description: 'no name' }, { token: null }), 401, 'AuthenticationRequired')
    expectUnchanged(api, before)
  })
})

describe('403 NoAccessError', () => {
  test('a viewer token answers 403 with the permission name on every kind of write', async () => {
    api = await shared.open()
    expect((await api.createFlag('default', 'existing')).status).toBe(201)
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const before = storeSnapshot(api)
    const cases: [Promise<ApiResponse>, string][] = [
      [api.createFlag('default', 'new-flag', {}, { token: viewer }), 'CREATE_FEATURE'],
      [
        api.patchFlag('default', 'existing', [{ op: 'replace', path: '/description', value: 'x' }], { token: viewer }),
        'UPDATE_FEATURE',
      ],
      [api.toggle('default', 'existing', 'development', true, { token: viewer }), 'UPDATE_FEATURE_ENVIRONMENT'],
      [api.bulkToggle('default', 'development', ['existing'], false, { token: viewer }), 'UPDATE_FEATURE_ENVIRONMENT'],
      [api.delete('/api/admin/projects/default/features/existing', { token: viewer }), 'DELETE_FEATURE'],
      [api.createProject('viewer-project', {}, { token: viewer }), 'CREATE_PROJECT'],
      [
        api.post<EnvironmentBody>('/api/admin/environments', { name: 'staging', type: 'staging' }, { token: viewer }),
        'CREATE_ENVIRONMENT',
      ],
    ]
    for (const [pending, permission] of cases) {
      const response = await pending
      expectError(response, 403, 'NoAccessError')
      expect(errorOf(response).permissions).toEqual([permission])
    }
    expectUnchanged(api, before)
    // Reads stay open to a viewer.
    expect((await api.listFlags('default', '', { token: viewer })).status).toBe(200)
  })

  test('an editor token answers 403 with ADMIN on every token route', async () => {
    api = await shared.open()
    await tokenFor(api, 'other')
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    const before = storeSnapshot(api)
    const responses = [
      await api.get('/api/admin/api-tokens', { token: editor }),
      await api.createToken({ tokenName: 'made-by-editor', type: 'admin' }, { token: editor }),
      await api.delete('/api/admin/api-tokens/other', { token: editor }),
    ]
    for (const response of responses) {
      expectError(response, 403, 'NoAccessError')
      expect(errorOf(response).permissions).toEqual(['ADMIN'])
    }
    expectUnchanged(api, before)
    // The editor can still do everything else.
    expect((await api.createFlag('default', 'by-editor', {}, { token: editor })).status).toBe(201)
  })

  test('client and frontend tokens answer 403 on admin reads and writes', async () => {
    api = await shared.open()
    const client = await tokenFor(api, 'sdk-client', {
      type: 'client',
      projects: ['default'],
      environment: 'development',
    })
    const frontend = await tokenFor(api, 'sdk-frontend', {
      type: 'frontend',
      projects: ['default'],
      environment: 'development',
    })
    const before = storeSnapshot(api)
    for (const token of [client, frontend]) {
      for (const path of [
        '/api/admin/projects',
        '/api/admin/projects/default/features',
        '/api/admin/search/events',
        '/api/admin/api-tokens',
      ]) {
        expectError(await api.get(path, { token }), 403, 'NoAccessError')
      }
      const write = await api.createFlag('default', 'by-sdk', {}, { token })
      expectError(write, 403, 'NoAccessError')
      expect(errorOf(write).permissions).toEqual(['CREATE_FEATURE'])
      const bulk = await api.bulkToggle('default', 'development', [], false, { token })
      expectError(bulk, 403, 'NoAccessError')
      expect(errorOf(bulk).permissions).toEqual(['UPDATE_FEATURE_ENVIRONMENT'])
    }
    expectUnchanged(api, before)
  })

  test('a token limited to project A answers 403 when writing to project B', async () => {
    api = await shared.open()
    expect((await api.createProject('alpha')).status).toBe(201)
    expect((await api.createProject('beta')).status).toBe(201)
    expect((await api.createFlag('beta', 'beta-flag')).status).toBe(201)
    const alphaOnly = await tokenFor(api, 'alpha-only', { projects: ['alpha'] })
    const before = storeSnapshot(api)
    const cases: [ApiResponse, string][] = [
      [await api.createFlag('beta', 'sneaky', {}, { token: alphaOnly }), 'CREATE_FEATURE'],
      [
        await api.patchFlag('beta', 'beta-flag', [{ op: 'replace', path: '/stale', value: true }], {
          token: alphaOnly,
        }),
        'UPDATE_FEATURE',
      ],
      [await api.toggle('beta', 'beta-flag', 'development', true, { token: alphaOnly }), 'UPDATE_FEATURE_ENVIRONMENT'],
      [
        await api.bulkToggle('beta', 'development', ['beta-flag'], false, { token: alphaOnly }),
        'UPDATE_FEATURE_ENVIRONMENT',
      ],
      [await api.put('/api/admin/projects/beta', { name: 'renamed' }, { token: alphaOnly }), 'UPDATE_PROJECT'],
    ]
    for (const [response, permission] of cases) {
      expectError(response, 403, 'NoAccessError')
      expect(errorOf(response).permissions).toEqual([permission])
      expect(errorOf(response).message).not.toContain('beta-flag')
    }
    expectUnchanged(api, before)
    // The same token writes to its own project.
    expect((await api.createFlag('alpha', 'alpha-flag', {}, { token: alphaOnly })).status).toBe(201)
  })

  test('403 answers before 415: a viewer sending text/plain gets 403', async () => {
    api = await shared.open()
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const before = storeSnapshot(api)
    const plain = await api.request('POST', CREATE_FLAG, {
      raw: '{"name":"plain"}',
      token: viewer,
      headers: { 'content-type': 'text/plain' },
    })
    expectError(plain, 403, 'NoAccessError')
    expect(errorOf(plain).permissions).toEqual(['CREATE_FEATURE'])
    const none = await api.request('POST', CREATE_FLAG, { raw: '{"name":"plain"}', token: viewer })
    expectError(none, 403, 'NoAccessError')
    expectUnchanged(api, before)
  })

  test('403 answers before schema validation: a viewer sending a body of the wrong shape gets 403', async () => {
    api = await shared.open()
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const before = storeSnapshot(api)
    const response = await api.post(CREATE_FLAG, { name: 42, impressionData: 'yes' }, { token: viewer })
    expectError(response, 403, 'NoAccessError')
    expect(errorOf(response).permissions).toEqual(['CREATE_FEATURE'])
    const patch = await api.patchFlag('default', 'whatever', 'not an array', { token: viewer })
    expectError(patch, 403, 'NoAccessError')
    expectUnchanged(api, before)
  })
})

describe('project scoping of reads', () => {
  test('a token limited to project A lists nothing for project B, with 200', async () => {
    api = await shared.open()
    expect((await api.createProject('alpha')).status).toBe(201)
    expect((await api.createProject('beta')).status).toBe(201)
    expect((await api.createFlag('alpha', 'alpha-flag')).status).toBe(201)
    expect((await api.createFlag('beta', 'beta-flag')).status).toBe(201)
    const alphaOnly = await tokenFor(api, 'alpha-only', { projects: ['alpha'] })

    const other = await api.listFlags('beta', '', { token: alphaOnly })
    expect(other.status).toBe(200)
    expect(other.body).toEqual({ version: 2, features: [] })

    const unknown = await api.listFlags('no-such-project', '', { token: alphaOnly })
    expect(unknown.status).toBe(200)
    expect(unknown.body).toEqual({ version: 2, features: [] })

    const own = await api.listFlags('alpha', '', { token: alphaOnly })
    expect(own.status).toBe(200)
    expect(own.body.features.map((f: { name: string }) => f.name)).toEqual(['alpha-flag'])

    const all = await api.listFlags('beta')
    expect(all.body.features.map((f: { name: string }) => f.name)).toEqual(['beta-flag'])
  })
})
