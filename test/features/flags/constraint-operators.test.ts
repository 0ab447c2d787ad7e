/**
 * Constraint operators and values (sdk-api-contract §4) and variant weights and order, through the
 * admin API: every refusal is a 400 naming the field, stores nothing and records nothing.
 */
// Store-independent: it is about how constraints and variants are checked and normalised, above the store;
// what is kept is read back from the in-memory state, the same on either store.
import { describe, expect, test } from 'bun:test'
import { errorOf, paths, type Api, type StrategyBody, type VariantListBody, freshApiPerTest } from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const constraint = (operator: string, extra: Record<string, unknown>) => ({
  contextName: 'appVersion',
  operator,
  ...extra,
})

async function strategiesOf(flag: string) {
  return (await api.get<StrategyBody[]>(paths.strategies(flag))).body
}

/** Posts a strategy with one constraint; on 400, checks the path named and that nothing changed. */
async function post(flag: string, constraints: unknown[], refusedAt?: string) {
  const before = api.lastEventId()
  const stored = await strategiesOf(flag)
  const response = await api.post<StrategyBody>(paths.strategies(flag), { name: 'default', constraints })
  if (refusedAt === undefined) {
    expect({ status: response.status, body: response.status === 200 ? undefined : response.body }).toEqual({
      status: 200,
      body: undefined,
    })
    return response.body
  }
  expect({ status: response.status, path: errorOf(response).details?.[0]?.path }).toEqual({
    status: 400,
    path: refusedAt,
  })
  expect(errorOf(response).name).toBe('ValidationError')
  expect(await strategiesOf(flag)).toEqual(stored)
  expect(api.eventsSince(before)).toEqual([])
  return response.body
}

