/**
 * SDK metrics (sdk-api-contract §1, §2; issue 13 items 3 and 5): counts per flag, environment,
 * application and hour, exact and bounded; lastSeenAt in the admin views; tokens and scope.
 */
import { usageRows } from '../../../src/features/metrics/metrics.records'
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import {
  type Api,
  expectError,
  expectOk,
  freshApiPerTest,
  makeApi,
  paths,
  tempDir,
  tokenFor,
  waitFor,
} from '../../helpers'
import { USAGE_LIMITS } from '../../../src/features/metrics/usage-table'
import type { Row } from './usage-history.setup'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Usage {
  version: number
  maturity: string
  featureName: string
  lastHourUsage: Row[]
  seenApplications: string[]
}

async function sdkToken(
  type: 'client' | 'frontend' | 'admin',
  projects: string[] = ['*'],
  environment = 'development',
  on = api,
): Promise<string> {
  const name = `${type}-${Math.random().toString(36).slice(2, 10)}`
  const response = await on.createToken({
    tokenName: name,
    type,
    projects,
    ...(type === 'admin' ? {} : { environment }),
  })
  expect(response.status).toBe(201)
  return response.body.secret
}

type Toggles = Record<string, unknown>
const report = (token: string, appName: string, toggles: Toggles, path = '/api/client/metrics', on = api) =>
  on.post(
    path,
    {
      appName,
      instanceId: `${appName}-1`,
      bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles },
    },
    { token },
  )
const usageOf = (flag: string, on = api) => on.get<Usage>(`/api/admin/client-metrics/features/${flag}`)
const hourNow = () => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString()

