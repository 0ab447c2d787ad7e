/**
 * Registered applications (issue 13 item 4): POST /api/client/register and /api/frontend/client/register
 * record applications and instances; GET /api/admin/metrics/applications[/:appName] list them in
 * Unleash's shapes; instances age out; caps and project scope.
 */
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  Api,
  BODY_LIMIT,
  expectError,
  expectOk,
  freshApiPerTest,
  makeApi,
  paths,
  tempDir,
  tokenFor,
} from '../../helpers'
import { createApp } from '../../../src/app'
import { STATE_FILE } from '../../../src/services'
import { APPLICATION_LIMITS } from '../../../src/features/metrics/app-registry'
import { instanceKey } from '../../../src/features/metrics/metrics.records'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Applications {
  applications: {
    appName: string
    sdkVersion?: string
    strategies: string[]
    usage: { project: string; environments: string[] }[]
  }[]
  total: number
}
interface Application {
  appName: string
  createdAt: string
  strategies: { name: string; notFound?: boolean }[]
  instances: {
    appName: string
    instanceId: string
    sdkVersion: string | null
    environment: string
    clientIp: string | null
    createdAt: string
    lastSeen: string
  }[]
  seenToggles: { name: string; project?: string; type?: string; notFound?: boolean }[]
  links: { self: string }
}

async function sdkToken(
  type: 'client' | 'frontend',
  projects: string[] = ['*'],
  environment = 'development',
): Promise<string> {
  const response = await api.createToken({
    tokenName: `${type}-${Math.random().toString(36).slice(2, 10)}`,
    type,
    projects,
    environment,
  })
  expect(response.status).toBe(201)
  return response.body.secret
}

const register = (token: string, body: Record<string, unknown>, path = '/api/client/register') =>
  api.post(path, body, { token })
const list = (token?: string) => api.get<Applications>('/api/admin/metrics/applications', token ? { token } : {})
const detail = (appName: string, token?: string) =>
  api.get<Application>(`/api/admin/metrics/applications/${encodeURIComponent(appName)}`, token ? { token } : {})
const report = (token: string, appName: string, toggles: Record<string, unknown>, instanceId = 'pod-1') =>
  api.post('/api/client/metrics', { appName, instanceId, bucket: { start: 0, stop: 0, toggles } }, { token })

