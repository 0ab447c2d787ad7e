/** The frontend API (sdk-api-contract §2, §5): tokens, scope, context forms, caching headers and ETags. */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../../src/app'
import { Api, expectError, expectOk, freshApiPerTest, type ApiResponse } from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Toggle {
  name: string
  enabled: boolean
  variant: {
    name: string
    enabled: boolean
    payload?: { type: string; value: string }
    feature_enabled: boolean
    featureEnabled: boolean
  }
  impressionData: boolean
}
type Answer = { toggles: Toggle[] }

const strategies = (flag: string, environment = 'development', project = 'default') =>
  `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`

async function frontendToken(projects: string[] = ['default'], environment = 'development'): Promise<string> {
  const created = await api.createToken({
    tokenName: `browser-${crypto.randomUUID()}`,
    type: 'frontend',
    projects,
    environment,
  })
  expectOk(created, 201)
  return created.body.secret
}

const names = (response: ApiResponse<Answer>) => response.body.toggles.map(toggle => toggle.name)

describe('tokens', () => {
  test('a frontend token reads; no token is 401; admin and client tokens are 403, on GET and POST', async () => {
    await api.flagOn('checkout')
    const frontend = await frontendToken()
    const client = await api.createToken({
      tokenName: 'sdk',
      type: 'client',
      projects: ['default'],
      environment: 'development',
    })
    expectOk(await api.get('/api/frontend', { token: frontend }))
    expectOk(await api.post('/api/frontend', { context: {} }, { token: frontend }))
    for (const send of [
      (token: string | null) => api.get('/api/frontend', { token }),
      (token: string | null) => api.post('/api/frontend', { context: {} }, { token }),
    ]) {
      expectError(await send(null), 401, 'AuthenticationRequired')
      expectError(await send('default:development.not-a-token'), 401, 'AuthenticationRequired')
      expectError(await send(api.adminToken), 403, 'NoAccessError')
      expectError(await send(client.body.secret), 403, 'NoAccessError')
    }
    // And the frontend token goes nowhere else.
    expectError(await api.get('/api/client/features', { token: frontend }), 403, 'NoAccessError')
    expectError(await api.get('/api/admin/projects', { token: frontend }), 403, 'NoAccessError')
  })
})

describe('what is listed', () => {
  test("only the token's projects and environment, only enabled flags, with the variant shape of contract §2", async () => {
    expectOk(await api.createProject('other'), 201)
    await api.flagOn('mine')
    await api.flagOn('theirs', { name: 'default' }, 'development', 'other')
    await api.flagOn('production-only', { name: 'default' }, 'production')
    expectOk(await api.createFlag('default', 'switched-off'), 201)
    await api.flagOn('for-pro', {
      name: 'default',
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
    })
    await api.flagOn('coloured')
    expectOk(
      await api.put('/api/admin/projects/default/features/coloured/environments/development/variants', [
        {
          name: 'blue',
          weight: 1000,
          weightType: 'variable',
          stickiness: 'default',
          payload: { type: 'string', value: 'navy' },
        },
      ]),
    )
    const answer = await api.get<Answer>('/api/frontend?userId=u1', { token: await frontendToken() })
    expectOk(answer)
    expect(answer.body.toggles).toEqual([
      {
        name: 'coloured',
        enabled: true,
        variant: {
          name: 'blue',
          enabled: true,
          payload: { type: 'string', value: 'navy' },
          feature_enabled: true,
          featureEnabled: true,
        },
        impressionData: false,
      },
      {
        name: 'mine',
        enabled: true,
        variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true },
        impressionData: false,
      },
    ])
    expect(names(await api.get<Answer>('/api/frontend', { token: await frontendToken(['*']) }))).toEqual([
      'coloured',
      'mine',
      'theirs',
    ])
    expect(
      names(await api.get<Answer>('/api/frontend', { token: await frontendToken(['default'], 'production') })),
    ).toEqual(['production-only'])
    // A read writes nothing.
    const token = await frontendToken()
    const before = api.lastEventId()
    expect(names(await api.post<Answer>('/api/frontend', { context: { plan: 'pro' } }, { token }))).toEqual([
      'coloured',
      'for-pro',
      'mine',
    ])
    expect(api.lastEventId()).toBe(before)
  })

  test('a child of a parent that must be off is listed while the parent is off, and the next request after a write sees it', async () => {
    expectOk(await api.createFlag('default', 'parent'), 201)
    expectOk(await api.post(strategies('parent'), { name: 'default' }))
    await api.flagOn('child')
    expectOk(
      await api.post('/api/admin/projects/default/features/child/dependencies', { feature: 'parent', enabled: false }),
    )
    const token = await frontendToken()
    expect(names(await api.get<Answer>('/api/frontend', { token }))).toEqual(['child'])
    expectOk(await api.toggle('default', 'parent', 'development', true))
    expect(names(await api.get<Answer>('/api/frontend', { token }))).toEqual(['parent'])
    // Segments too: a change to a segment's constraints is evaluated at once.
    const segment = await api.post<{ id: number }>('/api/admin/segments', {
      name: 'pros',
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
    })
    expectOk(segment, 201)
    await api.flagOn('segmented', { name: 'default', segments: [segment.body.id] })
    expect(names(await api.get<Answer>('/api/frontend?plan=pro', { token }))).toEqual(['parent', 'segmented'])
    const updated = await api.put(`/api/admin/segments/${segment.body.id}`, {
      name: 'pros',
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['free'] }],
    })
    expect(updated.status).toBeLessThan(300)
    expect(names(await api.get<Answer>('/api/frontend?plan=pro', { token }))).toEqual(['parent'])
    // Archived flags are gone.
    expectOk(await api.delete('/api/admin/projects/default/features/segmented'), 202)
    expect(names(await api.get<Answer>('/api/frontend?plan=free', { token }))).toEqual(['parent'])
  })
})

