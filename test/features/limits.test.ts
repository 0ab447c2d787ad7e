/**
 * The limits of src/features/limits.ts (docs/limits.md): each is reached through the API and then
 * passed by one, which must answer 400 ValidationError naming the limit, change nothing and record
 * no event. Collections too large to fill request by request are filled in one transaction first.
 */
import { describe, expect, test } from 'bun:test'
import { LIMITS, type LimitName } from '../../src/features/limits'
import type { ApiTokenRecord } from '../../src/features/tokens/tokens.records'
import type { FlagRecord } from '../../src/features/flags/flags.records'
import type { ProjectRecord } from '../../src/features/projects/projects.records'
import { SYSTEM_ACTOR } from '../../src/domain/events'
import {
  type Api,
  expectError,
  expectOk,
  type ApiResponse,
  type StrategyBody,
  type EnvironmentBody,
  errorOf,
  freshApiPerTest,
  storeSnapshot,
  paths,
} from '../helpers'

const strategiesPath = (flag: string, environment = 'development') =>
  `${paths.flag(flag)}/environments/${environment}/strategies`
const variantsPath = (flag: string, environment = 'development') =>
  `${paths.flag(flag)}/environments/${environment}/variants`

let api: Api
freshApiPerTest(fresh => (api = fresh))

/** One past the limit: a 400 naming it (and its number), with nothing changed and no event. */
async function expectLimitRefused(limit: LimitName, attempt: () => Promise<ApiResponse>, path?: string) {
  const before = storeSnapshot(api)
  const response = await attempt()
  expectError(response, 400, 'ValidationError', [limit, LIMITS[limit].max.toLocaleString('en-US')])
  if (path !== undefined) expect(errorOf(response).details).toEqual([expect.objectContaining({ path })])
  expect(storeSnapshot(api)).toEqual(before)
}

/** One past a limit the request schema holds: a 400 naming the field and the number, nothing changed. */
async function expectSchemaRefused(limit: LimitName, attempt: () => Promise<ApiResponse>, path?: string) {
  const before = storeSnapshot(api)
  const response = await attempt()
  expectError(response, 400, 'ValidationError', [String(LIMITS[limit].max)])
  if (path !== undefined) expect(errorOf(response).details).toContainEqual(expect.objectContaining({ path }))
  expect(storeSnapshot(api)).toEqual(before)
}

const strategy = (extra: Record<string, unknown> = {}) => ({ name: 'default', ...extra })

