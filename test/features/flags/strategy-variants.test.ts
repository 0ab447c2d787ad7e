/**
 * Strategy variants (seed 2.7), variants per environment, blank context fields, defaults of
 * flexibleRollout and setStrategySortOrder. The setup shared with strategies.test.ts is
 * strategies.setup.ts.
 */
import { describe, expect, test } from 'bun:test'
import { errorOf, paths, type StrategyBody, type VariantListBody, named } from '../../helpers'
import {
  api,
  useFreshApi,
  PROJECT,
  strategiesPath,
  strategyPath,
  variantsPath,
  addStrategy,
  environmentEntry,
  strategiesOf,
  expectStrategyRejected,
} from './strategies.setup'

useFreshApi()

describe('strategy variants (seed 2.7)', () => {
  const variant = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    weight: 0,
    weightType: 'variable',
    stickiness: 'default',
    ...extra,
  })

  test('a strategy variant needs weightType and stickiness', async () => {
    await api.newFlag(PROJECT, 'sv-required')
    await expectStrategyRejected('sv-required', {
      name: 'default',
      variants: [{ name: 'a', weight: 500, stickiness: 'default' }],
    })
    await expectStrategyRejected('sv-required', {
      name: 'default',
      variants: [{ name: 'a', weight: 500, weightType: 'variable' }],
    })
    await expectStrategyRejected('sv-required', {
      name: 'default',
      variants: [{ name: 'a', weight: 500, weightType: 'heavy', stickiness: 'default' }],
    })
    await expectStrategyRejected('sv-required', {
      name: 'default',
      variants: [{ weight: 500, weightType: 'variable', stickiness: 'default' }],
    })
  })

  test('fix strategy variants keep their weight and variable ones share what is left of 1000', async () => {
    await api.newFlag(PROJECT, 'sv-weights')
    const strategy = await addStrategy('sv-weights', {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'g' },
      variants: [
        variant('fixed', { weightType: 'fix', weight: 200 }),
        variant('a', { weight: 1 }),
        variant('b', { weight: 999 }),
      ],
    })
    expect(strategy.variants.map(v => [v.name, v.weight, v.weightType, v.stickiness])).toEqual([
      ['a', 400, 'variable', 'default'],
      ['b', 400, 'variable', 'default'],
      ['fixed', 200, 'fix', 'default'],
    ])
    const stored = await api.get<StrategyBody>(strategyPath('sv-weights', strategy.id))
    expect(stored.body.variants).toEqual(strategy.variants)
  })

  test('three variable strategy variants get 334, 333 and 333, summing to 1000', async () => {
    await api.newFlag(PROJECT, 'sv-thirds')
    const strategy = await addStrategy('sv-thirds', {
      name: 'default',
      variants: [variant('a'), variant('b'), variant('c')],
    })
    expect(strategy.variants.map(v => v.weight)).toEqual([334, 333, 333])
  })

  test('strategy variants that are all fix must add up to exactly 1000', async () => {
    await api.newFlag(PROJECT, 'sv-fix-only')
    await expectStrategyRejected('sv-fix-only', {
      name: 'default',
      variants: [variant('a', { weightType: 'fix', weight: 300 }), variant('b', { weightType: 'fix', weight: 300 })],
    })
    const ok = await addStrategy('sv-fix-only', {
      name: 'default',
      variants: [variant('a', { weightType: 'fix', weight: 300 }), variant('b', { weightType: 'fix', weight: 700 })],
    })
    expect(ok.variants.map(v => v.weight)).toEqual([300, 700])
  })

  test('strategy variants whose fix weights exceed 1000 answer 400', async () => {
    await api.newFlag(PROJECT, 'sv-fix-over')
    await expectStrategyRejected('sv-fix-over', {
      name: 'default',
      variants: [
        variant('a', { weightType: 'fix', weight: 600 }),
        variant('b', { weightType: 'fix', weight: 600 }),
        variant('c'),
      ],
    })
  })

  test('a strategy variant weight above 1000 or below 0 answers 400', async () => {
    await api.newFlag(PROJECT, 'sv-range')
    await expectStrategyRejected('sv-range', {
      name: 'default',
      variants: [variant('a', { weightType: 'fix', weight: 1001 })],
    })
    await expectStrategyRejected('sv-range', { name: 'default', variants: [variant('a', { weight: -1 })] })
  })

  test('duplicate strategy variant names answer 400', async () => {
    await api.newFlag(PROJECT, 'sv-duplicates')
    await expectStrategyRejected('sv-duplicates', { name: 'default', variants: [variant('same'), variant('same')] })
  })

  test('a strategy variant json payload must be valid JSON', async () => {
    await api.newFlag(PROJECT, 'sv-payload')
    await expectStrategyRejected('sv-payload', {
      name: 'default',
      variants: [variant('a', { payload: { type: 'json', value: '{broken' } })],
    })
    const ok = await addStrategy('sv-payload', {
      name: 'default',
      variants: [variant('a', { payload: { type: 'json', value: '{"ok":true}' } })],
    })
    expect(ok.variants[0].payload).toEqual({ type: 'json', value: '{"ok":true}' })
  })
})

