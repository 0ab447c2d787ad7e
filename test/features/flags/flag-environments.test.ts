/**
 * Flags archived, revived and deleted, turned on and off per environment, and bulk on
 * (bulk_features). The setup shared with flags.test.ts is flags.setup.ts.
 */
import { describe, expect, test } from 'bun:test'
import {
  tokenFor,
  withTimeout,
  expectStatus,
  type FlagListBody,
  type ProjectBody,
  type EnvironmentBody,
  ISO_MS,
  named,
} from '../../helpers'
import {
  api,
  useFreshApi,
  readFlag,
  environmentOf,
  listedNames,
  archivedNames,
  archive,
  on,
  types,
  flagEvent,
} from './flags.setup'

useFreshApi()

describe('archive, revive and delete', () => {
  test('DELETE archives the flag: 202, archived with archivedAt, lifecycle archived, out of the project list, into the archive', async () => {
    await api.newFlag('default', 'to-archive')
    await api.newFlag('default', 'stays-live')
    const before = api.lastEventId()
    const response = await api.delete('/api/admin/projects/default/features/to-archive')
    expectStatus(response, 202)

    const flag = await readFlag('default', 'to-archive')
    expect(flag.archived).toBe(true)
    expect(flag.archivedAt).toMatch(ISO_MS)
    expect(flag.lifecycle.stage).toBe('archived')
    expect(flag.lifecycle.enteredStageAt).toMatch(ISO_MS)
    expect(await listedNames('default')).toEqual(['stays-live'])
    expect(await archivedNames()).toEqual(['to-archive'])
    const archivedEntry = (await api.get<FlagListBody>('/api/admin/archive/features')).body.features[0]
    expect(archivedEntry).toMatchObject({ name: 'to-archive', project: 'default', archived: true })
    expect((await api.get<ProjectBody>('/api/admin/projects/default')).body.featureCount).toBe(1)

    const events = api.eventsSince(before)
    expect(types(events)).toContain('feature-archived')
    expect(events.find(e => e.type === 'feature-archived')).toMatchObject(
      flagEvent('feature-archived', 'default', 'to-archive'),
    )
  })

  test('archiving an unknown flag, or one of another project, answers 404', async () => {
    await api.newProject('elsewhere')
    await api.newFlag('elsewhere', 'not-here')
    expectStatus(await api.delete('/api/admin/projects/default/features/nothing'), 404, 'NotFoundError')
    expectStatus(await api.delete('/api/admin/projects/default/features/not-here'), 404, 'NotFoundError')
    expect((await readFlag('elsewhere', 'not-here')).archived).toBe(false)
  })

  test('reviving an archived flag returns it to the project list at lifecycle initial, off in every environment, and records feature-revived', async () => {
    await api.newFlag('default', 'phoenix')
    await on('default', 'phoenix', 'production')
    await on('default', 'phoenix', 'development')
    const client = await api.createToken({
      tokenName: 'sdk',
      type: 'client',
      projects: ['default'],
      environment: 'production',
    })
    await archive('default', 'phoenix')
    const before = api.lastEventId()
    const response = await api.post('/api/admin/projects/default/revive', { features: ['phoenix'] })
    expectStatus(response, 200)

    const flag = await readFlag('default', 'phoenix')
    expect(flag.archived).toBe(false)
    expect(flag.archivedAt).toBeNull()
    expect(flag.lifecycle.stage).toBe('initial')
    // As Unleash 6: a revived flag is off everywhere (its strategies kept), and SDKs are served it off.
    expect(
      flag.environments.map((environment: { name: string; enabled: boolean }) => [
        environment.name,
        environment.enabled,
      ]),
    ).toEqual([
      ['development', false],
      ['production', false],
    ])
    expect((await environmentOf('default', 'phoenix', 'production')).strategies).toHaveLength(1)
    const served = await api.get<{ features: { name: string; enabled: boolean }[] }>('/api/client/features', {
      token: client.body.secret,
    })
    expect(served.body.features.find(feature => feature.name === 'phoenix')).toMatchObject({ enabled: false })
    expect(await listedNames('default')).toEqual(['phoenix'])
    expect(await archivedNames()).toEqual([])
    const events = api.eventsSince(before)
    expect(types(events)).toEqual(['feature-revived', 'feature-environment-disabled', 'feature-environment-disabled'])
    expect(events[0]).toMatchObject(flagEvent('feature-revived', 'default', 'phoenix'))
    expect(
      events
        .slice(1)
        .map(event => event.environment)
        .sort(),
    ).toEqual(['development', 'production'])
    for (const event of events.slice(1))
      expect(event).toMatchObject({ data: { enabled: false }, preData: { enabled: true } })
  })

  test('reviving a flag that was off everywhere records feature-revived alone', async () => {
    await api.newFlag('default', 'quiet-phoenix')
    await archive('default', 'quiet-phoenix')
    const before = api.lastEventId()
    expectStatus(await api.post('/api/admin/projects/default/revive', { features: ['quiet-phoenix'] }), 200)
    expect(types(api.eventsSince(before))).toEqual(['feature-revived'])
  })

  test('reviving an unknown flag answers 404 and revives nothing else of the request', async () => {
    await api.newFlag('default', 'half-revive')
    await archive('default', 'half-revive')
    const before = api.lastEventId()
    expectStatus(
      await api.post('/api/admin/projects/default/revive', { features: ['half-revive', 'no-such-flag'] }),
      404,
      'NotFoundError',
    )
    expect((await readFlag('default', 'half-revive')).archived).toBe(true)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('deleting an archived flag removes it for good, frees its name and records feature-deleted', async () => {
    await api.newFlag('default', 'gone-for-good')
    await archive('default', 'gone-for-good')
    const before = api.lastEventId()
    const response = await api.delete('/api/admin/archive/gone-for-good')
    expectStatus(response, 200)

    expectStatus(await api.getFlag('default', 'gone-for-good'), 404, 'NotFoundError')
    expect(await archivedNames()).toEqual([])
    const events = api.eventsSince(before)
    expect(types(events)).toEqual(['feature-deleted'])
    expect(events[0]).toMatchObject(flagEvent('feature-deleted', 'default', 'gone-for-good'))

    expectStatus(await api.validateName({ name: 'gone-for-good' }), 200)
    const again = await api.newFlag('default', 'gone-for-good')
    expect(again.lifecycle.stage).toBe('initial')
  })

  test('deleting a live flag through the archive is refused with 400 and the flag stays', async () => {
    await api.newFlag('default', 'still-live')
    const before = api.lastEventId()
    expectStatus(await api.delete('/api/admin/archive/still-live'), 400, 'ValidationError')
    expect((await readFlag('default', 'still-live')).archived).toBe(false)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('deleting an unknown flag through the archive answers 404 NotFoundError', async () => {
    expectStatus(await api.delete('/api/admin/archive/never-existed'), 404, 'NotFoundError')
  })
})

describe('per environment on and off', () => {
  test('turning a flag on adds a 100 % flexibleRollout strategy and records feature-strategy-add and feature-environment-enabled', async () => {
    await api.newFlag('default', 'switch-on')
    const before = api.lastEventId()
    const response = await api.toggle('default', 'switch-on', 'development', true)
    expectStatus(response, 200)

    const flag = await readFlag('default', 'switch-on')
    expect(flag.enabled).toBe(true)
    const development = named(flag.environments, 'development')
    expect(development).toMatchObject({ enabled: true, hasStrategies: true, hasEnabledStrategies: true })
    expect(development.strategies).toHaveLength(1)
    expect(development.strategies?.[0]).toMatchObject({
      name: 'flexibleRollout',
      disabled: false,
      parameters: { rollout: '100' },
    })
    const production = flag.environments.find((e: { name: string }) => e.name === 'production')
    expect(production).toMatchObject({ enabled: false, hasStrategies: false })

    const events = api.eventsSince(before)
    expect(types(events).sort()).toEqual(['feature-environment-enabled', 'feature-strategy-add'])
    expect(events.find(e => e.type === 'feature-environment-enabled')).toMatchObject(
      flagEvent('feature-environment-enabled', 'default', 'switch-on', { environment: 'development' }),
    )
    const added = events.find(e => e.type === 'feature-strategy-add')!
    expect(added).toMatchObject(
      flagEvent('feature-strategy-add', 'default', 'switch-on', { environment: 'development' }),
    )
    expect(added.data).toMatchObject({ name: 'flexibleRollout', parameters: { rollout: '100' } })
  })

  test('turning a flag on keeps an enabled strategy it already has and adds none', async () => {
    await api.newFlag('default', 'has-strategy')
    const strategy = await api.post(
      '/api/admin/projects/default/features/has-strategy/environments/development/strategies',
      {
        name: 'userWithId',
        parameters: { userIds: 'alice' },
      },
    )
    expectStatus(strategy, 200)
    const before = api.lastEventId()
    await on('default', 'has-strategy', 'development')
    const development = await environmentOf('default', 'has-strategy', 'development')
    expect(development.strategies?.map(s => s.name)).toEqual(['userWithId'])
    expect(types(api.eventsSince(before))).toEqual(['feature-environment-enabled'])
  })

  test('turning a flag on whose only strategy is disabled adds a flexibleRollout strategy beside it', async () => {
    await api.newFlag('default', 'disabled-strategy')
    const strategy = await api.post(
      '/api/admin/projects/default/features/disabled-strategy/environments/development/strategies',
      {
        name: 'default',
        disabled: true,
      },
    )
    expectStatus(strategy, 200)
    await on('default', 'disabled-strategy', 'development')
    const development = await environmentOf('default', 'disabled-strategy', 'development')
    expect(development.strategies).toHaveLength(2)
    expect(development.strategies?.filter(s => !s.disabled)).toMatchObject([
      { name: 'flexibleRollout', parameters: { rollout: '100' } },
    ])
    expect(development.hasEnabledStrategies).toBe(true)
  })

  test('turning on a flag that is already on answers 200 and records no event', async () => {
    await api.newFlag('default', 'already-on')
    await on('default', 'already-on', 'development')
    const before = api.lastEventId()
    expectStatus(await api.toggle('default', 'already-on', 'development', true), 200)
    expect(api.eventsSince(before)).toEqual([])
    expect((await environmentOf('default', 'already-on', 'development')).strategies).toHaveLength(1)
  })

  test('turning a flag off records feature-environment-disabled and keeps its strategies', async () => {
    await api.newFlag('default', 'switch-off')
    await on('default', 'switch-off', 'production')
    const before = api.lastEventId()
    expectStatus(await api.toggle('default', 'switch-off', 'production', false), 200)
    const flag = await readFlag('default', 'switch-off')
    expect(flag.enabled).toBe(false)
    const production = flag.environments.find((e: { name: string }) => e.name === 'production')
    expect(production).toMatchObject({ enabled: false, hasStrategies: true, hasEnabledStrategies: true })
    const events = api.eventsSince(before)
    expect(types(events)).toEqual(['feature-environment-disabled'])
    expect(events[0]).toMatchObject(
      flagEvent('feature-environment-disabled', 'default', 'switch-off', { environment: 'production' }),
    )

    // On again: the kept strategy is enabled, so none is added.
    const again = api.lastEventId()
    await on('default', 'switch-off', 'production')
    expect(types(api.eventsSince(again))).toEqual(['feature-environment-enabled'])
    expect((await environmentOf('default', 'switch-off', 'production')).strategies).toHaveLength(1)
  })

  test('two requests turning the same flag on at once switch it once: one strategy, one enabled event', async () => {
    await api.newFlag('default', 'double-on')
    const before = api.lastEventId()
    const responses = await withTimeout(
      Promise.all([
        api.toggle('default', 'double-on', 'development', true),
        api.toggle('default', 'double-on', 'development', true),
      ]),
    )
    expect(responses.map(r => r.status)).toEqual([200, 200])
    expect(types(await api.eventsAfter(before)).sort()).toEqual(['feature-environment-enabled', 'feature-strategy-add'])
    expect((await environmentOf('default', 'double-on', 'development')).strategies).toHaveLength(1)
  })

  test('turning off a flag that is already off answers 200 and records no event', async () => {
    await api.newFlag('default', 'already-off')
    const before = api.lastEventId()
    expectStatus(await api.toggle('default', 'already-off', 'development', false), 200)
    expect(api.eventsSince(before)).toEqual([])
  })

  test("events about a tagged flag carry the flag's tags", async () => {
    await api.newFlag('default', 'tagged')
    expectStatus(await api.post('/api/admin/features/tagged/tags', { type: 'simple', value: 'team-a' }), 201)
    const before = api.lastEventId()
    await on('default', 'tagged', 'development')
    const events = await api.eventsAfter(before)
    expect(events.length).toBe(2)
    for (const event of events) expect(event.tags).toEqual([{ type: 'simple', value: 'team-a' }])
  })

  test('switch events carry the name and user id of the token that made the change', async () => {
    await api.newFlag('default', 'switched-by-bob')
    const secret = await tokenFor(api, 'bob')
    const before = api.lastEventId()
    expectStatus(await api.toggle('default', 'switched-by-bob', 'development', true, { token: secret }), 200)
    const events = await api.eventsAfter(before)
    expect(events.length).toBe(2)
    for (const event of events) {
      expect(event.createdBy).toBe('bob')
      expect(typeof event.createdByUserId).toBe('number')
      expect(event.createdByUserId).not.toBe(-42)
    }
  })

  test('first enabled in a development-type environment, the flag moves to lifecycle pre-live', async () => {
    const created = await api.newFlag('default', 'pre-live-flag')
    await on('default', 'pre-live-flag', 'development')
    const flag = await readFlag('default', 'pre-live-flag')
    expect(flag.lifecycle.stage).toBe('pre-live')
    expect(flag.lifecycle.enteredStageAt).toMatch(ISO_MS)
    expect(flag.lifecycle.enteredStageAt >= created.lifecycle.enteredStageAt).toBe(true)
  })

  test('first enabled in a production-type environment, the flag moves to lifecycle live', async () => {
    await api.newFlag('default', 'live-flag')
    await on('default', 'live-flag', 'production')
    expect((await readFlag('default', 'live-flag')).lifecycle.stage).toBe('live')
  })

  test('a live flag enabled later in development stays live', async () => {
    await api.newFlag('default', 'stays-live-stage')
    await on('default', 'stays-live-stage', 'production')
    const live = (await readFlag('default', 'stays-live-stage')).lifecycle
    await on('default', 'stays-live-stage', 'development')
    expect((await readFlag('default', 'stays-live-stage')).lifecycle).toEqual(live)
  })

  test('a pre-live flag enabled in production moves on to live', async () => {
    await api.newFlag('default', 'pre-then-live')
    await on('default', 'pre-then-live', 'development')
    await on('default', 'pre-then-live', 'production')
    expect((await readFlag('default', 'pre-then-live')).lifecycle.stage).toBe('live')
  })

  test('the lifecycle follows the environment type, not its name', async () => {
    expectStatus(
      await api.post<EnvironmentBody>('/api/admin/environments', { name: 'prod-eu', type: 'production' }),
      201,
    )
    expectStatus(await api.post<EnvironmentBody>('/api/admin/environments', { name: 'qa', type: 'test' }), 201)
    expectStatus(await api.post('/api/admin/projects/default/environments', { environment: 'prod-eu' }), 200)
    expectStatus(await api.post('/api/admin/projects/default/environments', { environment: 'qa' }), 200)
    await api.newFlag('default', 'eu-flag')
    await api.newFlag('default', 'qa-flag')
    await on('default', 'eu-flag', 'prod-eu')
    await on('default', 'qa-flag', 'qa')
    expect((await readFlag('default', 'eu-flag')).lifecycle.stage).toBe('live')
    expect((await readFlag('default', 'qa-flag')).lifecycle.stage).toBe('pre-live')
  })

  test('switching in an unknown environment answers 404 and records nothing', async () => {
    await api.newFlag('default', 'env-missing')
    const before = api.lastEventId()
    expectStatus(await api.toggle('default', 'env-missing', 'no-such-environment', true), 404, 'NotFoundError')
    expectStatus(await api.toggle('default', 'env-missing', 'no-such-environment', false), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test("switching in an environment that exists but is not connected to the flag's project answers 404", async () => {
    expectStatus(await api.post<EnvironmentBody>('/api/admin/environments', { name: 'unconnected', type: 'test' }), 201)
    await api.newFlag('default', 'not-connected')
    expectStatus(await api.toggle('default', 'not-connected', 'unconnected', true), 404, 'NotFoundError')
  })

  test('switching an unknown flag, or one of another project, answers 404', async () => {
    await api.newProject('foreign')
    await api.newFlag('foreign', 'foreign-flag')
    expectStatus(await api.toggle('default', 'unknown-flag', 'development', true), 404, 'NotFoundError')
    expectStatus(await api.toggle('default', 'foreign-flag', 'development', true), 404, 'NotFoundError')
    expect((await environmentOf('foreign', 'foreign-flag', 'development')).enabled).toBe(false)
  })

  test('switching an archived flag is refused with 400 and changes nothing', async () => {
    await api.newFlag('default', 'archived-switch')
    await archive('default', 'archived-switch')
    const before = api.lastEventId()
    expectStatus(await api.toggle('default', 'archived-switch', 'development', true), 400, 'ValidationError')
    expect(api.eventsSince(before)).toEqual([])
    const flag = await readFlag('default', 'archived-switch')
    expect(flag.environments.every((e: { enabled: boolean }) => !e.enabled)).toBe(true)
    expect(flag.lifecycle.stage).toBe('archived')
  })
})

describe('bulk on: POST /api/admin/projects/:projectId/bulk_features/environments/:environment/on', () => {
  test('every named flag is turned on, with one feature-environment-enabled event per flag', async () => {
    await api.newFlag('default', 'bulk-a')
    await api.newFlag('default', 'bulk-b')
    await api.newFlag('default', 'bulk-untouched')
    const before = api.lastEventId()
    const response = await api.bulkToggle('default', 'development', ['bulk-a', 'bulk-b'], true)
    expectStatus(response, 200)
    expect(response.text).toBe('')

    for (const name of ['bulk-a', 'bulk-b']) {
      const development = await environmentOf('default', name, 'development')
      expect(development).toMatchObject({ enabled: true, hasEnabledStrategies: true })
      expect(development.strategies).toMatchObject([{ name: 'flexibleRollout', parameters: { rollout: '100' } }])
      expect((await environmentOf('default', name, 'production')).enabled).toBe(false)
      expect((await readFlag('default', name)).lifecycle.stage).toBe('pre-live')
    }
    expect((await environmentOf('default', 'bulk-untouched', 'development')).enabled).toBe(false)

    const events = await api.eventsAfter(before)
    const enabled = events.filter(e => e.type === 'feature-environment-enabled')
    expect(enabled.map(e => e.featureName).sort()).toEqual(['bulk-a', 'bulk-b'])
    for (const event of enabled) {
      expect(event).toMatchObject(
        flagEvent('feature-environment-enabled', 'default', event.featureName!, { environment: 'development' }),
      )
    }
    expect(
      events
        .filter(e => e.type === 'feature-strategy-add')
        .map(e => e.featureName)
        .sort(),
    ).toEqual(['bulk-a', 'bulk-b'])
    expect(events).toHaveLength(4)
  })

  test('flags that are already on are left alone and get no event', async () => {
    await api.newFlag('default', 'was-on')
    await api.newFlag('default', 'was-off')
    await on('default', 'was-on', 'production')
    const before = api.lastEventId()
    expectStatus(await api.bulkToggle('default', 'production', ['was-on', 'was-off'], true), 200)
    const events = api.eventsSince(before)
    expect(events.filter(e => e.type === 'feature-environment-enabled').map(e => e.featureName)).toEqual(['was-off'])
    expect(events.every(e => e.featureName === 'was-off')).toBe(true)
    expect((await environmentOf('default', 'was-on', 'production')).strategies).toHaveLength(1)
  })

  test('a name given twice counts once', async () => {
    await api.newFlag('default', 'twice-named')
    const before = api.lastEventId()
    expectStatus(await api.bulkToggle('default', 'development', ['twice-named', 'twice-named'], true), 200)
    const events = api.eventsSince(before)
    expect(types(events).sort()).toEqual(['feature-environment-enabled', 'feature-strategy-add'])
    expect((await environmentOf('default', 'twice-named', 'development')).strategies).toHaveLength(1)
  })

  test('an empty list answers 200 and changes nothing', async () => {
    const before = api.lastEventId()
    expectStatus(await api.bulkToggle('default', 'development', [], true), 200)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('an unknown flag makes the whole request fail with 404: nothing changes and nothing is recorded', async () => {
    await api.newFlag('default', 'all-or-nothing')
    const before = api.lastEventId()
    expectStatus(
      await api.bulkToggle('default', 'development', ['all-or-nothing', 'no-such-flag'], true),
      404,
      'NotFoundError',
    )
    expect(api.eventsSince(before)).toEqual([])
    const development = await environmentOf('default', 'all-or-nothing', 'development')
    expect(development).toMatchObject({ enabled: false, hasStrategies: false })
    expect((await readFlag('default', 'all-or-nothing')).lifecycle.stage).toBe('initial')
  })

  test('an archived flag makes the whole request fail with 400 and nothing changes', async () => {
    await api.newFlag('default', 'live-one')
    await api.newFlag('default', 'archived-one')
    await archive('default', 'archived-one')
    const before = api.lastEventId()
    expectStatus(
      await api.bulkToggle('default', 'development', ['live-one', 'archived-one'], true),
      400,
      'ValidationError',
    )
    expect(api.eventsSince(before)).toEqual([])
    expect((await environmentOf('default', 'live-one', 'development')).enabled).toBe(false)
  })

  test('the first problem in request order is the one answered', async () => {
    await api.newFlag('default', 'fine')
    await api.newFlag('default', 'archived-early')
    await archive('default', 'archived-early')
    expectStatus(
      await api.bulkToggle('default', 'development', ['fine', 'archived-early', 'missing'], true),
      400,
      'ValidationError',
    )
    expectStatus(
      await api.bulkToggle('default', 'development', ['fine', 'missing', 'archived-early'], true),
      404,
      'NotFoundError',
    )
    expect((await environmentOf('default', 'fine', 'development')).enabled).toBe(false)
  })

  test('a flag of another project makes the whole request fail with 404 and nothing changes', async () => {
    await api.newProject('neighbour')
    await api.newFlag('neighbour', 'neighbour-flag')
    await api.newFlag('default', 'home-flag')
    const before = api.lastEventId()
    expectStatus(
      await api.bulkToggle('default', 'development', ['home-flag', 'neighbour-flag'], true),
      404,
      'NotFoundError',
    )
    expect(api.eventsSince(before)).toEqual([])
    expect((await environmentOf('default', 'home-flag', 'development')).enabled).toBe(false)
    expect((await environmentOf('neighbour', 'neighbour-flag', 'development')).enabled).toBe(false)
  })

  test('an unknown environment answers 404 and nothing changes', async () => {
    await api.newFlag('default', 'env-less')
    const before = api.lastEventId()
    expectStatus(await api.bulkToggle('default', 'no-such-environment', ['env-less'], true), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('an environment not connected to the project answers 404 and nothing changes', async () => {
    await api.newFlag('default', 'dev-gone')
    await api.newFlag('default', 'dev-gone-too')
    expectStatus(await api.delete('/api/admin/projects/default/environments/development'), 200)
    const before = api.lastEventId()
    expectStatus(
      await api.bulkToggle('default', 'development', ['dev-gone', 'dev-gone-too'], true),
      404,
      'NotFoundError',
    )
    expect(api.eventsSince(before)).toEqual([])
    expect((await readFlag('default', 'dev-gone')).environments.map((e: { name: string }) => e.name)).toEqual([
      'production',
    ])
  })

  test('an unknown project answers 404', async () => {
    await api.newFlag('default', 'orphan-request')
    expectStatus(await api.bulkToggle('no-such-project', 'development', ['orphan-request'], true), 404, 'NotFoundError')
    expect((await environmentOf('default', 'orphan-request', 'development')).enabled).toBe(false)
  })

  test('bulk on in a production-type environment moves the switched flags to lifecycle live', async () => {
    await api.newFlag('default', 'bulk-live-1')
    await api.newFlag('default', 'bulk-live-2')
    expectStatus(await api.bulkToggle('default', 'production', ['bulk-live-1', 'bulk-live-2'], true), 200)
    expect((await readFlag('default', 'bulk-live-1')).lifecycle.stage).toBe('live')
    expect((await readFlag('default', 'bulk-live-2')).lifecycle.stage).toBe('live')
  })
})
