/**
 * The local copy of a PostgreSQL event log that each instance's event search keeps in
 * SEARCH_CACHE_DIR (features/events/search/log-cache.ts), through `app.handle` on databases of a
 * private cluster: a restart reads from the database only the events after the copy (counted at the
 * store), and every search equals a brute-force scan of the database's events, whatever was done to
 * the copy in between: deleted, swapped with another database's, torn, damaged in the middle, or
 * left ahead of a database restored to an older copy of itself. Runs in both runs of the suite:
 * it brings its own databases.
 */
import { afterAll, afterEach, expect, test } from 'bun:test'
import { SQL } from 'bun'
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DatabaseConfig } from '../../../../src/config'
import { CACHE_IDENTITY, CACHE_LOG } from '../../../../src/features/events/search/log-cache'
import { SEARCH_DIR } from '../../../../src/features/events/search/segment-files'
import { DataDirLock } from '../../../../src/storage/lock'
import type { EventRecord } from '../../../../src/storage/records'
import { makeApi, tempDir, waitFor, type Api } from '../../../helpers'
import type { SharedCluster } from '../../../postgres-cluster'
import { needs, TOOLS } from '../../../tools'
import { databaseConfig, testCluster } from '../../../test-store'
import { seededRandom } from '../../../random'
import { bruteForce, randomParams } from './event-search-oracle'

const opened: Api[] = []
const dirs: { remove(): void }[] = []
afterEach(async () => {
  for (const api of opened.splice(0)) await api.close().catch(() => api.abandon())
})
afterAll(() => dirs.forEach(dir => dir.remove()))

let databases = 0
async function newDatabase(pg: SharedCluster): Promise<DatabaseConfig> {
  const name = `cache_${process.pid}_${++databases}`
  await pg.createDatabase(name)
  return databaseConfig(pg, name)
}

/** A SEARCH_CACHE_DIR not made yet (the instance makes it). */
function cacheRoot(): string {
  const dir = tempDir('search-cache-')
  dirs.push(dir)
  return join(dir.path, 'cache')
}

interface Instance {
  api: Api
  /** Event lines the search has read from the database so far. */
  read: () => number
  notices: string[]
}

/** An instance on `database` keeping its copy in `root`, its search started (and the lines it reads from the database counted). */
async function start(database: DatabaseConfig, root: string | null): Promise<Instance> {
  const api = await makeApi({ database, searchCacheDir: root, segmentEvents: 64 })
  opened.push(api)
  const store = api.services.store
  const readLines = store.readEventLines.bind(store)
  let read = 0
  store.readEventLines = (lastId, onLine, after) => readLines(lastId, line => (read++, onLine(line)), after)
  const notices: string[] = []
  api.services.events.onNotice = message => notices.push(message)
  await api.services.events.load()
  return { api, read: () => read, notices }
}

async function stop(instance: Instance) {
  // A search answered means the worker has copied every event before it (it takes messages in
  // order); events it has not yet copied when it is stopped are read from the database next time.
  expect((await instance.api.get('/api/admin/search/events?limit=1')).status).toBe(200)
  opened.splice(opened.indexOf(instance.api), 1)
  await instance.api.close()
}

/** Events written through the API: flags with words to find, toggles, strategies. */
async function write(api: Api, count: number, tag: string) {
  for (let i = 0; i < count; i++) {
    const name = `${tag}-${i}`
    expect(
      (
        await api.createFlag('default', name, {
          description: `${tag} note ${i % 7 === 0 ? 'checkout' : 'billing'} ${i}`,
        })
      ).status,
    ).toBe(201)
    if (i % 5 === 0)
      expect((await api.post(`/api/admin/projects/default/features/${name}/environments/development/on`)).status).toBe(
        200,
      )
  }
}

/** The database's events, as a brute-force scan sees them. */
async function eventsOf(database: DatabaseConfig): Promise<EventRecord[]> {
  const sql = new SQL(`postgres://postgres@127.0.0.1:${database.port}/${database.database}`, { max: 1 })
  try {
    const rows: { line: string }[] = await sql`SELECT line FROM flagstore_events ORDER BY id`
    return rows.map(row => JSON.parse(row.line) as EventRecord)
  } finally {
    await sql.close()
  }
}

