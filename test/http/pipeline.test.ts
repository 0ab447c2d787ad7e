/**
 * The request pipeline (contract §1) and the error body (contract §2): unknown paths and the error
 * body's shape, the operational endpoints, and routing that does not depend on the Host header.
 */
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import {
  errorOf,
  ADMIN_SECRET,
  sharedApp,
  makeApi,
  tokenFor,
  type Api,
  type ApiResponse,
  storeSnapshot,
  expectUnchanged,
} from '../helpers'
import { expectError, CREATE_FLAG, JSON_TYPE } from './pipeline.setup'

/** One app for the file; each test opens a fresh service of its own (helpers/shared-app.ts). */
const shared = await sharedApp()
let api: Api
afterEach(async () => {
  setSystemTime()
  await api?.close()
})

describe('404 and error bodies', () => {
  test('an unknown path answers 404 NotFoundError as JSON', async () => {
    api = await shared.open()
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
    api = await shared.open()
    const response = await api.get('/health', { token: null })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ health: 'GOOD' })
    expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
  })

  test('/ready answers 200 without a token once the store is loaded', async () => {
    api = await shared.open()
    const response = await api.get('/ready', { token: null })
    expect(response.status).toBe(200)
  })
})

describe('routing does not depend on the Host header', () => {
  test.each(['x', 'api', 'a.b', 'x:1', 'localhost', 'flags.example.com:8080'])(
    'a request for host %s reaches its route',
    async host => {
      const api = await shared.open()
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