describe('counting', () => {
  test("counts are summed exactly per flag, environment (the token's), application and hour, with variants", async () => {
    await api.newFlag('default', 'alpha')
    await api.newFlag('default', 'beta')
    const development = await sdkToken('client')
    const production = await sdkToken('client', ['*'], 'production')
    // The body's environment is not the token's: the token's is recorded, as in Unleash.
    const sent = [
      [development, 'web', { alpha: { yes: 3, no: 1, variants: { blue: 2, red: 1 } }, beta: { yes: 0, no: 5 } }],
      [development, 'web', { alpha: { yes: 4, no: 0, variants: { blue: 1, green: 7 } } }],
      [development, 'batch', { alpha: { yes: 1, no: 1 } }],
      [production, 'web', { alpha: { yes: 10, no: 20 } }],
    ] as const
    for (const [token, app, toggles] of sent) expectOk(await report(token, app, { ...toggles }), 202)
    const usage = await usageOf('alpha')
    expectOk(usage)
    const hour = hourNow()
    expect(usage.body).toEqual({
      version: 1,
      maturity: 'stable',
      featureName: 'alpha',
      lastHourUsage: [
        {
          featureName: 'alpha',
          appName: 'batch',
          environment: 'development',
          timestamp: hour,
          yes: 1,
          no: 1,
          variants: {},
        },
        {
          featureName: 'alpha',
          appName: 'web',
          environment: 'development',
          timestamp: hour,
          yes: 7,
          no: 1,
          variants: { blue: 3, red: 1, green: 7 },
        },
        {
          featureName: 'alpha',
          appName: 'web',
          environment: 'production',
          timestamp: hour,
          yes: 10,
          no: 20,
          variants: {},
        },
      ],
      seenApplications: ['batch', 'web'],
    })
    expect((await usageOf('beta')).body.lastHourUsage).toEqual([
      { featureName: 'beta', appName: 'web', environment: 'development', timestamp: hour, yes: 0, no: 5, variants: {} },
    ])
  })

  test('a new hour starts new rows; rows older than the hours kept are dropped at the next flush', async () => {
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    const start = new Date('2026-03-01T10:59:00.000Z')
    setSystemTime(start)
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    setSystemTime(new Date('2026-03-01T11:01:00.000Z'))
    expectOk(await report(token, 'web', { alpha: { yes: 2, no: 0 } }), 202)
    // The last hour holds what started within 60 minutes: 11:00 only, as in Unleash.
    expect((await usageOf('alpha')).body.lastHourUsage.map(row => [row.timestamp, row.yes])).toEqual([
      ['2026-03-01T11:00:00.000Z', 2],
    ])
    await api.services.metrics.flush()
    expect(
      usageRows(api.services.store.state.flagUsage)
        .map(row => row.timestamp)
        .sort(),
    ).toEqual(['2026-03-01T10:00:00.000Z', '2026-03-01T11:00:00.000Z'])
    setSystemTime(new Date(start.getTime() + (USAGE_LIMITS.hoursKept + 1) * 3_600_000))
    await api.services.metrics.flush()
    expect(usageRows(api.services.store.state.flagUsage).map(row => row.timestamp)).toEqual([
      '2026-03-01T11:00:00.000Z',
    ])
    expect(api.services.metrics.sizes.usageRows).toBe(1)
  })

  test("unknown flags, flags outside a project token's scope and empty counts are dropped silently (as Unleash does)", async () => {
    await api.newProject('other')
    await api.newFlag('default', 'mine')
    await api.newFlag('other', 'theirs')
    const token = await sdkToken('client', ['default'])
    expectOk(
      await report(token, 'web', {
        mine: { yes: 1, no: 0 },
        theirs: { yes: 5, no: 5 },
        ghost: { yes: 9, no: 9 },
        idle: { yes: 0, no: 0 },
      }),
      202,
    )
    expect((await usageOf('mine')).body.lastHourUsage.map(row => row.yes)).toEqual([1])
    expect((await usageOf('theirs', api)).body.lastHourUsage).toEqual([])
    expect(api.services.metrics.sizes.usageRows).toBe(1)
    expectError(await usageOf('ghost'), 404, 'NotFoundError', ['ghost'])
  })

  test('counts that would add up past Number.MAX_SAFE_INTEGER stay at it, whole and readable, in memory and after a flush', async () => {
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    const most = Number.MAX_SAFE_INTEGER
    for (let i = 0; i < 3; i++)
      expectOk(await report(token, 'web', { alpha: { yes: most, no: most - 1, variants: { blue: most } } }), 202)
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 5, variants: { blue: 1, red: 2 } } }), 202)
    const check = async () => {
      const row = (await usageOf('alpha')).body.lastHourUsage[0]
      expect([row.yes, row.no, row.variants]).toEqual([most, most, { blue: most, red: 2 }])
    }
    await check()
    await api.services.metrics.flush()
    expect(usageRows(api.services.store.state.flagUsage).map(row => [row.yes, row.no])).toEqual([[most, most]])
    await check()
  })

  test('a bad count is a 400 naming it, and nothing of the body is counted', async () => {
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    for (const [toggles, path] of [
      [{ alpha: { yes: 1 }, 'b/c': { yes: -1 } }, '/bucket/toggles/b~1c/yes'],
      [{ alpha: { yes: 1, no: 1.5 } }, '/bucket/toggles/alpha/no'],
      [{ alpha: { yes: 1, variants: { blue: 'x' } } }, '/bucket/toggles/alpha/variants/blue'],
      [{ alpha: { yes: 1, variants: [1] } }, '/bucket/toggles/alpha/variants'],
      [{ alpha: 3 }, '/bucket/toggles/alpha'],
    ] as const) {
      const response = await report(token, 'web', toggles)
      expectError(response, 400, 'ValidationError')
      expect(response.text).toContain(path)
    }
    expect((await usageOf('alpha')).body.lastHourUsage).toEqual([])
    expect(api.services.metrics.sizes.applications).toBe(0)
  })
})

