/**
 * The variant routes beyond GET/PUT of one environment: JSON Patch of one environment's list
 * (patchEnvironmentsFeatureVariants), GET/PUT/PATCH over all of a flag's environments
 * (getFeatureVariants, overwriteFeatureVariants, patchFeatureVariants) and one list for several
 * environments (PUT .../variants-batch, overwriteFeatureVariantsOnEnvironments).
 */
import { describe, expect, test } from 'bun:test'
import {
  type Api,
  type VariantListBody,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  paths,
  tokenFor,
  expectRefused,
} from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const FLAG = 'shades'
const flagVariants = (flag = FLAG, project = 'default') => `${paths.flag(flag, project)}/variants`
const batch = (flag = FLAG, project = 'default') => `${paths.flag(flag, project)}/variants-batch`
const variant = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  weight: 500,
  weightType: 'variable',
  stickiness: 'default',
  ...extra,
})

/** The variants of the flag in each environment, as GET of one environment answers. */
async function variantsByEnvironment(flag = FLAG) {
  const result: Record<string, VariantListBody['variants']> = {}
  for (const environment of ['development', 'production']) {
    const response = await api.get<VariantListBody>(paths.variants(flag, environment))
    expectOk(response)
    result[environment] = response.body.variants
  }
  return result
}

async function withVariants(environment: string, variants: unknown[]) {
  expectOk(await api.put(paths.variants(FLAG, environment), variants))
}

describe('PATCH .../environments/:environment/variants (patchEnvironmentsFeatureVariants)', () => {
  test('applies the operations to the list, recomputes the weights, answers the list and records feature-environment-variants-updated', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('development', [variant('blue'), variant('red')])
    const since = api.lastEventId()
    const response = await api.patch<VariantListBody>(paths.variants(FLAG), [
      { op: 'test', path: '/0/name', value: 'blue' },
      { op: 'add', path: '/-', value: variant('green', { payload: { type: 'string', value: 'g' } }) },
      { op: 'replace', path: '/1/weightType', value: 'fix' },
      { op: 'replace', path: '/1/weight', value: 200 },
    ])
    expectOk(response)
    expect(response.body.version).toBe(1)
    expect(response.body.variants.map(v => [v.name, v.weight, v.weightType])).toEqual([
      ['blue', 400, 'variable'],
      ['green', 400, 'variable'],
      ['red', 200, 'fix'],
    ])
    const stored = await variantsByEnvironment()
    expect(stored.development).toEqual(response.body.variants)
    expect(stored.production).toEqual([])
    const events = await api.eventsAfter(since)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-environment-variants-updated',
      featureName: FLAG,
      project: 'default',
      environment: 'development',
    })
    expect((events[0].data as { variants: unknown }).variants).toEqual(response.body.variants)
    expect((events[0].preData as { variants: { name: string }[] }).variants.map(v => v.name)).toEqual(['blue', 'red'])
  })

  test('remove and move work on indexes; removing the last variant leaves an empty list', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('development', [variant('a'), variant('b')])
    const moved = await api.patch<VariantListBody>(paths.variants(FLAG), [{ op: 'remove', path: '/0' }])
    expectOk(moved)
    expect(moved.body.variants.map(v => [v.name, v.weight])).toEqual([['b', 1000]])
    const emptied = await api.patch<VariantListBody>(paths.variants(FLAG), [{ op: 'remove', path: '/0' }])
    expectOk(emptied)
    expect(emptied.body.variants).toEqual([])
  })

  test('a failed test is 409 and nothing is applied, not even the operations before it', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('development', [variant('blue')])
    await expectRefused(
      api,
      () =>
        api.patch(paths.variants(FLAG), [
          { op: 'add', path: '/-', value: variant('red') },
          { op: 'test', path: '/0/name', value: 'green' },
        ]),
      409,
      'ConflictError',
    )
  })

  test('a result that is not a valid variant list is 400 and nothing changes', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('development', [variant('blue'), variant('red')])
    const cases: unknown[][] = [
      [{ op: 'replace', path: '/0/weight', value: 'heavy' }],
      [{ op: 'add', path: '/0/colour', value: 'blue' }],
      [{ op: 'remove', path: '/0/name' }],
      [{ op: 'replace', path: '/1/name', value: 'blue' }],
      [
        { op: 'replace', path: '/0/weightType', value: 'fix' },
        { op: 'replace', path: '/0/weight', value: 1001 },
      ],
      [{ op: 'add', path: '/-', value: variant('json', { payload: { type: 'json', value: '{not json' } }) }],
    ]
    for (const operations of cases)
      await expectRefused(api, () => api.patch(paths.variants(FLAG), operations), 400, 'ValidationError')
  })

  test('malformed operations, paths outside the list and prototype keys are 400 naming the operation', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('development', [variant('blue')])
    const cases: [unknown[], string][] = [
      [[{ op: 'jump', path: '/0' }], '/0/op'],
      [[{ op: 'replace', path: 'name', value: 'x' }], '/0/path'],
      [[{ op: 'replace', path: '/name', value: 'x' }], '/0/path'],
      [[{ op: 'add', path: '/0/__proto__', value: {} }], '/0/path'],
      [[{ op: 'replace', path: '/5/name', value: 'x' }], '/0'],
      [[{ op: 'replace', path: '/0/name', value: 'x', extra: 1 }], '/0/extra'],
    ]
    for (const [operations, path] of cases) {
      const response = await expectRefused(
        api,
        () => api.patch(paths.variants(FLAG), operations),
        400,
        'ValidationError',
      )
      expect({
        operations,
        details: (response.body as { details?: { path?: string }[] }).details?.map(d => d.path),
      }).toEqual({ operations, details: [path] })
    }
  })

  test('an unknown flag, a flag of another project or an unknown environment is 404; an archived flag is 400', async () => {
    await api.newFlag('default', FLAG)
    await api.newProject('other')
    const add = [{ op: 'add', path: '/-', value: variant('blue') }]
    await expectRefused(api, () => api.patch(paths.variants('missing'), add), 404, 'NotFoundError')
    await expectRefused(api, () => api.patch(paths.variants(FLAG, 'development', 'other'), add), 404, 'NotFoundError')
    await expectRefused(api, () => api.patch(paths.variants(FLAG, 'staging'), add), 404, 'NotFoundError', ['staging'])
    expectOk(await api.delete(paths.flag(FLAG)), 202)
    await expectRefused(api, () => api.patch(paths.variants(FLAG), add), 400, 'ValidationError', ['archived'])
  })

  test('needs UPDATE_FEATURE_VARIANTS: a viewer gets 403', async () => {
    await api.newFlag('default', FLAG)
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const response = await expectRefused(
      api,
      () => api.patch(paths.variants(FLAG), [{ op: 'add', path: '/-', value: variant('blue') }], { token: viewer }),
      403,
      'NoAccessError',
    )
    expect(response.body).toMatchObject({ permissions: ['UPDATE_FEATURE_VARIANTS'] })
  })
})