describe('constraint values per operator', () => {
  const cases: Record<string, { accepted: string[]; refused: string[] }> = {
    NUM_EQ: { accepted: ['5', '-1.5', '1e3'], refused: ['five', '', '1,5', '1e999'] },
    NUM_GT: { accepted: ['0'], refused: ['NaN'] },
    NUM_GTE: { accepted: ['.5'], refused: ['Infinity'] },
    NUM_LT: { accepted: ['100'], refused: ['0x10'] },
    NUM_LTE: { accepted: ['3.14'], refused: ['3.14.15'] },
    DATE_AFTER: {
      accepted: ['2024-05-01T10:00:00.000Z', '2024-05-01T10:00:00+02:00'],
      refused: ['2024-05-01', 'tomorrow', '2024-02-30T00:00:00Z'],
    },
    DATE_BEFORE: { accepted: ['2030-12-31T23:59:59Z'], refused: ['1714557600000'] },
    SEMVER_EQ: { accepted: ['1.2.3', '1.0.0-alpha.1+build.7'], refused: ['v2.0.0', '1.2', '01.2.3'] },
    SEMVER_GT: { accepted: ['2.0.0'], refused: ['v2.0.0'] },
    SEMVER_LT: { accepted: ['0.0.1'], refused: ['=1.0.0'] },
    SEMVER_GTE: { accepted: ['10.20.30'], refused: ['v2.0.0', '1.2.3.4'] },
    SEMVER_LTE: { accepted: ['1.0.0-rc.1'], refused: ['v2.0.0', ' 1.0.0'] },
    // RE2 syntax, as the Node SDK compiles it with re2js: named groups in its (?P<n>…) form and (?i) work.
    REGEX: {
      accepted: ['^beta-[0-9]+$', '(?:a|b)+c', '.*@example\\.com', '(?P<n>a)', '(?i)beta'],
      refused: ['foo(?=bar)', '(?<!x)y', '(a)\\1', '(unclosed', ''],
    },
  }

  for (const [operator, { accepted, refused }] of Object.entries(cases)) {
    test(`${operator}: ${accepted.join(', ')} accepted and stored in value; ${refused.map(v => JSON.stringify(v)).join(', ')} refused at /constraints/<i>/value`, async () => {
      const flag = `op-${operator.toLowerCase().replace('_', '-')}`
      await api.newFlag('default', flag)
      for (const value of accepted) {
        const strategy = await post(flag, [constraint('IN', { values: ['x'] }), constraint(operator, { value })])
        expect(strategy.constraints[1]).toMatchObject({ operator, value, inverted: false })
      }
      for (const value of refused)
        await post(flag, [constraint('IN', { values: ['x'] }), constraint(operator, { value })], '/constraints/1/value')
      // A single-value operator with no value at all is refused at the same place.
      await post(flag, [constraint(operator, {})], '/constraints/0/value')
      await post(flag, [constraint(operator, { values: [] })], '/constraints/0/value')
    })
  }

  test('the refusal of v2.0.0 says a strict semantic version without a leading v is needed', async () => {
    await api.newFlag('default', 'semver-v')
    const body = await post('semver-v', [constraint('SEMVER_GTE', { value: 'v2.0.0' })], '/constraints/0/value')
    expect(errorOf({ body } as never).message).toContain('no leading v')
  })

  test('a look-ahead in a REGEX value is refused and named as such', async () => {
    await api.newFlag('default', 'regex-lookahead')
    const body = await post('regex-lookahead', [constraint('REGEX', { value: 'foo(?=bar)' })], '/constraints/0/value')
    expect(errorOf({ body } as never).message).toContain('look-ahead')
  })

  test('a REGEX constraint cannot be inverted (400 at /constraints/<i>/inverted); caseInsensitive is kept', async () => {
    await api.newFlag('default', 'regex-inverted')
    await post('regex-inverted', [constraint('REGEX', { value: '^a', inverted: true })], '/constraints/0/inverted')
    const strategy = await post('regex-inverted', [
      constraint('REGEX', { value: '^a', caseInsensitive: true, inverted: false }),
    ])
    expect(strategy.constraints[0]).toEqual({
      contextName: 'appVersion',
      operator: 'REGEX',
      value: '^a',
      values: [],
      caseInsensitive: true,
      inverted: false,
    })
  })

  test('other operators may be inverted and case-insensitive, and keep both', async () => {
    await api.newFlag('default', 'inverted-ok')
    const strategy = await post('inverted-ok', [
      constraint('STR_CONTAINS', { values: ['Beta'], caseInsensitive: true, inverted: true }),
      constraint('SEMVER_LTE', { value: '1.0.0', inverted: true }),
    ])
    expect(strategy.constraints.map(c => [c.caseInsensitive, c.inverted])).toEqual([
      [true, true],
      [false, true],
    ])
  })

  test('IN, NOT_IN and STR_* refuse an empty or missing values list at /constraints/<i>/values', async () => {
    await api.newFlag('default', 'empty-values')
    for (const operator of ['IN', 'NOT_IN', 'STR_STARTS_WITH', 'STR_ENDS_WITH', 'STR_CONTAINS']) {
      await post('empty-values', [constraint(operator, { values: [] })], '/constraints/0/values')
      await post(
        'empty-values',
        [constraint('IN', { values: ['a'] }), constraint(operator, { value: 'a' })],
        '/constraints/1/values',
      )
      const ok = await post('empty-values', [constraint(operator, { values: ['a', 'b'] })])
      expect(ok.constraints[0].values).toEqual(['a', 'b'])
    }
  })

  test('IN_CIDR takes a non-empty values list of IP addresses and CIDR ranges; anything else is refused at /constraints/<i>/values/<j>', async () => {
    await api.newFlag('default', 'in-cidr')
    const ok = await post('in-cidr', [
      constraint('IN_CIDR', { values: ['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::1', '0.0.0.0/0'] }),
    ])
    expect(ok.constraints[0]).toMatchObject({
      operator: 'IN_CIDR',
      values: ['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::1', '0.0.0.0/0'],
    })
    for (const bad of ['10.0.0.0/33', '2001:db8::/129', '10.0.0', 'example.com', '10.0.0.0/', '10.0.0.0/8/8', '']) {
      await post('in-cidr', [constraint('IN_CIDR', { values: ['10.0.0.0/8', bad] })], '/constraints/0/values/1')
    }
    await post('in-cidr', [constraint('IN_CIDR', { values: [] })], '/constraints/0/values')
  })

  test('a single value sent as the only entry of values is stored in value, where SDKs read it', async () => {
    await api.newFlag('default', 'value-in-values')
    const strategy = await post('value-in-values', [constraint('NUM_GT', { values: ['7'] })])
    expect(strategy.constraints[0]).toMatchObject({ value: '7' })
    await post('value-in-values', [constraint('NUM_GT', { values: ['7', '8'] })], '/constraints/0/value')
  })
})

