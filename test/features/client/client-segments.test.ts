/**
 * The client API's segments (sdk-api-contract §3), its tokens (§5), and POST /api/client/register
 * and /api/client/metrics. The setup shared with client.test.ts is client.setup.ts.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { BODY_LIMIT, expectError, paths } from '../../helpers'
import {
  api,
  useFreshApi,
  type ClientFeature,
  type ClientFeatures,
  sdkToken,
  features,
  addStrategy,
} from './client.setup'

useFreshApi()

describe('segments on the client API (sdk-api-contract §3)', () => {
  const SPEC = { 'unleash-client-spec': '5.1.9' }
  const segment = async (name: string, values: string[]) => {
    const response = await api.post<{ id: number }>('/api/admin/segments', {
      name,
      constraints: [{ contextName: 'region', operator: 'IN', values }],
    })
    expect(response.status).toBe(201)
    return response.body.id
  }
  const own = { contextName: 'userId', operator: 'IN', values: ['1'], caseInsensitive: false, inverted: false }
  const regionIn = (values: string[]) => ({
    contextName: 'region',
    operator: 'IN',
    values,
    caseInsensitive: false,
    inverted: false,
  })

  beforeEach(async () => {
    await api.newFlag('default', 'with-segments')
    await api.newFlag('default', 'plain')
  })

  test('Unleash-Client-Spec ≥ 4.2.0 gets ids and the referenced definitions once, by id; older or no header gets the constraints inlined', async () => {
    const client = await sdkToken('client')
    const unused = await segment('unused', ['nowhere'])
    const eu = await segment('eu', ['eu-west', 'eu-north'])
    const beta = await segment('beta', ['beta'])
    await addStrategy('default', 'with-segments', 'development', {
      name: 'default',
      constraints: [own],
      segments: [beta, eu],
    })
    await addStrategy('default', 'with-segments', 'development', { name: 'default', segments: [eu] })
    await addStrategy('default', 'plain', 'development', { name: 'default', constraints: [own] })

    for (const version of ['4.2.0', '5.1.9', '10.0.0', '4.10.0']) {
      const body = (await features(client, '', { 'unleash-client-spec': version })).body as ClientFeatures & {
        segments?: unknown[]
      }
      expect({ version, segments: body.segments }).toEqual({
        version,
        segments: [
          { id: eu, name: 'eu', constraints: [regionIn(['eu-west', 'eu-north'])] },
          { id: beta, name: 'beta', constraints: [regionIn(['beta'])] },
        ],
      })
      const flag = body.features.find(feature => feature.name === 'with-segments')!
      expect(flag.strategies.map(strategy => [strategy.constraints, strategy.segments])).toEqual([
        [[own], [beta, eu]],
        [[], [eu]],
      ])
      expect(body.features.find(feature => feature.name === 'plain')!.strategies[0]).not.toHaveProperty('segments')
    }
    expect(unused).toBeLessThan(eu)

    const older: Record<string, string>[] = [
      {},
      { 'unleash-client-spec': '4.1.9' },
      { 'unleash-client-spec': '3.0.0' },
      { 'unleash-client-spec': 'not a version' },
    ]
    for (const headers of older) {
      const body = (await features(client, '', headers)).body as ClientFeatures & { segments?: unknown[] }
      expect({ headers, segments: body.segments }).toEqual({ headers, segments: undefined })
      const flag = body.features.find(feature => feature.name === 'with-segments')!
      expect(flag.strategies.map(strategy => [strategy.constraints, strategy.segments])).toEqual([
        [[own, regionIn(['beta']), regionIn(['eu-west', 'eu-north'])], undefined],
        [[regionIn(['eu-west', 'eu-north'])], undefined],
      ])
    }

    // The single-flag route follows the same rule.
    const one = (headers: Record<string, string>) =>
      api.get<ClientFeature>('/api/client/features/with-segments', { token: client, headers })
    expect((await one(SPEC)).body.strategies[1]).toEqual({
      name: 'default',
      constraints: [],
      parameters: {},
      variants: [],
      segments: [eu],
    })
    expect((await one({})).body.strategies[1]).toEqual({
      name: 'default',
      constraints: [regionIn(['eu-west', 'eu-north'])],
      parameters: {},
      variants: [],
    })
  })

  test('both forms are kept as separate scopes: each keeps its own ETag and answers 304 to it only', async () => {
    const client = await sdkToken('client')
    const eu = await segment('eu', ['eu-west'])
    await addStrategy('default', 'with-segments', 'development', { name: 'default', segments: [eu] })
    const ids = await features(client, '', SPEC)
    const inlined = await features(client)
    const idsEtag = ids.headers.get('etag')!
    const inlinedEtag = inlined.headers.get('etag')!
    expect(idsEtag).not.toBe(inlinedEtag)
    expect((await features(client, '', { ...SPEC, 'if-none-match': idsEtag })).status).toBe(304)
    expect((await features(client, '', { 'if-none-match': inlinedEtag })).status).toBe(304)
    // Asked alternately, each form still gets its own content.
    const again = await features(client, '', { ...SPEC, 'if-none-match': inlinedEtag })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(ids.body)
    const againInlined = await features(client, '', { 'if-none-match': idsEtag })
    expect(againInlined.status).toBe(200)
    expect(againInlined.body).toEqual(inlined.body)
  })

  test('a segment update gives a new ETag and content on the very next request of a scope using it; a scope not using it keeps its ETag', async () => {
    await api.newProject('shop')
    await api.newFlag('shop', 'shop-flag')
    const client = await sdkToken('client', ['default'])
    const shop = await sdkToken('client', ['shop'])
    const eu = await segment('eu', ['eu-west'])
    await addStrategy('default', 'with-segments', 'development', { name: 'default', segments: [eu] })
    const before = {
      ids: await features(client, '', SPEC),
      inlined: await features(client),
      shop: await features(shop, '', SPEC),
    }

    const updated = await api.put(`/api/admin/segments/${eu}`, {
      name: 'eu',
      constraints: [{ contextName: 'region', operator: 'IN', values: ['eu-south'] }],
    })
    expect(updated.status).toBeLessThan(300)

    const ids = await features(client, '', { ...SPEC, 'if-none-match': before.ids.headers.get('etag')! })
    expect(ids.status).toBe(200)
    expect(ids.headers.get('etag')).not.toBe(before.ids.headers.get('etag'))
    expect((ids.body as ClientFeatures & { segments: unknown[] }).segments).toEqual([
      { id: eu, name: 'eu', constraints: [regionIn(['eu-south'])] },
    ])
    const inlined = await features(client, '', { 'if-none-match': before.inlined.headers.get('etag')! })
    expect(inlined.status).toBe(200)
    expect(inlined.body.features.find(feature => feature.name === 'with-segments')!.strategies[0].constraints).toEqual([
      regionIn(['eu-south']),
    ])
    expect((await features(shop, '', { ...SPEC, 'if-none-match': before.shop.headers.get('etag')! })).status).toBe(304)

    // A strategy taking the segment off is a flag write: the definition leaves the list.
    const strategies = (await api.get<{ id: string }[]>(paths.strategies('with-segments', 'development', 'default')))
      .body
    const put = await api.put(`${paths.strategies('with-segments', 'development', 'default')}/${strategies[0].id}`, {
      name: 'default',
      segments: [],
    })
    expect(put.status).toBe(200)
    const after = await features(client, '', { ...SPEC, 'if-none-match': ids.headers.get('etag')! })
    expect(after.status).toBe(200)
    expect(after.body).not.toHaveProperty('segments')
  })
})

describe('tokens on the client API (sdk-api-contract §5)', () => {
  test('no token or an unknown one → 401; admin and frontend tokens → 403; client tokens get 403 on the admin API', async () => {
    const client = await sdkToken('client')
    const frontend = await sdkToken('frontend')
    const admin = await sdkToken('admin')
    await api.newFlag('default', 'auth-flag')
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/client/features'],
      ['GET', '/api/client/features/auth-flag'],
      ['POST', '/api/client/register', { appName: 'app' }],
      ['POST', '/api/client/metrics', { appName: 'app' }],
    ]
    for (const [method, path, body] of routes) {
      expectError(await api.request(method, path, { token: null, body }), 401, 'AuthenticationRequired')
      expectError(
        await api.request(method, path, { token: 'default:development.unknown', body }),
        401,
        'AuthenticationRequired',
      )
      for (const token of [frontend, admin])
        expectError(await api.request(method, path, { token, body }), 403, 'NoAccessError', ['client'])
      expect((await api.request(method, path, { token: client, body })).status).toBe(method === 'GET' ? 200 : 202)
    }
    expectError(await api.get('/api/admin/projects', { token: client }), 403, 'NoAccessError')
    expectError(await api.get(paths.flag('auth-flag'), { token: client }), 403, 'NoAccessError')
  })
})

describe('POST /api/client/register and /api/client/metrics', () => {
  const registration = {
    appName: 'checkout',
    instanceId: 'pod-1',
    sdkVersion: 'unleash-client-node:6.1.0',
    strategies: ['default', 'flexibleRollout'],
    started: '2026-01-01T00:00:00.000Z',
    interval: 15000,
    platformName: 'node',
    platformVersion: '22',
    yggdrasilVersion: null,
    specVersion: '5.1.9',
    connectionId: 'abc',
  }
  const metrics = {
    appName: 'checkout',
    instanceId: 'pod-1',
    environment: 'default',
    bucket: {
      start: '2026-01-01T00:00:00.000Z',
      stop: '2026-01-01T00:01:00.000Z',
      toggles: { a: { yes: 1, no: 2, variants: { blue: 1 } } },
    },
    platformName: 'node',
  }

  test('the SDK bodies → 202 with no body, and no event', async () => {
    const client = await sdkToken('client')
    const before = api.lastEventId()
    for (const [path, body] of [
      ['/api/client/register', registration],
      ['/api/client/metrics', metrics],
    ] as const) {
      const response = await api.post(path, body, { token: client })
      expect({ status: response.status, text: response.text }).toEqual({ status: 202, text: '' })
    }
    expect(api.eventsSince(before)).toEqual([])
  })

  test('missing or empty appName, not JSON, a prototype key, too large, too deep → 400/413 with the JSON error', async () => {
    const client = await sdkToken('client')
    for (const path of ['/api/client/register', '/api/client/metrics']) {
      const missing = await api.post(path, { instanceId: 'x' }, { token: client })
      expectError(missing, 400, 'ValidationError', ['appName'])
      expect((missing.body as { details: { path: string }[] }).details.map(detail => detail.path)).toContain('/appName')
      expectError(await api.post(path, { appName: '' }, { token: client }), 400, 'ValidationError', ['appName'])
      expectError(
        await api.request('POST', path, {
          token: client,
          raw: '{"appName": ',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'ValidationError',
      )
      expectError(
        await api.request('POST', path, { token: client, raw: 'appName=x', headers: { 'content-type': 'text/plain' } }),
        415,
        'ContentTypeerror',
      )
      expectError(
        await api.request('POST', path, {
          token: client,
          raw: JSON.stringify({ appName: 'x', padding: 'x'.repeat(BODY_LIMIT) }),
          headers: { 'content-type': 'application/json' },
        }),
        413,
        'ContentTooLarge',
      )
      const polluted = await api.request('POST', path, {
        token: client,
        raw: '{"appName":"x","extra":{"__proto__":{"isAdmin":true}}}',
        headers: { 'content-type': 'application/json' },
      })
      expectError(polluted, 400, 'ValidationError', ['__proto__'])
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
      let deep: unknown = 1
      for (let level = 0; level < 40; level++) deep = { deep }
      expectError(await api.post(path, { appName: 'x', deep }, { token: client }), 400, 'ValidationError')
    }
  })

  test('a huge toggles map is refused with 413 (over the body limit) or accepted within it, never a 5xx', async () => {
    const client = await sdkToken('client')
    const toggles = (count: number) =>
      Object.fromEntries(
        Array.from({ length: count }, (_, index) => [`flag-${index}`, { yes: index, no: 0, variants: {} }]),
      )
    const huge = await api.post(
      '/api/client/metrics',
      { ...metrics, bucket: { ...metrics.bucket, toggles: toggles(20_000) } },
      { token: client },
    )
    expectError(huge, 413, 'ContentTooLarge')
    const large = await api.post(
      '/api/client/metrics',
      { ...metrics, bucket: { ...metrics.bucket, toggles: toggles(1500) } },
      { token: client },
    )
    expect(large.status).toBe(202)
    const wrong = await api.post(
      '/api/client/metrics',
      { ...metrics, bucket: { start: 1, stop: 2, toggles: [1, 2] } },
      { token: client },
    )
    expectError(wrong, 400, 'ValidationError', ['toggles'])
  })
})
