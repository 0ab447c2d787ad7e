/**
 * Paths no route matches. As in Unleash, everything under /api is authenticated before routing:
 * without a valid token an unknown /api path answers 401 like a known one; with one, 404 (403 for
 * an SDK token outside its own API). Other paths answer 404 whatever the token.
 */
// Store-independent: paths no route matches are answered before any handler, and the state they leave
// unchanged is read from memory.
import { afterEach, expect, test } from 'bun:test'
import { Logger } from '../../src/log'
import { expectError, sharedApp, makeApi, openApiSpec, type Api } from '../helpers'

/** One app for the file; each test opens a fresh service of its own (helpers/shared-app.ts). */
const shared = await sharedApp()
let api: Api | undefined
afterEach(async () => {
  await api?.close()
  api = undefined
})

const UNKNOWN_API_PATHS = [
  '/api/admin/no-such-thing',
  '/api/admin/projects/default/no/such/thing',
  '/api/whatever',
  '/api',
  '/api/client/no-such-thing',
  '/api/frontend/no-such-thing',
]

test('an unknown /api path answers 401 without a token or with a bad one, 404 with a valid admin token, and changes nothing', async () => {
  api = await shared.open()
  const before = JSON.stringify(api.services.store.state)
  const eventsBefore = api.lastEventId()
  for (const path of UNKNOWN_API_PATHS) {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const body = method === 'POST' ? { name: 'x' } : undefined
      expectError(await api.request(method, path, { token: null, body }), 401, 'AuthenticationRequired', [
        'Authorization',
      ])
      expectError(
        await api.request(method, path, { token: '*:*.not-a-token-that-exists-000', body }),
        401,
        'AuthenticationRequired',
        ['not valid'],
      )
      expectError(await api.request(method, path, { body }), 404, 'NotFoundError', [path])
    }
  }
  // A known path with a method it does not have: authenticated first, then 405 (below).
  expectError(await api.request('PATCH', '/api/admin/projects', { token: null }), 401, 'AuthenticationRequired')
  expectError(await api.request('PATCH', '/api/admin/projects'), 405, 'MethodNotAllowed')
  expect(JSON.stringify(api.services.store.state)).toBe(before)
  expect(api.lastEventId()).toBe(eventsBefore)
})

test('an SDK token on an unknown path outside its own API answers 403, inside it 404', async () => {
  api = await shared.open()
  const client = (await api.createToken({ tokenName: 'sdk-client', type: 'client', environment: 'development' })).body
    .secret
  const frontend = (await api.createToken({ tokenName: 'sdk-frontend', type: 'frontend', environment: 'development' }))
    .body.secret
  expectError(await api.get('/api/admin/no-such-thing', { token: client }), 403, 'NoAccessError', ['client'])
  expectError(await api.get('/api/whatever', { token: frontend }), 403, 'NoAccessError', ['frontend'])
  expectError(await api.get('/api/client/no-such-thing', { token: client }), 404, 'NotFoundError')
  expectError(await api.get('/api/frontend/no-such-thing', { token: frontend }), 404, 'NotFoundError')
  expectError(await api.get('/api/client/no-such-thing', { token: frontend }), 403, 'NoAccessError')
})

test('an unknown path outside /api answers 404 whatever the token', async () => {
  api = await shared.open()
  for (const path of ['/no/such/path', '/apiary', '/swagger/no-such-asset', '/internal-backstage/nothing']) {
    for (const token of [null, '*:*.not-a-token-that-exists-000', undefined]) {
      expectError(await api.get(path, { token }), 404, 'NotFoundError', [path])
    }
  }
})

test('known routes keep their order of checks: a body too large or not JSON comes before the token', async () => {
  api = await makeApi({ bodyLimit: 1000 })
  const create = '/api/admin/projects/default/features'
  expectError(
    await api.post(create, { name: 'x', description: 'y'.repeat(2000) }, { token: null }),
    413,
    'ContentTooLarge',
  )
  expectError(
    await api.request('POST', create, { raw: '{', headers: { 'content-type': 'application/json' }, token: null }),
    400,
    'ValidationError',
  )
  expectError(await api.post(create, { name: 'x' }, { token: null }), 401, 'AuthenticationRequired')
})

test('the log line of an unknown /api path names the token that was sent, and never a secret', async () => {
  const lines: Record<string, unknown>[] = []
  api = await makeApi({ log: new Logger('info', line => lines.push(JSON.parse(line))) })
  lines.length = 0
  await api.get('/api/admin/no-such-thing')
  await api.get('/api/admin/no-such-thing', { token: null })
  await Bun.sleep(5)
  expect(lines.map(line => [line.status, line.route, line.tokenName])).toEqual([
    [404, null, 'admin-bootstrap'],
    [401, null, null],
  ])
})

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/** The paths of the document that a concrete path matches, as the router matches them (a parameter is one segment). */
function matching(document: Record<string, any>, path: string): string[] {
  return Object.keys(document.paths).filter(template =>
    new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  )
}

test('every path of the OpenAPI document asked with a method it does not take answers 405 with the methods it takes in Allow, and changes nothing', async () => {
  const document = await openApiSpec()
  api = await shared.open()
  const before = JSON.stringify(api.services.store.state)
  const eventsBefore = api.lastEventId()
  let checked = 0
  for (const template of Object.keys(document.paths)) {
    const path = template.replace(/\{[^}]+\}/g, 'some-name')
    // What the path takes: every operation of every documented path it matches (/tag-types/validate is also /tag-types/{name}).
    const allowed = new Set(
      matching(document, path).flatMap(other => Object.keys(document.paths[other]).map(method => method.toUpperCase())),
    )
    if (allowed.has('GET')) allowed.add('HEAD')
    for (const method of METHODS) {
      if (allowed.has(method)) continue
      // Browsers' preflight requests to the frontend API are answered by CORS (frontend-cors.test.ts).
      if (method === 'OPTIONS' && (path.startsWith('/api/frontend') || path.startsWith('/ofrep/'))) continue
      const response = await api.request(
        method,
        path,
        method === 'POST' || method === 'PUT' || method === 'PATCH' ? { body: {} } : {},
      )
      expect({ method, path, status: response.status, allow: response.headers.get('allow') }).toEqual({
        method,
        path,
        status: 405,
        allow: [...allowed].sort().join(', '),
      })
      // OFREP's routes answer in the protocol's error shape (errorCode GENERAL), the rest in ours.
      checked++
      if (method === 'HEAD') continue
      if (path.startsWith('/ofrep/'))
        expect({ method, path, errorCode: (response.body as { errorCode?: string } | null)?.errorCode }).toEqual({
          method,
          path,
          errorCode: 'GENERAL',
        })
      else expectError(response, 405, 'MethodNotAllowed', [method, path])
    }
  }
  expect(checked).toBeGreaterThan(100)
  expect(JSON.stringify(api.services.store.state)).toBe(before)
  expect(api.lastEventId()).toBe(eventsBefore)
})
