/**
 * The request pipeline (contract §1) and the error body (contract §2): which check answers first,
 * and what every error looks like. Every rejected write is also checked to have changed nothing.
 */
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import {
  errorOf,
  ADMIN_SECRET,
  makeApi,
  tokenFor,
  type Api,
  type ApiResponse,
  type EnvironmentBody,
  UUID,
  storeSnapshot,
  expectUnchanged,
} from '../helpers'

const ERROR_KEYS = ['id', 'name', 'message', 'details', 'permissions']

let api: Api
afterEach(async () => {
  setSystemTime()
  await api?.close()
})

/** Asserts status, name and the exact shape of the error body (contract §2). */
function expectError(response: ApiResponse, status: number, name: string) {
  const body = errorOf(response)
  expect({ status: response.status, name: body?.name }).toEqual({ status, name })
  expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
  expect(typeof body).toBe('object')
  for (const key of Object.keys(body)) expect(ERROR_KEYS).toContain(key)
  expect(body.id).toMatch(UUID)
  expect(typeof body.message).toBe('string')
  expect(body.message.length).toBeGreaterThan(0)
  if (body.details !== undefined) {
    expect(Array.isArray(body.details)).toBe(true)
    for (const detail of body.details) {
      for (const key of Object.keys(detail)) expect(['message', 'path']).toContain(key)
      expect(typeof detail.message).toBe('string')
      if (detail.path !== undefined) expect(typeof detail.path).toBe('string')
    }
  }
  if (status === 403) {
    expect(Array.isArray(body.permissions)).toBe(true)
    expect(body.permissions).toHaveLength(1)
    expect(typeof body.permissions?.[0]).toBe('string')
  } else {
    expect(body.permissions).toBeUndefined()
  }
  // No HTML page and no stack trace.
  expect(response.text).not.toMatch(/<html|<!doctype/i)
  expect(body.message).not.toMatch(/\n\s+at \S/)
}

const VALIDATE = '/api/admin/features/validate'
const CREATE_FLAG = '/api/admin/projects/default/features'
const JSON_TYPE = { 'content-type': 'application/json' }

function bytes(n: number, fill = 'x') {
  return JSON.stringify({ name: 'big', description: fill.repeat(n) })
}

/**
 * A body stream with no length, 50 times the limit of 1000 bytes (500 chunks of 100 bytes). Bounded
 * so that a reader without a limit finishes (and the test fails) instead of spinning for ever.
 */
function longStream(chunks = 500, chunkSize = 100) {
  let pulled = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) return controller.close()
      pulled++
      controller.enqueue(new TextEncoder().encode((pulled === 1 ? '{"name":"' : '') + 'x'.repeat(chunkSize)))
    },
  })
  return { stream, pulled: () => pulled }
}