describe('registration and the application list', () => {
  test("register and metrics record the application, its instances, environments and projects, in Unleash's shapes", async () => {
    const development = await sdkToken('client')
    const production = await sdkToken('client', ['*'], 'production')
    const frontend = await sdkToken('frontend', ['default'])
    expectOk(await api.post('/api/admin/strategies', { name: 'mine', parameters: [] }), 201)
    await api.newFlag('default', 'alpha')
    await api.newFlag('default', 'gone')
    setSystemTime(new Date('2026-03-01T10:00:00.000Z'))
    expectOk(
      await register(development, {
        appName: 'web',
        instanceId: 'pod-1',
        sdkVersion: 'unleash-client-node:6.1.0',
        strategies: ['default', 'mine', 'unheard-of'],
        started: 0,
        interval: 1000,
      }),
      202,
    )
    setSystemTime(new Date('2026-03-01T10:01:00.000Z'))
    expectOk(await report(production, 'web', { alpha: { yes: 1, no: 0 }, gone: { yes: 1, no: 0 } }, 'pod-2'), 202)
    setSystemTime(new Date('2026-03-01T10:02:00.000Z'))
    expectOk(
      await register(
        frontend,
        { appName: 'browser', instanceId: 'tab-1', sdkVersion: 'unleash-client-js:3.7.0', environment: 'ignored' },
        '/api/frontend/client/register',
      ),
    )
    expectOk(await api.delete(paths.flag('gone')), 202)

    const all = await list()
    expectOk(all)
    expect(all.body).toEqual({
      applications: [
        {
          appName: 'browser',
          sdkVersion: 'unleash-client-js:3.7.0',
          strategies: [],
          usage: [{ project: 'default', environments: ['development'] }],
        },
        {
          appName: 'web',
          sdkVersion: 'unleash-client-node:6.1.0',
          strategies: ['default', 'mine', 'unheard-of'],
          usage: [{ project: '*', environments: ['development', 'production'] }],
        },
      ],
      total: 2,
    })
    const web = await detail('web')
    expectOk(web)
    expect(web.body).toEqual({
      appName: 'web',
      createdAt: '2026-03-01T10:00:00.000Z',
      strategies: [{ name: 'default' }, { name: 'mine' }, { name: 'unheard-of', notFound: true }],
      instances: [
        {
          appName: 'web',
          instanceId: 'pod-2',
          sdkVersion: null,
          environment: 'production',
          clientIp: null,
          createdAt: '2026-03-01T10:01:00.000Z',
          lastSeen: '2026-03-01T10:01:00.000Z',
        },
        {
          appName: 'web',
          instanceId: 'pod-1',
          sdkVersion: 'unleash-client-node:6.1.0',
          environment: 'development',
          clientIp: null,
          createdAt: '2026-03-01T10:00:00.000Z',
          lastSeen: '2026-03-01T10:00:00.000Z',
        },
      ],
      // An archived flag still exists; only a deleted one would be notFound.
      seenToggles: [
        { name: 'alpha', project: 'default', type: 'release' },
        { name: 'gone', project: 'default', type: 'release' },
      ],
      links: { self: '/api/admin/metrics/applications/web' },
    })
    // The link answers: it is the application's own route.
    expect((await api.get<Application>(web.body.links.self)).body).toEqual(web.body)
    expectOk(await api.delete('/api/admin/archive/gone'))
    expect((await detail('web')).body.seenToggles.at(-1)).toEqual({ name: 'gone', notFound: true })
    expectError(await detail('nobody'), 404, 'NotFoundError', ['nobody'])
  })

  test('a registration without instanceId is instance "default"; appName is required and prototype keys are refused', async () => {
    const token = await sdkToken('client')
    expectOk(await register(token, { appName: 'lone' }), 202)
    expect((await detail('lone')).body.instances.map(instance => instance.instanceId)).toEqual(['default'])
    expectError(await register(token, { instanceId: 'x' }), 400, 'ValidationError', ['appName'])
    expectError(
      await register(token, { appName: 'x', __proto__: 1, nested: { constructor: 1 } }),
      400,
      'ValidationError',
    )
  })
})

