/**
 * What one event search may cost, through the HTTP API on a real data directory: a needle made only
 * of separators is decided by the segments' gap lists (it reads no event back, so it is answered
 * with a read-back limit of 0), a search that would read more events back than the limit is
 * refused with a 400 on `query`, and a search whose request is given up is stopped (503).
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SearchStopped, SearchTooBroad } from '../../../../src/errors'
import { parseEventQuery } from '../../../../src/features/events/event-query'
import { visibilityOf } from '../../../../src/features/events/events.service'
import { SearchWorkExceeded } from '../../../../src/features/events/search/search-work'
import { SegmentedSearch } from '../../../../src/features/events/search/segmented-search'
import { readEventLines } from '../../../../src/storage/event-log'
import type { EventRecord } from '../../../../src/storage/records'
import { makeApi, tempDir, type Api } from '../../../helpers'
import { ADMIN, scanLog } from './event-search-oracle'

const dirs: { remove(): void }[] = []
const apis: Api[] = []
afterEach(async () => {
  for (const api of apis.splice(0)) await api.close().catch(() => {})
  for (const dir of dirs.splice(0)) dir.remove()
})

function newDataDir(): string {
  const parent = tempDir('event-search-work-')
  dirs.push(parent)
  const dataDir = join(parent.path, 'data')
  mkdirSync(dataDir, { mode: 0o700 })
  return dataDir
}

async function open(dataDir: string, search: { readBackLimit?: number; searchLimitMs?: number }): Promise<Api> {
  const api = await makeApi({ dataDir, segmentEvents: 64, search })
  apis.push(api)
  return api
}

/** The events of the log whose data, preData or tags hold `query` (lower-cased), newest first. */
const scan = (dataDir: string, query: string) => scanLog(dataDir, { query })

const DESCRIPTIONS = [
  'plain words',
  'semi;;colons',
  'a -- b',
  'quote " inside',
  'party 🎉🎉 time',
  'tab\there',
  'ÄÖ … ü',
  'end:',
]
/** Single characters, runs, a run longer than any in the data, quotes and colons, spaces around. */
const SEPARATORS = [
  ';;',
  '"',
  '":"',
  ' ',
  '  ',
  '--',
  ' -- ',
  '🎉',
  '🎉🎉',
  ' 🎉',
  '\\"',
  '\\t',
  '…',
  ' … ',
  ';;;;;;;;;;;;;;;;;;;;',
  '":{"',
  ':"',
  '" ',
  ' "',
]

describe('the work of one event search', () => {
  test('needles made only of separators are decided by the segments: exact, with no event read back, also after a restart', async () => {
    const dataDir = newDataDir()
    let api = await open(dataDir, { readBackLimit: 0 })
    for (let i = 0; i < 150; i++)
      expect(
        (await api.createFlag('default', `sep-${i}`, { description: DESCRIPTIONS[i % DESCRIPTIONS.length] })).status,
      ).toBe(201)
    for (let round = 0; round < 2; round++) {
      for (const query of SEPARATORS) {
        const response = await api.get<{ events: EventRecord[]; total: number }>(
          `/api/admin/search/events?limit=1000&query=${encodeURIComponent(query)}`,
        )
        expect({ query, status: response.status }).toEqual({ query, status: 200 })
        expect({ query, ids: response.body.events.map(event => event.id), total: response.body.total }).toEqual({
          query,
          ...scan(dataDir, query),
        })
      }
      await api.close()
      apis.splice(apis.indexOf(api), 1)
      api = await open(dataDir, { readBackLimit: 0 })
    }
    // Most of the log is in segments: the needles above were answered by them, not only by the tail.
    expect(scan(dataDir, '"').total).toBeGreaterThan(128)
  })

  test('a search that would read more events back than the limit is refused with a 400 on query', async () => {
    const dataDir = newDataDir()
    const api = await open(dataDir, { readBackLimit: 10 })
    for (let i = 0; i < 150; i++)
      expect((await api.createFlag('default', `half-${i}`, { description: `pair 🎉 ${i}` })).status).toBe(201)
    // Half a surrogate pair is all the segments cannot decide; HTTP cannot carry it (not UTF-8).
    expect((await api.get(`/api/admin/search/events?query=%ED%A0%BC`)).status).toBe(400)
    const half = parseEventQuery({ query: '\uD83C' })
    const refused = await api.services.events.search(half, ADMIN).catch(error => error)
    expect(refused).toBeInstanceOf(SearchTooBroad)
    expect(refused.status).toBe(400)
    expect(refused.details).toEqual([{ message: refused.message, path: '/query' }])
    // Within the limit it is answered exactly: the same needle on few events.
    const few = await api.services.events.search(parseEventQuery({ query: '\uD83C', id: 'IS_ANY_OF:1,2,3' }), ADMIN)
    expect(few.total).toBe(scan(dataDir, '\uD83C').ids.filter(id => id <= 3).length)
  })

  test('a search whose request is given up is stopped and answered 503', async () => {
    const dataDir = newDataDir()
    const api = await open(dataDir, { searchLimitMs: -1 })
    expect((await api.createFlag('default', 'stopped', { description: 'x' })).status).toBe(201)
    // Loaded: a search while the log loads may wait longer (the server holds its request open).
    await api.services.events.load()
    const response = await api.get<{ name: string; message: string }>(
      `/api/admin/search/events?query=${encodeURIComponent('"')}`,
    )
    expect(response.status).toBe(503)
    expect(response.body.name).toBe('ServiceUnavailable')
    expect(response.body.message).toContain('given up')
    expect(await api.services.events.search(parseEventQuery({}), ADMIN).catch(error => error)).toBeInstanceOf(
      SearchStopped,
    )
  })

  test('reading a part of the log no segment holds yet stops at the deadline', async () => {
    const dataDir = newDataDir()
    const events = Array.from({ length: 300 }, (_, k) => ({
      id: k + 1,
      createdAt: new Date(Date.UTC(2026, 0, 1) + k * 1000).toISOString(),
      type: 'feature-created',
      createdBy: 'ci',
      createdByUserId: 7,
      environment: null,
      project: 'default',
      featureName: `f${k}`,
      data: { name: `f${k}` },
      preData: null,
      tags: [],
    }))
    const path = join(dataDir, 'events.jsonl')
    writeFileSync(path, events.map(event => JSON.stringify(event) + '\n').join(''), { mode: 0o600 })
    const segmented = new SegmentedSearch(path, { dataDir, segmentEvents: 64 })
    segmented.openSegments(300)
    expect(segmented.planRebuild(300)).toBeGreaterThan(0)
    await readEventLines(path, 300, (line, event) => segmented.add(line, event), {
      id: segmented.size,
      offset: segmented.logEnd,
    })
    const query = parseEventQuery({ query: 'f1' })
    const stopped = (() => {
      try {
        segmented.search(query, visibilityOf(ADMIN), Date.now() - 1)
      } catch (error) {
        return error
      }
    })()
    expect(stopped).toBeInstanceOf(SearchWorkExceeded)
    expect((stopped as SearchWorkExceeded).reason).toBe('deadline')
    // Without a deadline the same search reads the log and is exact.
    expect(segmented.search(query, visibilityOf(ADMIN)).total).toBe(
      events.filter(event => JSON.stringify(event.data).includes('f1')).length,
    )
  })
})