describe('names shaped like members of Object.prototype', () => {
  // Any URL-friendly name is a flag name, and SDKs report every flag they evaluated: a report must
  // not be refused (losing every other flag's counts in it) because one flag or variant is called so.
  const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty']

  test('flags and variants called __proto__, constructor, toString… are counted exactly, seen, kept across a restart, and Object.prototype stays clean', async () => {
    const dir = tempDir()
    try {
      api = await makeApi({ dataDir: dir.path })
      for (const name of NAMES) await api.newFlag('default', name)
      await api.newFlag('default', 'plain')
      const client = await sdkToken('client')
      const frontend = await sdkToken('frontend')
      const variants = Object.fromEntries(NAMES.map((name, index) => [name, index + 1]))
      // Through JSON text, as a server reads it: "__proto__" is then an own key (in an object literal it would not be).
      const toggles = JSON.parse(
        `{${NAMES.map(name => `"${name}":{"yes":2,"no":1,"variants":${JSON.stringify(variants)}}`).join(',')},"plain":{"yes":1,"no":0}}`,
      )
      expectOk(await report(client, 'web', toggles), 202)
      expectOk(await report(frontend, 'web', toggles, '/api/frontend/client/metrics'))
      expect(({} as Record<string, unknown>).yes).toBeUndefined()
      expect(Object.getPrototypeOf({})).toBe(Object.prototype)
      const expected = Object.fromEntries(Object.entries(variants).map(([name, count]) => [name, count * 2]))
      expect(Object.keys(expected)).toContain('__proto__')
      const check = async () => {
        for (const name of NAMES) {
          const usage = await usageOf(name)
          expectOk(usage)
          expect(usage.body.lastHourUsage.map(row => [row.featureName, row.yes, row.no])).toEqual([[name, 4, 2]])
          expect(JSON.stringify(usage.body.lastHourUsage[0].variants, Object.keys(expected).sort())).toBe(
            JSON.stringify(expected, Object.keys(expected).sort()),
          )
        }
        expect((await usageOf('plain')).body.lastHourUsage.map(row => row.yes)).toEqual([2])
      }
      await check()
      await api.services.metrics.flush()
      const seen = (await api.listFlags('default')).body.features
      expect(
        seen
          .filter(flag => flag.lastSeenAt !== null)
          .map(flag => flag.name)
          .sort(),
      ).toEqual([...NAMES, 'plain'].sort())

      await api.close()
      api = await makeApi({ dataDir: dir.path })
      await check()
      // Prototype keys where the body has properties, not names, are still refused.
      for (const body of [
        '{"appName":"web","__proto__":{"x":1}}',
        '{"appName":"web","bucket":{"start":0,"stop":0,"toggles":{},"constructor":{"prototype":{"x":1}}}}',
      ]) {
        const response = await api.request('POST', '/api/client/metrics', {
          raw: body,
          token: client,
          headers: { 'content-type': 'application/json' },
        })
        expectError(response, 400, 'ValidationError', ['is not allowed as a property name'])
      }
    } finally {
      await api.close()
      dir.remove()
    }
  })
})

describe('bounds', () => {
  const saved = { ...USAGE_LIMITS }
  afterEach(() => Object.assign(USAGE_LIMITS, saved))

  test('thousands of unknown flags grow nothing; a huge variant map is counted up to the per-row cap', async () => {
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    const unknown: Toggles = {}
    for (let i = 0; i < 2500; i++) unknown[`unknown-${i}`] = { yes: 1, no: 1 }
    for (let i = 0; i < 20; i++) expectOk(await report(token, `app-${i}`, unknown), 202)
    expect(api.services.metrics.sizes).toMatchObject({ usageRows: 0, usageSeries: 0, variantCounters: 0 })
    const variants: Record<string, number> = {}
    for (let i = 0; i < 3000; i++) variants[`variant-${i}`] = 1
    variants[`${'x'.repeat(USAGE_LIMITS.variantNameLength + 1)}`] = 1
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0, variants } }), 202)
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0, variants } }), 202)
    const [row] = (await usageOf('alpha')).body.lastHourUsage
    expect(Object.keys(row.variants)).toHaveLength(USAGE_LIMITS.variantsPerRow)
    // The names counted are the first ones; they keep counting, the others never start.
    expect(row.variants['variant-0']).toBe(2)
    expect(row.variants[`variant-${USAGE_LIMITS.variantsPerRow}`]).toBeUndefined()
    expect(row.yes).toBe(2)
    expect(api.services.metrics.sizes).toMatchObject({ usageRows: 1, variantCounters: USAGE_LIMITS.variantsPerRow })
  })

  test('at the row cap new rows are dropped while existing rows keep counting; the variant-counter cap holds over all rows', async () => {
    USAGE_LIMITS.series = 5
    USAGE_LIMITS.variantCounters = 7
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    for (let i = 0; i < 20; i++)
      expectOk(
        await report(token, `app-${String(i).padStart(2, '0')}`, {
          alpha: { yes: 1, no: 0, variants: { a: 1, b: 1 } },
        }),
        202,
      )
    expectOk(await report(token, 'app-00', { alpha: { yes: 1, no: 0 } }), 202)
    const rows = (await usageOf('alpha')).body.lastHourUsage
    expect(rows.map(row => [row.appName, row.yes])).toEqual([
      ['app-00', 2],
      ['app-01', 1],
      ['app-02', 1],
      ['app-03', 1],
      ['app-04', 1],
    ])
    expect(rows.reduce((sum, row) => sum + Object.keys(row.variants).length, 0)).toBe(7)
    expect(api.services.metrics.sizes).toMatchObject({ usageRows: 5, variantCounters: 7 })
  })
})

