/**
 * Paths no route matches. As in Unleash, everything under /api is authenticated before routing:
 * without a valid token an unknown /api path answers 401 like a known one; with one, 404 (403 for
 * an SDK token outside its own API). Other paths answer 404 whatever the token.
 */
import { afterEach, expect, test } from 'bun:test'
import { Logger } from '../../src/log'
import { expectError, makeApi, type Api } from '../helpers'

let api: Api | undefined
afterEach(async () => {
  await api?.close()
  api = undefined
})

const UNKNOWN_API_PATHS = ['/api/admin/no-such-thing', '/api/admin/projects/default/no/such/thing', '/api/whatever', '/api', '/api/client/no-such-thing', '/api/frontend/no-such-thing']

test('an unknown /api path answers 401 without a token or with a bad one, 404 with a valid admin token, and changes nothing', async () => {
  api = await makeApi()
  const before = JSON.stringify(api.services.store.state)
  const eventsBefore = api.lastEventId()
  for (const path of UNKNOWN_API_PATHS) {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const body = method === 'POST' ? { name: 'x' } : undefined
      expectError(await api.request(method, path, { token: null, body }), 401, 'AuthenticationRequired', ['Authorization'])
      expectError(await api.request(method, path, { token: '*:*.not-a-token-that-exists-000', body }), 401, 'AuthenticationRequired', ['not valid'])
      expectError(await api.request(method, path, { body }), 404, 'NotFoundError', [path])
    }
  }
  // A known path with a method it does not have is routed no differently.
  expectError(await api.request('PATCH', '/api/admin/projects', { token: null }), 401, 'AuthenticationRequired')
  expectError(await api.request('PATCH', '/api/admin/projects'), 404, 'NotFoundError')
  expect(JSON.stringify(api.services.store.state)).toBe(before)
  expect(api.lastEventId()).toBe(eventsBefore)
})

test('an SDK token on an unknown path outside its own API answers 403, inside it 404', async () => {
  api = await makeApi()
  const client = (await api.createToken({ tokenName: 'sdk-client', type: 'client', environment: 'development' })).body.secret
  const frontend = (await api.createToken({ tokenName: 'sdk-frontend', type: 'frontend', environment: 'development' })).body.secret
  expectError(await api.get('/api/admin/no-such-thing', { token: client }), 403, 'NoAccessError', ['client'])
  expectError(await api.get('/api/whatever', { token: frontend }), 403, 'NoAccessError', ['frontend'])
  expectError(await api.get('/api/client/no-such-thing', { token: client }), 404, 'NotFoundError')
  expectError(await api.get('/api/frontend/no-such-thing', { token: frontend }), 404, 'NotFoundError')
  expectError(await api.get('/api/client/no-such-thing', { token: frontend }), 403, 'NoAccessError')
})

test('an unknown path outside /api answers 404 whatever the token', async () => {
  api = await makeApi()
  for (const path of ['/no/such/path', '/apiary', '/swagger/no-such-asset', '/internal-backstage/nothing']) {
    for (const token of [null, '*:*.not-a-token-that-exists-000', undefined]) {
      expectError(await api.get(path, { token }), 404, 'NotFoundError', [path])
    }
  }
})

test('known routes keep their order of checks: a body too large or not JSON comes before the token', async () => {
  api = await makeApi({ bodyLimit: 1000 })
  const create = '/api/admin/projects/default/features'
  expectError(await api.post(create, { name: 'x', description: 'y'.repeat(2000) }, { token: null }), 413, 'ContentTooLarge')
  expectError(await api.request('POST', create, { raw: '{', headers: { 'content-type': 'application/json' }, token: null }), 400, 'ValidationError')
  expectError(await api.post(create, { name: 'x' }, { token: null }), 401, 'AuthenticationRequired')
})

test('the log line of an unknown /api path names the token that was sent, and never a secret', async () => {
  const lines: Record<string, unknown>[] = []
  api = await makeApi({ log: new Logger('info', (line) => lines.push(JSON.parse(line))) })
  lines.length = 0
  await api.get('/api/admin/no-such-thing')
  await api.get('/api/admin/no-such-thing', { token: null })
  await Bun.sleep(5)
  expect(lines.map((line) => [line.status, line.route, line.tokenName])).toEqual([
    [404, null, 'admin-bootstrap'],
    [401, null, null],
  ])
})