describe('instances', () => {
  test('as in Unleash, an instance is one per application, instanceId and environment: reporting from a second environment adds one', async () => {
    const development = await sdkToken('client')
    const production = await sdkToken('client', ['*'], 'production')
    setSystemTime(new Date('2026-03-01T10:00:00.000Z'))
    expectOk(
      await register(development, { appName: 'web', instanceId: 'pod-1', sdkVersion: 'unleash-client-node:6.1.0' }),
      202,
    )
    setSystemTime(new Date('2026-03-01T10:05:00.000Z'))
    expectOk(await report(production, 'web', {}, 'pod-1'), 202)
    const instances = (await detail('web')).body.instances
    expect(
      instances.map(({ instanceId, environment, sdkVersion, createdAt, lastSeen }) => ({
        instanceId,
        environment,
        sdkVersion,
        createdAt,
        lastSeen,
      })),
    ).toEqual([
      {
        instanceId: 'pod-1',
        environment: 'production',
        sdkVersion: null,
        createdAt: '2026-03-01T10:05:00.000Z',
        lastSeen: '2026-03-01T10:05:00.000Z',
      },
      {
        instanceId: 'pod-1',
        environment: 'development',
        sdkVersion: 'unleash-client-node:6.1.0',
        createdAt: '2026-03-01T10:00:00.000Z',
        lastSeen: '2026-03-01T10:00:00.000Z',
      },
    ])
    await api.services.metrics.flush()
    expect(Object.keys(api.services.store.state.clientInstances).sort()).toEqual(
      [instanceKey('web', 'pod-1', 'development'), instanceKey('web', 'pod-1', 'production')].sort(),
    )
  })

  test("each records the caller's address (TRUST_PROXY: the proxy's X-Forwarded-For) at registration and at each report, as Unleash's clientIp", async () => {
    const token = await sdkToken('client')
    const frontend = await sdkToken('frontend')
    const behindProxy = new Api(
      createApp(api.services, { bodyLimit: BODY_LIMIT, trustProxy: true }),
      api.services,
      null,
    )
    const from = (address: string) => ({ token, headers: { 'x-forwarded-for': `198.51.100.1, ${address}` } })
    expectOk(
      await behindProxy.post('/api/client/register', { appName: 'web', instanceId: 'pod-1' }, from('203.0.113.7')),
      202,
    )
    const ipOf = async (appName: string, instanceId: string) =>
      (await detail(appName)).body.instances.find(instance => instance.instanceId === instanceId)?.clientIp
    expect(await ipOf('web', 'pod-1')).toBe('203.0.113.7')
    expectOk(
      await behindProxy.post(
        '/api/client/metrics',
        { appName: 'web', instanceId: 'pod-1', bucket: { start: 0, stop: 0, toggles: {} } },
        from('203.0.113.8'),
      ),
      202,
    )
    expect(await ipOf('web', 'pod-1')).toBe('203.0.113.8')
    // Without TRUST_PROXY the header is not believed; app.handle has no socket, so the address is unknown and the known one stays.
    expectOk(
      await api.post(
        '/api/client/metrics',
        { appName: 'web', instanceId: 'pod-1', bucket: { start: 0, stop: 0, toggles: {} } },
        from('192.0.2.66'),
      ),
      202,
    )
    expect(await ipOf('web', 'pod-1')).toBe('203.0.113.8')
    expectOk(await api.post('/api/client/register', { appName: 'web', instanceId: 'pod-2' }, from('192.0.2.66')), 202)
    expect(await ipOf('web', 'pod-2')).toBeNull()
    // The frontend SDK's register and metrics too.
    expectOk(
      await behindProxy.post(
        '/api/frontend/client/register',
        { appName: 'browser', instanceId: 'tab-1' },
        { token: frontend, headers: { 'x-forwarded-for': '2001:db8::5' } },
      ),
    )
    expect(await ipOf('browser', 'tab-1')).toBe('2001:db8::5')
    expectOk(
      await behindProxy.post(
        '/api/frontend/client/metrics',
        { appName: 'browser', instanceId: 'tab-1', bucket: { start: 0, stop: 0, toggles: {} } },
        { token: frontend, headers: { 'x-forwarded-for': '2001:db8::6' } },
      ),
    )
    expect(await ipOf('browser', 'tab-1')).toBe('2001:db8::6')
    await api.services.metrics.flush()
    expect(api.services.store.state.clientInstances[instanceKey('web', 'pod-1', 'development')].clientIp).toBe(
      '203.0.113.8',
    )
  })

  test('a data directory written before instances were kept per environment, with no clientIp, loads; its records are re-keyed at the next flush', async () => {
    const dir = tempDir('flags-instances-')
    try {
      let app = await makeApi({ dataDir: dir.path })
      const created = await app.createToken({
        tokenName: 'sdk',
        type: 'client',
        projects: ['*'],
        environment: 'development',
      })
      const token = created.body.secret
      const production = (
        await app.createToken({
          tokenName: 'sdk-production',
          type: 'client',
          projects: ['*'],
          environment: 'production',
        })
      ).body.secret
      expectOk(
        await app.post(
          '/api/client/register',
          { appName: 'web', instanceId: 'pod-1', sdkVersion: 'unleash-client-node:6.1.0' },
          { token },
        ),
        202,
      )
      await app.close()
      // As the previous version wrote it: keyed by application and instanceId, without clientIp.
      const state = JSON.parse(readFileSync(join(dir.path, STATE_FILE), 'utf8'))
      const [record] = Object.values(state.clientInstances) as Record<string, unknown>[]
      delete record.clientIp
      state.clientInstances = { [JSON.stringify(['web', 'pod-1'])]: record }
      writeFileSync(join(dir.path, STATE_FILE), JSON.stringify(state))

      app = await makeApi({ dataDir: dir.path })
      const loaded = (await app.get<Application>('/api/admin/metrics/applications/web')).body.instances
      expect(loaded).toEqual([{ ...(record as unknown as Application['instances'][number]), clientIp: null }])
      expectOk(
        await app.post(
          '/api/client/metrics',
          { appName: 'web', instanceId: 'pod-1', bucket: { start: 0, stop: 0, toggles: {} } },
          { token: production },
        ),
        202,
      )
      await app.services.metrics.flush()
      expect(Object.keys(app.services.store.state.clientInstances).sort()).toEqual(
        [instanceKey('web', 'pod-1', 'development'), instanceKey('web', 'pod-1', 'production')].sort(),
      )
      const before = (await app.get<Application>('/api/admin/metrics/applications/web')).body
      expect(before.instances.map(instance => [instance.environment, instance.sdkVersion])).toEqual([
        ['production', null],
        ['development', 'unleash-client-node:6.1.0'],
      ])
      await app.close()
      app = await makeApi({ dataDir: dir.path })
      expect((await app.get<Application>('/api/admin/metrics/applications/web')).body).toEqual(before)
      await app.close()
    } finally {
      dir.remove()
    }
  })
})