describe('lastSeenAt', () => {
  test("is set per environment by the flush, in the flag view and the (cached) flag list; the flag's is the latest", async () => {
    await api.newFlag('default', 'alpha')
    await api.newFlag('default', 'beta')
    const development = await sdkToken('client')
    const production = await sdkToken('client', ['*'], 'production')
    const before = await api.listFlags('default')
    expect(before.body.features.map(flag => flag.lastSeenAt)).toEqual([null, null])
    setSystemTime(new Date('2026-03-01T10:00:00.000Z'))
    expectOk(await report(development, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    setSystemTime(new Date('2026-03-01T10:05:00.000Z'))
    expectOk(await report(production, 'web', { alpha: { yes: 0, no: 1 } }), 202)
    // Not before the flush commits it.
    expect((await api.getFlag('default', 'alpha')).body.lastSeenAt).toBeNull()
    await api.services.metrics.flush()
    const flag = (await api.getFlag('default', 'alpha')).body
    expect(flag.lastSeenAt).toBe('2026-03-01T10:05:00.000Z')
    expect(
      Object.fromEntries(flag.environments.map(environment => [environment.name, environment.lastSeenAt])),
    ).toEqual({
      development: '2026-03-01T10:00:00.000Z',
      production: '2026-03-01T10:05:00.000Z',
    })
    const list = (await api.listFlags('default')).body.features
    expect(list.map(entry => [entry.name, entry.lastSeenAt])).toEqual([
      ['alpha', '2026-03-01T10:05:00.000Z'],
      ['beta', null],
    ])
    expect(list[0].environments.map(environment => environment.lastSeenAt)).toEqual([
      '2026-03-01T10:00:00.000Z',
      '2026-03-01T10:05:00.000Z',
    ])
    // A later report moves it, and the cached list follows.
    setSystemTime(new Date('2026-03-01T11:00:00.000Z'))
    expectOk(await report(development, 'web', { beta: { yes: 1, no: 0 } }), 202)
    await api.services.metrics.flush()
    expect((await api.listFlags('default')).body.features.map(entry => entry.lastSeenAt)).toEqual([
      '2026-03-01T10:05:00.000Z',
      '2026-03-01T11:00:00.000Z',
    ])
  })

  test('the flush timer commits on its own (METRICS_FLUSH_MS)', async () => {
    const quick = await makeApi({ metricsFlushMs: 50 })
    await quick.newFlag('default', 'alpha')
    const token = await sdkToken('client', ['*'], 'development', quick)
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }, '/api/client/metrics', quick), 202)
    await waitFor(
      async () => (await quick.getFlag('default', 'alpha')).body.lastSeenAt !== null,
      'the flush timer to commit',
    )
    expect(
      (await quick.getFlag('default', 'alpha')).body.environments.find(
        environment => environment.name === 'development',
      )?.lastSeenAt,
    ).not.toBeNull()
  })

  test('a flag deleted and made again under the same name starts unseen', async () => {
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    await api.services.metrics.flush()
    expect((await api.getFlag('default', 'alpha')).body.lastSeenAt).not.toBeNull()
    expectOk(await api.delete(paths.flag('alpha')), 202)
    expectOk(await api.delete('/api/admin/archive/alpha'))
    setSystemTime(new Date(Date.now() + 1000))
    await api.newFlag('default', 'alpha')
    expect((await api.getFlag('default', 'alpha')).body.lastSeenAt).toBeNull()
    await api.services.metrics.flush()
    expect(api.services.store.state.flagLastSeen.alpha).toBeUndefined()
  })
})