/** Searches through the API equal a brute-force scan of the database's events: fixed queries, pages across segments, random filters. */
async function searchesEqualDatabase(api: Api, database: DatabaseConfig, seed: number) {
  const events = await eventsOf(database)
  const random = seededRandom(seed)
  const fixed = [
    'query=checkout',
    'query=BILLING',
    'query=note%201',
    'query=heck',
    'limit=1000',
    'limit=50&offset=100',
    'type=IS:feature-created&limit=1000',
  ]
  const all = [
    ...fixed.map(q => new URLSearchParams(q)),
    ...Array.from({ length: 25 }, () => randomParams(random, events)),
  ]
  for (const params of all) {
    const response = await api.get<{ events: EventRecord[]; total: number }>(`/api/admin/search/events?${params}`)
    expect(response.status).toBe(200)
    const expected = bruteForce(events, params)
    expect({
      params: `${params}`,
      ids: response.body.events.map(event => event.id),
      total: response.body.total,
    }).toEqual({ params: `${params}`, ...expected })
  }
}

/** CREATE DATABASE … TEMPLATE, once the closed instances' connections to the template are gone. */
async function copyDatabase(admin: SQL, from: string, to: string) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await admin.unsafe(`CREATE DATABASE ${to} TEMPLATE ${from}`)
    } catch (error) {
      if (attempt === 50 || !String((error as Error).message).includes('being accessed')) throw error
      await Bun.sleep(100)
    }
  }
}

const slot = (root: string, n = 0) => join(root, String(n))
const segments = (root: string) =>
  existsSync(join(slot(root), SEARCH_DIR))
    ? readdirSync(join(slot(root), SEARCH_DIR))
        .filter(name => name.endsWith('.seg'))
        .sort()
    : []