describe('ageing and caps', () => {
  const saved = { ...APPLICATION_LIMITS }
  afterEach(() => Object.assign(APPLICATION_LIMITS, saved))

  test(`instances not seen for ${APPLICATION_LIMITS.instanceHours} hours and applications not seen for ${APPLICATION_LIMITS.applicationDays} days age out at the next flush`, async () => {
    const token = await sdkToken('client')
    const start = new Date('2026-03-01T00:00:00.000Z').getTime()
    const at = (hours: number) => setSystemTime(new Date(start + hours * 3_600_000))
    at(0)
    expectOk(await register(token, { appName: 'web', instanceId: 'old' }), 202)
    expectOk(await register(token, { appName: 'idle', instanceId: 'idle-1' }), 202)
    at(47)
    expectOk(await register(token, { appName: 'web', instanceId: 'new' }), 202)
    await api.services.metrics.flush()
    at(APPLICATION_LIMITS.instanceHours + 1)
    await api.services.metrics.flush()
    expect((await detail('web')).body.instances.map(instance => instance.instanceId)).toEqual(['new'])
    expect((await detail('idle')).body.instances).toEqual([])
    expect(Object.keys(api.services.store.state.clientInstances)).toEqual([instanceKey('web', 'new', 'development')])
    at(APPLICATION_LIMITS.applicationDays * 24 + 1)
    await api.services.metrics.flush()
    expect((await list()).body.applications.map(app => app.appName)).toEqual(['web'])
    expectError(await detail('idle'), 404, 'NotFoundError')
    expect(Object.keys(api.services.store.state.clientApplications)).toEqual(['web'])
  })

  test("at a scope's caps its least recently seen instance or application makes room", async () => {
    APPLICATION_LIMITS.instancesPerScope = 3
    APPLICATION_LIMITS.applicationsPerScope = 2
    const token = await sdkToken('client')
    for (let i = 0; i < 10; i++) expectOk(await register(token, { appName: 'web', instanceId: `pod-${i}` }), 202)
    // pod-7 is seen again (a metrics report), so pod-8 goes instead.
    expectOk(await report(token, 'web', {}, 'pod-7'), 202)
    expectOk(await register(token, { appName: 'web', instanceId: 'pod-10' }), 202)
    expect((await detail('web')).body.instances.map(instance => instance.instanceId).sort()).toEqual([
      'pod-10',
      'pod-7',
      'pod-9',
    ])
    expectOk(await register(token, { appName: 'second', instanceId: 'a' }), 202)
    expectOk(await register(token, { appName: 'third', instanceId: 'a' }), 202)
    expect((await list()).body.applications.map(app => app.appName)).toEqual(['second', 'third'])
    expect(api.services.metrics.sizes).toMatchObject({ applications: 2, instances: 2 })
    await api.services.metrics.flush()
    expect(Object.keys(api.services.store.state.clientApplications).sort()).toEqual(['second', 'third'])
  })

  test("a flood of new application names from one token keeps the default caps and pushes out none of another project's applications or instances", async () => {
    await api.newProject('b')
    const token = await sdkToken('client', ['default'])
    const other = await sdkToken('client', ['b'])
    expectOk(await register(other, { appName: 'b-app', instanceId: 'b-pod' }), 202)
    const flood = APPLICATION_LIMITS.applicationsPerScope + 200
    for (let i = 0; i < flood; i++)
      expectOk(await report(token, `flood-${i}`, { unknown: { yes: 1, no: 0 } }, `pod-${i}`), 202)
    // Many instances of one application, too.
    for (let i = 0; i < 300; i++) expectOk(await report(token, `flood-${flood - 1}`, {}, `extra-${i}`), 202)
    expect(api.services.metrics.sizes).toMatchObject({
      applications: APPLICATION_LIMITS.applicationsPerScope + 1,
      usageRows: 0,
      usageSeries: 0,
    })
    const names = (await list()).body.applications.map(app => app.appName)
    expect(names).toHaveLength(APPLICATION_LIMITS.applicationsPerScope + 1)
    expect(names).toContain(`flood-${flood - 1}`)
    expect(names).not.toContain('flood-0')
    expect(names).toContain('b-app')
    expect((await detail('b-app')).body.instances.map(instance => instance.instanceId)).toEqual(['b-pod'])
    await api.services.metrics.flush()
    expect(Object.keys(api.services.store.state.clientApplications)).toContain('b-app')
  })

  test('a flood past the caps over all scopes pushes out the records of the scope holding the most, never those of a smaller scope', async () => {
    Object.assign(APPLICATION_LIMITS, { applicationsPerScope: 5, applications: 8, instancesPerScope: 6, instances: 9 })
    await api.newProject('b')
    await api.newProject('c')
    const [a, b, c] = await Promise.all([
      sdkToken('client', ['default']),
      sdkToken('client', ['b']),
      sdkToken('client', ['c']),
    ])
    for (const i of [1, 2]) expectOk(await register(b, { appName: `b-${i}`, instanceId: 'pod' }), 202)
    for (let i = 0; i < 20; i++) expectOk(await register(a, { appName: `a-${i}`, instanceId: 'pod' }), 202)
    // a holds its own cap (5): b is untouched; then c's new applications fill the total, and a, the largest, makes room.
    for (let i = 0; i < 3; i++) expectOk(await register(c, { appName: `c-${i}`, instanceId: 'pod' }), 202)
    const names = (await list()).body.applications.map(app => app.appName)
    expect(names.filter(name => name.startsWith('b-'))).toEqual(['b-1', 'b-2'])
    expect(names.filter(name => name.startsWith('c-'))).toEqual(['c-0', 'c-1', 'c-2'])
    expect(names.filter(name => name.startsWith('a-'))).toEqual(['a-17', 'a-18', 'a-19'])
    expect(api.services.metrics.sizes).toEqual(expect.objectContaining({ applications: 8, instances: 8 }))
    // Instances alike: a floods instances of one application; b's stay.
    for (let i = 0; i < 20; i++) expectOk(await register(a, { appName: 'a-19', instanceId: `extra-${i}` }), 202)
    expect((await detail('b-1')).body.instances.map(instance => instance.instanceId)).toEqual(['pod'])
    expect((await detail('c-0')).body.instances.map(instance => instance.instanceId)).toEqual(['pod'])
    expect(api.services.metrics.sizes.instances).toBeLessThanOrEqual(9)
  })
})