describe('usage belongs to the flag, not to its name (issue 18 item 4)', () => {
  interface App {
    seenToggles: { name: string; project?: string; type?: string; notFound?: boolean }[]
  }
  const seenOf = async (flag: string, on = api) => {
    const body = (await on.getFlag(flag === 'alpha' ? 'other' : 'default', flag)).body
    return [body.lastSeenAt, ...body.environments.map(environment => environment.lastSeenAt)]
  }

  /**
   * Reports for `alpha` in default, some flushed and some only in memory, then alpha deleted and
   * made again in project `other`; `clock` says whether time stands still (the deletion and the new
   * flag then share a createdAt to the millisecond) or moves on.
   */
  for (const clock of ['moving', 'standing still'] as const) {
    test(`a flag made again under a deleted flag's name (another project, clock ${clock}) starts unseen, with no usage, whatever was flushed`, async () => {
      if (clock === 'standing still') setSystemTime(new Date('2026-03-01T10:00:00.000Z'))
      await api.newProject('other')
      await api.newFlag('default', 'alpha')
      const token = await sdkToken('client')
      expectOk(await report(token, 'web', { alpha: { yes: 5, no: 1, variants: { blue: 3 } } }), 202)
      await api.services.metrics.flush()
      expectOk(await report(token, 'web', { alpha: { yes: 2, no: 0, variants: { red: 1 } } }), 202)
      expectOk(await report(token, 'batch', { alpha: { yes: 1, no: 1 } }), 202)
      expectOk(await api.delete(paths.flag('alpha')), 202)
      expectOk(await api.delete('/api/admin/archive/alpha'))
      // Deleted and not made again: the application still lists what it reported, as not found.
      expect((await api.get<App>('/api/admin/metrics/applications/web')).body.seenToggles).toEqual([
        { name: 'alpha', notFound: true },
      ])

      await api.newFlag('other', 'alpha')
      const reader = await tokenFor(api, 'other-reader', { role: 'viewer', projects: ['other'] })
      const empty = { version: 1, maturity: 'stable', featureName: 'alpha', lastHourUsage: [], seenApplications: [] }
      for (const token of [undefined, reader])
        expect(
          (await api.get<Usage>('/api/admin/client-metrics/features/alpha', token ? { token } : undefined)).body,
        ).toEqual(empty)
      expect(await seenOf('alpha')).toEqual([null, null, null])
      // The old flag's counts, written or not, are not the new one's after the flush either.
      await api.services.metrics.flush()
      expect((await usageOf('alpha')).body).toEqual(empty)
      expect(await seenOf('alpha')).toEqual([null, null, null])
      for (const app of ['web', 'batch'])
        expect((await api.get<App>(`/api/admin/metrics/applications/${app}`)).body.seenToggles).toEqual([])
      expect(usageRows(api.services.store.state.flagUsage).filter(row => row.featureName === 'alpha')).toEqual([])

      // Its own reports count from nothing, seen no earlier than it was made.
      expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
      expect(
        (await usageOf('alpha')).body.lastHourUsage.map(({ appName, yes, no, variants }) => ({
          appName,
          yes,
          no,
          variants,
        })),
      ).toEqual([{ appName: 'web', yes: 1, no: 0, variants: {} }])
      await api.services.metrics.flush()
      const flag = (await api.getFlag('other', 'alpha')).body
      expect(flag.lastSeenAt).not.toBeNull()
      expect(Date.parse(flag.lastSeenAt!)).toBeGreaterThanOrEqual(Date.parse(flag.createdAt!))
      expect((await api.get<App>('/api/admin/metrics/applications/web')).body.seenToggles).toEqual([
        { name: 'alpha', project: 'other', type: 'release' },
      ])
    })
  }

  test('a report counted in memory just before the deletion, and the new flag reported in the same flush interval, give the new flag only its own', async () => {
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    expectOk(await report(token, 'web', { alpha: { yes: 9, no: 9 } }), 202)
    expectOk(await api.delete(paths.flag('alpha')), 202)
    expectOk(await api.delete('/api/admin/archive/alpha'))
    await api.newFlag('default', 'alpha')
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    await api.services.metrics.flush()
    expect((await usageOf('alpha')).body.lastHourUsage.map(({ yes, no }) => [yes, no])).toEqual([[1, 0]])
    const rows = usageRows(api.services.store.state.flagUsage)
    expect(rows.map(({ yes, no }) => [yes, no])).toEqual([[1, 0]])
    const flag = (await api.getFlag('default', 'alpha')).body
    expect(rows[0].flagCreatedAt).toBe(flag.createdAt!)
    expect(Date.parse(flag.lastSeenAt!)).toBeGreaterThanOrEqual(Date.parse(flag.createdAt!))
  })
})