describe('variant weights and order (contract §4)', () => {
  const variant = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    weight: 0,
    weightType: 'variable',
    stickiness: 'default',
    ...extra,
  })

  test('strategy variants are stored sorted by name, whatever order they were sent in, with the same weights', async () => {
    await api.newFlag('default', 'sv-order')
    const sent = [variant('c'), variant('fixed', { weightType: 'fix', weight: 100 }), variant('a'), variant('b')]
    const answers = []
    for (const order of [sent, [...sent].reverse()]) {
      const response = await api.post<StrategyBody>(paths.strategies('sv-order'), { name: 'default', variants: order })
      expect(response.status).toBe(200)
      answers.push(response.body.variants.map(v => [v.name, v.weight]))
    }
    // 900 left for three variable variants: 300 each, no remainder.
    expect(answers).toEqual([
      [
        ['a', 300],
        ['b', 300],
        ['c', 300],
        ['fixed', 100],
      ],
      [
        ['a', 300],
        ['b', 300],
        ['c', 300],
        ['fixed', 100],
      ],
    ])
  })

  test('the remainder of the division goes to the first variable variants by name', async () => {
    await api.newFlag('default', 'sv-remainder')
    const response = await api.post<StrategyBody>(paths.strategies('sv-remainder'), {
      name: 'default',
      variants: [variant('z'), variant('y'), variant('m', { weightType: 'fix', weight: 2 }), variant('x')],
    })
    expect(response.status).toBe(200)
    // 998 over three: 333, 333, 332, the extra ones to x and y.
    expect(response.body.variants.map(v => [v.name, v.weight])).toEqual([
      ['m', 2],
      ['x', 333],
      ['y', 333],
      ['z', 332],
    ])
  })

  test('a strategy variant with an empty stickiness answers 400 at /variants/<i>/stickiness', async () => {
    await api.newFlag('default', 'sv-stickiness')
    const before = api.lastEventId()
    const response = await api.post<StrategyBody>(paths.strategies('sv-stickiness'), {
      name: 'default',
      variants: [variant('a'), variant('b', { stickiness: ' ' })],
    })
    expect(response.status).toBe(400)
    expect(errorOf(response).details?.[0]?.path).toBe('/variants/1/stickiness')
    expect(await strategiesOf('sv-stickiness')).toEqual([])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('flag variants per environment are stored sorted by name with the remainder to the first by name', async () => {
    await api.newFlag('default', 'fv-order')
    const response = await api.put<VariantListBody>(paths.variants('fv-order'), [
      variant('red'),
      variant('green'),
      variant('blue'),
    ])
    expect(response.status).toBe(200)
    const expected = [
      ['blue', 334],
      ['green', 333],
      ['red', 333],
    ]
    expect(response.body.variants.map(v => [v.name, v.weight])).toEqual(expected)
    const stored = await api.get<VariantListBody>(paths.variants('fv-order'))
    expect(stored.body.variants.map(v => [v.name, v.weight])).toEqual(expected)
  })
})