describe('limits per flag', () => {
  test(`tagsPerFlag: ${LIMITS.tagsPerFlag.max} tags are kept, one more answers 400; removing one makes room again`, async () => {
    expectOk(await api.createFlag('default', 'tagged'), 201)
    for (let i = 0; i < LIMITS.tagsPerFlag.max; i++)
      expectOk(await api.post('/api/admin/features/tagged/tags', { value: `tag-${i}` }), 201)
    await expectLimitRefused(
      'tagsPerFlag',
      () => api.post('/api/admin/features/tagged/tags', { value: 'one-too-many' }),
      '/value',
    )
    expect(api.services.store.state.flags.tagged.tags).toHaveLength(LIMITS.tagsPerFlag.max)
    // Every event of the flag carries at most the limit's worth of tags.
    expect(Math.max(...api.events().map(event => event.tags.length))).toBe(LIMITS.tagsPerFlag.max)
    expectOk(await api.delete('/api/admin/features/tagged/tags/simple/tag-0'))
    expectOk(await api.post('/api/admin/features/tagged/tags', { value: 'one-too-many' }), 201)
  })

  test(`strategiesPerFlagEnvironment: ${LIMITS.strategiesPerFlagEnvironment.max} strategies in one environment, one more answers 400; others are apart`, async () => {
    expectOk(await api.createFlag('default', 'busy'), 201)
    for (let i = 0; i < LIMITS.strategiesPerFlagEnvironment.max; i++)
      expectOk(await api.post(strategiesPath('busy'), strategy()))
    await expectLimitRefused(
      'strategiesPerFlagEnvironment',
      () => api.post(strategiesPath('busy'), strategy()),
      '/name',
    )
    // Changing one of them is not adding one.
    const [first] = api.services.store.state.flags.busy.environments.development.strategies
    expectOk(await api.put(`${strategiesPath('busy')}/${first.id}`, strategy({ title: 'changed' })))
    // The limit is per environment.
    expectOk(await api.post(strategiesPath('busy', 'production'), strategy()))
  })

  test('strategiesPerFlagEnvironment: turning on an environment whose strategies are all disabled, at the limit, answers 400 rather than add a default one', async () => {
    expectOk(await api.createFlag('default', 'all-off'), 201)
    for (let i = 0; i < LIMITS.strategiesPerFlagEnvironment.max; i++)
      expectOk(await api.post(strategiesPath('all-off'), strategy({ disabled: true })))
    await expectLimitRefused('strategiesPerFlagEnvironment', () =>
      api.toggle('default', 'all-off', 'development', true),
    )
    await expectLimitRefused('strategiesPerFlagEnvironment', () =>
      api.bulkToggle('default', 'development', ['all-off'], true),
    )
    // One below the limit, the default strategy is added as usual.
    const [first] = api.services.store.state.flags['all-off'].environments.development.strategies
    expectOk(await api.delete(`${strategiesPath('all-off')}/${first.id}`))
    expectOk(await api.toggle('default', 'all-off', 'development', true))
    expect(api.services.store.state.flags['all-off'].environments.development.strategies).toHaveLength(
      LIMITS.strategiesPerFlagEnvironment.max,
    )
  })

  test(`constraintsPerStrategy and valuesPerConstraint: ${LIMITS.constraintsPerStrategy.max} constraints of ${LIMITS.valuesPerConstraint.max} values are kept, one more of either answers 400, on add and on update`, async () => {
    expectOk(await api.createFlag('default', 'constrained'), 201)
    const values = (count: number) => Array.from({ length: count }, (_, i) => `user-${i}`)
    const constraints = (count: number, valueCount = 1) =>
      Array.from({ length: count }, (_, i) => ({
        contextName: `field${i}`,
        operator: 'IN',
        values: values(valueCount),
      }))
    const added = await api.post<StrategyBody>(
      strategiesPath('constrained'),
      strategy({ constraints: constraints(LIMITS.constraintsPerStrategy.max, LIMITS.valuesPerConstraint.max) }),
    )
    expectOk(added)
    expect(added.body.constraints).toHaveLength(LIMITS.constraintsPerStrategy.max)
    const strategyPath = `${strategiesPath('constrained')}/${added.body.id}`
    const add = (body: unknown) => api.post(strategiesPath('constrained'), body)
    const update = (body: unknown) => api.put(strategyPath, body)
    for (const send of [add, update]) {
      await expectSchemaRefused(
        'constraintsPerStrategy',
        () => send(strategy({ constraints: constraints(LIMITS.constraintsPerStrategy.max + 1) })),
        '/constraints',
      )
      await expectSchemaRefused(
        'valuesPerConstraint',
        () => send(strategy({ constraints: constraints(1, LIMITS.valuesPerConstraint.max + 1) })),
        '/constraints/0/values',
      )
    }
  })

  test(`variantsPerFlagEnvironment: ${LIMITS.variantsPerFlagEnvironment.max} variants are kept, one more answers 400; overrides and their values are held too`, async () => {
    expectOk(await api.createFlag('default', 'varied'), 201)
    const variants = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `v${i}`, weight: 0 }))
    expectOk(await api.put(variantsPath('varied'), variants(LIMITS.variantsPerFlagEnvironment.max)))
    await expectSchemaRefused('variantsPerFlagEnvironment', () =>
      api.put(variantsPath('varied'), variants(LIMITS.variantsPerFlagEnvironment.max + 1)),
    )
    const overrides = (count: number, valueCount = 1) =>
      Array.from({ length: count }, (_, i) => ({
        contextName: `field${i}`,
        values: Array.from({ length: valueCount }, (_, n) => `value-${n}`),
      }))
    expectOk(
      await api.put(variantsPath('varied'), [
        {
          name: 'a',
          weight: 0,
          overrides: overrides(LIMITS.overridesPerVariant.max, LIMITS.valuesPerOverride.max / 10),
        },
      ]),
    )
    expectOk(
      await api.put(variantsPath('varied'), [
        { name: 'a', weight: 0, overrides: overrides(1, LIMITS.valuesPerOverride.max) },
      ]),
    )
    await expectSchemaRefused(
      'overridesPerVariant',
      () =>
        api.put(variantsPath('varied'), [
          { name: 'a', weight: 0, overrides: overrides(LIMITS.overridesPerVariant.max + 1) },
        ]),
      '/0/overrides',
    )
    await expectSchemaRefused(
      'valuesPerOverride',
      () =>
        api.put(variantsPath('varied'), [
          { name: 'a', weight: 0, overrides: overrides(1, LIMITS.valuesPerOverride.max + 1) },
        ]),
      '/0/overrides/0/values',
    )
  })

  test(`dependenciesPerFlag: a flag may depend on ${LIMITS.dependenciesPerFlag.max} parents, one more answers 400; replacing one is not adding one`, async () => {
    expectOk(await api.createFlag('default', 'child'), 201)
    for (let i = 0; i <= LIMITS.dependenciesPerFlag.max; i++)
      expectOk(await api.createFlag('default', `parent-${i}`), 201)
    for (let i = 0; i < LIMITS.dependenciesPerFlag.max; i++)
      expectOk(await api.post(`${paths.flag('child')}/dependencies`, { feature: `parent-${i}` }))
    await expectLimitRefused(
      'dependenciesPerFlag',
      () => api.post(`${paths.flag('child')}/dependencies`, { feature: `parent-${LIMITS.dependenciesPerFlag.max}` }),
      '/feature',
    )
    expectOk(await api.post(`${paths.flag('child')}/dependencies`, { feature: 'parent-0', enabled: false }))
  })
})

