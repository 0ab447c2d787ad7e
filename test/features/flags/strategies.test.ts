/**
 * Activation strategies (seed 2.4, 2.5, 2.7) and variants per environment (seed 2.6, 2.11, 8),
 * through the admin API: contract §6 (Strategies, Variants per environment) and §4 (events).
 */
import { describe, expect, test } from 'bun:test'
import { errorOf, paths, UUID, type StrategyBody, named } from '../../helpers'
import {
  api,
  useFreshApi,
  PROJECT,
  strategiesPath,
  strategyPath,
  addStrategy,
  environmentEntry,
  strategiesOf,
  expectStrategyRejected,
  constraint,
} from './strategies.setup'

useFreshApi()

describe('adding, reading, updating and removing strategies', () => {
  test('adding a strategy answers 200 with the stored strategy and records feature-strategy-add with it as data', async () => {
    await api.newFlag(PROJECT, 'add-one')
    const before = api.lastEventId()
    const response = await api.post<StrategyBody>(strategiesPath('add-one'), {
      name: 'flexibleRollout',
      title: 'Half of the users',
      parameters: { rollout: '50', stickiness: 'userId', groupId: 'checkout' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['a', 'b'] }],
    })
    expect(response.status).toBe(200)
    const strategy = response.body
    expect(strategy.id).toMatch(UUID)
    expect(strategy).toEqual({
      id: strategy.id,
      name: 'flexibleRollout',
      title: 'Half of the users',
      disabled: false,
      featureName: 'add-one',
      sortOrder: 0,
      segments: [],
      constraints: [
        { contextName: 'userId', operator: 'IN', caseInsensitive: false, inverted: false, values: ['a', 'b'] },
      ],
      variants: [],
      parameters: { rollout: '50', stickiness: 'userId', groupId: 'checkout' },
    })

    expect(await strategiesOf('add-one')).toEqual([strategy])
    const single = await api.get<StrategyBody>(strategyPath('add-one', strategy.id))
    expect(single.status).toBe(200)
    expect(single.body).toEqual(strategy)
    const development = await environmentEntry('add-one', 'development')
    expect(development.strategies).toEqual([strategy])
    expect(development.hasStrategies).toBe(true)
    expect(development.hasEnabledStrategies).toBe(true)
    expect(development.enabled).toBe(false)
    const production = await environmentEntry('add-one', 'production')
    expect(production.strategies).toEqual([])
    expect(production.hasStrategies).toBe(false)

    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-strategy-add',
      project: PROJECT,
      featureName: 'add-one',
      environment: 'development',
      data: strategy,
      tags: [],
    })
    expect(events[0].preData).toBeNull()
  })

  test('a new strategy goes after the existing ones unless a sortOrder is given, and lists are ordered by sortOrder', async () => {
    await api.newFlag(PROJECT, 'ordering')
    const first = await addStrategy('ordering', { name: 'default' })
    const second = await addStrategy('ordering', { name: 'userWithId', parameters: { userIds: 'a,b' } })
    const early = await addStrategy('ordering', { name: 'default', sortOrder: -5 })
    expect(first.sortOrder).toBe(0)
    expect(second.sortOrder).toBe(1)
    expect(early.sortOrder).toBe(-5)
    const listed = await strategiesOf('ordering')
    expect(listed.map(s => s.id)).toEqual([early.id, first.id, second.id])
    expect((await environmentEntry('ordering', 'development')).strategies?.map(s => s.id)).toEqual([
      early.id,
      first.id,
      second.id,
    ])
  })

  test('a disabled strategy counts for hasStrategies but not for hasEnabledStrategies', async () => {
    await api.newFlag(PROJECT, 'disabled-one')
    const strategy = await addStrategy('disabled-one', { name: 'default', disabled: true })
    expect(strategy.disabled).toBe(true)
    const entry = await environmentEntry('disabled-one', 'development')
    expect(entry.hasStrategies).toBe(true)
    expect(entry.hasEnabledStrategies).toBe(false)
    const list = await api.listFlags(PROJECT)
    const listed = named(list.body.features, 'disabled-one')
    const listedEntry = named(listed.environments, 'development')
    expect(listedEntry.hasStrategies).toBe(true)
    expect(listedEntry.hasEnabledStrategies).toBe(false)
  })

  test('updating a strategy replaces it under the same id and sortOrder and records feature-strategy-update with data and preData', async () => {
    await api.newFlag(PROJECT, 'update-one')
    const original = await addStrategy('update-one', {
      name: 'flexibleRollout',
      parameters: { rollout: '10', stickiness: 'default', groupId: 'g' },
    })
    const before = api.lastEventId()
    const response = await api.put<StrategyBody>(strategyPath('update-one', original.id), {
      name: 'flexibleRollout',
      title: 'More users',
      parameters: { rollout: '80', stickiness: 'default', groupId: 'g' },
      constraints: [{ contextName: 'environment', operator: 'NOT_IN', values: ['test'] }],
    })
    expect(response.status).toBe(200)
    const updated = response.body
    expect(updated.id).toBe(original.id)
    expect(updated.sortOrder).toBe(original.sortOrder)
    expect(updated.title).toBe('More users')
    expect(updated.parameters.rollout).toBe('80')
    expect(updated.constraints).toEqual([
      { contextName: 'environment', operator: 'NOT_IN', caseInsensitive: false, inverted: false, values: ['test'] },
    ])

    expect(await strategiesOf('update-one')).toEqual([updated])
    expect((await api.get<StrategyBody>(strategyPath('update-one', original.id))).body).toEqual(updated)

    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-strategy-update',
      project: PROJECT,
      featureName: 'update-one',
      environment: 'development',
      data: updated,
      preData: original,
    })
  })

  test('removing a strategy answers 200, drops it and records feature-strategy-remove with the removed strategy as preData', async () => {
    await api.newFlag(PROJECT, 'remove-one')
    const kept = await addStrategy('remove-one', { name: 'default' })
    const removed = await addStrategy('remove-one', { name: 'userWithId', parameters: { userIds: 'x' } })
    const before = api.lastEventId()
    const response = await api.delete(strategyPath('remove-one', removed.id))
    expect(response.status).toBe(200)
    expect(await strategiesOf('remove-one')).toEqual([kept])
    expect((await api.get<StrategyBody>(strategyPath('remove-one', removed.id))).status).toBe(404)

    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-strategy-remove',
      project: PROJECT,
      featureName: 'remove-one',
      environment: 'development',
      preData: removed,
    })
    expect(events[0].data).toBeNull()
  })

  test('strategy routes answer 404 for an unknown flag and record nothing', async () => {
    const before = api.lastEventId()
    const id = crypto.randomUUID()
    const answers = [
      await api.get<StrategyBody[]>(strategiesPath('no-such-flag')),
      await api.post<StrategyBody>(strategiesPath('no-such-flag'), { name: 'default' }),
      await api.get<StrategyBody>(strategyPath('no-such-flag', id)),
      await api.put<StrategyBody>(strategyPath('no-such-flag', id), { name: 'default' }),
      await api.delete(strategyPath('no-such-flag', id)),
    ]
    expect(answers.map(a => a.status)).toEqual([404, 404, 404, 404, 404])
    for (const answer of answers) expect(errorOf(answer).name).toBe('NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('strategy routes answer 404 for a flag addressed under a project it does not belong to', async () => {
    await api.newFlag(PROJECT, 'elsewhere')
    const strategy = await addStrategy('elsewhere', { name: 'default' })
    const before = api.lastEventId()
    const answers = [
      await api.get<StrategyBody[]>(strategiesPath('elsewhere', 'development', 'not-its-project')),
      await api.post<StrategyBody>(strategiesPath('elsewhere', 'development', 'not-its-project'), { name: 'default' }),
      await api.get<StrategyBody>(strategyPath('elsewhere', strategy.id, 'development', 'not-its-project')),
      await api.put<StrategyBody>(strategyPath('elsewhere', strategy.id, 'development', 'not-its-project'), {
        name: 'default',
      }),
      await api.delete(strategyPath('elsewhere', strategy.id, 'development', 'not-its-project')),
    ]
    expect(answers.map(a => a.status)).toEqual([404, 404, 404, 404, 404])
    expect(await strategiesOf('elsewhere')).toEqual([strategy])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('strategy routes answer 404 for an unknown environment and record nothing', async () => {
    await api.newFlag(PROJECT, 'env-unknown')
    const strategy = await addStrategy('env-unknown', { name: 'default' })
    const before = api.lastEventId()
    const answers = [
      await api.get<StrategyBody[]>(strategiesPath('env-unknown', 'nowhere')),
      await api.post<StrategyBody>(strategiesPath('env-unknown', 'nowhere'), { name: 'default' }),
      await api.get<StrategyBody>(strategyPath('env-unknown', strategy.id, 'nowhere')),
      await api.put<StrategyBody>(strategyPath('env-unknown', strategy.id, 'nowhere'), { name: 'default' }),
      await api.delete(strategyPath('env-unknown', strategy.id, 'nowhere')),
    ]
    expect(answers.map(a => a.status)).toEqual([404, 404, 404, 404, 404])
    expect(api.eventsSince(before)).toEqual([])
  })

  test("strategy routes answer 404 for an environment that exists but is not connected to the flag's project", async () => {
    await api.newFlag(PROJECT, 'env-disconnected')
    const disconnect = await api.delete(`/api/admin/projects/${PROJECT}/environments/production`)
    expect(disconnect.status).toBe(200)
    const before = api.lastEventId()
    const list = await api.get<StrategyBody[]>(strategiesPath('env-disconnected', 'production'))
    const add = await api.post<StrategyBody>(strategiesPath('env-disconnected', 'production'), { name: 'default' })
    expect(list.status).toBe(404)
    expect(add.status).toBe(404)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('reading, updating or removing an unknown strategy id answers 404 and changes nothing', async () => {
    await api.newFlag(PROJECT, 'no-strategy')
    const existing = await addStrategy('no-strategy', { name: 'default' })
    const id = crypto.randomUUID()
    const before = api.lastEventId()
    const get = await api.get<StrategyBody>(strategyPath('no-strategy', id))
    const put = await api.put<StrategyBody>(strategyPath('no-strategy', id), { name: 'default' })
    const del = await api.delete(strategyPath('no-strategy', id))
    expect([get.status, put.status, del.status]).toEqual([404, 404, 404])
    expect(errorOf(del).name).toBe('NotFoundError')
    expect(await strategiesOf('no-strategy')).toEqual([existing])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a strategy id of another environment is unknown in this one (404)', async () => {
    await api.newFlag(PROJECT, 'cross-env')
    const production = await addStrategy('cross-env', { name: 'default' }, 'production')
    const response = await api.get<StrategyBody>(strategyPath('cross-env', production.id, 'development'))
    expect(response.status).toBe(404)
    const removal = await api.delete(strategyPath('cross-env', production.id, 'development'))
    expect(removal.status).toBe(404)
    expect(await strategiesOf('cross-env', 'production')).toEqual([production])
  })

  test('adding, updating or removing a strategy of an archived flag answers 400 and changes nothing', async () => {
    await api.newFlag(PROJECT, 'archived-strategies')
    const strategy = await addStrategy('archived-strategies', { name: 'default' })
    expect((await api.delete(paths.flag('archived-strategies'))).status).toBe(202)
    const before = api.lastEventId()
    const add = await api.post<StrategyBody>(strategiesPath('archived-strategies'), { name: 'default' })
    const put = await api.put<StrategyBody>(strategyPath('archived-strategies', strategy.id), {
      name: 'userWithId',
      parameters: { userIds: 'a' },
    })
    const del = await api.delete(strategyPath('archived-strategies', strategy.id))
    expect([add.status, put.status, del.status]).toEqual([400, 400, 400])
    expect(add.body.name).toBe('ValidationError')
    const flag = await api.getFlag(PROJECT, 'archived-strategies')
    expect(flag.body.archived).toBe(true)
    expect(named(flag.body.environments, 'development').strategies).toEqual([strategy])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a strategy with an unknown name answers 400', async () => {
    await api.newFlag(PROJECT, 'unknown-strategy')
    await expectStrategyRejected('unknown-strategy', { name: 'no-such-strategy' })
  })

  test('a strategy without a name answers 400 (name is required)', async () => {
    await api.newFlag(PROJECT, 'nameless-strategy')
    await expectStrategyRejected('nameless-strategy', {})
    await expectStrategyRejected('nameless-strategy', { title: 'No name', parameters: { rollout: '50' } })
  })

  test('adding a strategy without a JSON body answers 415 and stores nothing', async () => {
    await api.newFlag(PROJECT, 'bodiless-strategy')
    const before = api.lastEventId()
    const none = await api.post<StrategyBody>(strategiesPath('bodiless-strategy'))
    expect(none.status).toBe(415)
    expect(none.body.name).toBe('ContentTypeerror')
    const text = await api.post<StrategyBody>(strategiesPath('bodiless-strategy'), undefined, {
      raw: 'default',
      headers: { 'content-type': 'text/plain' },
    })
    expect(text.status).toBe(415)
    expect(await strategiesOf('bodiless-strategy')).toEqual([])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a rejected update leaves the strategy as it was and records nothing', async () => {
    await api.newFlag(PROJECT, 'bad-update')
    const strategy = await addStrategy('bad-update', { name: 'default' })
    const before = api.lastEventId()
    const response = await api.put<StrategyBody>(strategyPath('bad-update', strategy.id), {
      name: 'default',
      constraints: [constraint('NUM_GT', { value: 'many' })],
    })
    expect(response.status).toBe(400)
    expect((await api.get<StrategyBody>(strategyPath('bad-update', strategy.id))).body).toEqual(strategy)
    expect(api.eventsSince(before)).toEqual([])
  })
})

describe('flexibleRollout parameters', () => {
  test('a flexibleRollout rollout from 0 to 100 is accepted and numbers are stored as strings', async () => {
    await api.newFlag(PROJECT, 'rollout-ok')
    const zero = await addStrategy('rollout-ok', {
      name: 'flexibleRollout',
      parameters: { rollout: '0', stickiness: 'default', groupId: 'g' },
    })
    const hundred = await addStrategy('rollout-ok', {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'g' },
    })
    const numeric = await addStrategy('rollout-ok', {
      name: 'flexibleRollout',
      parameters: { rollout: 42, stickiness: 'default', groupId: 'g' },
    })
    expect(zero.parameters.rollout).toBe('0')
    expect(hundred.parameters.rollout).toBe('100')
    expect(numeric.parameters.rollout).toBe('42')
    expect((await strategiesOf('rollout-ok')).map(s => s.parameters.rollout)).toEqual(['0', '100', '42'])
  })

  test('a flexibleRollout rollout outside 0..100 answers 400', async () => {
    await api.newFlag(PROJECT, 'rollout-bad')
    for (const rollout of ['101', '-1', '1000', 'half', 150, -10]) {
      await expectStrategyRejected('rollout-bad', {
        name: 'flexibleRollout',
        parameters: { rollout, stickiness: 'default', groupId: 'g' },
      })
    }
  })

  test('an update to a flexibleRollout rollout outside 0..100 answers 400', async () => {
    await api.newFlag(PROJECT, 'rollout-bad-update')
    const strategy = await addStrategy('rollout-bad-update', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'g' },
    })
    const response = await api.put<StrategyBody>(strategyPath('rollout-bad-update', strategy.id), {
      name: 'flexibleRollout',
      parameters: { rollout: '101', stickiness: 'default', groupId: 'g' },
    })
    expect(response.status).toBe(400)
    expect((await api.get<StrategyBody>(strategyPath('rollout-bad-update', strategy.id))).body.parameters.rollout).toBe(
      '50',
    )
  })
})