describe('project scope', () => {
  test('a token limited to a project sees the applications used with it or with all-projects tokens, and only that usage and those flags', async () => {
    await api.newProject('other')
    await api.newFlag('default', 'ours')
    await api.newFlag('other', 'theirs')
    const everything = await sdkToken('client')
    const otherOnly = await sdkToken('client', ['other'])
    const defaultOnly = await sdkToken('client', ['default'], 'production')
    expectOk(await report(everything, 'shared', { ours: { yes: 1, no: 0 }, theirs: { yes: 1, no: 0 } }), 202)
    expectOk(await report(otherOnly, 'private', { theirs: { yes: 1, no: 0 } }), 202)
    expectOk(await report(defaultOnly, 'mixed', { ours: { yes: 1, no: 0 } }), 202)
    expectOk(await report(otherOnly, 'mixed', { theirs: { yes: 1, no: 0 } }), 202)
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer', projects: ['default'] })
    const scoped = await list(viewer)
    expect(scoped.body).toEqual({
      applications: [
        { appName: 'mixed', strategies: [], usage: [{ project: 'default', environments: ['production'] }] },
        { appName: 'shared', strategies: [], usage: [{ project: '*', environments: ['development'] }] },
      ],
      total: 2,
    })
    expect(scoped.text).not.toContain('other')
    expectError(await detail('private', viewer), 404, 'NotFoundError')
    expect((await detail('shared', viewer)).body.seenToggles).toEqual([
      { name: 'ours', project: 'default', type: 'release' },
    ])
    expect((await detail('shared')).body.seenToggles.map(flag => flag.name)).toEqual(['ours', 'theirs'])
    expect((await list()).body.total).toBe(3)
  })
})