describe('context', () => {
  test('fields in the query, properties[...] and unknown fields as properties, and the body form, read alike', async () => {
    await api.flagOn('for-pro', {
      name: 'default',
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
    })
    await api.flagOn('for-user', { name: 'userWithId', parameters: { userIds: 'u1' } })
    await api.flagOn('for-web', {
      name: 'default',
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
    })
    const token = await frontendToken()
    const get = async (query: string) => names(await api.get<Answer>(`/api/frontend${query}`, { token }))
    const post = async (context: unknown) => names(await api.post<Answer>('/api/frontend', { context }, { token }))
    expect(await get('?userId=u1&plan=pro&appName=web')).toEqual(['for-pro', 'for-user', 'for-web'])
    expect(await get('?properties%5Bplan%5D=pro')).toEqual(['for-pro'])
    expect(await get('?properties[plan]=pro')).toEqual(['for-pro'])
    // properties wins over a root field of the same name.
    expect(await get('?plan=pro&properties[plan]=free')).toEqual([])
    expect(await post({ userId: 'u1', plan: 'pro', appName: 'web' })).toEqual(['for-pro', 'for-user', 'for-web'])
    expect(await post({ properties: { plan: 'pro', userId: 'u1' } })).toEqual(['for-pro'])
    expect(await post({ plan: 'pro', properties: { plan: 'free' } })).toEqual([])
    expect(await post({ userId: 42, plan: null })).toEqual([])
    expect(names(await api.post<Answer>('/api/frontend', {}, { token }))).toEqual([])
  })

  test('context fields named like members of Object.prototype (constructor, __proto__, toString) are fields like any other, in the query and the body', async () => {
    for (const [flag, field, value] of [
      ['for-ctor', 'constructor', 'x'],
      ['for-proto', '__proto__', 'y'],
      ['for-text', 'toString', 'z'],
      ['for-has', 'hasOwnProperty', 'w'],
    ]) {
      await api.flagOn(flag, {
        name: 'default',
        constraints: [{ contextName: field, operator: 'IN', values: [value] }],
      })
    }
    // Without the field, nothing inherited stands in for it.
    await api.flagOn('without-ctor', {
      name: 'default',
      constraints: [{ contextName: 'constructor', operator: 'NOT_IN', values: ['x'] }],
    })
    await api.flagOn('ctor-set', {
      name: 'default',
      constraints: [{ contextName: 'constructor', operator: 'STR_CONTAINS', values: ['function', 'Object', 'x'] }],
    })
    const token = await frontendToken()
    const get = async (query: string) => names(await api.get<Answer>(`/api/frontend${query}`, { token }))
    const post = async (raw: string) => {
      const response = await api.request<Answer>('POST', '/api/frontend', {
        raw,
        token,
        headers: { 'content-type': 'application/json' },
      })
      expectOk(response)
      return names(response)
    }
    const all = ['ctor-set', 'for-ctor', 'for-has', 'for-proto', 'for-text']
    expect(await get('')).toEqual(['without-ctor'])
    expect(await post('{"context":{}}')).toEqual(['without-ctor'])
    expect(await get('?constructor=x&__proto__=y&toString=z&hasOwnProperty=w')).toEqual(all)
    expect(
      await get(
        '?properties[constructor]=x&properties[__proto__]=y&properties[toString]=z&properties[hasOwnProperty]=w',
      ),
    ).toEqual(all)
    expect(await post('{"context":{"constructor":"x","__proto__":"y","toString":"z","hasOwnProperty":"w"}}')).toEqual(
      all,
    )
    expect(
      await post('{"context":{"properties":{"constructor":"x","__proto__":"y","toString":"z","hasOwnProperty":"w"}}}'),
    ).toEqual(all)
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })

  test('a context that cannot be read is a 400 naming the field', async () => {
    const token = await frontendToken()
    expectError(await api.get('/api/frontend?userId=a&userId=b', { token }), 400, 'ValidationError', ['userId'])
    expectError(await api.get('/api/frontend?userId=%zz', { token }), 400, 'ValidationError', ['userId'])
    expectError(await api.post('/api/frontend', { context: 'u1' }, { token }), 400, 'ValidationError', ['context'])
    expectError(
      await api.post('/api/frontend', { context: { userId: { nested: true } } }, { token }),
      400,
      'ValidationError',
      ['userId'],
    )
    expectError(
      await api.post('/api/frontend', { context: { properties: ['pro'] } }, { token }),
      400,
      'ValidationError',
      ['properties'],
    )
  })

  test("remoteAddress defaults to the caller's address (TRUST_PROXY: the proxy's X-Forwarded-For) and sessionId to a random one", async () => {
    await api.flagOn('office', { name: 'remoteAddress', parameters: { IPs: '10.0.0.0/8' } })
    await api.flagOn('per-session', {
      name: 'gradualRolloutSessionId',
      parameters: { percentage: '100', groupId: 'per-session' },
    })
    const token = await frontendToken()
    const behindProxy = new Api(createApp(api.services, { bodyLimit: 102400, trustProxy: true }), api.services, null)
    const fromOffice = { token, headers: { 'x-forwarded-for': '203.0.113.9, 10.1.2.3' } }
    // No sessionId sent: the SDK alone would refuse gradualRolloutSessionId; the default random one is hashed.
    expect(names(await behindProxy.get<Answer>('/api/frontend', fromOffice))).toEqual(['office', 'per-session'])
    expect(names(await behindProxy.post<Answer>('/api/frontend', { context: {} }, fromOffice))).toEqual([
      'office',
      'per-session',
    ])
    expect(names(await behindProxy.get<Answer>('/api/frontend?remoteAddress=192.168.0.1', fromOffice))).toEqual([
      'per-session',
    ])
    expect(
      names(await behindProxy.get<Answer>('/api/frontend', { token, headers: { 'x-forwarded-for': '192.168.0.1' } })),
    ).toEqual(['per-session'])
    // Without a known address, only a sent one counts.
    expect(names(await api.get<Answer>('/api/frontend?remoteAddress=10.9.9.9', { token }))).toEqual([
      'office',
      'per-session',
    ])
  })
})

