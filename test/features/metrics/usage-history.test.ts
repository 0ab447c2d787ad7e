/**
 * The usage history: SDK metrics kept as hourly rows per flag, environment and application for 48
 * hours, read at Unleash's GET /api/admin/client-metrics/features/:name/raw?hoursBack=1..48; its
 * caps, its pruning, a restart on the files and two instances on one PostgreSQL database.
 */
import { usageRows } from '../../../src/features/metrics/metrics.records'
import { afterEach, describe, expect, test } from 'bun:test'
import { at, brief, usageHelpers } from './usage-history.setup'
import { USAGE_LIMITS } from '../../../src/features/metrics/usage-table'
import { type Api, expectError, expectOk, freshApiPerTest, makeApi, tempDir, waitFor } from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const { clientToken, report, history } = usageHelpers(() => api)

describe('hourly rows', () => {
  test('one row per hour, environment and application, oldest first; hoursBack picks the hours, 1 by default', async () => {
    await api.newFlag('default', 'alpha')
    const dev = await clientToken('development')
    const prod = await clientToken('production')
    at(0)
    expectOk(await report(dev, 'web', { alpha: { yes: 1, no: 2, variants: { blue: 1 } } }), 202)
    expectOk(await report(dev, 'web', { alpha: { yes: 3, no: 0 } }), 202)
    at(1)
    expectOk(await report(prod, 'web', { alpha: { yes: 5, no: 0 } }), 202)
    expectOk(await report(dev, 'api', { alpha: { yes: 0, no: 7 } }), 202)
    at(2)
    expectOk(await report(prod, 'web', { alpha: { yes: 1, no: 1 } }), 202)

    const all = await history('alpha', 48)
    expectOk(all)
    expect(all.body).toMatchObject({ version: 1, maturity: 'stable', featureName: 'alpha' })
    expect(brief(all.body.data)).toEqual([
      ['10', 'development', 'web', 4, 2],
      ['11', 'development', 'api', 0, 7],
      ['11', 'production', 'web', 5, 0],
      ['12', 'production', 'web', 1, 1],
    ])
    expect(all.body.data[0]).toEqual({
      featureName: 'alpha',
      appName: 'web',
      environment: 'development',
      timestamp: '2026-03-01T10:00:00.000Z',
      yes: 4,
      no: 2,
      variants: { blue: 1 },
    })
    expect(brief((await history('alpha', 2)).body.data).map(row => row[0])).toEqual(['11', '11', '12'])
    expect(brief((await history('alpha')).body.data)).toEqual([['12', 'production', 'web', 1, 1]])
    // The same after the flush: what is read is what is stored plus what is not flushed yet.
    await api.services.metrics.flush()
    expect((await history('alpha', 48)).body).toEqual(all.body)
  })

  test('hoursBack outside 1..48 or not a whole number is a 400 naming it; an unknown flag, or one of another project, 404', async () => {
    await api.newFlag('default', 'alpha')
    for (const bad of ['0', '49', '-1', '1.5', 'abc', '', '1e1'])
      expectError(await history('alpha', bad), 400, 'ValidationError', ['hoursBack'])
    expectOk(await history('alpha', 48))
    expectError(await history('nope', 1), 404, 'NotFoundError', ['nope'])
    await api.newProject('other')
    const scoped = await api.createToken({ tokenName: 'scoped', type: 'admin', projects: ['other'] })
    expect(scoped.status).toBe(201)
    expectError(await history('alpha', 1, api, scoped.body.secret), 404, 'NotFoundError', ['alpha'])
  })

  test('hours that began more than 48 hours ago are not answered, and leave memory and the store at the next flush', async () => {
    await api.newFlag('default', 'alpha')
    const token = await clientToken()
    at(0)
    expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    at(5)
    expectOk(await report(token, 'web', { alpha: { yes: 2, no: 0 } }), 202)
    await api.services.metrics.flush()
    at(47)
    await api.services.metrics.flush()
    expect(brief((await history('alpha', 48)).body.data).map(row => row[3])).toEqual([1, 2])
    at(48)
    expect(brief((await history('alpha', 48)).body.data).map(row => row[3])).toEqual([2])
    at(49)
    await api.services.metrics.flush()
    expect(Object.keys(api.services.store.state.flagUsage)).toHaveLength(1)
    expect(api.services.metrics.sizes.usageRows).toBe(1)
  })
})

