/**
 * POST /api/admin/projects/:projectId/bulk_features/environments/:environment/off
 * (seed 4.4, 5, 7, 8; contract §1, §2, §4, §5).
 */
import { describe, expect, test } from 'bun:test'
import type { EventRecord } from '../../../src/storage/records'
import {
  errorOf,
  makeApi,
  tokenFor,
  type Api,
  type ApiResponse,
  expectOk,
  expectError,
  type EnvironmentBody,
  named,
  freshApiPerTest,
  expectRefused,
  storeSnapshot,
  expectUnchanged,
} from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

/** 200 with no body at all. */
function expectEmpty200(response: ApiResponse) {
  expectOk(response)
  expect(response.text).toBe('')
}

const off = (project: string, environment: string, features: unknown, options?: Parameters<Api['post']>[2]) =>
  api.post(`/api/admin/projects/${project}/bulk_features/environments/${environment}/off`, { features }, options)

async function newProject(id: string) {
  expectOk(await api.createProject(id), 201)
}

/** A new flag, on in the environments `onIn`. */
async function flagOnIn(project: string, name: string, onIn: string[] = []) {
  await api.newFlag(project, name)
  for (const environment of onIn) expectOk(await api.toggle(project, name, environment, true))
}

async function flag(project: string, name: string) {
  const response = await api.getFlag(project, name)
  expectOk(response)
  return response.body
}

function enabledIn(feature: { environments: { name: string; enabled: boolean }[] }, environment: string) {
  return feature.environments.find(entry => entry.name === environment)?.enabled
}

/** Project `bulk` with flags on-1, on-2, on-3 on in development and production, and off-1 off everywhere. */
async function setup() {
  await newProject('bulk')
  await flagOnIn('bulk', 'on-1', ['development', 'production'])
  await flagOnIn('bulk', 'on-2', ['development', 'production'])
  await flagOnIn('bulk', 'on-3', ['development'])
  await flagOnIn('bulk', 'off-1')
}

/** Sends a bulk off that must be refused: its error, and nothing stored, no event (see expectRefused). */
function bulkOffRefused(
  project: string,
  environment: string,
  features: unknown,
  status: number,
  name: string,
  mentions: (string | RegExp)[] = [],
) {
  return expectRefused(api, () => off(project, environment, features), status, name, mentions)
}

