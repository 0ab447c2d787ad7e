/**
 * BASE_URI_PATH: behind a reverse proxy everything is served under the prefix (the API, /health,
 * /ready, the metrics, Swagger UI, its assets and its document) and nothing outside it; `/` leads to
 * Swagger UI with or without a prefix. The setting is normalised and checked as Unleash's is.
 */
// Store-independent: it is about routing under a prefix, above the store.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { ConfigError, readConfig } from '../../src/config'
import { Logger } from '../../src/log'
import { Api, BODY_LIMIT, makeApi, expectError, type ApiResponse } from '../helpers'

const PREFIX = '/flags/v1'
let plain: Api
let api: Api
const lines: Record<string, unknown>[] = []

beforeAll(async () => {
  plain = await makeApi()
  const app = createApp(
    plain.services,
    { bodyLimit: BODY_LIMIT, basePath: PREFIX },
    new Logger('info', line => lines.push(JSON.parse(line))),
  )
  api = new Api(app, plain.services, null)
})
afterAll(async () => plain.close())

function raw(path: string, init?: RequestInit) {
  return api.app.handle(new Request(`http://localhost${path}`, init))
}

test('the API answers under the prefix, with its permissions, writes and events, and nowhere else', async () => {
  const before = plain.lastEventId()
  const created = await api.post(`${PREFIX}/api/admin/projects/default/features`, { name: 'under-prefix' })
  expect(created.status).toBe(201)
  expect(plain.services.store.reader.get('flags', 'under-prefix')?.project).toBe('default')
  expect(plain.eventsSince(before).map(event => event.type)).toEqual(['feature-created'])
  expect(
    (await api.get<{ name: string }>(`${PREFIX}/api/admin/projects/default/features/under-prefix`)).body.name,
  ).toBe('under-prefix')
  expectError(await api.get(`${PREFIX}/api/admin/projects`, { token: null }), 401, 'AuthenticationRequired')
  // Authentication comes before routing under the prefixed /api as under /api.
  expectError(await api.get(`${PREFIX}/api/admin/no-such-thing`, { token: null }), 401, 'AuthenticationRequired')
  expectError(await api.get(`${PREFIX}/api/admin/no-such-thing`), 404, 'NotFoundError')
  // Without the prefix nothing is served: not the API, not even without a token.
  for (const path of [
    '/api/admin/projects',
    '/health',
    '/ready',
    '/swagger',
    '/swagger/json',
    '/internal-backstage/prometheus',
  ]) {
    const response = await api.get(path, { token: null })
    expect({ path, status: response.status }).toEqual({ path, status: 404 })
  }
})

test('an SDK token outside its own API is refused under the prefix as without one', async () => {
  const created = await api.post<{ secret: string }>(`${PREFIX}/api/admin/api-tokens`, {
    tokenName: 'sdk',
    type: 'client',
    environment: 'development',
  })
  expect(created.status).toBe(201)
  const sdk = created.body.secret
  expect((await api.get(`${PREFIX}/api/client/features`, { token: sdk })).status).toBe(200)
  expectError(await api.get(`${PREFIX}/api/admin/no-such-thing`, { token: sdk }), 403, 'NoAccessError')
})

test('health, readiness and metrics are under the prefix, and the route labels name the path served', async () => {
  expect((await api.get(`${PREFIX}/health`, { token: null })).body).toEqual({ health: 'GOOD' })
  const ready = await api.get(`${PREFIX}/ready`, { token: null })
  expect([200, 503]).toContain(ready.status)
  await api.get(`${PREFIX}/api/admin/projects`)
  await Bun.sleep(5)
  expect(lines.at(-1)).toMatchObject({ msg: 'request', route: `${PREFIX}/api/admin/projects`, status: 200 })
  const metrics = await api.get(`${PREFIX}/internal-backstage/prometheus`, { token: null })
  expect(metrics.text).toMatch(
    new RegExp(`^http_requests_total\\{method="GET",route="${PREFIX}/api/admin/projects",status="200"\\} \\d+$`, 'm'),
  )
})

test('Swagger UI, its assets and its document are under the prefix; the document lists the paths with the prefix as its server', async () => {
  const page = await api.get(`${PREFIX}/swagger`, { token: null })
  expect(page.status).toBe(200)
  const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map(match => match[1])
  expect(sources.length).toBeGreaterThanOrEqual(3)
  for (const source of sources) {
    expect(source).toStartWith(`${PREFIX}/swagger/assets/`)
    const asset = await raw(source)
    expect({ source, status: asset.status }).toEqual({ source, status: 200 })
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100)
  }
  expect(await (await raw(`${PREFIX}/swagger/assets/swagger-initializer.js`)).text()).toContain(
    `"${PREFIX}/swagger/json"`,
  )
  const document = (
    await api.get<{ servers: { url: string }[]; paths: Record<string, unknown> }>(`${PREFIX}/swagger/json`, {
      token: null,
    })
  ).body
  expect(document.servers).toEqual([{ url: PREFIX }])
  expect(Object.keys(document.paths)).toContain('/api/admin/projects/{projectId}/features')
  expect(Object.keys(document.paths).filter(path => path.startsWith(PREFIX))).toEqual([])
  // Without a prefix the document names no server: the page's own origin is the one.
  expect((await plain.get<Record<string, unknown>>('/swagger/json', { token: null })).body.servers).toBeUndefined()
})

