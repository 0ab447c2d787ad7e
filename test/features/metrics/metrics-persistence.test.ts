/**
 * SDK metrics on a real data directory: no file is written per request, the batches survive a
 * restart (counts, lastSeenAt, applications), and a batch that cannot be written is kept for the next.
 */
import { usageRows } from '../../../src/features/metrics/metrics.records'
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Api, expectOk, makeApi, tempDir, waitFor } from '../../helpers'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../../../src/services'
import { realFileSystem, type FileSystem } from '../../../src/storage/files'

/** The real file system, counting the files opened for writing, and failing them with ENOSPC on demand. */
class CountingFileSystem implements FileSystem {
  opened: string[] = []
  full = false
  /** While set, every open waits for it: a commit then stays on its way to disk. */
  gate: Promise<void> | null = null
  async open(path: string, flags: 'a' | 'w' | 'r+') {
    this.opened.push(path)
    if (this.gate) await this.gate
    if (this.full) throw Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' })
    return realFileSystem.open(path, flags)
  }
  truncate = realFileSystem.truncate
  rename = realFileSystem.rename
  unlink = realFileSystem.unlink
}

const dirs: { remove(): void }[] = []
const apis: Api[] = []
afterEach(async () => {
  setSystemTime()
  for (const api of apis.splice(0)) await api.close().catch(() => api.abandon())
  for (const dir of dirs.splice(0)) dir.remove()
})

function newDir(): string {
  const dir = tempDir('flags-metrics-')
  dirs.push(dir)
  return dir.path
}

async function open(dataDir: string, fs?: FileSystem, metricsFlushMs?: number): Promise<Api> {
  const api = await makeApi({ dataDir, fs, metricsFlushMs })
  apis.push(api)
  return api
}

async function close(api: Api) {
  apis.splice(apis.indexOf(api), 1)
  await api.close()
}

const lines = (dir: string, file: string) =>
  readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter(line => line !== '').length

async function clientToken(api: Api, name: string, environment = 'development'): Promise<string> {
  const response = await api.createToken({ tokenName: name, type: 'client', projects: ['*'], environment })
  expectOk(response, 201)
  return response.body.secret
}

const report = (api: Api, token: string, appName: string, toggles: Record<string, unknown>) =>
  api.post(
    '/api/client/metrics',
    { appName, instanceId: `${appName}-1`, bucket: { start: 0, stop: 0, toggles } },
    { token },
  )