describe('variants per environment', () => {
  const variant = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    weight: 0,
    weightType: 'variable',
    stickiness: 'default',
    ...extra,
  })

  async function getVariants(flag: string, environment = 'development') {
    const response = await api.get<VariantListBody>(variantsPath(flag, environment))
    expect(response.status).toBe(200)
    return response.body.variants
  }

  /** Sends a variant list that must be refused with 400, and checks nothing was stored or recorded. */
  async function expectVariantsRejected(flag: string, body: unknown) {
    const stored = await getVariants(flag)
    const before = api.lastEventId()
    const response = await api.put<VariantListBody>(variantsPath(flag), body)
    expect(response.status).toBe(400)
    expect(errorOf(response).name).toBe('ValidationError')
    expect(await getVariants(flag)).toEqual(stored)
    expect(api.eventsSince(before)).toEqual([])
    return response
  }

  test('PUT keeps a fix weight and shares the rest between variable variants, answers with the computed list, and GET returns it', async () => {
    await api.newFlag(PROJECT, 'env-variants')
    const before = api.lastEventId()
    const response = await api.put<VariantListBody>(variantsPath('env-variants'), [
      variant('control', { weightType: 'fix', weight: 200 }),
      variant('blue', { weight: 10 }),
      variant('green', {
        weight: 900,
        stickiness: 'userId',
        payload: { type: 'string', value: 'hello' },
        overrides: [{ contextName: 'userId', values: ['u1', 'u2'] }],
      }),
    ])
    expect(response.status).toBe(200)
    const expected = [
      { name: 'blue', weight: 400, weightType: 'variable', stickiness: 'default', overrides: [] },
      { name: 'control', weight: 200, weightType: 'fix', stickiness: 'default', overrides: [] },
      {
        name: 'green',
        weight: 400,
        weightType: 'variable',
        stickiness: 'userId',
        payload: { type: 'string', value: 'hello' },
        overrides: [{ contextName: 'userId', values: ['u1', 'u2'] }],
      },
    ]
    expect(response.body.variants).toEqual(expected)
    expect(await getVariants('env-variants')).toEqual(expected)
    expect(await getVariants('env-variants', 'production')).toEqual([])

    const development = await environmentEntry('env-variants', 'development')
    expect(development.variantCount).toBe(3)
    expect(development.variants).toEqual(expected)
    expect((await environmentEntry('env-variants', 'production')).variantCount).toBe(0)
    const list = await api.listFlags(PROJECT)
    const listed = named(list.body.features, 'env-variants')
    expect(named(listed.environments, 'development').variantCount).toBe(3)
    expect(named(listed.environments, 'production').variantCount).toBe(0)

    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-environment-variants-updated',
      project: PROJECT,
      featureName: 'env-variants',
      environment: 'development',
      data: { variants: expected },
      preData: { variants: [] },
    })
  })

  test('variants without weightType or stickiness default to variable and default, with no overrides', async () => {
    await api.newFlag(PROJECT, 'env-variant-defaults')
    const response = await api.put<VariantListBody>(variantsPath('env-variant-defaults'), [{ name: 'only', weight: 0 }])
    expect(response.status).toBe(200)
    expect(response.body.variants).toEqual([
      { name: 'only', weight: 1000, weightType: 'variable', stickiness: 'default', overrides: [] },
    ])
  })

  test('three variable variants get 334, 333 and 333, summing to 1000', async () => {
    await api.newFlag(PROJECT, 'env-thirds')
    const response = await api.put<VariantListBody>(variantsPath('env-thirds'), [
      variant('a'),
      variant('b'),
      variant('c'),
    ])
    expect(response.status).toBe(200)
    expect(response.body.variants.map(v => v.weight)).toEqual([334, 333, 333])
    expect((await getVariants('env-thirds')).map(v => v.weight)).toEqual([334, 333, 333])
  })

  test('a second PUT replaces the list, and its event carries the previous list as preData', async () => {
    await api.newFlag(PROJECT, 'env-replace')
    const first = await api.put<VariantListBody>(variantsPath('env-replace'), [variant('a'), variant('b')])
    expect(first.status).toBe(200)
    const before = api.lastEventId()
    const second = await api.put<VariantListBody>(variantsPath('env-replace'), [variant('c')])
    expect(second.status).toBe(200)
    expect(await getVariants('env-replace')).toEqual(second.body.variants)
    const events = await api.eventsAfter(before)
    expect(events).toHaveLength(1)
    expect(events[0].type).toBe('feature-environment-variants-updated')
    expect(events[0].data).toEqual({ variants: second.body.variants })
    expect(events[0].preData).toEqual({ variants: first.body.variants })

    const cleared = await api.put<VariantListBody>(variantsPath('env-replace'), [])
    expect(cleared.status).toBe(200)
    expect(cleared.body.variants).toEqual([])
    expect((await environmentEntry('env-replace', 'development')).variantCount).toBe(0)
  })

  test('variants that are all fix must add up to exactly 1000', async () => {
    await api.newFlag(PROJECT, 'env-fix-only')
    await expectVariantsRejected('env-fix-only', [
      variant('a', { weightType: 'fix', weight: 500 }),
      variant('b', { weightType: 'fix', weight: 400 }),
    ])
    const ok = await api.put<VariantListBody>(variantsPath('env-fix-only'), [
      variant('a', { weightType: 'fix', weight: 500 }),
      variant('b', { weightType: 'fix', weight: 500 }),
    ])
    expect(ok.status).toBe(200)
    expect(ok.body.variants.map(v => v.weight)).toEqual([500, 500])
  })

  test('fix weights adding up to more than 1000 answer 400', async () => {
    await api.newFlag(PROJECT, 'env-fix-over')
    await expectVariantsRejected('env-fix-over', [
      variant('a', { weightType: 'fix', weight: 700 }),
      variant('b', { weightType: 'fix', weight: 400 }),
      variant('c'),
    ])
  })

  test('duplicate variant names answer 400', async () => {
    await api.newFlag(PROJECT, 'env-duplicates')
    await expectVariantsRejected('env-duplicates', [variant('twin'), variant('twin')])
  })

  test('a variant weight above 1000 or below 0 answers 400', async () => {
    await api.newFlag(PROJECT, 'env-weight-range')
    await expectVariantsRejected('env-weight-range', [variant('a', { weightType: 'fix', weight: 1001 })])
    await expectVariantsRejected('env-weight-range', [variant('a', { weight: 5000 })])
    await expectVariantsRejected('env-weight-range', [variant('a', { weight: -1 })])
  })

  test('a json payload must hold valid JSON text', async () => {
    await api.newFlag(PROJECT, 'env-json')
    await expectVariantsRejected('env-json', [variant('a', { payload: { type: 'json', value: '{"a":' } })])
    await expectVariantsRejected('env-json', [variant('a', { payload: { type: 'json', value: '' } })])
    const ok = await api.put<VariantListBody>(variantsPath('env-json'), [
      variant('a', { payload: { type: 'json', value: '{"a":[1,2]}' } }),
    ])
    expect(ok.status).toBe(200)
    expect(ok.body.variants[0].payload).toEqual({ type: 'json', value: '{"a":[1,2]}' })
  })

  test('a number payload must hold a number', async () => {
    await api.newFlag(PROJECT, 'env-number')
    for (const value of ['twelve', '', '12px', 'NaN', 'Infinity']) {
      await expectVariantsRejected('env-number', [variant('a', { payload: { type: 'number', value } })])
    }
    const ok = await api.put<VariantListBody>(variantsPath('env-number'), [
      variant('a', { payload: { type: 'number', value: '-42.5' } }),
    ])
    expect(ok.status).toBe(200)
    expect(ok.body.variants[0].payload).toEqual({ type: 'number', value: '-42.5' })
  })

  test('a payload type outside json, csv, string and number answers 400', async () => {
    await api.newFlag(PROJECT, 'env-payload-type')
    await expectVariantsRejected('env-payload-type', [variant('a', { payload: { type: 'xml', value: '<a/>' } })])
  })

  test('a body that is not a list of variants answers 400', async () => {
    await api.newFlag(PROJECT, 'env-not-list')
    await expectVariantsRejected('env-not-list', { variants: [variant('a')] })
    await expectVariantsRejected('env-not-list', [{ weight: 100 }])
  })

  test('variants of an unknown flag or unknown environment answer 404', async () => {
    await api.newFlag(PROJECT, 'env-variants-404')
    const before = api.lastEventId()
    expect((await api.get<VariantListBody>(variantsPath('no-such-flag'))).status).toBe(404)
    expect((await api.put<VariantListBody>(variantsPath('no-such-flag'), [variant('a')])).status).toBe(404)
    expect((await api.get<VariantListBody>(variantsPath('env-variants-404', 'nowhere'))).status).toBe(404)
    expect((await api.put<VariantListBody>(variantsPath('env-variants-404', 'nowhere'), [variant('a')])).status).toBe(
      404,
    )
    expect(
      (
        await api.put<VariantListBody>(variantsPath('env-variants-404', 'development', 'not-its-project'), [
          variant('a'),
        ])
      ).status,
    ).toBe(404)
    expect(await getVariants('env-variants-404')).toEqual([])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('setting variants of an archived flag answers 400 and changes nothing', async () => {
    await api.newFlag(PROJECT, 'env-variants-archived')
    expect((await api.delete(paths.flag('env-variants-archived'))).status).toBe(202)
    const before = api.lastEventId()
    const response = await api.put<VariantListBody>(variantsPath('env-variants-archived'), [variant('a')])
    expect(response.status).toBe(400)
    expect((await environmentEntry('env-variants-archived', 'development')).variantCount).toBe(0)
    expect(api.eventsSince(before)).toEqual([])
  })
})