needs(TOOLS.postgres).describe('the local copy of a PostgreSQL event log', () => {
  test('a restart reads only the events written since; searches equal the database before and after', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    const root = cacheRoot()
    const first = await start(database, root)
    await write(first.api, 160, 'before')
    const copied = first.api.lastEventId()
    await searchesEqualDatabase(first.api, database, 1)
    // The copy holds the log's lines as the database does, and the segments are written over it.
    expect(readFileSync(join(slot(root), CACHE_LOG), 'utf8')).toBe(
      (await eventsOf(database)).map(event => JSON.stringify(event) + '\n').join(''),
    )
    expect(segments(root).length).toBeGreaterThanOrEqual(2)
    const written = segments(root)
    // It holds every event in full: private, as a data directory is.
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)
    expect([root, slot(root), join(slot(root), SEARCH_DIR)].map(mode)).toEqual(['700', '700', '700'])
    expect(
      [CACHE_LOG, CACHE_IDENTITY, '.lock', join(SEARCH_DIR, written[0])].map(name => mode(join(slot(root), name))),
    ).toEqual(['600', '600', '600', '600'])
    await stop(first)

    // Another instance (its own copy) writes while this one is down.
    const other = await start(database, cacheRoot())
    await write(other.api, 12, 'meanwhile')
    const last = other.api.lastEventId()
    await stop(other)

    const again = await start(database, root)
    // The copy's last event, checked against the database's, and the events after it: nothing else.
    expect(again.read()).toBe(1 + (last - copied))
    expect(again.api.services.events.copyReport).toEqual({ fromCopy: copied, fromDatabase: last - copied })
    expect(again.notices).toEqual([])
    expect(segments(root).slice(0, written.length)).toEqual(written)
    await searchesEqualDatabase(again.api, database, 2)
    await write(again.api, 3, 'after')
    await searchesEqualDatabase(again.api, database, 3)
  }, 120_000)

  test('a copy deleted by hand, or only its segments, is made again: from the database, or from the copy', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    const root = cacheRoot()
    const first = await start(database, root)
    await write(first.api, 140, 'gone')
    const last = first.api.lastEventId()
    await stop(first)

    rmSync(join(slot(root), SEARCH_DIR), { recursive: true })
    const segmentsGone = await start(database, root)
    expect(segmentsGone.read()).toBe(1)
    await searchesEqualDatabase(segmentsGone.api, database, 4)
    expect(segments(root).length).toBeGreaterThanOrEqual(2)
    await stop(segmentsGone)

    rmSync(root, { recursive: true })
    const allGone = await start(database, root)
    expect(allGone.read()).toBe(last)
    await searchesEqualDatabase(allGone.api, database, 5)
  }, 120_000)

  test('copies swapped between two databases are discarded, saying why, and each database is read whole', async () => {
    const pg = await testCluster()
    const [one, two] = [await newDatabase(pg), await newDatabase(pg)]
    const [rootOne, rootTwo] = [cacheRoot(), cacheRoot()]
    const a = await start(one, rootOne)
    const b = await start(two, rootTwo)
    await write(a.api, 90, 'one')
    await write(b.api, 90, 'two')
    await stop(a)
    await stop(b)

    const swappedA = await start(one, rootTwo)
    const swappedB = await start(two, rootOne)
    for (const [instance, database] of [
      [swappedA, one],
      [swappedB, two],
    ] as const) {
      expect(instance.read()).toBe(instance.api.lastEventId())
      expect(instance.notices).toEqual([
        expect.stringMatching(
          /is discarded and read again from the database: it is of another database \(log [0-9a-f-]+, not [0-9a-f-]+ of PostgreSQL/,
        ),
      ])
      await searchesEqualDatabase(instance.api, database, 6)
    }
    expect(JSON.parse(readFileSync(join(slot(rootTwo), CACHE_IDENTITY), 'utf8')).database).toContain(one.database)
  }, 120_000)

  test('a torn last line is cut off, a damaged line in the middle cuts the copy there: the rest comes from the database', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    const root = cacheRoot()
    const first = await start(database, root)
    await write(first.api, 100, 'torn')
    const last = first.api.lastEventId()
    await stop(first)

    const cut = '{"id":999,"type":"feature-cre'
    appendFileSync(join(slot(root), CACHE_LOG), cut)
    const torn = await start(database, root)
    expect(torn.notices).toEqual([
      expect.stringMatching(new RegExp(`ends with ${cut.length} bytes of a line cut short; they are cut off$`)),
    ])
    expect(torn.read()).toBe(1)
    await searchesEqualDatabase(torn.api, database, 7)
    await stop(torn)

    // The line before the last one (after the last segment) made unreadable: the copy is cut before it.
    const path = join(slot(root), CACHE_LOG)
    const lines = readFileSync(path, 'utf8').split('\n')
    lines[last - 2] = lines[last - 2].replace('{"id"', '{"id?')
    writeFileSync(path, lines.join('\n'))
    const damaged = await start(database, root)
    expect(damaged.notices).toEqual([
      expect.stringContaining(`the local copy of the event log is cut after event ${last - 2}`),
    ])
    expect(damaged.read()).toBe(1 + 2)
    await searchesEqualDatabase(damaged.api, database, 8)
  }, 120_000)

  test('a database restored to an older copy of itself: the copy ahead of it, or past the restore point but different, is read again', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    const root = cacheRoot()
    const first = await start(database, root)
    await write(first.api, 80, 'early')
    await stop(first)
    // A copy of the database as it is now (an "older backup"; it keeps the log's identity).
    const admin = new SQL(pg.url, { max: 1 })
    const older = `${database.database}_older`
    await copyDatabase(admin, database.database, older)
    await copyDatabase(admin, database.database, `${older}_2`)

    const moved = await start(database, root)
    await write(moved.api, 30, 'late')
    await stop(moved)

    // Restored: the copy is ahead of the database.
    const restored = { ...database, database: older }
    const behind = await start(restored, root)
    expect(behind.notices).toEqual([
      expect.stringMatching(
        /: it holds events up to \d+, but the database ends at event \d+ \(restored from an older backup\?\)$/,
      ),
    ])
    expect(behind.read()).toBe(behind.api.lastEventId())
    await searchesEqualDatabase(behind.api, restored, 9)
    // …and moved on past where the copy ended, with other events: the copy's last event differs from the database's.
    await write(behind.api, 40, 'rewritten')
    await stop(behind)
    const restoredAgain = { ...database, database: `${older}_2` }
    const elsewhere = await start(restoredAgain, cacheRoot())
    await write(elsewhere.api, 60, 'other')
    await stop(elsewhere)
    const differs = await start(restoredAgain, root)
    expect(differs.notices).toEqual([expect.stringMatching(/: its event \d+ is not the database's event \d+$/)])
    expect(differs.read()).toBe(1 + differs.api.lastEventId())
    await searchesEqualDatabase(differs.api, restoredAgain, 10)
    await admin.close()
  }, 180_000)

  test('two instances given one SEARCH_CACHE_DIR keep a copy each; a write on A is found on B; each restarts from its own copy', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    const root = cacheRoot()
    const a = await start(database, root)
    const b = await start(database, root)
    expect(readdirSync(root).sort()).toEqual(['0', '1'])
    await write(a.api, 70, 'from-a')
    const lastA = a.api.lastEventId()
    await waitFor(
      async () => (await b.api.get<{ total: number }>('/api/admin/search/events?query=from-a-69')).body.total === 1,
      'the write on A found on B',
    )
    await write(b.api, 10, 'from-b')
    await waitFor(
      async () => (await a.api.get<{ total: number }>('/api/admin/search/events?query=from-b-9')).body.total === 1,
      'the write on B found on A',
    )
    await searchesEqualDatabase(a.api, database, 11)
    await searchesEqualDatabase(b.api, database, 12)
    expect(readFileSync(join(slot(root, 0), CACHE_LOG), 'utf8')).toBe(
      readFileSync(join(slot(root, 1), CACHE_LOG), 'utf8'),
    )
    const last = b.api.lastEventId()
    expect(last).toBeGreaterThan(lastA)
    await stop(a)
    await stop(b)
    const [a2, b2] = [await start(database, root), await start(database, root)]
    for (const instance of [a2, b2]) {
      expect(instance.read()).toBe(1)
      await searchesEqualDatabase(instance.api, database, 13)
    }
  }, 120_000)

  test('a SEARCH_CACHE_DIR that cannot be used (a file stands there) is one warning; the search works from a temporary copy', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    const root = cacheRoot()
    writeFileSync(root, 'not a directory')
    const instance = await start(database, root)
    expect(instance.notices).toEqual([
      expect.stringMatching(
        /^SEARCH_CACHE_DIR .* cannot be used \(.*\); the event log is copied to a temporary directory for this run$/,
      ),
    ])
    await write(instance.api, 20, 'elsewhere')
    await searchesEqualDatabase(instance.api, database, 14)
    expect(readFileSync(root, 'utf8')).toBe('not a directory')
  }, 60_000)

  test('an identity file that cannot be read empties the copy once: it is named again, and the next restart uses it', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    const root = cacheRoot()
    const first = await start(database, root)
    await write(first.api, 30, 'named')
    await stop(first)
    writeFileSync(join(slot(root), CACHE_IDENTITY), '{"log":')
    const unnamed = await start(database, root)
    expect(unnamed.notices).toEqual([
      expect.stringContaining(`is discarded and read again from the database: ${CACHE_IDENTITY} cannot be read`),
    ])
    expect(unnamed.read()).toBe(unnamed.api.lastEventId())
    await stop(unnamed)
    const again = await start(database, root)
    expect({ notices: again.notices, read: again.read() }).toEqual({ notices: [], read: 1 })
    await searchesEqualDatabase(again.api, database, 15)
  }, 60_000)

  test('without SEARCH_CACHE_DIR the copy is temporary: removed at close, and copies left by killed processes are removed at the next start', async () => {
    const pg = await testCluster()
    const database = await newDatabase(pg)
    // Left by a process killed while it searched (its lock file free), and one of a running process (its lock held).
    const left = mkdtempSync(join(tmpdir(), 'flagstore-search-'))
    writeFileSync(join(left, CACHE_LOG), '{"id":1}\n')
    writeFileSync(join(left, '.lock'), '')
    // Old enough not to be one another process has just made and not yet locked.
    utimesSync(left, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000))
    const young = mkdtempSync(join(tmpdir(), 'flagstore-search-'))
    const held = mkdtempSync(join(tmpdir(), 'flagstore-search-'))
    const lock = DataDirLock.acquire(held)
    try {
      const instance = await start(database, null)
      const own = readdirSync(tmpdir())
        .filter(name => name.startsWith('flagstore-search-'))
        .map(name => join(tmpdir(), name))
      // (Removed by this start, or by another test process's sweeping at the same moment.)
      await waitFor(() => !existsSync(left), 'the copy left by a killed process removed')
      expect(own).toContain(held)
      expect(own).toContain(young)
      await write(instance.api, 10, 'temporary')
      await searchesEqualDatabase(instance.api, database, 16)
      const copies = own.filter(
        dir =>
          dir !== held &&
          existsSync(join(dir, CACHE_LOG)) &&
          readFileSync(join(dir, CACHE_LOG), 'utf8').includes('temporary-9'),
      )
      expect(copies).toHaveLength(1)
      await stop(instance)
      expect(existsSync(copies[0])).toBe(false)
    } finally {
      lock.release()
      rmSync(held, { recursive: true, force: true })
      rmSync(young, { recursive: true, force: true })
    }
  }, 60_000)
})