describe('SDK metrics on disk', () => {
  test('a thousand requests open no file; the flush appends one journal line and no event', async () => {
    const dir = newDir()
    const fs = new CountingFileSystem()
    const api = await open(dir, fs)
    await api.newFlag('default', 'alpha')
    const token = await clientToken(api, 'sdk')
    const journal = lines(dir, JOURNAL_FILE)
    const events = lines(dir, EVENTS_FILE)
    fs.opened = []
    for (let i = 0; i < 1000; i++) {
      expectOk(await report(api, token, `app-${i % 3}`, { alpha: { yes: 1, no: 1, variants: { blue: 1 } } }), 202)
      if (i % 100 === 0)
        expectOk(
          await api.post('/api/client/register', { appName: `app-${i % 3}`, instanceId: `i-${i}` }, { token }),
          202,
        )
    }
    expect(fs.opened).toEqual([])
    expect(lines(dir, JOURNAL_FILE)).toBe(journal)
    await api.services.metrics.flush()
    expect(lines(dir, JOURNAL_FILE)).toBe(journal + 1)
    expect(lines(dir, EVENTS_FILE)).toBe(events)
  })

  test('counts, lastSeenAt and applications are found again after a restart, and counting goes on from them', async () => {
    const dir = newDir()
    const first = await open(dir)
    await first.newFlag('default', 'alpha')
    const development = await clientToken(first, 'sdk')
    const production = await clientToken(first, 'sdk-production', 'production')
    expectOk(
      await first.post(
        '/api/client/register',
        {
          appName: 'web',
          instanceId: 'pod-1',
          sdkVersion: 'unleash-client-node:6.1.0',
          strategies: ['default', 'mine'],
        },
        { token: development },
      ),
      202,
    )
    for (let i = 0; i < 7; i++)
      expectOk(await report(first, development, 'web', { alpha: { yes: 2, no: 1, variants: { blue: 1 } } }), 202)
    expectOk(await report(first, production, 'web', { alpha: { yes: 5, no: 0 } }), 202)
    // The last batch is not flushed by hand: closing the store commits it before the checkpoint.
    const before = (await first.get('/api/admin/client-metrics/features/alpha')).body
    const applications = (await first.get('/api/admin/metrics/applications')).body
    await close(first)

    const second = await open(dir)
    expect((await second.get('/api/admin/client-metrics/features/alpha')).body).toEqual(before)
    expect((await second.get('/api/admin/metrics/applications')).body).toEqual(applications)
    const flag = (await second.getFlag('default', 'alpha')).body
    expect(flag.environments.map(environment => environment.lastSeenAt !== null)).toEqual([true, true])
    expect(flag.lastSeenAt).not.toBeNull()
    const app = (
      await second.get<{ instances: { instanceId: string; environment: string; sdkVersion: string | null }[] }>(
        '/api/admin/metrics/applications/web',
      )
    ).body
    // web-1 reported with both tokens: an instance per environment, as in Unleash (its two may share a lastSeen, hence the sort).
    expect(
      app.instances.map(instance => [instance.instanceId, instance.environment, instance.sdkVersion]).sort(),
    ).toEqual([
      ['pod-1', 'development', 'unleash-client-node:6.1.0'],
      ['web-1', 'development', null],
      ['web-1', 'production', null],
    ])
    expectOk(await report(second, development, 'web', { alpha: { yes: 1, no: 0, variants: { blue: 2 } } }), 202)
    const rows = (
      await second.get<{
        lastHourUsage: { environment: string; yes: number; no: number; variants: Record<string, number> }[]
      }>('/api/admin/client-metrics/features/alpha')
    ).body.lastHourUsage
    expect(rows.map(row => [row.environment, row.yes, row.no, row.variants])).toEqual([
      ['development', 15, 7, { blue: 9 }],
      ['production', 5, 0, {}],
    ])
  })

  test('a batch that cannot be written (disk full) is kept and written by the next flush; requests are answered meanwhile', async () => {
    const dir = newDir()
    const fs = new CountingFileSystem()
    const api = await open(dir, fs)
    await api.newFlag('default', 'alpha')
    const token = await clientToken(api, 'sdk')
    fs.full = true
    expectOk(await report(api, token, 'web', { alpha: { yes: 3, no: 0 } }), 202)
    await api.services.metrics.flush()
    expect(api.services.store.state.flagUsage).toEqual({})
    expectOk(await report(api, token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    fs.full = false
    await api.services.metrics.flush()
    expect(usageRows(api.services.store.state.flagUsage).map(row => row.yes)).toEqual([4])
    expect(api.services.store.state.flagLastSeen.alpha).toBeDefined()
    expect(Object.keys(api.services.store.state.clientApplications)).toEqual(['web'])
    await close(api)
    const again = await open(dir)
    expect(usageRows(again.services.store.state.flagUsage).map(row => row.yes)).toEqual([4])
  })

  test('a report that arrives while a flush waits its turn is committed whole by it: its count with its lastSeenAt and application', async () => {
    const dir = newDir()
    const fs = new CountingFileSystem()
    const api = await open(dir, fs)
    await api.newFlag('default', 'alpha')
    const token = await clientToken(api, 'sdk')
    let release!: () => void
    fs.gate = new Promise(resolve => (release = resolve))
    // A write on its way to disk: the flush queues behind it, and the report is counted meanwhile.
    const opened = fs.opened.length
    const write = api.newFlag('default', 'beta')
    await waitFor(() => fs.opened.length > opened, 'the write to reach the disk')
    // Something to flush, so that the flush goes to the store (and waits there).
    expectOk(await api.post('/api/client/register', { appName: 'web', instanceId: 'pod-1' }, { token }), 202)
    const flush = api.services.metrics.flush()
    await Bun.sleep(10)
    expectOk(await report(api, token, 'web', { alpha: { yes: 3, no: 1 } }), 202)
    fs.gate = null
    release()
    await write
    await flush
    const state = api.services.store.state
    expect(usageRows(state.flagUsage).map(row => [row.featureName, row.yes, row.no])).toEqual([['alpha', 3, 1]])
    expect(Object.keys(state.flagLastSeen[`alpha`]?.environments ?? {})).toEqual(['development'])
    expect(Object.keys(state.clientApplications)).toEqual(['web'])
    expect((await api.getFlag('default', 'alpha')).body.lastSeenAt).not.toBeNull()
  })

  test('a flush of thousands of rows (a journal line of megabytes, read in many chunks) is replayed whole after a crash; a torn line after it is cut', async () => {
    const dir = newDir()
    const first = await open(dir, undefined, 3_600_000)
    const flags = Array.from({ length: 200 }, (_, i) => `flag-${i}`)
    for (const name of flags) await first.newFlag('default', name)
    const token = await clientToken(first, 'sdk')
    // Variant names of several bytes a character, so that chunk boundaries fall inside characters.
    const variants = { 'größe-ü': 1, 'vert-é': 2, 緑: 3 }
    const toggles = Object.fromEntries(flags.map(name => [name, { yes: 2, no: 1, variants }]))
    for (let app = 0; app < 160; app++) expectOk(await report(first, token, `app-${app}`, toggles), 202)
    const journalBefore = statSync(join(dir, JOURNAL_FILE)).size
    await first.services.metrics.flush()
    const lineBytes = statSync(join(dir, JOURNAL_FILE)).size - journalBefore
    expect(lineBytes).toBeGreaterThan(1024 * 1024)
    const usage = (await first.get('/api/admin/client-metrics/features/flag-7')).body
    // A crash: no close, no checkpoint; the next commit was being written.
    apis.splice(apis.indexOf(first), 1)
    first.abandon()
    appendFileSync(join(dir, JOURNAL_FILE), '{"seq":99,"lastEventId":1,"chan')

    const second = await open(dir)
    expect(Object.keys(second.services.store.state.flagUsage)).toHaveLength(200)
    expect(usageRows(second.services.store.state.flagUsage)).toHaveLength(200 * 160)
    expect(
      usageRows(second.services.store.state.flagUsage).every(
        row => row.yes === 2 && row.no === 1 && JSON.stringify(row.variants) === JSON.stringify(variants),
      ),
    ).toBe(true)
    expect((await second.get('/api/admin/client-metrics/features/flag-7')).body).toEqual(usage)
    expect(statSync(join(dir, JOURNAL_FILE)).size).toBe(journalBefore + lineBytes)
  })

  test("an instance's and an application's lastSeen alone is written at most every 5 minutes; anything else at the next flush, and all of it at a clean stop", async () => {
    const dir = newDir()
    const api = await open(dir, undefined, 3_600_000)
    await api.newFlag('default', 'alpha')
    const token = await clientToken(api, 'sdk')
    /** Collection and key of every change of the last journal line. */
    const lastLine = () => {
      const text = readFileSync(join(dir, JOURNAL_FILE), 'utf8').trimEnd().split('\n')
      return (JSON.parse(text[text.length - 1]).changes as [string, string, unknown][])
        .map(([collection, key]) => `${collection} ${key}`)
        .sort()
    }
    const register = (sdkVersion: string) =>
      api.post(
        '/api/client/register',
        { appName: 'web', instanceId: 'pod-1', sdkVersion, strategies: ['default'] },
        { token },
      )
    const instance = async () =>
      (
        await api.get<{ instances: { instanceId: string; sdkVersion: string; lastSeen: string }[] }>(
          '/api/admin/metrics/applications/web',
        )
      ).body.instances[0]
    const start = new Date('2026-11-23T10:00:00.000Z')
    const at = (seconds: number) => setSystemTime(new Date(start.getTime() + seconds * 1000))
    const flushed = async () => {
      const before = lines(dir, JOURNAL_FILE)
      await api.services.metrics.flush()
      return lines(dir, JOURNAL_FILE) - before
    }
    const row = 'flagUsage 2026-11-23T10:00:00.000Z|alpha'
    const both = ['clientApplications web', 'clientInstances ["web","pod-1","development"]']

    at(0)
    expectOk(await register('sdk:1.0.0'), 202)
    expect(await flushed()).toBe(1)
    expect(lastLine()).toEqual(both)

    at(10)
    expectOk(await report(api, token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    expect(await flushed()).toBe(1)
    // The count and the flag's lastSeenAt, not the instance (web-1 is new: it is written).
    expect(lastLine()).toEqual(['clientInstances ["web","web-1","development"]', 'flagLastSeen alpha', row])
    at(20)
    expectOk(await register('sdk:1.0.0'), 202)
    expect(await flushed()).toBe(0)
    expect((await instance()).lastSeen).toBe('2026-11-23T10:00:20.000Z')

    // Something besides lastSeen changed: written at the next flush.
    at(30)
    expectOk(await register('sdk:1.1.0'), 202)
    expect(await flushed()).toBe(1)
    expect(lastLine()).toEqual(both)

    // Five minutes after it was written, lastSeen alone is written too.
    at(40)
    expectOk(await register('sdk:1.1.0'), 202)
    expect(await flushed()).toBe(0)
    at(30 + 300)
    expectOk(await register('sdk:1.1.0'), 202)
    expect(await flushed()).toBe(1)
    expect(lastLine()).toEqual(both)

    // A clean stop writes what was left for later: a restart shows the same instances and applications.
    at(400)
    expectOk(await register('sdk:1.1.0'), 202)
    const shown = (await api.get('/api/admin/metrics/applications/web')).body
    expect((await instance()).lastSeen).toBe('2026-11-23T10:06:40.000Z')
    await close(api)
    const again = await open(dir)
    expect((await again.get('/api/admin/metrics/applications/web')).body).toEqual(shown)
  })

  test('a flag deleted just before a crash, its lastSeenAt not yet flushed away, loses it at the first flush after the restart', async () => {
    const dir = newDir()
    const first = await open(dir, undefined, 3_600_000)
    await first.newFlag('default', 'alpha')
    await first.newFlag('default', 'beta')
    const token = await clientToken(first, 'sdk')
    expectOk(await report(first, token, 'web', { alpha: { yes: 1, no: 0 }, beta: { yes: 1, no: 0 } }), 202)
    await first.services.metrics.flush()
    expect(Object.keys(first.services.store.state.flagLastSeen).sort()).toEqual(['alpha', 'beta'])
    expectOk(await first.delete('/api/admin/projects/default/features/alpha'), 202)
    expectOk(await first.delete('/api/admin/archive/alpha'), 200)
    // The crash comes before the next flush.
    apis.splice(apis.indexOf(first), 1)
    first.abandon()

    const second = await open(dir, undefined, 3_600_000)
    expect(Object.keys(second.services.store.state.flagLastSeen).sort()).toEqual(['alpha', 'beta'])
    await second.services.metrics.flush()
    expect(Object.keys(second.services.store.state.flagLastSeen)).toEqual(['beta'])
    // Made again under the same name, it starts unseen.
    await second.newFlag('default', 'alpha')
    expect((await second.getFlag('default', 'alpha')).body.lastSeenAt).toBeNull()
    expect((await second.getFlag('default', 'beta')).body.lastSeenAt).not.toBeNull()
  })
  test("usage counted for a flag deleted and made again in another project before a crash, flushed or not, is not the new flag's after the restart", async () => {
    const dir = newDir()
    const first = await open(dir, undefined, 3_600_000)
    await first.newProject('other')
    await first.newFlag('default', 'alpha')
    const token = await clientToken(first, 'sdk')
    expectOk(await report(first, token, 'web', { alpha: { yes: 5, no: 1, variants: { blue: 2 } } }), 202)
    await first.services.metrics.flush()
    expectOk(await report(first, token, 'web', { alpha: { yes: 1, no: 0 } }), 202)
    expectOk(await first.delete('/api/admin/projects/default/features/alpha'), 202)
    expectOk(await first.delete('/api/admin/archive/alpha'), 200)
    await first.newFlag('other', 'alpha')
    // The crash comes before the next flush: the old flag's flushed rows are still in the state.
    apis.splice(apis.indexOf(first), 1)
    first.abandon()

    const second = await open(dir, undefined, 3_600_000)
    const usage = (
      await second.get<{ lastHourUsage: unknown[]; seenApplications: string[] }>(
        '/api/admin/client-metrics/features/alpha',
      )
    ).body
    expect([usage.lastHourUsage, usage.seenApplications]).toEqual([[], []])
    expect((await second.getFlag('other', 'alpha')).body.lastSeenAt).toBeNull()
    expect(
      (await second.get<{ seenToggles: unknown[] }>('/api/admin/metrics/applications/web')).body.seenToggles,
    ).toEqual([])
    await second.services.metrics.flush()
    expect(Object.keys(second.services.store.state.flagUsage)).toEqual([])
    expect(second.services.store.state.flagLastSeen).toEqual({})
  })

  test("usage rows written before rows named their flag are the flag's unless their hour ended before the flag was made", async () => {
    const dir = newDir()
    setSystemTime(new Date('2026-03-01T12:30:00.000Z'))
    const first = await open(dir)
    await first.newFlag('default', 'alpha')
    const token = await clientToken(first, 'sdk')
    expectOk(await report(first, token, 'web', { alpha: { yes: 3, no: 0 } }), 202)
    await close(first)
    // As the previous version wrote them: no flagCreatedAt; and a row of an earlier flag of the name, two hours before.
    const state = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8'))
    const [row] = usageRows(state.flagUsage) as Record<string, unknown>[]
    delete row.flagCreatedAt
    state.flagUsage = { [`${row.timestamp}|development|alpha|web`]: row }
    state.flagUsage['2026-03-01T10:00:00.000Z|development|alpha|old-app'] = {
      ...row,
      appName: 'old-app',
      timestamp: '2026-03-01T10:00:00.000Z',
      yes: 7,
    }
    writeFileSync(join(dir, STATE_FILE), JSON.stringify(state))

    setSystemTime(new Date('2026-03-01T12:40:00.000Z'))
    const second = await open(dir)
    const loaded = (
      await second.get<{ lastHourUsage: { yes: number }[]; seenApplications: string[] }>(
        '/api/admin/client-metrics/features/alpha',
      )
    ).body
    expect(loaded.lastHourUsage.map(entry => entry.yes)).toEqual([3])
    expect(loaded.seenApplications).toEqual(['web'])
    // And once it is deleted and made again, no row is the new flag's.
    setSystemTime(new Date('2026-03-01T12:50:00.000Z'))
    expectOk(await second.delete('/api/admin/projects/default/features/alpha'), 202)
    expectOk(await second.delete('/api/admin/archive/alpha'), 200)
    await second.newFlag('default', 'alpha')
    expect(
      (await second.get<{ seenApplications: string[] }>('/api/admin/client-metrics/features/alpha')).body
        .seenApplications,
    ).toEqual([])
  })
})