describe('413 ContentTooLarge', () => {
  test('a Content-Length over the limit answers 413 before the body is read', async () => {
    api = await makeApi({ bodyLimit: 1000 })
    const before = storeSnapshot(api)
    // The declared length alone is over the limit; the bytes sent are few.
    const response = await api.request('POST', CREATE_FLAG, {
      raw: JSON.stringify({ name: 'small' }),
      headers: { ...JSON_TYPE, 'content-length': '5000' },
    })
    expectError(response, 413, 'ContentTooLarge')
    expectUnchanged(api, before)
  })

  test('a body of more bytes than the limit with a matching Content-Length answers 413', async () => {
    api = await makeApi({ bodyLimit: 1000 })
    const before = storeSnapshot(api)
    const body = bytes(2000)
    const response = await api.request('POST', CREATE_FLAG, {
      raw: body,
      headers: { ...JSON_TYPE, 'content-length': String(Buffer.byteLength(body)) },
    })
    expectError(response, 413, 'ContentTooLarge')
    expectUnchanged(api, before)
    expect(api.services.store.state.flags.big).toBeUndefined()
  })

  test('a chunked body without Content-Length answers 413 once it grows past the limit', async () => {
    api = await makeApi({ bodyLimit: 1000 })
    const before = storeSnapshot(api)
    const { stream, pulled } = longStream()
    const request = new Request(`http://localhost${CREATE_FLAG}`, {
      method: 'POST',
      headers: { authorization: ADMIN_SECRET, ...JSON_TYPE },
      body: stream,
    })
    expect(request.headers.get('content-length')).toBeNull()
    const response = await api.app.handle(request)
    const body = await response.json()
    expect(response.status).toBe(413)
    expect(body.name).toBe('ContentTooLarge')
    expect(body.id).toMatch(UUID)
    expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
    // The reader stopped soon after the limit instead of draining the whole body.
    expect(pulled()).toBeLessThan(50)
    expectUnchanged(api, before)
  })

  test('a body exactly at the limit is accepted', async () => {
    api = await makeApi({ bodyLimit: 1000 })
    const base = JSON.stringify({ name: 'at-limit', description: '' })
    const body = JSON.stringify({ name: 'at-limit', description: 'd'.repeat(1000 - Buffer.byteLength(base)) })
    expect(Buffer.byteLength(body)).toBe(1000)
    const response = await api.request('POST', CREATE_FLAG, { raw: body, headers: JSON_TYPE })
    expect(response.status).toBe(201)
  })

  test('413 answers before authentication: an oversized body without a token gets 413, not 401', async () => {
    api = await makeApi({ bodyLimit: 1000 })
    const before = storeSnapshot(api)
    const declared = await api.request('POST', CREATE_FLAG, { raw: bytes(2000), token: null, headers: JSON_TYPE })
    expectError(declared, 413, 'ContentTooLarge')
    const { stream } = longStream()
    const chunked = await api.request('POST', CREATE_FLAG, { raw: stream, token: null, headers: JSON_TYPE })
    expectError(chunked, 413, 'ContentTooLarge')
    const unknownToken = await api.request('POST', CREATE_FLAG, {
      raw: bytes(2000),
      token: '*:*.not-a-real-token-at-all',
      headers: JSON_TYPE,
    })
    expectError(unknownToken, 413, 'ContentTooLarge')
    expectUnchanged(api, before)
  })

  test('413 answers before 403, 415 and invalid JSON', async () => {
    api = await makeApi({ bodyLimit: 1000 })
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const before = storeSnapshot(api)
    expectError(
      await api.request('POST', CREATE_FLAG, { raw: bytes(2000), token: viewer, headers: JSON_TYPE }),
      413,
      'ContentTooLarge',
    )
    expectError(
      await api.request('POST', CREATE_FLAG, { raw: bytes(2000), headers: { 'content-type': 'text/plain' } }),
      413,
      'ContentTooLarge',
    )
    expectError(
      await api.request('POST', CREATE_FLAG, { raw: '{' + 'x'.repeat(2000), headers: JSON_TYPE }),
      413,
      'ContentTooLarge',
    )
    expectUnchanged(api, before)
  })
})

describe('400 for a body that is not JSON', () => {
  test('invalid JSON with a JSON content type answers 400 before 401 when no token is sent', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.request('POST', CREATE_FLAG, { raw: '{"name": "x",', token: null, headers: JSON_TYPE })
    expectError(response, 400, 'ValidationError')
    expectUnchanged(api, before)
  })

  test('invalid JSON answers 400 before 401 for an unknown token and before 403 for a viewer', async () => {
    api = await makeApi()
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const before = storeSnapshot(api)
    expectError(
      await api.request('POST', CREATE_FLAG, { raw: 'not json', token: '*:*.unknown-secret-0000', headers: JSON_TYPE }),
      400,
      'ValidationError',
    )
    expectError(
      await api.request('POST', CREATE_FLAG, { raw: '{"name": ', token: viewer, headers: JSON_TYPE }),
      400,
      'ValidationError',
    )
    expectUnchanged(api, before)
  })

  test('invalid JSON with a JSON content type that has parameters also answers 400', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.request('POST', VALIDATE, {
      raw: '[1,',
      token: null,
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    })
    expectError(response, 400, 'ValidationError')
    expectUnchanged(api, before)
  })

  test('a body starting with a byte order mark is not JSON (RFC 8259 §8.1: senders must not add one) and answers 400', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    // `{}` would be a valid project update: the mark alone must be what is refused.
    const response = await api.request('PUT', '/api/admin/projects/default', { raw: '\ufeff{}', headers: JSON_TYPE })
    expectError(response, 400, 'ValidationError')
    expect((response.body as { message: string }).message).toContain('not valid JSON')
    expectUnchanged(api, before)
  })
})

