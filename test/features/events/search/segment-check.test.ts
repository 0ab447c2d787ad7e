/**
 * The checksums of the search segments found at start are read after `/ready`, in the background,
 * and by the first search that comes before the background check is done. Through the HTTP API,
 * with segments damaged by hand in ways the cheap checks at start do not see (a byte flipped in the
 * middle, a column value changed in the meta section so that it still parses, the last bytes
 * changed) and one they do (cut short): every answer equals a substring scan of events.jsonl
 * before the damage, during the background check, after it, during and after the rebuild of what
 * it dropped, and after a restart; each damaged segment is told once and rebuilt.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
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

/** A background check so slow that it is still running when the test searches. */
const SLOW = { stepBytes: 64, pauseMs: 200 }

async function open(dataDir: string, segmentCheck?: { stepBytes: number; pauseMs: number }) {
  const api = await makeApi({ dataDir, segmentEvents: 64, segmentCheck })
  apis.push(api)
  const notices: string[] = []
  // The worker starts with the first search (or load()), after this.
  api.services.events.onNotice = message => notices.push(message)
  return { api, notices }
}

async function close(api: Api) {
  apis.splice(apis.indexOf(api), 1)
  await api.close()
}

const SEARCHES: Record<string, string>[] = [
  { query: 'checkout' },
  { query: 'number 1' },
  { query: 'heck' },
  { feature: 'checkout-70' },
  { feature: 'checkout-71' },
  { query: 'flag', feature: 'checkout-130' },
  {},
]

async function searchesEqualScan(api: Api, dataDir: string, label: string) {
  for (const params of SEARCHES) {
    const asked = new URLSearchParams({ ...params, limit: '1000' })
    if (params.feature) asked.set('feature', `IS:${params.feature}`)
    const response = await api.get<{ events: EventRecord[]; total: number }>(`/api/admin/search/events?${asked}`)
    expect(response.status).toBe(200)
    const context = `${label}: ${JSON.stringify(params)}`
    expect({ context, ids: response.body.events.map(event => event.id), total: response.body.total }).toEqual({
      context,
      ...scanLog(dataDir, asked),
    })
  }
}

/** A restart after the damage was dealt with: answers equal to the scan, the index built, nothing to tell. */
async function restartedClean(dataDir: string) {
  const again = await open(dataDir)
  await searchesEqualScan(again.api, dataDir, 'after a restart')
  await indexReady(again.api)
  expect(again.notices).toEqual([])
}

const segmentFiles = (dataDir: string) => readdirSync(join(dataDir, SEARCH_DIR)).sort()

/** A data directory whose log fills several segments of 64 events; its segment files, oldest first. */
async function filled(): Promise<{ dataDir: string; files: string[] }> {
  const parent = tempDir('segment-check-')
  dirs.push(parent)
  const dataDir = join(parent.path, 'data')
  mkdirSync(dataDir, { mode: 0o700 })
  const { api } = await open(dataDir)
  for (let i = 0; i < 200; i++)
    expect((await api.createFlag('default', `checkout-${i}`, { description: `flag number ${i}` })).status).toBe(201)
  await searchesEqualScan(api, dataDir, 'before any damage')
  await close(api)
  const files = segmentFiles(dataDir)
  expect(files.length).toBeGreaterThanOrEqual(3)
  return { dataDir, files }
}

/** Byte damage the checks at start do not see: the size, header, version and the log's lines stay as they were. */
function flipMiddle(path: string) {
  const bytes = readFileSync(path)
  bytes[bytes.length >> 1] ^= 0x55
  writeFileSync(path, bytes)
}

/** A flag's name in the meta section's dictionary swapped for another of the same length: it still parses, and would answer that flag's events wrongly. */
function renameInMeta(path: string, from: string, to: string) {
  const bytes = readFileSync(path)
  const at = bytes.indexOf(`"${from}"`, 64, 'latin1')
  expect(at).toBeGreaterThan(0)
  bytes.write(`"${to}"`, at, 'latin1')
  writeFileSync(path, bytes)
}

async function indexReady(api: Api) {
  while (!api.services.events.indexReady) await Bun.sleep(5)
}

describe('the checksums of the search segments, read after /ready', () => {
  test('a search before the background check has reached a damaged segment checks it first: answers stay exact, one notice each, rebuilt', async () => {
    const { dataDir, files } = await filled()
    // Events 65–128 hold checkout-70 and -71's: a search for checkout-71 would find 70's events there.
    renameInMeta(join(dataDir, SEARCH_DIR, files[1]), 'checkout-70', 'checkout-71')
    flipMiddle(join(dataDir, SEARCH_DIR, files[0]))
    const inode = statSync(join(dataDir, SEARCH_DIR, files[2])).ino
    const { api, notices } = await open(dataDir, SLOW)
    await api.services.events.load()
    // Loaded without reading the checksums: nothing is found damaged yet.
    expect((await api.get('/ready')).status).toBe(200)
    expect(notices).toEqual([])
    await searchesEqualScan(api, dataDir, 'during the background check')
    expect(notices.sort()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^search segment ${files[0]} ignored and deleted: checksum does not match; its events 1–64 are read from the log until it is rebuilt$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^search segment ${files[1]} ignored and deleted: checksum does not match; its events 65–128 are read from the log`,
        ),
      ),
    ])
    await searchesEqualScan(api, dataDir, 'while rebuilt')
    await indexReady(api)
    expect(segmentFiles(dataDir)).toEqual(files)
    // The whole segment was used as it was.
    expect(statSync(join(dataDir, SEARCH_DIR, files[2])).ino).toBe(inode)
    await searchesEqualScan(api, dataDir, 'after the rebuild')
    expect(notices).toHaveLength(2)
    await close(api)

    await restartedClean(dataDir)
  }, 60_000)

  test('the background check finds the damage by itself and drops the segment before any search; the segments cut short are seen at start', async () => {
    const { dataDir, files } = await filled()
    renameInMeta(join(dataDir, SEARCH_DIR, files[1]), 'checkout-70', 'checkout-71')
    const last = join(dataDir, SEARCH_DIR, files.at(-1)!)
    const bytes = readFileSync(last)
    bytes[bytes.length - 1] ^= 0xff
    writeFileSync(last, bytes)
    truncateSync(join(dataDir, SEARCH_DIR, files[0]), statSync(join(dataDir, SEARCH_DIR, files[0])).size - 10)
    const { api, notices } = await open(dataDir)
    await api.services.events.load()
    await indexReady(api)
    expect(notices).toEqual([
      expect.stringMatching(/^search segment .* ignored and deleted: is \d+ bytes, not \d+$/),
      expect.stringMatching(/^search segments missing for events 1–64 /),
      expect.stringContaining(`search segment ${files.at(-1)} ignored and deleted: checksum does not match`),
      expect.stringContaining(`search segment ${files[1]} ignored and deleted: checksum does not match`),
    ])
    expect(segmentFiles(dataDir)).toEqual(files)
    await searchesEqualScan(api, dataDir, 'after the background check')
    await close(api)
    await restartedClean(dataDir)
  }, 60_000)
})