describe('constraints (seed 2.5)', () => {
  const fitting: Record<string, Record<string, unknown>> = {
    NOT_IN: { values: ['a', 'b'] },
    IN: { values: ['a'] },
    STR_ENDS_WITH: { values: ['.com'] },
    STR_STARTS_WITH: { values: ['beta-'] },
    STR_CONTAINS: { values: ['mid'] },
    NUM_EQ: { value: '5' },
    NUM_GT: { value: '-1.5' },
    NUM_GTE: { value: '0' },
    NUM_LT: { value: '100' },
    NUM_LTE: { value: '3.14' },
    DATE_AFTER: { value: '2024-05-01T10:00:00.000Z' },
    DATE_BEFORE: { value: '2030-12-31T23:59:59+02:00' },
    SEMVER_EQ: { value: '1.2.3' },
    SEMVER_GT: { value: '1.2.3-beta.1' },
    SEMVER_LT: { value: '10.0.0+build.5' },
    SEMVER_GTE: { value: '2.0.0' },
    SEMVER_LTE: { value: '0.0.1-rc.0' },
    REGEX: { value: '^beta-[0-9]+$' },
    IN_CIDR: { values: ['10.0.0.0/8', '2001:db8::1'] },
  }

  test('every operator of contract §4, and IN_CIDR, is accepted with a fitting value and stored as given', async () => {
    await api.newFlag(PROJECT, 'all-operators')
    const constraints = Object.entries(fitting).map(([operator, extra]) => constraint(operator, extra))
    expect(constraints).toHaveLength(19)
    const strategy = await addStrategy('all-operators', { name: 'default', constraints })
    expect(strategy.constraints.map(c => c.operator)).toEqual(Object.keys(fitting))
    for (const [index, [, extra]] of Object.entries(fitting).entries()) {
      expect(strategy.constraints[index]).toMatchObject(extra)
    }
    const stored = await api.get<StrategyBody>(strategyPath('all-operators', strategy.id))
    expect(stored.body.constraints).toEqual(strategy.constraints)
  })

  test('each operator is accepted on its own', async () => {
    await api.newFlag(PROJECT, 'each-operator')
    for (const [operator, extra] of Object.entries(fitting)) {
      const response = await api.post<StrategyBody>(strategiesPath('each-operator'), {
        name: 'default',
        constraints: [constraint(operator, extra)],
      })
      expect({ operator, status: response.status }).toEqual({ operator, status: 200 })
    }
    expect(await strategiesOf('each-operator')).toHaveLength(19)
  })

  test("an operator outside contract §4's list and IN_CIDR answers 400", async () => {
    await api.newFlag(PROJECT, 'bad-operator')
    for (const operator of ['IN_RANGE', 'in_cidr', 'in', 'NUM_NE', 'DATE_EQ', 'SEMVER_NE', 'regex', '']) {
      const response = await expectStrategyRejected('bad-operator', {
        name: 'default',
        constraints: [constraint(operator, { values: ['a'], value: '1' })],
      })
      expect(errorOf(response).name).toBe('ValidationError')
    }
  })

  test('caseInsensitive and inverted default to false and keep the values given', async () => {
    await api.newFlag(PROJECT, 'constraint-flags')
    const strategy = await addStrategy('constraint-flags', {
      name: 'default',
      constraints: [
        { contextName: 'userId', operator: 'IN', values: ['a'] },
        { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@x.io'], caseInsensitive: true, inverted: true },
      ],
    })
    expect(strategy.constraints[0]).toMatchObject({ caseInsensitive: false, inverted: false })
    expect(strategy.constraints[1]).toMatchObject({ caseInsensitive: true, inverted: true })
    const stored = await api.get<StrategyBody>(strategyPath('constraint-flags', strategy.id))
    expect(stored.body.constraints[0]).toMatchObject({ caseInsensitive: false, inverted: false })
    expect(stored.body.constraints[1]).toMatchObject({ caseInsensitive: true, inverted: true })
  })

  test('NUM_* operators need a numeric value', async () => {
    await api.newFlag(PROJECT, 'num-values')
    for (const operator of ['NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE']) {
      for (const extra of [{ value: 'ten' }, { value: '' }, { value: '1,5' }, { value: '12abc' }, {}]) {
        await expectStrategyRejected('num-values', { name: 'default', constraints: [constraint(operator, extra)] })
      }
      const ok = await api.post<StrategyBody>(strategiesPath('num-values'), {
        name: 'default',
        constraints: [constraint(operator, { value: '42' })],
      })
      expect(ok.status).toBe(200)
    }
  })

  test('DATE_* operators need an RFC 3339 date-time value', async () => {
    await api.newFlag(PROJECT, 'date-values')
    for (const operator of ['DATE_AFTER', 'DATE_BEFORE']) {
      for (const extra of [
        { value: 'yesterday' },
        { value: '2024-05-01' },
        { value: '2024-13-01T00:00:00Z' },
        { value: '2024-05-01T10:00:00' },
        { value: '1714557600000' },
        {},
      ]) {
        await expectStrategyRejected('date-values', { name: 'default', constraints: [constraint(operator, extra)] })
      }
      for (const value of ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.123Z', '2024-05-01T10:00:00-05:00']) {
        const ok = await api.post<StrategyBody>(strategiesPath('date-values'), {
          name: 'default',
          constraints: [constraint(operator, { value })],
        })
        expect({ value, status: ok.status }).toEqual({ value, status: 200 })
      }
    }
  })

  test('DATE_* operators refuse a calendar date that does not exist (RFC 3339 date-mday)', async () => {
    await api.newFlag(PROJECT, 'date-impossible')
    for (const value of ['2024-02-30T00:00:00Z', '2023-02-29T12:00:00Z', '2024-04-31T00:00:00Z']) {
      const response = await api.post<StrategyBody>(strategiesPath('date-impossible'), {
        name: 'default',
        constraints: [constraint('DATE_AFTER', { value })],
      })
      expect({ value, status: response.status }).toEqual({ value, status: 400 })
    }
    expect(await strategiesOf('date-impossible')).toEqual([])
  })

  test('SEMVER_* operators need a valid semantic version: 1.2.3 is accepted, 1.2 is not', async () => {
    await api.newFlag(PROJECT, 'semver-values')
    for (const operator of ['SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT']) {
      for (const extra of [
        { value: '1.2' },
        { value: '1' },
        { value: '1.2.3.4' },
        { value: 'latest' },
        { value: '01.2.3' },
        {},
      ]) {
        await expectStrategyRejected('semver-values', { name: 'default', constraints: [constraint(operator, extra)] })
      }
      const ok = await api.post<StrategyBody>(strategiesPath('semver-values'), {
        name: 'default',
        constraints: [constraint(operator, { value: '1.2.3' })],
      })
      expect(ok.status).toBe(200)
      expect(ok.body.constraints[0].value).toBe('1.2.3')
    }
  })

  test('IN, NOT_IN and STR_* operators need at least one entry in values', async () => {
    await api.newFlag(PROJECT, 'list-values')
    for (const operator of ['IN', 'NOT_IN', 'STR_ENDS_WITH', 'STR_STARTS_WITH', 'STR_CONTAINS']) {
      await expectStrategyRejected('list-values', {
        name: 'default',
        constraints: [constraint(operator, { values: [] })],
      })
      await expectStrategyRejected('list-values', { name: 'default', constraints: [constraint(operator, {})] })
    }
  })

  test('a constraint without contextName or operator answers 400', async () => {
    await api.newFlag(PROJECT, 'constraint-shape')
    await expectStrategyRejected('constraint-shape', {
      name: 'default',
      constraints: [{ operator: 'IN', values: ['a'] }],
    })
    await expectStrategyRejected('constraint-shape', {
      name: 'default',
      constraints: [{ contextName: 'userId', values: ['a'] }],
    })
  })
})