describe('blank context fields in constraints', () => {
  test('a constraint on a blank context field is a 400 naming it, through strategies (create, update), segments and the import; nothing is written', async () => {
    expect((await api.createFlag(PROJECT, 'blank-ctx')).status).toBe(201)
    const created = await api.post<StrategyBody>(paths.strategies('blank-ctx'), { name: 'default' })
    expect(created.status).toBe(200)
    const segment = await api.post<{ id: number }>('/api/admin/segments', {
      name: 'blank-ctx-segment',
      constraints: [],
    })
    expect(segment.status).toBe(201)
    for (const contextName of ['', '  ']) {
      const constraints = [
        { contextName: 'userId', operator: 'IN', values: ['a'] },
        { contextName, operator: 'IN', values: ['a'] },
      ]
      const since = api.lastEventId()
      const answers = [
        await api.post(paths.strategies('blank-ctx'), { name: 'default', constraints }),
        await api.put(`${paths.strategies('blank-ctx')}/${created.body.id}`, { name: 'default', constraints }),
        await api.post('/api/admin/segments', { name: 'another-segment', constraints }),
        await api.put(`/api/admin/segments/${segment.body.id}`, { name: 'blank-ctx-segment', constraints }),
        await api.post('/api/admin/features-batch/import', {
          project: PROJECT,
          environment: 'development',
          data: {
            features: [{ name: 'blank-ctx' }],
            featureStrategies: [{ featureName: 'blank-ctx', name: 'default', constraints }],
            tagTypes: [],
          },
        }),
      ]
      for (const answer of answers) {
        expect({ status: answer.status, name: errorOf(answer).name }).toEqual({ status: 400, name: 'ValidationError' })
        expect(errorOf(answer).details?.[0]?.path ?? '').toEndWith('/constraints/1/contextName')
      }
      expect(api.eventsSince(since)).toEqual([])
    }
    const strategies = await api.get<StrategyBody[]>(paths.strategies('blank-ctx'))
    expect(strategies.body.map(strategy => strategy.constraints)).toEqual([[]])
  })
})

