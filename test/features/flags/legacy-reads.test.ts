/**
 * Reads Unleash scripts still use: the deprecated list of all flags (GET /api/admin/features,
 * getAllToggles) and of recent events (GET /api/admin/events, getEvents), and one environment of a
 * flag (GET .../features/:featureName/environments/:environment, getFeatureEnvironment).
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import {
  type Api,
  type EventBody,
  type FlagBody,
  type FlagEnvironmentBody,
  type FlagListBody,
  expectError,
  expectOk,
  freshApiPerTest,
  paths,
  tokenFor,
} from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface EventListBody {
  version: number
  events: EventBody[]
  totalEvents: number
}

const allFlags = (query = '', token?: string) => api.get<FlagListBody>(`/api/admin/features${query}`, { token })
/** The names listed, sorted: flags made in the same millisecond are listed by name, so order is not what these tests check. */
const names = (response: { body: FlagListBody }) => response.body.features.map(feature => feature.name).sort()

describe('GET /api/admin/features (getAllToggles)', () => {
  test("lists the live flags of every project in Unleash's shape, each as getFeatures lists it", async () => {
    await api.newProject('alpha')
    await api.newFlag('default', 'one')
    await api.newFlag('alpha', 'two')
    await api.newFlag('alpha', 'gone')
    expectOk(await api.delete(paths.flag('gone', 'alpha')), 202)
    const response = await allFlags()
    expectOk(response)
    expect(response.body.version).toBe(1)
    expect(names(response)).toEqual(['one', 'two'])
    const project = await api.listFlags('alpha')
    expect(response.body.features.find(feature => feature.name === 'two')).toEqual(project.body.features[0])
  })

  test('orders the flags by createdAt, then name, across projects', async () => {
    await api.newProject('alpha')
    setSystemTime(new Date('2026-03-01T10:00:00.000Z'))
    await api.newFlag('alpha', 'late-b')
    await api.newFlag('default', 'late-a')
    setSystemTime(new Date('2026-02-01T10:00:00.000Z'))
    await api.newFlag('alpha', 'early')
    const response = await allFlags()
    expect(response.body.features.map(feature => feature.name)).toEqual(['early', 'late-a', 'late-b'])
  })

  test('project (repeatable), tag and namePrefix narrow the list, ANDed', async () => {
    await api.newProject('alpha')
    await api.newProject('beta')
    await api.newFlag('default', 'web-one')
    await api.newFlag('alpha', 'web-two')
    await api.newFlag('alpha', 'api-three')
    await api.newFlag('beta', 'web-four')
    expectOk(await api.post(paths.tags('web-two'), { value: 'team-x' }), 201)
    expectOk(await api.post(paths.tags('web-four'), { value: 'team-x' }), 201)
    expect(names(await allFlags('?project=alpha'))).toEqual(['api-three', 'web-two'])
    expect(names(await allFlags('?project=alpha&project=beta'))).toEqual(['api-three', 'web-four', 'web-two'])
    expect(names(await allFlags('?namePrefix=WEB-'))).toEqual(['web-four', 'web-one', 'web-two'])
    expect(names(await allFlags('?tag=simple:team-x'))).toEqual(['web-four', 'web-two'])
    expect(names(await allFlags('?tag=simple:team-x&project=beta'))).toEqual(['web-four'])
    expect(names(await allFlags('?project=nowhere'))).toEqual([])
  })

  test('a token limited to some projects sees only their flags', async () => {
    await api.newProject('alpha')
    await api.newFlag('default', 'one')
    await api.newFlag('alpha', 'two')
    const scoped = await tokenFor(api, 'alpha-reader', { role: 'viewer', projects: ['alpha'] })
    expect(names(await allFlags('', scoped))).toEqual(['two'])
    expect(names(await allFlags('?project=default', scoped))).toEqual([])
  })

  test('a malformed tag or an unknown parameter is 400 naming it; no token is 401', async () => {
    const badTag = await allFlags('?tag=notag')
    expectError(badTag, 400, 'ValidationError')
    expect(JSON.stringify(badTag.body)).toContain('tag')
    const unknown = await allFlags('?colour=blue')
    expectError(unknown, 400, 'ValidationError')
    expect(JSON.stringify(unknown.body)).toContain('colour')
    expectError(await api.get('/api/admin/features', { token: null }), 401, 'AuthenticationRequired')
  })
})

