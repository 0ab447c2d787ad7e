/**
 * Environments and their connection to projects (contract §6 "Environments", §7 name limits, §4 events).
 */
import { describe, expect, test } from 'bun:test'
import {
  errorOf,
  type Api,
  withTimeout,
  expectStatus,
  type ProjectBody,
  type EnvironmentBody,
  type EnvironmentListBody,
  ISO_MS,
  BOOTSTRAP,
  named,
  freshApiPerTest,
} from '../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

async function createEnvironment(name: string, type = 'test', extra: Record<string, unknown> = {}) {
  const response = await api.post<EnvironmentBody>('/api/admin/environments', { name, type, ...extra })
  expectStatus(response, 201)
  return response.body
}

async function environmentNames(): Promise<string[]> {
  const response = await api.get<EnvironmentListBody>('/api/admin/environments')
  expectStatus(response, 200)
  return response.body.environments.map((environment: { name: string }) => environment.name)
}

async function projectEnvironments(projectId: string): Promise<string[]> {
  const response = await api.get<ProjectBody>(`/api/admin/projects/${projectId}`)
  expectStatus(response, 200)
  return [...response.body.environments].sort()
}

/** The names of the environment entries of a flag, as GET answers it. */
async function flagEnvironments(project: string, name: string): Promise<any[]> {
  const response = await api.getFlag(project, name)
  expectStatus(response, 200)
  return response.body.environments
}

function connect(projectId: string, environment: unknown) {
  return api.post(`/api/admin/projects/${projectId}/environments`, { environment })
}

function disconnect(projectId: string, environment: string) {
  return api.delete(`/api/admin/projects/${projectId}/environments/${environment}`)
}

describe('GET /api/admin/environments', () => {
  test('the list holds development and production with their types and sort orders', async () => {
    const response = await api.get<EnvironmentListBody>('/api/admin/environments')
    expectStatus(response, 200)
    expect(response.body.environments).toHaveLength(2)
    expect(response.body.environments[0]).toMatchObject({ name: 'development', type: 'development', sortOrder: 100 })
    expect(response.body.environments[1]).toMatchObject({ name: 'production', type: 'production', sortOrder: 200 })
  })
})

describe('POST /api/admin/environments', () => {
  test('creating an environment answers 201 with it, and it is listed', async () => {
    const response = await api.post<EnvironmentBody>('/api/admin/environments', {
      name: 'staging',
      type: 'test',
      sortOrder: 150,
    })
    expectStatus(response, 201)
    expect(response.body).toMatchObject({ name: 'staging', type: 'test', sortOrder: 150 })
    expect(response.body.createdAt).toMatch(ISO_MS)
    expect(await environmentNames()).toEqual(['development', 'staging', 'production'])
  })

  test('creating an environment records environment-created by the calling token', async () => {
    const before = api.lastEventId()
    await createEnvironment('qa', 'test')
    const events = api.eventsSince(before)
    expect(events.map(event => event.type)).toEqual(['environment-created'])
    expect(events[0]).toMatchObject({
      ...BOOTSTRAP,
      environment: 'qa',
      featureName: null,
      tags: [],
      data: { name: 'qa', type: 'test' },
    })
    expect(events[0].createdAt).toMatch(ISO_MS)
  })

  test('a new environment is not connected to existing projects', async () => {
    await createEnvironment('lonely')
    expect(await projectEnvironments('default')).toEqual(['development', 'production'])
  })

  test('a taken environment name is refused with 409 NameExistsError and nothing is written', async () => {
    await createEnvironment('twice')
    const before = api.lastEventId()
    expectStatus(
      await api.post<EnvironmentBody>('/api/admin/environments', { name: 'twice', type: 'other' }),
      409,
      'NameExistsError',
    )
    expectStatus(
      await api.post<EnvironmentBody>('/api/admin/environments', { name: 'production', type: 'production' }),
      409,
      'NameExistsError',
    )
    expect(api.eventsSince(before)).toEqual([])
    const listed = named((await api.get<EnvironmentListBody>('/api/admin/environments')).body.environments, 'twice')
    expect(listed.type).toBe('test')
  })

  // The refusals change nothing, so the cases share one app.
  test('an environment name that is empty, longer than 100 characters, not URL-safe, "." or ".." is refused with 400 ValidationError', async () => {
    for (const [what, name] of [
      ['empty', ''],
      ['longer than 100 characters', 'e'.repeat(101)],
      ['not URL-safe (a space)', 'my env'],
      ['not URL-safe (a slash)', 'a/b'],
      ['not URL-safe (a non-ASCII letter)', 'prodü'],
      ['"."', '.'],
      ['".."', '..'],
    ]) {
      const before = api.lastEventId()
      const response = await api.post<EnvironmentBody>('/api/admin/environments', { name, type: 'test' })
      expect({ what, status: response.status }).toEqual({ what, status: 400 })
      expectStatus(response, 400, 'ValidationError')
      expect(api.eventsSince(before)).toEqual([])
      expect(await environmentNames()).toEqual(['development', 'production'])
    }
  })

  test.each([['__proto__'], ['constructor']])(
    'an environment name that is also a JavaScript object key (%s) is stored and listed like any other name',
    async name => {
      const response = await withTimeout(api.post<EnvironmentBody>('/api/admin/environments', { name, type: 'test' }))
      expectStatus(response, 201)
      expect(errorOf(response).name).toBe(name)
      expect(await environmentNames()).toContain(name)
      // The store still takes writes afterwards, including names that are keys of an environment record.
      expectStatus(
        await withTimeout(api.post<EnvironmentBody>('/api/admin/environments', { name: 'type', type: 'test' })),
        201,
      )
      expectStatus(await withTimeout(connect('default', name)), 200)
      expect(await projectEnvironments('default')).toEqual(['development', 'production', name].sort())
    },
  )

  test('an environment without a type is refused with 400 ValidationError', async () => {
    expectStatus(
      await api.post<EnvironmentBody>('/api/admin/environments', { name: 'typeless' }),
      400,
      'ValidationError',
    )
    expect(await environmentNames()).toEqual(['development', 'production'])
  })
})