test('GET / (the prefix itself) is the console, whose page names its assets and the API under the prefix; the assets are served there', async () => {
  for (const path of [PREFIX, `${PREFIX}/`]) {
    const response = await raw(path)
    const html = await response.text()
    expect({ path, status: response.status, type: response.headers.get('content-type') }).toEqual({
      path,
      status: 200,
      type: 'text/html; charset=utf-8',
    })
    expect(html).toContain(`data-base="${PREFIX}"`)
    const assets = [...html.matchAll(/(?:href|src)="([^"]+\/console\/assets\/[^"]+)"/g)].map(match => match[1]!)
    expect(assets.length).toBe(2)
    for (const asset of assets) {
      expect(asset).toStartWith(`${PREFIX}/console/assets/main-`)
      const served = await raw(asset)
      expect({ asset, status: served.status, cache: served.headers.get('cache-control') }).toEqual({
        asset,
        status: 200,
        cache: 'public, max-age=31536000, immutable',
      })
    }
  }
  const response: ApiResponse = await plain.get('/', { token: null })
  expect(response.status).toBe(200)
  expect(response.text).toContain('data-base=""')
  expect(response.text).toContain('src="/console/assets/main-')
  expect((await plain.get('/console/assets/main-nothing.js', { token: null })).status).toBe(404)
})

test('BASE_URI_PATH is normalised as Unleash does, and anything but a plain path is refused naming the setting', () => {
  const base = (value: string | undefined) => readConfig(value === undefined ? {} : { BASE_URI_PATH: value }).basePath
  expect(base(undefined)).toBe('')
  expect(base('')).toBe('')
  expect(base('/')).toBe('')
  expect(base('/flags')).toBe('/flags')
  expect(base('flags/')).toBe('/flags')
  expect(base(' /a/b-c_d.e~f/ ')).toBe('/a/b-c_d.e~f')
  for (const bad of ['//', '/a//b', '/a b', '/a?b=1', '/a#b', '/%2e', '/a/../b', 'http://x/y']) {
    expect(() => readConfig({ BASE_URI_PATH: bad })).toThrow(ConfigError)
    expect(() => readConfig({ BASE_URI_PATH: bad })).toThrow(/^BASE_URI_PATH must be a path/)
  }
})

test('the frontend API and its CORS answers are under the prefix: a preflight there is answered, one without the prefix is not', async () => {
  const preflight = {
    method: 'OPTIONS',
    headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET' },
  }
  const answered = await raw(`${PREFIX}/api/frontend`, preflight)
  expect(answered.status).toBe(204)
  expect(answered.headers.get('access-control-allow-origin')).toBe('*')
  expect(answered.headers.get('access-control-allow-headers')).toContain('Authorization')
  const outside = await raw('/api/frontend', preflight)
  expect(outside.status).toBe(404)
  expect(outside.headers.get('access-control-allow-origin')).toBeNull()
  const created = await api.post<{ secret: string }>(`${PREFIX}/api/admin/api-tokens`, {
    tokenName: 'browser',
    type: 'frontend',
    environment: 'development',
  })
  expect(created.status).toBe(201)
  const toggles = await raw(`${PREFIX}/api/frontend`, {
    headers: { authorization: created.body.secret, origin: 'https://shop.example.com' },
  })
  expect(toggles.status).toBe(200)
  expect(toggles.headers.get('access-control-allow-origin')).toBe('*')
  expect(await toggles.json()).toEqual({ toggles: [] })
})

test("under the prefix, an application's link answers, and a known path with another method is a 405 naming the prefixed path", async () => {
  const created = await api.post<{ secret: string }>(`${PREFIX}/api/admin/api-tokens`, {
    tokenName: 'linked-sdk',
    type: 'client',
    environment: 'development',
  })
  expect(created.status).toBe(201)
  expect(
    (await api.post(`${PREFIX}/api/client/register`, { appName: 'linked app' }, { token: created.body.secret })).status,
  ).toBe(202)
  const app = await api.get<{ appName: string; links: { self: string } }>(
    `${PREFIX}/api/admin/metrics/applications/linked%20app`,
  )
  expect(app.body.links.self).toBe(`${PREFIX}/api/admin/metrics/applications/linked%20app`)
  expect((await api.get<{ appName: string }>(app.body.links.self)).body.appName).toBe('linked app')
  const wrong = await api.delete(`${PREFIX}/api/admin/projects`)
  expectError(wrong, 405, 'MethodNotAllowed', [`${PREFIX}/api/admin/projects`])
  expect(wrong.headers.get('allow')).toBe('GET, HEAD, POST')
})