describe('GET /api/admin/events (getEvents)', () => {
  test('answers the newest events, newest first, as the event log holds them, with version and totalEvents', async () => {
    await api.newProject('alpha')
    await api.newFlag('alpha', 'one')
    const response = await api.get<EventListBody>('/api/admin/events')
    expectOk(response)
    expect(response.body.version).toBe(1)
    const log = api.events().reverse()
    expect(response.body.totalEvents).toBe(log.length)
    expect(response.body.events).toEqual(log.slice(0, 100) as unknown as EventBody[])
    expect(response.body.events[0]).toMatchObject({ type: 'feature-created', featureName: 'one', project: 'alpha' })
  })

  test("at most 100 without a project; with project, that project's newest 50 and its total", async () => {
    await api.newProject('alpha')
    for (let i = 0; i < 110; i++) await api.newFlag('alpha', `flag-${i}`)
    const all = await api.get<EventListBody>('/api/admin/events')
    expectOk(all)
    expect(all.body.events).toHaveLength(100)
    expect(all.body.totalEvents).toBe(api.events().length)
    const alpha = await api.get<EventListBody>('/api/admin/events?project=alpha')
    expectOk(alpha)
    expect(alpha.body.events).toHaveLength(50)
    expect(alpha.body.totalEvents).toBe(api.events().filter(event => event.project === 'alpha').length)
    expect(alpha.body.events.every(event => event.project === 'alpha')).toBe(true)
    expect(alpha.body.events[0].featureName).toBe('flag-109')
    const none = await api.get<EventListBody>('/api/admin/events?project=nowhere')
    expect(none.body).toEqual({ version: 1, events: [], totalEvents: 0 })
  })

  test('needs ADMIN, as in Unleash: an editor or a token limited to projects gets 403', async () => {
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    const scopedAdmin = await tokenFor(api, 'scoped-admin', { role: 'admin', projects: ['default'] })
    const refused = await api.get('/api/admin/events', { token: editor })
    expectError(refused, 403, 'NoAccessError')
    expect(refused.body).toMatchObject({ permissions: ['ADMIN'] })
    expectError(await api.get('/api/admin/events?project=default', { token: scopedAdmin }), 403, 'NoAccessError')
  })

  test('an unknown parameter or an empty project is 400', async () => {
    expectError(await api.get('/api/admin/events?feature=x'), 400, 'ValidationError')
    expectError(await api.get('/api/admin/events?project='), 400, 'ValidationError')
  })
})

interface FlagEventListBody extends EventListBody {
  toggleName: string
}