describe('401 AuthenticationRequired', () => {
  test('a request without an Authorization header answers 401', async () => {
    api = await makeApi()
    const read = await api.get('/api/admin/projects', { token: null })
    expectError(read, 401, 'AuthenticationRequired')
    const before = storeSnapshot(api)
    const write = await api.createFlag('default', 'no-token', {}, { token: null })
    expectError(write, 401, 'AuthenticationRequired')
    expectUnchanged(api, before)
  })

  test('an unknown token answers 401 with a message different from the missing-token one', async () => {
    api = await makeApi()
    const missing = await api.get('/api/admin/projects', { token: null })
    const before = storeSnapshot(api)
    const unknown = await api.createFlag('default', 'unknown-token', {}, { token: `*:*.${'0'.repeat(64)}` })
    expectError(unknown, 401, 'AuthenticationRequired')
    expectError(missing, 401, 'AuthenticationRequired')
    expect(errorOf(unknown).message).not.toBe(errorOf(missing).message)
    expectUnchanged(api, before)
  })

  test('an empty or blank Authorization header counts as missing and answers 401', async () => {
    api = await makeApi()
    expectError(await api.get('/api/admin/projects', { token: '' }), 401, 'AuthenticationRequired')
    expectError(await api.get('/api/admin/projects', { token: '   ' }), 401, 'AuthenticationRequired')
  })

  test('a deleted token answers 401', async () => {
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
    for (const prefix of ['Bearer ', 'bearer ', 'BEARER ', 'BeArEr ']) {
      const response = await api.get('/api/admin/projects', { token: `${prefix}${ADMIN_SECRET}` })
      expect({ prefix, status: response.status }).toEqual({ prefix, status: 200 })
    }
    const created = await api.createFlag('default', 'by-bearer', {}, { token: `Bearer ${ADMIN_SECRET}` })
    expect(created.status).toBe(201)
  })

  test('401 answers before 415 and before schema validation', async () => {
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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
    api = await makeApi()
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

describe('415 ContentTypeerror', () => {
  test('a text/plain body on a route with a body answers 415 and changes nothing', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.request('POST', CREATE_FLAG, {
      raw: '{"name":"plain-text"}',
      headers: { 'content-type': 'text/plain' },
    })
    expectError(response, 415, 'ContentTypeerror')
    expectUnchanged(api, before)
    const validate = await api.request('POST', VALIDATE, {
      raw: '{"name":"plain-text"}',
      headers: { 'content-type': 'text/plain' },
    })
    expectError(validate, 415, 'ContentTypeerror')
  })

  test('a body without a Content-Type header answers 415', async () => {
    api = await makeApi()
    const withoutType = new Request(`http://localhost${VALIDATE}`, {
      method: 'POST',
      headers: { authorization: ADMIN_SECRET },
      body: new TextEncoder().encode('{"name":"no-type"}'),
    })
    expect(withoutType.headers.get('content-type')).toBeNull()
    const before = storeSnapshot(api)
    const response = await api.app.handle(withoutType)
    expect(response.status).toBe(415)
    const body = await response.json()
    expect(body.name).toBe('ContentTypeerror')
    expect(body.id).toMatch(UUID)
    const write = await api.app.handle(
      new Request(`http://localhost${CREATE_FLAG}`, {
        method: 'POST',
        headers: { authorization: ADMIN_SECRET },
        body: new TextEncoder().encode('{"name":"no-type"}'),
      }),
    )
    expect(write.status).toBe(415)
    expectUnchanged(api, before)
  })

  test('application/json with parameters and in any case is accepted', async () => {
    api = await makeApi()
    for (const type of ['application/json; charset=utf-8', 'APPLICATION/JSON', 'Application/Json;charset=UTF-8']) {
      const response = await api.request('POST', VALIDATE, {
        raw: '{"name":"free-name"}',
        headers: { 'content-type': type },
      })
      expect({ type, status: response.status }).toEqual({ type, status: 200 })
    }
    const created = await api.request('POST', CREATE_FLAG, {
      raw: '{"name":"charset-flag"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
    expect(created.status).toBe(201)
    expect(api.services.store.state.flags['charset-flag']).toBeDefined()
  })

  test('a content type that merely starts with application/json is not JSON and answers 415', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.request('POST', CREATE_FLAG, {
      raw: '{"name":"jsonx"}',
      headers: { 'content-type': 'application/jsonx' },
    })
    expectError(response, 415, 'ContentTypeerror')
    expectUnchanged(api, before)
  })

  test('415 answers before schema validation', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.request('POST', CREATE_FLAG, {
      raw: '{"nome": 1}',
      headers: { 'content-type': 'text/plain' },
    })
    expectError(response, 415, 'ContentTypeerror')
    const form = await api.request('POST', VALIDATE, {
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expectError(form, 415, 'ContentTypeerror')
    expectUnchanged(api, before)
  })
})

describe('400 ValidationError from the schema', () => {
  test('a body that breaks the schema answers 400 with details naming the problem', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.post(CREATE_FLAG, { name: 42 })
    expectError(response, 400, 'ValidationError')
    expect(Array.isArray(errorOf(response).details)).toBe(true)
    expect(errorOf(response).details?.length).toBeGreaterThan(0)
    expect(errorOf(response).details?.some((d: { path?: string }) => d.path === '/name')).toBe(true)
    expectUnchanged(api, before)
  })

  test('a missing required field answers 400 with details', async () => {
    api = await makeApi()
    const before = storeSnapshot(api)
    const response = await api.validateName({})
    expectError(response, 400, 'ValidationError')
    expect(errorOf(response).details?.length).toBeGreaterThan(0)
    const patch = await api.post('/api/admin/projects', { name: 'no id' })
    expectError(patch, 400, 'ValidationError')
    expect(errorOf(patch).details?.length).toBeGreaterThan(0)
    expectUnchanged(api, before)
  })

  test('a JSON-Patch body that is not an array of operations answers 400 with details', async () => {
    api = await makeApi()
    expect((await api.createFlag('default', 'patched')).status).toBe(201)
    const before = storeSnapshot(api)
    const response = await api.patchFlag('default', 'patched', { op: 'replace', path: '/description', value: 'x' })
    expectError(response, 400, 'ValidationError')
    expect(errorOf(response).details?.length).toBeGreaterThan(0)
    expectUnchanged(api, before)
  })
})

describe('404 and error bodies', () => {
  test('an unknown path answers 404 NotFoundError as JSON', async () => {
    api = await makeApi()
    expectError(await api.get('/no/such/path'), 404, 'NotFoundError')
    expectError(await api.get('/api/admin/no-such-thing'), 404, 'NotFoundError')
    const before = storeSnapshot(api)
    expectError(await api.post('/api/admin/no-such-thing', { a: 1 }), 404, 'NotFoundError')
    expectUnchanged(api, before)
  })

  test('every error body has a fresh uuid id, a name and a message, and nothing else but details or permissions', async () => {
    api = await makeApi({ bodyLimit: 1000 })
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    expect((await api.createFlag('default', 'taken')).status).toBe(201)
    const responses: [ApiResponse, number, string][] = [
      [await api.post(CREATE_FLAG, { name: 'x', description: 'y'.repeat(2000) }), 413, 'ContentTooLarge'],
      [await api.request('POST', CREATE_FLAG, { raw: '{', headers: JSON_TYPE }), 400, 'ValidationError'],
      [await api.get('/api/admin/projects', { token: null }), 401, 'AuthenticationRequired'],
      [await api.get('/api/admin/projects', { token: '*:*.nobody-has-this-token' }), 401, 'AuthenticationRequired'],
      [await api.createFlag('default', 'v', {}, { token: viewer }), 403, 'NoAccessError'],
      [
        await api.request('POST', CREATE_FLAG, { raw: '{}', headers: { 'content-type': 'text/plain' } }),
        415,
        'ContentTypeerror',
      ],
      [await api.post(CREATE_FLAG, { name: [] }), 400, 'ValidationError'],
      [await api.getFlag('default', 'missing-flag'), 404, 'NotFoundError'],
      [await api.createFlag('default', 'taken'), 409, 'NameExistsError'],
      [await api.get('/nowhere'), 404, 'NotFoundError'],
    ]
    const ids = new Set<string>()
    for (const [response, status, name] of responses) {
      expectError(response, status, name)
      ids.add(errorOf(response).id)
    }
    expect(ids.size).toBe(responses.length)
  })
})

describe('operational endpoints', () => {
  test('/health answers {health: "GOOD"} without a token', async () => {
    api = await makeApi()
    const response = await api.get('/health', { token: null })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ health: 'GOOD' })
    expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
  })

  test('/ready answers 200 without a token once the store is loaded', async () => {
    api = await makeApi()
    const response = await api.get('/ready', { token: null })
    expect(response.status).toBe(200)
  })
})

describe('project scoping of reads', () => {
  test('a token limited to project A lists nothing for project B, with 200', async () => {
    api = await makeApi()
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

describe('routing does not depend on the Host header', () => {
  test.each(['x', 'api', 'a.b', 'x:1', 'localhost', 'flags.example.com:8080'])(
    'a request for host %s reaches its route',
    async host => {
      const api = await makeApi()
      try {
        const health = await api.app.handle(new Request(`http://${host}/health`))
        expect(health.status).toBe(200)
        const flags = await api.app.handle(
          new Request(`http://${host}/api/admin/projects/default/features?namePrefix=a`, {
            headers: { authorization: ADMIN_SECRET },
          }),
        )
        expect(flags.status).toBe(200)
        expect((await flags.json()).version).toBe(2)
      } finally {
        await api.close()
      }
    },
  )
})