describe('caps', () => {
  const saved = { ...USAGE_LIMITS }
  afterEach(() => Object.assign(USAGE_LIMITS, saved))

  test('past the rows of one flag and hour, new applications are dropped; the other flags and the next hour are not', async () => {
    USAGE_LIMITS.rowsPerFlagHour = 3
    await api.newFlag('default', 'alpha')
    await api.newFlag('default', 'beta')
    const token = await clientToken()
    at(0)
    for (const app of ['a1', 'a2', 'a3', 'a4', 'a5'])
      expectOk(await report(token, app, { alpha: { yes: 1, no: 0 }, beta: { yes: 1, no: 0 } }), 202)
    // Rows held keep counting.
    expectOk(await report(token, 'a1', { alpha: { yes: 1, no: 0 } }), 202)
    expect(brief((await history('alpha')).body.data).map(row => [row[2], row[3]])).toEqual([
      ['a1', 2],
      ['a2', 1],
      ['a3', 1],
    ])
    USAGE_LIMITS.rowsPerFlagHour = 10
    expectOk(await report(token, 'a4', { alpha: { yes: 1, no: 0 } }), 202)
    USAGE_LIMITS.rowsPerFlagHour = 3
    at(1)
    expectOk(await report(token, 'a5', { alpha: { yes: 1, no: 0 } }), 202)
    expect(brief((await history('alpha', 2)).body.data).map(row => [row[0], row[2]])).toEqual([
      ['10', 'a1'],
      ['10', 'a2'],
      ['10', 'a3'],
      ['10', 'a4'],
      ['11', 'a5'],
    ])
    expect(api.services.metrics.sizes.usageRows).toBe(3 + 4 + 1)
  })

  test('past the rows in total nothing new of the same hour is kept; a later hour takes the place of the oldest', async () => {
    USAGE_LIMITS.series = 4
    await api.newFlag('default', 'alpha')
    await api.newFlag('default', 'beta')
    const token = await clientToken()
    at(0)
    for (const app of ['a1', 'a2', 'a3']) expectOk(await report(token, app, { alpha: { yes: 1, no: 0 } }), 202)
    for (const app of ['a1', 'a2']) expectOk(await report(token, app, { beta: { yes: 1, no: 0 } }), 202)
    expect((await history('alpha')).body.data).toHaveLength(3)
    expect(brief((await history('beta')).body.data).map(row => row[2])).toEqual(['a1'])
    await api.services.metrics.flush()
    at(1)
    expectOk(await report(token, 'a9', { beta: { yes: 1, no: 0 } }), 202)
    expect((await history('alpha', 2)).body.data).toEqual([])
    expect(brief((await history('beta', 2)).body.data).map(row => [row[0], row[2]])).toEqual([['11', 'a9']])
    await api.services.metrics.flush()
    expect(usageRows(api.services.store.state.flagUsage).map(row => row.appName)).toEqual(['a9'])
  })
})

describe('kept', () => {
  test('across a restart on the files', async () => {
    const dir = tempDir()
    try {
      let first = await makeApi({ dataDir: dir.path })
      await first.newFlag('default', 'alpha')
      const token = await clientToken('development', ['*'], first)
      at(0)
      expectOk(await report(token, 'web', { alpha: { yes: 1, no: 1 } }, first), 202)
      at(1)
      expectOk(await report(token, 'web', { alpha: { yes: 2, no: 0, variants: { blue: 2 } } }, first), 202)
      const before = (await history('alpha', 48, first)).body
      expect(before.data).toHaveLength(2)
      await first.close()
      first = await makeApi({ dataDir: dir.path })
      expect((await history('alpha', 48, first)).body).toEqual(before)
      await first.close()
    } finally {
      dir.remove()
    }
  })

  test.skipIf(!ON_POSTGRES)(
    'shared by two instances on one PostgreSQL database: counts reported to each add up',
    async () => {
      const database = await freshDatabase()
      const a = await makeApi({ database })
      const b = await makeApi({ database })
      await a.newFlag('default', 'alpha')
      await waitFor(() => b.services.store.state.flags.alpha !== undefined, 'the flag on b')
      const token = await clientToken('development', ['*'], a)
      await waitFor(
        () => Object.keys(b.services.store.state.tokens).length === Object.keys(a.services.store.state.tokens).length,
        'the token on b',
      )
      at(0)
      expectOk(await report(token, 'web', { alpha: { yes: 1, no: 0 } }, a), 202)
      expectOk(await report(token, 'web', { alpha: { yes: 10, no: 0 } }, b), 202)
      at(1)
      expectOk(await report(token, 'api', { alpha: { yes: 0, no: 3 } }, b), 202)
      await a.services.metrics.flush()
      await b.services.metrics.flush()
      const expected = [
        ['10', 'development', 'web', 11, 0],
        ['11', 'development', 'api', 0, 3],
      ]
      await waitFor(
        async () => JSON.stringify(brief((await history('alpha', 48, a)).body.data)) === JSON.stringify(expected),
        "both instances' counts on a",
      )
      expect(brief((await history('alpha', 48, b)).body.data)).toEqual(expected)
    },
  )
})