describe('POST /api/admin/projects/:projectId/environments', () => {
  test('connecting an environment gives every flag of the project that environment, disabled', async () => {
    await api.newProject('shop')
    await api.newFlag('shop', 'shop-a')
    await api.newFlag('shop', 'shop-b')
    expectStatus(await api.toggle('shop', 'shop-a', 'development', true), 200)
    await createEnvironment('staging', 'test', { sortOrder: 150 })

    const response = await connect('shop', 'staging')
    expectStatus(response, 200)
    expect(await projectEnvironments('shop')).toEqual(['development', 'production', 'staging'])
    for (const name of ['shop-a', 'shop-b']) {
      const environments = await flagEnvironments('shop', name)
      expect(environments.map(e => e.name)).toEqual(['development', 'staging', 'production'])
      const staging = environments.find(e => e.name === 'staging')
      expect(staging).toMatchObject({
        name: 'staging',
        environment: 'staging',
        featureName: name,
        type: 'test',
        enabled: false,
        hasStrategies: false,
        hasEnabledStrategies: false,
        variantCount: 0,
        strategies: [],
        variants: [],
      })
    }
    // Connecting leaves what the flags had elsewhere alone.
    expect((await flagEnvironments('shop', 'shop-a')).find(e => e.name === 'development').enabled).toBe(true)
  })

  test('connecting an environment touches no flag of another project', async () => {
    await api.newProject('mine')
    await api.newFlag('default', 'not-mine')
    await createEnvironment('edge')
    expectStatus(await connect('mine', 'edge'), 200)
    expect((await flagEnvironments('default', 'not-mine')).map(e => e.name)).toEqual(['development', 'production'])
  })

  test('connecting records project-environment-added with project and environment', async () => {
    await createEnvironment('canary')
    const before = api.lastEventId()
    expectStatus(await connect('default', 'canary'), 200)
    const events = api.eventsSince(before)
    expect(events.map(event => event.type)).toEqual(['project-environment-added'])
    expect(events[0]).toMatchObject({
      ...BOOTSTRAP,
      project: 'default',
      environment: 'canary',
      featureName: null,
      tags: [],
    })
  })

  test('an environment disconnected from the default project can be connected again, and flags get it back disabled with no strategies', async () => {
    await api.newFlag('default', 'comes-back')
    expectStatus(await api.toggle('default', 'comes-back', 'development', true), 200)
    expectStatus(await disconnect('default', 'development'), 200)
    const before = api.lastEventId()
    expectStatus(await connect('default', 'development'), 200)
    expect(await projectEnvironments('default')).toEqual(['development', 'production'])
    const development = (await flagEnvironments('default', 'comes-back')).find(e => e.name === 'development')
    expect(development).toMatchObject({ enabled: false, hasStrategies: false, strategies: [] })
    expect(api.eventsSince(before).map(event => event.type)).toEqual(['project-environment-added'])
  })

  test('connecting to an unknown project answers 404 NotFoundError', async () => {
    const before = api.lastEventId()
    expectStatus(await connect('no-such-project', 'development'), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('connecting an unknown environment answers 404 NotFoundError and changes nothing', async () => {
    await api.newFlag('default', 'stays-two')
    const before = api.lastEventId()
    expectStatus(await connect('default', 'no-such-environment'), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
    expect(await projectEnvironments('default')).toEqual(['development', 'production'])
    expect((await flagEnvironments('default', 'stays-two')).map(e => e.name)).toEqual(['development', 'production'])
  })

  test('connecting an environment that is already connected answers 409 and records nothing', async () => {
    await api.newFlag('default', 'already-there')
    expectStatus(await api.toggle('default', 'already-there', 'production', true), 200)
    const before = api.lastEventId()
    expectStatus(await connect('default', 'production'), 409)
    expect(api.eventsSince(before)).toEqual([])
    expect(await projectEnvironments('default')).toEqual(['development', 'production'])
    // The flag keeps its settings there.
    const production = (await flagEnvironments('default', 'already-there')).find(e => e.name === 'production')
    expect(production).toMatchObject({ enabled: true, hasStrategies: true })
  })

  test('a body without an environment name is refused with 400 ValidationError', async () => {
    expectStatus(await api.post('/api/admin/projects/default/environments', {}), 400, 'ValidationError')
    expectStatus(await connect('default', 42), 400, 'ValidationError')
  })
})

describe('DELETE /api/admin/projects/:projectId/environments/:environment', () => {
  test('disconnecting removes the environment from the project and from each of its flags', async () => {
    await api.newFlag('default', 'loses-dev-1')
    await api.newFlag('default', 'loses-dev-2')
    expectStatus(await api.toggle('default', 'loses-dev-1', 'development', true), 200)

    const response = await disconnect('default', 'development')
    expectStatus(response, 200)
    expect(await projectEnvironments('default')).toEqual(['production'])
    for (const name of ['loses-dev-1', 'loses-dev-2']) {
      expect((await flagEnvironments('default', name)).map(e => e.name)).toEqual(['production'])
    }
    const list = await api.listFlags('default')
    for (const feature of list.body.features)
      expect(feature.environments.map((e: { name: string }) => e.name)).toEqual(['production'])
    // loses-dev-1 was only on in development.
    expect((await api.getFlag('default', 'loses-dev-1')).body.enabled).toBe(false)
    // The environment itself still exists.
    expect(await environmentNames()).toContain('development')
  })

  test('disconnecting records project-environment-removed with project and environment', async () => {
    const before = api.lastEventId()
    expectStatus(await disconnect('default', 'production'), 200)
    const events = api.eventsSince(before)
    expect(events.map(event => event.type)).toEqual(['project-environment-removed'])
    expect(events[0]).toMatchObject({
      ...BOOTSTRAP,
      project: 'default',
      environment: 'production',
      featureName: null,
      tags: [],
    })
  })

  test('after disconnecting, the flag can no longer be switched in that environment (404)', async () => {
    await api.newFlag('default', 'no-prod')
    expectStatus(await disconnect('default', 'production'), 200)
    expectStatus(await api.toggle('default', 'no-prod', 'production', true), 404, 'NotFoundError')
  })

  test('disconnecting touches no flag of another project', async () => {
    await api.newProject('other')
    await api.newFlag('default', 'default-keeps-dev')
    expectStatus(await disconnect('other', 'development'), 200)
    expect((await flagEnvironments('default', 'default-keeps-dev')).map(e => e.name)).toEqual([
      'development',
      'production',
    ])
    expect(await projectEnvironments('default')).toEqual(['development', 'production'])
  })

  test('disconnecting an environment that is not connected answers 404 NotFoundError', async () => {
    await createEnvironment('unattached')
    const before = api.lastEventId()
    expectStatus(await disconnect('default', 'unattached'), 404, 'NotFoundError')
    expectStatus(await disconnect('default', 'no-such-environment'), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('disconnecting the same environment twice answers 404 the second time', async () => {
    expectStatus(await disconnect('default', 'development'), 200)
    const before = api.lastEventId()
    expectStatus(await disconnect('default', 'development'), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('disconnecting from an unknown project answers 404 NotFoundError', async () => {
    expectStatus(await disconnect('no-such-project', 'development'), 404, 'NotFoundError')
  })
})
