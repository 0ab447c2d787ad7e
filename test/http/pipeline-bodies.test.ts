/**
 * The request pipeline (contract §1) for bodies: too large (413), not JSON (400), the wrong content
 * type (415) and the wrong shape (400), each answered in order and changing nothing.
 */
// Store-independent: bodies are refused (413, 400, 415) before a handler runs, and the state they leave
// unchanged is read from memory; the writes it lets through take the one commit path that the feature tests run again on PostgreSQL.
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import { errorOf, ADMIN_SECRET, sharedApp, tokenFor, type Api, UUID, storeSnapshot, expectUnchanged } from '../helpers'
import { expectError, VALIDATE, CREATE_FLAG, JSON_TYPE, bytes, longStream } from './pipeline.setup'

/** One app for the file and one with a small body limit; each test opens a fresh service (helpers/shared-app.ts). */
const shared = await sharedApp()
const limited = await sharedApp({ bodyLimit: 1000 })
let api: Api
afterEach(async () => {
  setSystemTime()
  await api?.close()
})

describe('413 ContentTooLarge', () => {
  test('a Content-Length over the limit answers 413 before the body is read', async () => {
    api = await limited.open()
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
    api = await limited.open()
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
    api = await limited.open()
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
    api = await limited.open()
    const base = JSON.stringify({ name: 'at-limit', description: '' })
    const body = JSON.stringify({ name: 'at-limit', description: 'd'.repeat(1000 - Buffer.byteLength(base)) })
    expect(Buffer.byteLength(body)).toBe(1000)
    const response = await api.request('POST', CREATE_FLAG, { raw: body, headers: JSON_TYPE })
    expect(response.status).toBe(201)
  })

  test('413 answers before authentication: an oversized body without a token gets 413, not 401', async () => {
    api = await limited.open()
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
    api = await limited.open()
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
    api = await shared.open()
    const before = storeSnapshot(api)
    const response = await api.request('POST', CREATE_FLAG, { raw: '{"name": "x",', token: null, headers: JSON_TYPE })
    expectError(response, 400, 'ValidationError')
    expectUnchanged(api, before)
  })

  test('invalid JSON answers 400 before 401 for an unknown token and before 403 for a viewer', async () => {
    api = await shared.open()
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
    api = await shared.open()
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
    api = await shared.open()
    const before = storeSnapshot(api)
    // `{}` would be a valid project update: the mark alone must be what is refused.
    const response = await api.request('PUT', '/api/admin/projects/default', { raw: '\ufeff{}', headers: JSON_TYPE })
    expectError(response, 400, 'ValidationError')
    expect((response.body as { message: string }).message).toContain('not valid JSON')
    expectUnchanged(api, before)
  })
})

describe('415 ContentTypeerror', () => {
  test('a text/plain body on a route with a body answers 415 and changes nothing', async () => {
    api = await shared.open()
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
    api = await shared.open()
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
    api = await shared.open()
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
    api = await shared.open()
    const before = storeSnapshot(api)
    const response = await api.request('POST', CREATE_FLAG, {
      raw: '{"name":"jsonx"}',
      headers: { 'content-type': 'application/jsonx' },
    })
    expectError(response, 415, 'ContentTypeerror')
    expectUnchanged(api, before)
  })

  test('415 answers before schema validation', async () => {
    api = await shared.open()
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
    api = await shared.open()
    const before = storeSnapshot(api)
    const response = await api.post(CREATE_FLAG, { name: 42 })
    expectError(response, 400, 'ValidationError')
    expect(Array.isArray(errorOf(response).details)).toBe(true)
    expect(errorOf(response).details?.length).toBeGreaterThan(0)
    expect(errorOf(response).details?.some((d: { path?: string }) => d.path === '/name')).toBe(true)
    expectUnchanged(api, before)
  })

  test('a missing required field answers 400 with details', async () => {
    api = await shared.open()
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
    api = await shared.open()
    expect((await api.createFlag('default', 'patched')).status).toBe(201)
    const before = storeSnapshot(api)
    const response = await api.patchFlag('default', 'patched', { op: 'replace', path: '/description', value: 'x' })
    expectError(response, 400, 'ValidationError')
    expect(errorOf(response).details?.length).toBeGreaterThan(0)
    expectUnchanged(api, before)
  })
})