describe('GET, PUT and PATCH .../features/:featureName/variants (all environments)', () => {
  test('PUT stores the list in every environment of the flag in one write, with one event per environment', async () => {
    await api.newFlag('default', FLAG)
    const since = api.lastEventId()
    const response = await api.put<VariantListBody>(flagVariants(), [
      variant('blue'),
      variant('red', { weightType: 'fix', weight: 300 }),
    ])
    expectOk(response)
    expect(response.body).toEqual({
      version: 1,
      variants: [
        { ...variant('blue'), weight: 700, overrides: [] },
        { ...variant('red'), weightType: 'fix', weight: 300, overrides: [] },
      ],
    })
    const stored = await variantsByEnvironment()
    expect(stored).toEqual({ development: response.body.variants, production: response.body.variants })
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.environment])).toEqual([
      ['feature-environment-variants-updated', 'development'],
      ['feature-environment-variants-updated', 'production'],
    ])
    expect(events[0].createdAt).toBe(events[1].createdAt)
  })

  test("GET answers the production environment's variants, and PATCH patches them and stores the result everywhere", async () => {
    await api.newFlag('default', FLAG)
    await withVariants('development', [variant('dev-only')])
    await withVariants('production', [variant('blue')])
    const listed = await api.get<VariantListBody>(flagVariants())
    expectOk(listed)
    expect(listed.body.variants.map(v => v.name)).toEqual(['blue'])

    const since = api.lastEventId()
    const response = await api.patch<VariantListBody>(flagVariants(), [
      { op: 'test', path: '/0/name', value: 'blue' },
      { op: 'add', path: '/-', value: variant('red') },
    ])
    expectOk(response)
    expect(response.body.variants.map(v => [v.name, v.weight])).toEqual([
      ['blue', 500],
      ['red', 500],
    ])
    expect(await variantsByEnvironment()).toEqual({
      development: response.body.variants,
      production: response.body.variants,
    })
    expect((await api.eventsAfter(since)).map(event => event.environment)).toEqual(['development', 'production'])
  })

  test('a bad list or a failed test leaves every environment as it was and records nothing', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('production', [variant('blue')])
    await expectRefused(
      api,
      () =>
        api.put(flagVariants(), [
          variant('a', { weightType: 'fix', weight: 600 }),
          variant('b', { weightType: 'fix', weight: 600 }),
        ]),
      400,
      'ValidationError',
    )
    await expectRefused(api, () => api.put(flagVariants(), [variant('a'), variant('a')]), 400, 'ValidationError')
    await expectRefused(
      api,
      () => api.patch(flagVariants(), [{ op: 'test', path: '/0/name', value: 'red' }]),
      409,
      'ConflictError',
    )
    await expectRefused(
      api,
      () => api.patch(flagVariants(), [{ op: 'add', path: '/-', value: { name: 'no-weight' } }]),
      400,
      'ValidationError',
    )
    await expectRefused(api, () => api.put(flagVariants('missing'), [variant('a')]), 404, 'NotFoundError')
  })
})