test('a flexibleRollout whose stickiness or groupId is blank gets the defaults, as when they are missing (never a blank field the SDK would hash at random)', async () => {
  expect((await api.createFlag(PROJECT, 'blank-rollout')).status).toBe(201)
  for (const [stickiness, groupId] of [
    ['', ''],
    [' ', '  '],
    ['\t', 'g'],
  ]) {
    const created = await api.post<StrategyBody>(paths.strategies('blank-rollout'), {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness, groupId },
    })
    expect(created.status).toBe(200)
    expect(created.body.parameters).toEqual({
      rollout: '50',
      stickiness: 'default',
      groupId: groupId.trim() ? groupId : 'blank-rollout',
    })
    const updated = await api.put<StrategyBody>(`${paths.strategies('blank-rollout')}/${created.body.id}`, {
      name: 'flexibleRollout',
      parameters: { rollout: '40', stickiness, groupId },
    })
    expect(updated.body.parameters.stickiness).toBe('default')
  }
})

describe('setStrategySortOrder', () => {
  test('moves strategies in one write, one strategy-updated event per strategy moved, and the lists follow', async () => {
    await api.newFlag(PROJECT, 'ordered')
    const first = await addStrategy('ordered', { name: 'default' })
    const second = await addStrategy('ordered', { name: 'userWithId', parameters: { userIds: 'alice' } })
    const third = await addStrategy('ordered', { name: 'remoteAddress', parameters: { IPs: '10.0.0.1' } })
    const since = api.events().at(-1)!.id
    const response = await api.post(`${strategiesPath('ordered', 'development')}/set-sort-order`, [
      { id: third.id, sortOrder: 0 },
      { id: first.id, sortOrder: 1 },
      { id: second.id, sortOrder: 2 },
    ])
    expect(response.status).toBe(200)
    expect((await strategiesOf('ordered')).map(s => s.id)).toEqual([third.id, first.id, second.id])
    expect((await environmentEntry('ordered', 'development')).strategies!.map((s: { id: string }) => s.id)).toEqual([
      third.id,
      first.id,
      second.id,
    ])
    const written = api.eventsSince(since)
    expect(written.map(event => event.type)).toEqual([
      'feature-strategy-update',
      'feature-strategy-update',
      'feature-strategy-update',
    ])
    expect(new Set(written.map(event => (event.data as { id: string }).id))).toEqual(
      new Set([first.id, second.id, third.id]),
    )
    // The same order again moves nothing and records nothing.
    expect(
      (await api.post(`${strategiesPath('ordered', 'development')}/set-sort-order`, [{ id: third.id, sortOrder: 0 }]))
        .status,
    ).toBe(200)
    expect(api.eventsSince(since)).toHaveLength(3)
  })

  test('an unknown strategy id is a 404 and nothing moves', async () => {
    await api.newFlag(PROJECT, 'unmoved')
    const first = await addStrategy('unmoved', { name: 'default' })
    const second = await addStrategy('unmoved', { name: 'userWithId', parameters: { userIds: 'bob' } })
    const since = api.events().at(-1)!.id
    const response = await api.post(`${strategiesPath('unmoved', 'development')}/set-sort-order`, [
      { id: second.id, sortOrder: 0 },
      { id: 'no-such-strategy', sortOrder: 1 },
    ])
    expect(response.status).toBe(404)
    expect(errorOf(response).message).toContain('no-such-strategy')
    expect((await strategiesOf('unmoved')).map(s => s.id)).toEqual([first.id, second.id])
    expect(api.eventsSince(since)).toEqual([])
  })
})