describe('names shaped like members of Object.prototype', () => {
  // Project ids are any URL-friendly name; an application's usage is a map by project id.
  const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype']

  test('tokens of projects named __proto__, constructor, toString… register and report (never a 500), listed per project, kept across a restart', async () => {
    const dir = tempDir()
    try {
      let disk = await makeApi({ dataDir: dir.path })
      api = disk
      const expected: Applications['applications'][number]['usage'] = []
      for (const name of NAMES) {
        await api.newProject(name)
        const token = await sdkToken('client', [name])
        expectOk(await register(token, { appName: 'odd-projects', instanceId: `pod-${name}` }), 202)
        expectOk(await report(token, 'odd-projects', {}, `pod-${name}`), 202)
        expectOk(
          await register(
            await sdkToken('frontend', [name]),
            { appName: 'odd-projects' },
            '/api/frontend/client/register',
          ),
        )
        expected.push({ project: name, environments: ['development'] })
      }
      expected.sort((a, b) => a.project.localeCompare(b.project))
      const before = await list()
      expectOk(before)
      expect(before.body.applications).toEqual([{ appName: 'odd-projects', strategies: [], usage: expected }])
      expect((await detail('odd-projects')).body.instances.map(instance => instance.instanceId).sort()).toEqual(
        [...NAMES.map(name => `pod-${name}`), 'default'].sort(),
      )
      // A viewer of one of those projects sees that usage only.
      const viewer = await tokenFor(api, 'viewer', { role: 'viewer', projects: ['constructor'] })
      expect((await list(viewer)).body.applications[0].usage).toEqual([
        { project: 'constructor', environments: ['development'] },
      ])

      await disk.close()
      disk = await makeApi({ dataDir: dir.path })
      api = disk
      expect((await list()).body.applications).toEqual(before.body.applications)
      // Still counted into after the restart.
      const again = await sdkToken('client', ['__proto__'], 'production')
      expectOk(await register(again, { appName: 'odd-projects' }), 202)
      expect((await list()).body.applications[0].usage.find(usage => usage.project === '__proto__')).toEqual({
        project: '__proto__',
        environments: ['development', 'production'],
      })
    } finally {
      await api.close()
      dir.remove()
    }
  })
})