describe('GET /api/admin/events/:featureName (getEventsForToggle)', () => {
  const flagEvents = (name: string, token?: string | null) =>
    api.get<FlagEventListBody>(`/api/admin/events/${encodeURIComponent(name)}`, { token })

  test("answers the flag's newest 50 events, newest first, as the log holds them, with version, toggleName and totalEvents", async () => {
    await api.newFlag('default', 'busy')
    await api.newFlag('default', 'quiet')
    for (let i = 0; i < 30; i++) {
      expectOk(await api.toggle('default', 'busy', 'development', i % 2 === 0))
      expectOk(await api.toggle('default', 'quiet', 'development', i % 2 === 0))
    }
    const response = await flagEvents('busy')
    expectOk(response)
    const logged = api
      .events()
      .filter(event => event.featureName === 'busy')
      .reverse()
    expect(logged.length).toBeGreaterThan(30)
    expect(logged.length).toBeLessThan(50)
    expect(response.body).toEqual({
      version: 1,
      toggleName: 'busy',
      events: logged as unknown as EventBody[],
      totalEvents: logged.length,
    })
    for (let i = 0; i < 30; i++) expectOk(await api.toggle('default', 'busy', 'development', i % 2 === 1))
    const more = await flagEvents('busy')
    expect(more.body.events).toHaveLength(50)
    const all = api
      .events()
      .filter(event => event.featureName === 'busy')
      .reverse()
    expect(more.body.totalEvents).toBe(all.length)
    expect(more.body.events).toEqual(all.slice(0, 50) as unknown as EventBody[])
  })

  test('an unknown flag lists none (200, as in Unleash); a deleted flag keeps its events, its deletion included', async () => {
    expect((await flagEvents('never-was')).body).toEqual({
      version: 1,
      toggleName: 'never-was',
      events: [],
      totalEvents: 0,
    })
    await api.newFlag('default', 'short-lived')
    expectOk(await api.delete(paths.flag('short-lived')), 202)
    expectOk(await api.delete('/api/admin/archive/short-lived'))
    const gone = await flagEvents('short-lived')
    expectOk(gone)
    expect(gone.body.events.map(event => event.type)).toEqual([
      'feature-deleted',
      'feature-archived',
      'feature-created',
    ])
    expect(gone.body.totalEvents).toBe(3)
  })

  test('any token reads it; a flag of a project the token cannot see answers exactly as an unknown flag, deleted or not', async () => {
    await api.newProject('hidden')
    await api.newFlag('hidden', 'secret')
    await api.newFlag('hidden', 'secret-gone')
    expectOk(await api.delete(paths.flag('secret-gone', 'hidden')), 202)
    expectOk(await api.delete('/api/admin/archive/secret-gone'))
    await api.newFlag('default', 'open')
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer', projects: ['default'] })
    expect((await flagEvents('open', viewer)).body.events.map(event => event.type)).toEqual(['feature-created'])
    for (const name of ['secret', 'secret-gone', 'never-was']) {
      const response = await flagEvents(name, viewer)
      expectOk(response)
      expect(response.body).toEqual({ version: 1, toggleName: name, events: [], totalEvents: 0 })
    }
    // The full-access token still reads them.
    expect((await flagEvents('secret')).body.totalEvents).toBe(1)
    expect((await flagEvents('secret-gone')).body.totalEvents).toBe(3)
    expectError(await flagEvents('open', null), 401, 'AuthenticationRequired')
  })
})

describe('GET .../features/:featureName/environments/:environment (getFeatureEnvironment)', () => {
  test('answers the environment entry of the flag with its strategies and variants, as getFeature shows it', async () => {
    await api.newFlag('default', 'one')
    expectOk(await api.toggle('default', 'one', 'production', true))
    expectOk(
      await api.put(paths.variants('one', 'production'), [
        { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' },
      ]),
    )
    const response = await api.get<FlagEnvironmentBody>(`${paths.flag('one')}/environments/production`)
    expectOk(response)
    const flag = (await api.getFlag('default', 'one')).body as FlagBody
    expect(response.body).toEqual(flag.environments.find(entry => entry.name === 'production')!)
    expect(response.body).toMatchObject({
      name: 'production',
      environment: 'production',
      featureName: 'one',
      type: 'production',
      enabled: true,
      variantCount: 1,
    })
    expect(response.body.strategies?.map(strategy => strategy.name)).toEqual(['flexibleRollout'])
    expect(response.body.variants?.map(variant => variant.name)).toEqual(['blue'])
  })

  test('an unknown flag, a flag of another project, or an environment the project lacks is 404', async () => {
    await api.newProject('other')
    await api.newFlag('default', 'one')
    expectError(await api.get(`${paths.flag('missing')}/environments/development`), 404, 'NotFoundError')
    expectError(await api.get(`${paths.flag('one', 'other')}/environments/development`), 404, 'NotFoundError')
    expectError(await api.get(`${paths.flag('one')}/environments/staging`), 404, 'NotFoundError', ['staging'])
  })
})