describe('bulk disable: success', () => {
  test('bulk disable: the named flags are turned off in that environment; the answer is 200 with an empty body', async () => {
    await setup()
    const response = await off('bulk', 'development', ['on-1', 'on-2'])
    expectEmpty200(response)
    expect(enabledIn(await flag('bulk', 'on-1'), 'development')).toBe(false)
    expect(enabledIn(await flag('bulk', 'on-2'), 'development')).toBe(false)
    expect(enabledIn(await flag('bulk', 'on-3'), 'development')).toBe(true)
  })

  test('bulk disable: other environments are left alone', async () => {
    await setup()
    expectEmpty200(await off('bulk', 'development', ['on-1']))
    const on1 = await flag('bulk', 'on-1')
    expect(enabledIn(on1, 'production')).toBe(true)
    expect(on1.enabled).toBe(true)
  })

  test('bulk disable: one feature-environment-disabled event per flag that was on, none for flags already off', async () => {
    await setup()
    const since = api.lastEventId()
    expectEmpty200(await off('bulk', 'development', ['off-1', 'on-1', 'on-3']))
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.featureName, event.environment, event.project])).toEqual([
      ['feature-environment-disabled', 'on-1', 'development', 'bulk'],
      ['feature-environment-disabled', 'on-3', 'development', 'bulk'],
    ])
    for (const event of events) expect(event.createdBy).toBe('admin-bootstrap')
  })

  test('bulk disable: flags that are all already off answer 200 and record no event', async () => {
    await setup()
    expectEmpty200(await off('bulk', 'development', ['on-1']))
    const since = api.lastEventId()
    expectEmpty200(await off('bulk', 'development', ['on-1', 'off-1']))
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: a name given several times counts once', async () => {
    await setup()
    const since = api.lastEventId()
    expectEmpty200(await off('bulk', 'development', ['on-1', 'on-2', 'on-1', 'on-1', 'on-2']))
    const events = await api.eventsAfter(since)
    expect(events.map(event => event.featureName)).toEqual(['on-1', 'on-2'])
  })

  test('bulk disable: strategies are untouched', async () => {
    await setup()
    const url = '/api/admin/projects/bulk/features/on-1/environments/development/strategies'
    expect(
      (
        await api.post(url, {
          name: 'userWithId',
          parameters: { userIds: 'a,b' },
          constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
        })
      ).status,
    ).toBeLessThan(300)
    expect((await api.post(url, { name: 'default', disabled: true })).status).toBeLessThan(300)
    const before = named((await flag('bulk', 'on-1')).environments, 'development')
    expect(before.strategies?.length).toBe(3)
    expectEmpty200(await off('bulk', 'development', ['on-1']))
    const after = named((await flag('bulk', 'on-1')).environments, 'development')
    expect(after.strategies).toEqual(before.strategies)
    expect(after.variants).toEqual(before.variants)
    expect(after.enabled).toBe(false)
    expect((await api.eventsAfter(api.lastEventId() - 1)).map(event => event.type)).toEqual([
      'feature-environment-disabled',
    ])
  })

  test('bulk disable: features: [] answers 200 with an empty body and changes nothing', async () => {
    await setup()
    const before = storeSnapshot(api)
    const since = api.lastEventId()
    expectEmpty200(await off('bulk', 'development', []))
    expectUnchanged(api, before)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: the whole request is one durable write: one commit holds all its events, which share one createdAt', async () => {
    await setup()
    const commits: (readonly EventRecord[])[] = []
    api.services.store.onCommit(events => commits.push(events))
    const since = api.lastEventId()
    expectEmpty200(await off('bulk', 'development', ['on-1', 'on-2', 'on-3']))
    const events = await api.eventsAfter(since)
    expect(events).toHaveLength(3)
    expect(events.map(event => event.id)).toEqual([since + 1, since + 2, since + 3])
    expect(new Set(events.map(event => event.createdAt)).size).toBe(1)
    expect(commits).toHaveLength(1)
    expect(commits[0].map(event => event.id)).toEqual(events.map(event => event.id))
  })

  test('bulk disable: the default project works too', async () => {
    await flagOnIn('default', 'default-on', ['production'])
    expectEmpty200(await off('default', 'production', ['default-on']))
    expect((await flag('default', 'default-on')).enabled).toBe(false)
  })
})