describe('limits on collections', () => {
  test(`apiTokens: token ${LIMITS.apiTokens.max.toLocaleString('en-US')} is created, the next answers 400; deleting one makes room`, async () => {
    const store = api.services.store
    const admin = store.state.tokens['admin-bootstrap']
    const existing = Object.keys(store.state.tokens).length
    await store.transact(SYSTEM_ACTOR, tx => {
      for (let i = existing; i < LIMITS.apiTokens.max - 1; i++) {
        const token: ApiTokenRecord = {
          ...admin,
          tokenName: `filler-${i}`,
          role: 'viewer',
          secretHash: i.toString(16).padStart(64, '0'),
        }
        tx.put('tokens', token.tokenName, token)
      }
    })
    expectOk(await api.createToken({ tokenName: 'last-one', type: 'client' }), 201)
    expect(Object.keys(store.state.tokens)).toHaveLength(LIMITS.apiTokens.max)
    await expectLimitRefused(
      'apiTokens',
      () => api.createToken({ tokenName: 'one-too-many', type: 'admin' }),
      '/tokenName',
    )
    expectOk(await api.delete('/api/admin/api-tokens/filler-5'))
    expectOk(await api.createToken({ tokenName: 'one-too-many', type: 'admin' }), 201)
  })

  test(`flags: flag ${LIMITS.flags.max.toLocaleString('en-US')} (archived ones count) is created, the next answers 400; deleting an archived one makes room`, async () => {
    expectOk(await api.createFlag('default', 'template'), 201)
    const store = api.services.store
    const template = store.state.flags.template
    await store.transact(SYSTEM_ACTOR, tx => {
      for (let i = 1; i < LIMITS.flags.max - 1; i++) {
        const flag: FlagRecord = {
          ...template,
          name: `filler-${i}`,
          archived: i === 1,
          archivedAt: i === 1 ? tx.now : null,
        }
        tx.put('flags', flag.name, flag)
      }
    })
    expectOk(await api.createFlag('default', 'last-one'), 201)
    expect(Object.keys(store.state.flags)).toHaveLength(LIMITS.flags.max)
    await expectLimitRefused('flags', () => api.createFlag('default', 'one-too-many'), '/name')
    expectOk(await api.delete('/api/admin/archive/filler-1'))
    expectOk(await api.createFlag('default', 'one-too-many'), 201)
  })

  test(`projects: project ${LIMITS.projects.max} is created, the next answers 400`, async () => {
    const store = api.services.store
    const existing = Object.keys(store.state.projects).length
    await store.transact(SYSTEM_ACTOR, tx => {
      for (let i = existing; i < LIMITS.projects.max - 1; i++) {
        const project: ProjectRecord = { ...store.state.projects.default, id: `filler-${i}`, name: `Filler ${i}` }
        tx.put('projects', project.id, project)
      }
    })
    expectOk(await api.createProject('last-one'), 201)
    expect(Object.keys(store.state.projects)).toHaveLength(LIMITS.projects.max)
    await expectLimitRefused('projects', () => api.createProject('one-too-many'), '/id')
  })

  test(`environments: environment ${LIMITS.environments.max} is created, the next answers 400`, async () => {
    const existing = Object.keys(api.services.store.state.environments).length
    for (let i = existing; i < LIMITS.environments.max; i++)
      expectOk(await api.post<EnvironmentBody>('/api/admin/environments', { name: `env-${i}`, type: 'test' }), 201)
    expect(Object.keys(api.services.store.state.environments)).toHaveLength(LIMITS.environments.max)
    await expectLimitRefused(
      'environments',
      () => api.post<EnvironmentBody>('/api/admin/environments', { name: 'one-too-many', type: 'test' }),
      '/name',
    )
  })
})