describe('no disk write and no event per request', () => {
  test('reports commit nothing until the flush, which is one commit without events', async () => {
    await api.newFlag('default', 'alpha')
    const token = await sdkToken('client')
    const frontend = await sdkToken('frontend')
    const commits: number[] = []
    api.services.store.onCommit(events => commits.push(events.length))
    const lastEvent = api.lastEventId()
    for (let i = 0; i < 50; i++) {
      expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
      expectOk(await report(frontend, 'browser', { alpha: { yes: 0, no: 1 } }, '/api/frontend/client/metrics'), 200)
      expectOk(await api.post('/api/client/register', { appName: 'web', instanceId: `i-${i}` }, { token }), 202)
    }
    await api.services.store.flush()
    expect(commits).toEqual([])
    await api.services.metrics.flush()
    expect(commits).toEqual([0])
    expect(api.lastEventId()).toBe(lastEvent)
    expect(api.eventsSince(lastEvent)).toEqual([])
    // Nothing changed since: a flush commits nothing.
    await api.services.metrics.flush()
    expect(commits).toEqual([0])
  })
})

describe('tokens (sdk-api-contract §5)', () => {
  test('client routes take client tokens, frontend routes frontend tokens; others 403, none or unknown 401', async () => {
    await api.newFlag('default', 'alpha')
    const client = await sdkToken('client')
    const frontend = await sdkToken('frontend')
    const admin = await sdkToken('admin')
    const body = { appName: 'web', bucket: { start: 0, stop: 0, toggles: { alpha: { yes: 1, no: 0 } } } }
    for (const [path, own, others] of [
      ['/api/client/metrics', client, [frontend, admin]],
      ['/api/client/register', client, [frontend, admin]],
      ['/api/frontend/client/metrics', frontend, [client, admin]],
      ['/api/frontend/client/register', frontend, [client, admin]],
    ] as const) {
      expect((await api.post(path, body, { token: own })).status).toBe(path.startsWith('/api/frontend') ? 200 : 202)
      for (const token of others) expectError(await api.post(path, body, { token }), 403, 'NoAccessError')
      expectError(await api.post(path, body, { token: null }), 401, 'AuthenticationRequired')
      expectError(
        await api.post(path, body, { token: 'default:development.0123456789abcdef0123456789abcdef' }),
        401,
        'AuthenticationRequired',
      )
    }
    // Only the two metrics posts by their own tokens counted.
    expect((await usageOf('alpha')).body.lastHourUsage.map(row => [row.environment, row.yes])).toEqual([
      ['development', 2],
    ])
    for (const path of [
      '/api/admin/client-metrics/features/alpha',
      '/api/admin/metrics/applications',
      '/api/admin/metrics/applications/web',
    ]) {
      expectError(await api.get(path, { token: client }), 403, 'NoAccessError')
      expectError(await api.get(path, { token: frontend }), 403, 'NoAccessError')
      expectError(await api.get(path, { token: null }), 401, 'AuthenticationRequired')
    }
  })
})
