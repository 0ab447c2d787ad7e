/** CORS on the frontend API (sdk-api-contract §2): every path under /api/frontend, the allowed origins a setting. */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../../src/app'
import { ConfigError, readConfig } from '../../../src/config'
import { Api, expectError, expectOk, freshApiPerTest } from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const SHOP = 'https://shop.example.com'

async function frontendToken(): Promise<string> {
  const created = await api.createToken({
    tokenName: 'browser',
    type: 'frontend',
    projects: ['default'],
    environment: 'development',
  })
  expectOk(created, 201)
  return created.body.secret
}

/** The same services behind an app with FRONTEND_CORS_ORIGINS set. */
const withOrigins = (origins: string[]) =>
  new Api(createApp(api.services, { bodyLimit: 102400, frontendCorsOrigins: origins }), api.services, null)

const preflight = (app: Api, path: string, origin: string) =>
  app.request('OPTIONS', path, {
    token: null,
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  })

const cors = (headers: Headers) => ({
  origin: headers.get('access-control-allow-origin'),
  expose: headers.get('access-control-expose-headers'),
})

describe('by default any origin', () => {
  test('answers, errors included, carry Access-Control-Allow-Origin: * and expose the ETag', async () => {
    const token = await frontendToken()
    const answer = await api.get('/api/frontend', { token, headers: { origin: SHOP } })
    expectOk(answer)
    expect(cors(answer.headers)).toEqual({ origin: '*', expose: 'ETag' })
    const posted = await api.post('/api/frontend', { context: {} }, { token, headers: { origin: SHOP } })
    expect(cors(posted.headers)).toEqual({ origin: '*', expose: 'ETag' })
    // The revalidation a browser makes with the exposed ETag.
    const revalidated = await api.get('/api/frontend', {
      token,
      headers: { origin: SHOP, 'if-none-match': answer.headers.get('etag')! },
    })
    expect({ status: revalidated.status, ...cors(revalidated.headers) }).toEqual({
      status: 304,
      origin: '*',
      expose: 'ETag',
    })
    // A browser must be able to read a 401 too, to tell its user the key is wrong.
    const refused = await api.get('/api/frontend', { token: null, headers: { origin: SHOP } })
    expectError(refused, 401, 'AuthenticationRequired')
    expect(cors(refused.headers)).toEqual({ origin: '*', expose: 'ETag' })
  })

  test('a preflight is answered 204 before authentication, on every path under /api/frontend', async () => {
    // /api/frontend/client/metrics has no route of its own here: the hook works by prefix.
    for (const path of ['/api/frontend', '/api/frontend/client/metrics', '/api/frontend/client/register']) {
      const answer = await preflight(api, path, SHOP)
      expect({ path, status: answer.status, text: answer.text }).toEqual({ path, status: 204, text: '' })
      expect(cors(answer.headers)).toEqual({ origin: '*', expose: 'ETag' })
      expect(answer.headers.get('access-control-allow-methods')).toContain('POST')
      const allowed = (answer.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/)
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'if-none-match']))
    }
  })

  test('no CORS headers outside /api/frontend', async () => {
    for (const path of ['/api/admin/projects', '/api/client/features', '/api/frontendish', '/health']) {
      const answer = await api.get(path, { headers: { origin: SHOP } })
      expect({ path, origin: answer.headers.get('access-control-allow-origin') }).toEqual({ path, origin: null })
    }
    const answer = await preflight(api, '/api/admin/projects', SHOP)
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('FRONTEND_CORS_ORIGINS', () => {
  test('an allowed origin is named back (with Vary: Origin); another gets no CORS header, on answers and preflights', async () => {
    const token = await frontendToken()
    const app = withOrigins([SHOP, 'http://localhost:3000'])
    for (const origin of [SHOP, 'http://localhost:3000']) {
      const answer = await app.get('/api/frontend', { token, headers: { origin } })
      expectOk(answer)
      expect(cors(answer.headers)).toEqual({ origin, expose: 'ETag' })
      expect(answer.headers.get('vary')).toContain('Origin')
      const checked = await preflight(app, '/api/frontend', origin)
      expect({ status: checked.status, ...cors(checked.headers) }).toEqual({ status: 204, origin, expose: 'ETag' })
    }
    for (const origin of ['https://evil.example.com', `${SHOP}.evil.example.com`, 'null']) {
      const answer = await app.get('/api/frontend', { token, headers: { origin } })
      expect({ status: answer.status, ...cors(answer.headers) }).toEqual({ status: 200, origin: null, expose: null })
      const checked = await preflight(app, '/api/frontend', origin)
      expect({
        status: checked.status,
        origin: checked.headers.get('access-control-allow-origin'),
        methods: checked.headers.get('access-control-allow-methods'),
      }).toEqual({ status: 204, origin: null, methods: null })
    }
  })

  test('is read as a comma-separated list of origins, * by default, and anything else stops the start', () => {
    expect(readConfig({}).frontendCorsOrigins).toEqual(['*'])
    expect(readConfig({ FRONTEND_CORS_ORIGINS: ' ' }).frontendCorsOrigins).toEqual(['*'])
    expect(
      readConfig({ FRONTEND_CORS_ORIGINS: `${SHOP}, http://localhost:3000 ,http://[::1]:8080` }).frontendCorsOrigins,
    ).toEqual([SHOP, 'http://localhost:3000', 'http://[::1]:8080'])
    for (const bad of [`${SHOP}/`, 'shop.example.com', `${SHOP}/path`, 'ftp://shop.example.com', `${SHOP}:99999999`]) {
      expect(() => readConfig({ FRONTEND_CORS_ORIGINS: bad })).toThrow(ConfigError)
    }
  })
})