describe('PUT .../features/:featureName/variants-batch (overwriteFeatureVariantsOnEnvironments)', () => {
  test('stores the list in each named environment, defaults filled in, with one event each; others are left alone', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('production', [variant('prod')])
    const since = api.lastEventId()
    const response = await api.put<VariantListBody>(batch(), {
      variants: [{ name: 'blue', weight: 0 }],
      environments: ['development', 'development'],
    })
    expectOk(response)
    expect(response.body).toEqual({
      version: 1,
      variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default', overrides: [] }],
    })
    const stored = await variantsByEnvironment()
    expect(stored.development).toEqual(response.body.variants)
    expect(stored.production.map(v => v.name)).toEqual(['prod'])
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.environment])).toEqual([
      ['feature-environment-variants-updated', 'development'],
    ])
  })

  test('no environment is 400; an environment the flag lacks is 404; a bad list is 400; nothing changes', async () => {
    await api.newFlag('default', FLAG)
    await expectRefused(
      api,
      () => api.put(batch(), { variants: [variant('a')], environments: [] }),
      400,
      'ValidationError',
    )
    await expectRefused(api, () => api.put(batch(), { variants: [variant('a')] }), 400, 'ValidationError')
    await expectRefused(
      api,
      () => api.put(batch(), { variants: [variant('a')], environments: ['development', 'staging'] }),
      404,
      'NotFoundError',
      ['staging'],
    )
    const bad = await expectRefused(
      api,
      () => api.put(batch(), { variants: [variant('a'), variant('a')], environments: ['development'] }),
      400,
      'ValidationError',
    )
    expect((bad.body as { details?: { path?: string }[] }).details?.[0]?.path).toBe('/variants/1/name')
  })
})

describe('blank names in variants, by every way variants are written', () => {
  test('a blank variant name, stickiness or override context field is a 400 naming it, and nothing changes (flag variants, strategy variants, import)', async () => {
    await api.newFlag('default', FLAG)
    await withVariants('development', [variant('blue'), variant('red')])
    const blanks: [Record<string, unknown>, string][] = [
      [variant(''), '/name'],
      [variant('  '), '/name'],
      [variant('green', { stickiness: '' }), '/stickiness'],
      [variant('green', { overrides: [{ contextName: ' ', values: ['user-1'] }] }), '/overrides/0/contextName'],
    ]
    /** Refused as expectRefused checks, and the error's detail points at `path`. */
    const refusedAt = async (send: () => ReturnType<Api['patch']>, path: string) => {
      let response: Awaited<ReturnType<Api['patch']>> | undefined
      await expectRefused(api, async () => (response = await send()), 400, 'ValidationError')
      expect(errorOf(response!).details?.[0]?.path ?? '').toEndWith(path)
    }
    for (const [bad, field] of blanks) {
      const list = [variant('blue'), bad]
      await refusedAt(() => api.put(paths.variants(FLAG), list), `/1${field}`)
      await refusedAt(() => api.put(flagVariants(), list), `/1${field}`)
      await refusedAt(
        () => api.put(batch(), { variants: list, environments: ['development', 'production'] }),
        `/variants/1${field}`,
      )
      for (const path of [paths.variants(FLAG), flagVariants()])
        await refusedAt(() => api.patch(path, [{ op: 'add', path: '/-', value: bad }]), field)
      const key = field.split('/')[1]
      await refusedAt(
        () => api.patch(paths.variants(FLAG), [{ op: 'replace', path: `/0/${key}`, value: bad[key] }]),
        field,
      )
      const since = api.lastEventId()
      const imported = await api.post('/api/admin/features-batch/import', {
        project: 'default',
        environment: 'development',
        data: {
          features: [{ name: FLAG }],
          featureStrategies: [],
          tagTypes: [],
          featureEnvironments: [{ featureName: FLAG, enabled: true, variants: list }],
        },
      })
      expectError(imported, 400, 'ValidationError')
      expect(errorOf(imported).details?.[0]?.path ?? '').toEndWith(field)
      expect(api.eventsSince(since)).toEqual([])
    }
    // Strategy variants: the name too (their stickiness was already refused).
    for (const name of ['', ' ']) {
      const since = api.lastEventId()
      const refused = await api.post(paths.strategies(FLAG), {
        name: 'default',
        variants: [{ name, weight: 1000, weightType: 'variable', stickiness: 'default' }],
      })
      expectError(refused, 400, 'ValidationError')
      expect(errorOf(refused).details?.[0]?.path).toBe('/variants/0/name')
      expect(api.eventsSince(since)).toEqual([])
    }
    expect((await variantsByEnvironment()).development.map(entry => entry.name)).toEqual(['blue', 'red'])
  })
})