describe('caching', () => {
  test('Cache-Control: no-cache; an ETag made from the answer; If-None-Match → 304 without a body until the answer changes', async () => {
    await api.flagOn('checkout', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'userId', groupId: 'checkout' },
    })
    const token = await frontendToken()
    const first = await api.get<Answer>('/api/frontend?userId=u1', { token })
    expectOk(first)
    expect(first.headers.get('cache-control')).toBe('no-cache')
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^"[0-9a-z]+"$/)
    const again = await api.post<Answer>('/api/frontend', { context: { userId: 'u1' } }, { token })
    expect(again.headers.get('etag')).toBe(etag)
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const cached = await api.get('/api/frontend?userId=u1', { token, headers: { 'if-none-match': header } })
      expect({
        status: cached.status,
        text: cached.text,
        etag: cached.headers.get('etag'),
        cache: cached.headers.get('cache-control'),
      }).toEqual({ status: 304, text: '', etag, cache: 'no-cache' })
    }
    // Another answer (a user outside the rollout, or after a write) has another ETag, and a 200.
    const listed = new Map<string, string>()
    for (let user = 1; user < 40; user++) {
      const answer = await api.get<Answer>(`/api/frontend?userId=u${user}`, {
        token,
        headers: { 'if-none-match': etag },
      })
      if (answer.status === 304) continue
      expect({
        status: answer.status,
        differs: answer.headers.get('etag') !== etag,
        count: names(answer).length,
      }).toEqual({ status: 200, differs: true, count: 1 - names(first).length })
      if (names(answer).length === 1) listed.set(`u${user}`, answer.headers.get('etag')!)
    }
    if (names(first).length === 1) listed.set('u1', etag)
    expect(listed.size).toBeGreaterThan(0)
    // After the flag is switched off, a listed user's old ETag gets the new answer at once.
    expectOk(await api.toggle('default', 'checkout', 'development', false))
    const [user, old] = [...listed][0]
    const changed = await api.get<Answer>(`/api/frontend?userId=${user}`, { token, headers: { 'if-none-match': old } })
    expect({ status: changed.status, toggles: changed.body.toggles }).toEqual({ status: 200, toggles: [] })
    expect(changed.headers.get('etag')).not.toBe(old)
  })

  test('the compiled flags, shared with OFREP, are kept across writes that change nothing they evaluate, and compiled again after one that does', async () => {
    /** sdk_answers_total of the frontend API (OFREP's requests included) by source. */
    const compiled = async () => {
      const text = (await api.get<string>('/internal-backstage/prometheus')).text
      return Number(/^sdk_answers_total\{api="frontend",source="compiled"\} (\d+)$/m.exec(text)?.[1] ?? 0)
    }
    await api.flagOn('checkout', { name: 'default', constraints: [] })
    const token = await frontendToken()
    const bulk = (etag = '') =>
      api.post(
        '/ofrep/v1/evaluate/flags',
        { context: { targetingKey: 'u1' } },
        {
          token,
          headers: etag ? { 'if-none-match': etag } : {},
        },
      )
    expect(names(await api.get<Answer>('/api/frontend?userId=u1', { token }))).toEqual(['checkout'])
    const etag = (await bulk()).headers.get('etag')!
    const start = await compiled()
    expect(start).toBe(1)
    // A description, and the flag's other environment: read by neither protocol's answer.
    expectOk(await api.patchFlag('default', 'checkout', [{ op: 'replace', path: '/description', value: 'new' }]))
    expectOk(await api.toggle('default', 'checkout', 'production', true))
    expect((await bulk(etag)).status).toBe(304)
    expect(names(await api.get<Answer>('/api/frontend?userId=u1', { token }))).toEqual(['checkout'])
    expect(await compiled()).toBe(start)
    // A strategy in the token's environment: compiled again, for both, and the old ETag is stale.
    expectOk(await api.post(strategies('checkout'), { name: 'userWithId', parameters: { userIds: 'u2' } }))
    const after = await bulk(etag)
    expect(after.status).toBe(200)
    expect(await compiled()).toBe(start + 1)
    expect(names(await api.get<Answer>('/api/frontend?userId=u1', { token }))).toEqual(['checkout'])
    expect(await compiled()).toBe(start + 1)
  })
})
