/**
 * The search segments of a real data directory, through the HTTP API: written as the log grows,
 * private (0700/0600), used after a restart, never in a backup, and rebuilt after a restore, with
 * searches equal to a substring scan of events.jsonl throughout.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { backupDataDir, restoreBackup } from '../../../../src/backup/backup'
import { SEARCH_DIR } from '../../../../src/features/events/search/segment-files'
import type { EventRecord } from '../../../../src/storage/records'
import { makeApi, tempDir, type Api } from '../../../helpers'
import { scanLog } from './event-search-oracle'

const dirs: { remove(): void }[] = []
const apis: Api[] = []
afterEach(async () => {
  for (const api of apis.splice(0)) await api.close().catch(() => {})
  for (const dir of dirs.splice(0)) dir.remove()
})

async function open(dataDir: string): Promise<Api> {
  const api = await makeApi({ dataDir, segmentEvents: 64 })
  apis.push(api)
  return api
}

async function close(api: Api) {
  apis.splice(apis.indexOf(api), 1)
  await api.close()
}

/** What a search must answer: the events of the log whose data, preData or tags hold `query`, newest first. */
const scan = (dataDir: string, query: string) => scanLog(dataDir, { query })

async function searchEquals(api: Api, dataDir: string, query: string) {
  const response = await api.get<{ events: EventRecord[]; total: number }>(
    `/api/admin/search/events?limit=1000&query=${encodeURIComponent(query)}`,
  )
  expect(response.status).toBe(200)
  const expected = scan(dataDir, query)
  expect(expected.total).toBeGreaterThan(0)
  expect({ query, ids: response.body.events.map(event => event.id), total: response.body.total }).toEqual({
    query,
    ...expected,
  })
}

const QUERIES = ['checkout', 'CHECKOUT-7', 'heck', 'flag number 1', 'number 12', '"description":"flag', 'default']

const segmentFiles = (dataDir: string) => readdirSync(join(dataDir, SEARCH_DIR)).sort()

describe('search segments of a data directory', () => {
  test('are written as the log grows, private, used after a restart, left out of a backup and rebuilt after a restore', async () => {
    const parent = tempDir('event-segments-')
    dirs.push(parent)
    const dataDir = join(parent.path, 'data')
    mkdirSync(dataDir, { mode: 0o700 })
    const api = await open(dataDir)
    for (let i = 0; i < 150; i++)
      expect((await api.createFlag('default', `checkout-${i}`, { description: `flag number ${i}` })).status).toBe(201)
    for (const query of QUERIES) await searchEquals(api, dataDir, query)
    const written = segmentFiles(dataDir)
    expect(written.length).toBeGreaterThanOrEqual(2)
    expect((statSync(join(dataDir, SEARCH_DIR)).mode & 0o777).toString(8)).toBe('700')
    for (const name of written) expect((statSync(join(dataDir, SEARCH_DIR, name)).mode & 0o777).toString(8)).toBe('600')
    await close(api)

    const again = await open(dataDir)
    for (const query of QUERIES) await searchEquals(again, dataDir, query)
    expect(segmentFiles(dataDir)).toEqual(written)
    await close(again)

    const backup = join(parent.path, 'backup.jsonl')
    await backupDataDir(dataDir, backup)
    expect(readFileSync(backup, 'latin1')).not.toContain('FLAGSEG')
    const restoredDir = join(parent.path, 'restored')
    await restoreBackup(backup, restoredDir)
    expect(readdirSync(restoredDir)).not.toContain(SEARCH_DIR)
    const restored = await open(restoredDir)
    for (const query of QUERIES) await searchEquals(restored, restoredDir, query)
    expect(segmentFiles(restoredDir)).toEqual(written)
  }, 60_000)
})