describe('bulk disable: all or nothing', () => {
  test('bulk disable: an unknown flag answers 404 NotFoundError naming it, and nothing changes', async () => {
    await setup()
    await bulkOffRefused('bulk', 'development', ['on-1', 'ghost-flag', 'on-2'], 404, 'NotFoundError', ['ghost-flag'])
  })

  test('bulk disable: a flag of another project answers 404 without naming that project, and nothing changes', async () => {
    await setup()
    await newProject('foreign-zq')
    await flagOnIn('foreign-zq', 'foreign-flag', ['development'])
    const response = await bulkOffRefused('bulk', 'development', ['on-1', 'foreign-flag'], 404, 'NotFoundError', [
      'foreign-flag',
    ])
    expect(response.text).not.toContain('foreign-zq')
  })

  test('bulk disable: an archived flag answers 400 ValidationError naming it, and nothing changes', async () => {
    await setup()
    await flagOnIn('bulk', 'archived-flag', ['development'])
    expect((await api.delete('/api/admin/projects/bulk/features/archived-flag')).status).toBe(202)
    await bulkOffRefused('bulk', 'development', ['on-1', 'archived-flag'], 400, 'ValidationError', ['archived-flag'])
  })

  test('bulk disable: an environment that exists but is not connected to the project answers 404, and nothing changes', async () => {
    await setup()
    expectOk(await api.post<EnvironmentBody>('/api/admin/environments', { name: 'staging', type: 'test' }), 201)
    await bulkOffRefused('bulk', 'staging', ['on-1'], 404, 'NotFoundError', ['staging'])
  })

  test('bulk disable: an environment disconnected from the project answers 404, and nothing changes', async () => {
    await setup()
    expectOk(await api.delete('/api/admin/projects/bulk/environments/production'))
    await bulkOffRefused('bulk', 'production', ['on-1'], 404, 'NotFoundError', ['production'])
  })

  test('bulk disable: an unknown environment answers 404, and nothing changes', async () => {
    await setup()
    await bulkOffRefused('bulk', 'no-such-env', ['on-1', 'on-2'], 404, 'NotFoundError', ['no-such-env'])
  })

  test('bulk disable: the first error in request order answers (unknown before archived, archived before unknown)', async () => {
    await setup()
    await newProject('foreign')
    await flagOnIn('foreign', 'foreign-flag')
    await flagOnIn('bulk', 'archived-flag')
    expect((await api.delete('/api/admin/projects/bulk/features/archived-flag')).status).toBe(202)
    await bulkOffRefused('bulk', 'development', ['on-1', 'ghost', 'archived-flag'], 404, 'NotFoundError', ['ghost'])
    await bulkOffRefused('bulk', 'development', ['on-1', 'archived-flag', 'ghost'], 400, 'ValidationError', [
      'archived-flag',
    ])
    await bulkOffRefused('bulk', 'development', ['archived-flag', 'foreign-flag'], 400, 'ValidationError', [
      'archived-flag',
    ])
    await bulkOffRefused('bulk', 'development', ['foreign-flag', 'archived-flag'], 404, 'NotFoundError', [
      'foreign-flag',
    ])
  })

  test('bulk disable: with an unconnected environment, an archived flag named first answers 400 and a live flag named first answers 404', async () => {
    await setup()
    expectOk(await api.post<EnvironmentBody>('/api/admin/environments', { name: 'qa', type: 'test' }), 201)
    await flagOnIn('bulk', 'archived-flag')
    expect((await api.delete('/api/admin/projects/bulk/features/archived-flag')).status).toBe(202)
    await bulkOffRefused('bulk', 'qa', ['archived-flag', 'on-1'], 400, 'ValidationError', ['archived-flag'])
    await bulkOffRefused('bulk', 'qa', ['on-1', 'archived-flag'], 404, 'NotFoundError', ['qa'])
  })

  test('bulk disable: an unknown project answers 404 NotFoundError, also for an empty list', async () => {
    const since = api.lastEventId()
    expectError(await off('no-such-project', 'development', ['x']), 404, 'NotFoundError', ['no-such-project'])
    expectError(await off('no-such-project', 'development', []), 404, 'NotFoundError', ['no-such-project'])
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: a body without a features list answers 400 ValidationError', async () => {
    await setup()
    const before = storeSnapshot(api)
    const since = api.lastEventId()
    expectError(
      await api.post('/api/admin/projects/bulk/bulk_features/environments/development/off', {}),
      400,
      'ValidationError',
    )
    expectError(
      await api.post('/api/admin/projects/bulk/bulk_features/environments/development/off', { features: 'on-1' }),
      400,
      'ValidationError',
    )
    expectError(
      await api.post('/api/admin/projects/bulk/bulk_features/environments/development/off', { features: [1, 2] }),
      400,
      'ValidationError',
    )
    expectUnchanged(api, before)
    expect(api.eventsSince(since)).toEqual([])
  })
})

