/**
 * The usage history at the size (1,000 flags × 3 environments × 20 applications), its
 * pruning where an hour reuses the slot of the one 49 hours before, and a restart and two
 * instances in the compact format (one record per flag and hour).
 */
import { describe, expect, test } from 'bun:test'
import { usageRows } from '../../../src/features/metrics/metrics.records'
import { USAGE_LIMITS } from '../../../src/features/metrics/usage-table'
import { type Api, expectOk, freshApiPerTest, makeApi, tempDir, waitFor } from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'
import { at, brief, usageHelpers } from './usage-history.setup'

let api: Api
freshApiPerTest(fresh => (api = fresh))
const { clientToken, report, history } = usageHelpers(() => api)

const FLAGS = 1000
const ENVIRONMENTS = ['development', 'production', 'staging']
const APPS = 20

describe('the issue’s size', () => {
  test('1,000 flags × 3 environments × 20 applications are held whole, in the caps, one record per flag and hour, and again after a restart', async () => {
    // Series do not grow with the hours: 48 hours of this hold the same 60,000 series, 48 slots each.
    expect(USAGE_LIMITS.series).toBeGreaterThanOrEqual(FLAGS * ENVIRONMENTS.length * APPS)
    expect(USAGE_LIMITS.rowsPerFlagHour).toBeGreaterThanOrEqual(ENVIRONMENTS.length * APPS)
    const dir = tempDir()
    try {
      let on = await makeApi({ dataDir: dir.path })
      expectOk(await on.post('/api/admin/environments', { name: 'staging', type: 'test' }), 201)
      for (let f = 0; f < FLAGS; f++) await on.newFlag('default', `flag-${f}`)
      const tokens = await Promise.all(ENVIRONMENTS.map(environment => clientToken(environment, ['*'], on)))
      const toggles = Object.fromEntries(
        Array.from({ length: FLAGS }, (_, f) => [`flag-${f}`, { yes: 3, no: 1, variants: f % 10 ? {} : { blue: 1 } }]),
      )
      for (const hour of [0, 1]) {
        at(hour)
        for (const token of tokens)
          for (let a = 0; a < APPS; a++) expectOk(await report(token, `app-${a}`, toggles, on), 202)
        await on.services.metrics.flush()
      }
      const held = FLAGS * ENVIRONMENTS.length * APPS
      expect(on.services.metrics.sizes).toMatchObject({ usageRows: 2 * held, usageSeries: held })
      expect(Object.keys(on.services.store.state.flagUsage)).toHaveLength(2 * FLAGS)
      expect(usageRows(on.services.store.state.flagUsage)).toHaveLength(2 * held)
      const answer = (await history('flag-990', 48, on)).body
      expect(answer.data).toHaveLength(2 * ENVIRONMENTS.length * APPS)
      expect(answer.data.every(row => row.yes === 3 && row.no === 1 && row.variants.blue === 1)).toBe(true)
      expect(brief(answer.data).slice(0, 2)).toEqual([
        ['10', 'development', 'app-0', 3, 1],
        ['10', 'development', 'app-1', 3, 1],
      ])
      await on.close()
      on = await makeApi({ dataDir: dir.path })
      expect((await history('flag-990', 48, on)).body).toEqual(answer)
      expect(on.services.metrics.sizes).toMatchObject({ usageRows: 2 * held, usageSeries: held })
      await on.close()
    } finally {
      dir.remove()
    }
  }, 120_000)
})

describe('pruning', () => {
  test('an hour 49 hours after another takes its slot: the older is neither answered nor kept, before and after the flush', async () => {
    await api.newFlag('default', 'alpha')
    const token = await clientToken()
    at(0)
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0, variants: { blue: 1 } } }), 202)
    at(1)
    expectOk(await report(token, 'web', { alpha: { yes: 2, no: 0 } }), 202)
    await api.services.metrics.flush()
    // 10:30 two days on: the hour that began at 10:00 two days before is past the 48 hours.
    at(48)
    expect(brief((await history('alpha', 48)).body.data).map(row => row[3])).toEqual([2])
    // 11:30: hour 49 reuses hour 0's slot, counted before any flush prunes hour 0.
    at(49)
    expectOk(await report(token, 'web', { alpha: { yes: 7, no: 1 } }), 202)
    const data = (await history('alpha', 48)).body.data
    // 48 hours back from 11:30 starts after 11:00 two days before: hour 1 is not answered, though kept until pruned.
    expect(data.map(row => [row.timestamp, row.yes, row.variants])).toEqual([['2026-03-03T11:00:00.000Z', 7, {}]])
    await api.services.metrics.flush()
    expect(
      usageRows(api.services.store.state.flagUsage)
        .map(row => [row.timestamp, row.yes])
        .sort(),
    ).toEqual([
      ['2026-03-01T11:00:00.000Z', 2],
      ['2026-03-03T11:00:00.000Z', 7],
    ])
    at(50)
    await api.services.metrics.flush()
    expect(Object.keys(api.services.store.state.flagUsage)).toEqual(['2026-03-03T11:00:00.000Z|alpha'])
    expect(api.services.metrics.sizes).toMatchObject({ usageRows: 1, usageSeries: 1, variantCounters: 0 })
  })
})

describe('two instances', () => {
  test.skipIf(!ON_POSTGRES)(
    "on one PostgreSQL database, both count into one flag's hourly record, and one's pruning is the other's",
    async () => {
      const database = await freshDatabase()
      const a = await makeApi({ database })
      const b = await makeApi({ database })
      await a.newFlag('default', 'alpha')
      await waitFor(() => b.services.store.state.flags.alpha !== undefined, 'the flag on b')
      const token = await clientToken('development', ['*'], a)
      await waitFor(() => Object.keys(b.services.store.state.tokens).length > 0, 'the token on b')
      await waitFor(
        () => Object.keys(b.services.store.state.tokens).length === Object.keys(a.services.store.state.tokens).length,
        'the token on b',
      )
      at(0)
      expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0, variants: { blue: 1 } } }, a), 202)
      expectOk(await report(token, 'web', { alpha: { yes: 10, no: 2, variants: { blue: 2, red: 1 } } }, b), 202)
      expectOk(await report(token, 'api', { alpha: { yes: 0, no: 3 } }, b), 202)
      await a.services.metrics.flush()
      await b.services.metrics.flush()
      const expected: { appName: string; yes: number; no: number; variants: Record<string, number> }[] = [
        { appName: 'api', yes: 0, no: 3, variants: {} },
        { appName: 'web', yes: 11, no: 2, variants: { blue: 3, red: 1 } },
      ]
      const seen = async (on: Api) =>
        (await history('alpha', 48, on)).body.data.map(({ appName, yes, no, variants }) => ({
          appName,
          yes,
          no,
          variants,
        }))
      await waitFor(async () => JSON.stringify(await seen(a)) === JSON.stringify(expected), "b's counts on a")
      expect(await seen(b)).toEqual(expected)
      expect(Object.keys(a.services.store.state.flagUsage)).toEqual(['2026-03-01T10:00:00.000Z|alpha'])
      // Two days on, a's flush prunes the hour; b follows without a flush of its own.
      at(49)
      await a.services.metrics.flush()
      await waitFor(() => b.services.metrics.sizes.usageRows === 0, 'the pruning on b')
      expect((await history('alpha', 48, b)).body.data).toEqual([])
      expect(b.services.store.state.flagUsage).toEqual({})
    },
  )
})
