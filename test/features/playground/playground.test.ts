/**
 * The playground (POST /api/admin/playground and /advanced): Unleash's shapes, each operator family,
 * segments, parents, strategy and flag variants with the buckets that chose them, who may call it
 * (viewers, signed-in users; a token's projects), that it records nothing, and its bounds. The
 * answers against the official SDK's engine on random flags: test/features/playground/playground.property.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { normalizedStrategyValue, normalizedVariantValue } from 'unleash-client/lib/strategy/util'
import { asSession, expectError, expectOk, makeApi, newUser, paths, signIn, tokenFor, type Api } from '../../helpers'

const PLAYGROUND = '/api/admin/playground'
const ADVANCED = '/api/admin/playground/advanced'

interface Constraint {
  contextName: string
  operator: string
  values: string[]
  inverted: boolean
  caseInsensitive: boolean
  result: boolean
}
interface Strategy {
  name: string
  disabled: boolean
  result: { evaluationStatus: string; enabled: boolean | 'unknown'; variant?: Variant }
  constraints: Constraint[]
  segments: { id: number; name: string; result: boolean; constraints: Constraint[] }[]
  rollout?: number
  bucket?: number | null
}
interface Variant {
  name: string
  enabled: boolean
  payload?: { type: string; value: string }
  bucket?: number
}
interface Evaluation {
  name: string
  projectId: string
  isEnabled: boolean
  isEnabledInCurrentEnvironment: boolean
  hasUnsatisfiedDependency: boolean
  variant: Variant
  variants: { name: string }[]
  strategies: { result: boolean | 'unknown'; data: Strategy[] }
}
interface Answer {
  input: unknown
  features: Evaluation[]
}

let api: Api
beforeEach(async () => {
  api = await makeApi()
})
afterEach(async () => {
  await api.close()
})

async function play(context: Record<string, unknown>, extra: Record<string, unknown> = {}, token?: string) {
  return api.post<Answer>(
    PLAYGROUND,
    { environment: 'development', projects: '*', context, ...extra },
    token ? { token } : undefined,
  )
}

async function evaluationOf(name: string, context: Record<string, unknown>): Promise<Evaluation> {
  const response = await play(context)
  expectOk(response)
  const found = response.body.features.find(feature => feature.name === name)
  expect(found).toBeDefined()
  return found!
}

describe('the answer', () => {
  test("is Unleash's shape, with the rollout's bucket beside its percentage and the variant's bucket", async () => {
    await api.flagOn('checkout', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'checkout' },
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
    })
    const variants = [
      {
        name: 'blue',
        weight: 500,
        weightType: 'variable',
        stickiness: 'default',
        payload: { type: 'string', value: 'b' },
      },
      { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default' },
    ]
    expectOk(await api.put(paths.variants('checkout'), variants))
    // A user inside the 50 %: their bucket is the SDK's hash of checkout:<userId>.
    const user = Array.from({ length: 100 }, (_, i) => `user-${i}`).find(
      id => normalizedStrategyValue(id, 'checkout') <= 50,
    )!
    const context = { appName: 'web', userId: user, properties: { plan: 'pro' } }
    const response = await play(context)
    expectOk(response)
    const variantBucket = normalizedVariantValue(user, 'checkout', 1000)
    const chosen = variantBucket <= 500 ? variants[0] : variants[1]
    expect(response.body as unknown).toEqual({
      input: { environment: 'development', projects: '*', context },
      features: [
        {
          name: 'checkout',
          projectId: 'default',
          isEnabled: true,
          isEnabledInCurrentEnvironment: true,
          hasUnsatisfiedDependency: false,
          variant: {
            name: chosen.name,
            enabled: true,
            ...(chosen.payload ? { payload: chosen.payload } : {}),
            bucket: variantBucket,
          },
          variants: variants.map(variant => ({ ...variant, overrides: [] })),
          strategies: {
            result: true,
            data: [
              {
                name: 'flexibleRollout',
                id: expect.any(String),
                disabled: false,
                parameters: { rollout: '50', stickiness: 'default', groupId: 'checkout' },
                result: { evaluationStatus: 'complete', enabled: true },
                constraints: [
                  {
                    contextName: 'plan',
                    operator: 'IN',
                    values: ['pro'],
                    inverted: false,
                    caseInsensitive: false,
                    result: true,
                  },
                ],
                segments: [],
                rollout: 50,
                bucket: normalizedStrategyValue(user, 'checkout'),
              },
            ],
          },
        },
      ],
    })
    // Outside the rollout: off, the disabled variant, and the bucket says why.
    const outside = Array.from({ length: 100 }, (_, i) => `user-${i}`).find(
      id => normalizedStrategyValue(id, 'checkout') > 50,
    )!
    const off = await evaluationOf('checkout', { userId: outside, properties: { plan: 'pro' } })
    expect(off).toMatchObject({ isEnabled: false, variant: { name: 'disabled', enabled: false } })
    expect(off.variant.bucket).toBeUndefined()
    expect(off.strategies).toMatchObject({
      result: false,
      data: [{ rollout: 50, bucket: normalizedStrategyValue(outside, 'checkout') }],
    })
    expect(off.strategies.data[0].bucket).toBeGreaterThan(50)
  })

  test('lists every live flag of the projects by name: off ones, ones without strategies, not archived ones', async () => {
    await api.newFlag('default', 'zeta')
    await api.newFlag('default', 'alpha')
    expectOk(await api.toggle('default', 'alpha', 'development', true))
    await api.newFlag('default', 'gone')
    expectOk(await api.delete(paths.flag('gone')), 202)
    await api.newProject('other')
    await api.newFlag('other', 'elsewhere')
    const all = await play({})
    expectOk(all)
    expect(all.body.features.map(feature => [feature.name, feature.projectId, feature.isEnabled])).toEqual([
      ['alpha', 'default', true],
      ['elsewhere', 'other', false],
      ['zeta', 'default', false],
    ])
    const some = await play({}, { projects: ['other', 'no-such-project'] })
    expectOk(some)
    expect(some.body.features.map(feature => feature.name)).toEqual(['elsewhere'])
  })
})

describe('explanations', () => {
  test('each operator family: every constraint with its outcome, the strategy failing on one', async () => {
    const constraints = [
      { contextName: 'plan', operator: 'IN', values: ['pro', 'team'] },
      { contextName: 'plan', operator: 'NOT_IN', values: ['free'], inverted: true },
      { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@EXAMPLE.COM'], caseInsensitive: true },
      { contextName: 'email', operator: 'STR_STARTS_WITH', values: ['bob'] },
      { contextName: 'age', operator: 'NUM_GTE', value: '18' },
      { contextName: 'age', operator: 'NUM_LT', value: '18' },
      { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2025-01-01T00:00:00.000Z' },
      { contextName: 'version', operator: 'SEMVER_LT', value: '2.0.0' },
      { contextName: 'email', operator: 'REGEX', value: '^a[a-z]*@' },
      { contextName: 'remoteAddress', operator: 'IN_CIDR', values: ['10.0.0.0/8'] },
      { contextName: 'userId', operator: 'IN', values: ['someone-else'] },
    ]
    await api.flagOn('operators', { name: 'default', constraints })
    const evaluation = await evaluationOf('operators', {
      userId: 'alice',
      remoteAddress: '10.1.2.3',
      currentTime: '2026-06-01T00:00:00Z',
      properties: { plan: 'pro', email: 'alice@example.com', age: '30', version: '1.4.0' },
    })
    const [strategy] = evaluation.strategies.data
    expect(strategy.constraints.map(c => [c.operator, c.result])).toEqual([
      ['IN', true],
      ['NOT_IN', false],
      ['STR_ENDS_WITH', true],
      ['STR_STARTS_WITH', false],
      ['NUM_GTE', true],
      ['NUM_LT', false],
      ['DATE_AFTER', true],
      ['SEMVER_LT', true],
      ['REGEX', true],
      ['IN_CIDR', true],
      ['IN', false],
    ])
    expect(strategy.result).toEqual({ evaluationStatus: 'complete', enabled: false })
    expect(evaluation).toMatchObject({
      isEnabled: false,
      isEnabledInCurrentEnvironment: true,
      strategies: { result: false },
    })
  })

  test("segments: each with its constraints' outcomes; one that fails fails the strategy", async () => {
    const europe = await api.post<{ id: number }>('/api/admin/segments', {
      name: 'europe',
      constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
    })
    const beta = await api.post<{ id: number }>('/api/admin/segments', {
      name: 'beta',
      constraints: [{ contextName: 'beta', operator: 'IN', values: ['yes'] }],
    })
    expectOk(europe, 201)
    expectOk(beta, 201)
    await api.flagOn('segmented', { name: 'default', segments: [europe.body.id, beta.body.id] })
    const evaluation = await evaluationOf('segmented', { properties: { region: 'eu', beta: 'no' } })
    expect(evaluation.strategies.data[0].segments).toEqual([
      {
        id: europe.body.id,
        name: 'europe',
        result: true,
        constraints: [expect.objectContaining({ contextName: 'region', result: true })],
      },
      {
        id: beta.body.id,
        name: 'beta',
        result: false,
        constraints: [expect.objectContaining({ contextName: 'beta', result: false })],
      },
    ])
    expect(evaluation.isEnabled).toBe(false)
    expect((await evaluationOf('segmented', { properties: { region: 'eu', beta: 'yes' } })).isEnabled).toBe(true)
    // A segment changed since is read anew (prepared flags are kept between requests).
    expectOk(
      await api.put(`/api/admin/segments/${beta.body.id}`, {
        name: 'beta',
        constraints: [{ contextName: 'beta', operator: 'IN', values: ['no'] }],
      }),
      204,
    )
    const changed = await evaluationOf('segmented', { properties: { region: 'eu', beta: 'no' } })
    expect(changed.isEnabled).toBe(true)
    expect(changed.strategies.data[0].segments[1].constraints[0]).toMatchObject({ values: ['no'], result: true })
  })

  test('parents: a child is off with hasUnsatisfiedDependency while its parent is not as required', async () => {
    await api.flagOn('parent', { name: 'userWithId', parameters: { userIds: 'alice' } })
    await api.flagOn('child')
    await api.flagOn('when-parent-off')
    expectOk(await api.post(`${paths.flag('child')}/dependencies`, { feature: 'parent' }))
    expectOk(await api.post(`${paths.flag('when-parent-off')}/dependencies`, { feature: 'parent', enabled: false }))
    const forBob = await play({ userId: 'bob' })
    expectOk(forBob)
    const byName = (answer: Answer) =>
      Object.fromEntries(
        answer.features.map(f => [f.name, [f.isEnabled, f.hasUnsatisfiedDependency, f.strategies.result]]),
      )
    expect(byName(forBob.body)).toEqual({
      parent: [false, false, false],
      child: [false, true, true],
      'when-parent-off': [true, false, true],
    })
    const forAlice = await play({ userId: 'alice' })
    expectOk(forAlice)
    expect(byName(forAlice.body)).toEqual({
      parent: [true, false, true],
      child: [true, false, true],
      'when-parent-off': [false, true, true],
    })
  })

  test("strategy variants: the applying strategy's, with its bucket; a flag variant's override has no bucket", async () => {
    await api.flagOn('strategy-variants', {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'g' },
      variants: [
        {
          name: 'one',
          weight: 0,
          weightType: 'variable',
          stickiness: 'userId',
          payload: { type: 'json', value: '{"a":1}' },
        },
        { name: 'two', weight: 0, weightType: 'variable', stickiness: 'userId' },
      ],
    })
    const evaluation = await evaluationOf('strategy-variants', { userId: 'carol' })
    const bucket = normalizedVariantValue('carol', 'g', 1000)
    const name = bucket <= 500 ? 'one' : 'two'
    expect(evaluation.strategies.data[0].result).toEqual({
      evaluationStatus: 'complete',
      enabled: true,
      variant: {
        name,
        enabled: true,
        ...(name === 'one' ? { payload: { type: 'json', value: '{"a":1}' } } : {}),
        bucket,
      },
    })
    expect(evaluation.variant).toEqual(evaluation.strategies.data[0].result.variant!)
    expect(evaluation.variants.map(variant => variant.name)).toEqual(['one', 'two'])

    await api.flagOn('overridden')
    expectOk(
      await api.put(paths.variants('overridden'), [
        {
          name: 'a',
          weight: 500,
          weightType: 'variable',
          stickiness: 'default',
          overrides: [{ contextName: 'userId', values: ['carol'] }],
        },
        { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default' },
      ]),
    )
    expect((await evaluationOf('overridden', { userId: 'carol' })).variant).toEqual({ name: 'a', enabled: true })
  })

  test('a strategy type the service cannot evaluate is unknown, never on; a disabled strategy is shown, not applied', async () => {
    expectOk(await api.post('/api/admin/strategies', { name: 'my-rule', parameters: [] }), 201)
    await api.flagOn('custom', { name: 'my-rule' })
    const custom = await evaluationOf('custom', { userId: 'dave' })
    expect(custom.strategies).toMatchObject({
      result: 'unknown',
      data: [{ result: { evaluationStatus: 'incomplete', enabled: 'unknown' } }],
    })
    expect(custom.isEnabled).toBe(false)

    await api.flagOn('paused', { name: 'userWithId', parameters: { userIds: 'erin' } })
    const [strategy] = (await evaluationOf('paused', {})).strategies.data
    expectOk(await api.post(paths.strategies('paused'), { name: 'default', disabled: true }))
    const paused = await evaluationOf('paused', {})
    expect(paused.strategies.data.map(s => [s.name, s.disabled, s.result.enabled])).toEqual([
      [strategy.name, false, false],
      ['default', true, false],
    ])
    expect(paused.isEnabled).toBe(false)
  })

  test('a custom field at the top level is read before the one in properties, as the SDK reads it', async () => {
    await api.flagOn('pro-only', {
      name: 'default',
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
    })
    expect((await evaluationOf('pro-only', { plan: 'pro', properties: { plan: 'free' } })).isEnabled).toBe(true)
    expect((await evaluationOf('pro-only', { plan: 'free', properties: { plan: 'pro' } })).isEnabled).toBe(false)
  })
})

describe('the advanced playground', () => {
  test('evaluates per environment and per combination of comma-separated values, and warns of fields that are not text', async () => {
    await api.flagOn('everywhere', { name: 'userWithId', parameters: { userIds: 'a' } })
    const response = await api.post<{
      features: {
        name: string
        environments: Record<string, (Evaluation & { environment: string; context: object })[]>
      }[]
      warnings: { invalidContextProperties: string[] }
    }>(ADVANCED, {
      environments: ['development', 'production'],
      projects: ['default'],
      context: { userId: 'a,b', count: 3, nested: { x: 1 }, properties: { plan: 'pro' } },
    })
    expectOk(response)
    expect(response.body.warnings).toEqual({ invalidContextProperties: ['count', 'nested'] })
    const [feature] = response.body.features
    expect(feature).toMatchObject({ name: 'everywhere', projectId: 'default' })
    const summary = (environment: string) =>
      feature.environments[environment].map(e => [
        e.environment,
        e.context,
        e.isEnabled,
        e.isEnabledInCurrentEnvironment,
      ])
    expect(summary('development')).toEqual([
      ['development', { userId: 'a', properties: { plan: 'pro' } }, true, true],
      ['development', { userId: 'b', properties: { plan: 'pro' } }, false, true],
    ])
    expect(summary('production')).toEqual([
      ['production', { userId: 'a', properties: { plan: 'pro' } }, false, false],
      ['production', { userId: 'b', properties: { plan: 'pro' } }, false, false],
    ])
  })

  test('an unknown environment is a 404; a bad body the usual 400', async () => {
    expectError(
      await api.post(ADVANCED, { environments: ['development', 'nowhere'], context: {} }),
      404,
      'NotFoundError',
      ['nowhere'],
    )
    expectError(await play({}, { environment: 'nowhere' }), 404, 'NotFoundError', ['nowhere'])
    expectError(await api.post(ADVANCED, { environments: [], context: {} }), 400, 'ValidationError')
    expectError(await api.post(PLAYGROUND, { environment: 'development' }), 400, 'ValidationError')
    expectError(await play({ properties: { plan: 3 } }), 400, 'ValidationError')
    expectError(await play({ count: 3 }), 400, 'ValidationError', ['count'])
    expectError(await play({ currentTime: 'soon' }), 400, 'ValidationError', ['currentTime'])
  })
})

describe('access and bounds', () => {
  test('viewers and signed-in users may evaluate; a token limited to some projects sees only their flags; SDK tokens may not', async () => {
    await api.newProject('mine')
    await api.flagOn('in-mine', { name: 'default' }, 'development', 'mine')
    await api.flagOn('in-default')
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const names = async (token: string, projects: unknown = '*') => {
      const response = await play({}, { projects }, token)
      expectOk(response)
      return response.body.features.map(feature => feature.name)
    }
    expect(await names(viewer)).toEqual(['in-default', 'in-mine'])
    const scoped = await tokenFor(api, 'scoped', { role: 'viewer', projects: ['mine'] })
    expect(await names(scoped)).toEqual(['in-mine'])
    expect(await names(scoped, ['default', 'mine'])).toEqual(['in-mine'])

    const password = 'A long and unguessable passphrase 42!'
    await newUser(api, { username: 'vera', rootRole: 'Viewer', password })
    const cookie = await signIn(api, 'vera', password)
    const asUser = await api.post<Answer>(PLAYGROUND, { environment: 'development', context: {} }, asSession(cookie))
    expectOk(asUser)
    expect(asUser.body.features.map(feature => feature.name)).toEqual(['in-default', 'in-mine'])

    const client = await api.createToken({
      tokenName: 'sdk',
      type: 'client',
      projects: ['*'],
      environment: 'development',
    })
    expectError(await play({}, {}, client.body.secret), 403, 'NoAccessError')
    expectError(
      await api.post(PLAYGROUND, { environment: 'development', context: {} }, { token: null }),
      401,
      'AuthenticationRequired',
    )
  })

  test('records no event', async () => {
    await api.flagOn('quiet')
    const before = api.lastEventId()
    expectOk(await play({ userId: 'x' }))
    expectOk(await api.post(ADVANCED, { environments: ['development', 'production'], context: { userId: 'x,y' } }))
    expect(api.lastEventId()).toBe(before)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('answers at most 1,000 flag evaluations: 1,000 flags pass, 1,001 are a clear 400, as are too many combinations', async () => {
    const features = Array.from({ length: 1000 }, (_, i) => ({ name: `bulk-${String(i).padStart(4, '0')}` }))
    const imported = await api.post('/api/admin/features-batch/import', {
      project: 'default',
      environment: 'development',
      data: { features, featureStrategies: [], tagTypes: [] },
    })
    expectOk(imported)
    const full = await play({ userId: 'x' })
    expectOk(full)
    expect(full.body.features).toHaveLength(1000)
    // Two environments of 1,000 flags, or one more flag, is past the bound.
    const twice = await api.post(ADVANCED, { environments: ['development', 'production'], context: {} })
    expectError(twice, 400, 'ValidationError', ['1,000', '2,000', 'environments'])
    await api.newFlag('default', 'one-too-many')
    expectError(await play({}), 400, 'ValidationError', ['1,000', '1,001 flags'])
    // Combinations are counted before they are made (here 40⁵, for no flag at all).
    const many = Array.from({ length: 40 }, (_, i) => `v${i}`).join(',')
    const combinations = await api.post(ADVANCED, {
      environments: ['development'],
      projects: ['nothing-here'],
      context: { userId: many, sessionId: many, properties: { a: many, b: many, c: many } },
    })
    expectError(combinations, 400, 'ValidationError', ['102,400,000 contexts'])
  })
})