describe('bulk disable: pipeline', () => {
  test('bulk disable: a body over the limit answers 413 ContentTooLarge and nothing changes', async () => {
    await api.close()
    api = await makeApi({ bodyLimit: 2000 })
    await setup()
    const features = ['on-1', ...Array.from({ length: 300 }, (_, i) => `padding-name-${i}`)]
    expect(JSON.stringify({ features }).length).toBeGreaterThan(2000)
    await bulkOffRefused('bulk', 'development', features, 413, 'ContentTooLarge')
  })

  test('bulk disable: with the default limit (100 kB), a larger body answers 413 ContentTooLarge and nothing changes', async () => {
    await setup()
    const features = ['on-1', ...Array.from({ length: 1100 }, (_, i) => `n${i}-`.padEnd(100, 'x'))]
    expect(JSON.stringify({ features }).length).toBeGreaterThan(102_400)
    await bulkOffRefused('bulk', 'development', features, 413, 'ContentTooLarge')
  })

  test('bulk disable: a body just under the limit is read normally', async () => {
    await api.close()
    api = await makeApi({ bodyLimit: 2000 })
    await setup()
    const features = ['on-1', ...Array.from({ length: 20 }, () => 'on-2')]
    expect(JSON.stringify({ features }).length).toBeLessThan(2000)
    expectEmpty200(await off('bulk', 'development', features))
  })

  test('bulk disable: a text/plain body answers 415 ContentTypeerror and nothing changes', async () => {
    await setup()
    const before = storeSnapshot(api)
    const since = api.lastEventId()
    const response = await api.request('POST', '/api/admin/projects/bulk/bulk_features/environments/development/off', {
      raw: JSON.stringify({ features: ['on-1'] }),
      headers: { 'content-type': 'text/plain' },
    })
    expectError(response, 415, 'ContentTypeerror', [/application\/json/])
    expectUnchanged(api, before)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: without a token it answers 401 AuthenticationRequired and nothing changes', async () => {
    await setup()
    const since = api.lastEventId()
    expectError(await off('bulk', 'development', ['on-1'], { token: null }), 401, 'AuthenticationRequired')
    expect(enabledIn(await flag('bulk', 'on-1'), 'development')).toBe(true)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: a viewer token answers 403 NoAccessError naming UPDATE_FEATURE_ENVIRONMENT and nothing changes', async () => {
    await setup()
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const since = api.lastEventId()
    const response = await off('bulk', 'development', ['on-1'], { token: viewer })
    expectError(response, 403, 'NoAccessError')
    expect(errorOf(response).permissions).toEqual(['UPDATE_FEATURE_ENVIRONMENT'])
    expect(enabledIn(await flag('bulk', 'on-1'), 'development')).toBe(true)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: a token limited to another project answers 403 and nothing changes', async () => {
    await setup()
    const scoped = await tokenFor(api, 'scoped', { role: 'editor', projects: ['default'] })
    const since = api.lastEventId()
    expectError(await off('bulk', 'development', ['on-1'], { token: scoped }), 403, 'NoAccessError')
    expect(enabledIn(await flag('bulk', 'on-1'), 'development')).toBe(true)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: a client (SDK) token answers 403 NoAccessError', async () => {
    await setup()
    const client = await tokenFor(api, 'sdk', { type: 'client', project: 'bulk', environment: 'development' })
    const since = api.lastEventId()
    expectError(await off('bulk', 'development', ['on-1'], { token: client }), 403, 'NoAccessError')
    expect(api.eventsSince(since)).toEqual([])
  })

  test('bulk disable: an editor token may disable; the events name it', async () => {
    await setup()
    const editor = await tokenFor(api, 'editor-bot', { role: 'editor' })
    const since = api.lastEventId()
    expectEmpty200(await off('bulk', 'development', ['on-1'], { token: editor }))
    expect((await api.eventsAfter(since)).map(event => event.createdBy)).toEqual(['editor-bot'])
  })
})
