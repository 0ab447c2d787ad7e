/**
 * Random event logs searched with random filters must give exactly what a brute-force filter over
 * the same events gives: same events, same order, same total. The brute force (event-search-oracle.ts)
 * is written from the contract (§5) on its own, sharing no code with the service.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { parseEventQuery } from '../../../../src/features/events/event-query'
import { EventsService, type EventsOptions } from '../../../../src/features/events/events.service'
import type { EventRecord } from '../../../../src/storage/records'
import type { CommitListener } from '../../../../src/storage/store'
import type { Caller } from '../../../../src/features/tokens/permissions'
import { seededRandom } from '../../../random'
import { ADMIN, bruteForce, randomEvents, randomParams, SCOPED, VIEWER } from './event-search-oracle'

const services: EventsService[] = []
afterAll(() => services.forEach(service => service.close()))

/** A store's readEventLines over `events`: the JSON lines of those after `after` up to `lastId`. */
const readEventLinesOf =
  (events: readonly EventRecord[]) =>
  async (lastId: number, onLine: (line: string) => void, after = 0) => {
    for (const event of events) if (event.id > after && event.id <= lastId) onLine(JSON.stringify(event))
  }

/**
 * The search (in its worker) over a fixed log, as the service sees a store holding it. A small
 * `commonAfter` makes frequent words common, so that queries exercise both the index and the scan.
 */
async function serviceOver(
  events: EventRecord[],
  options: EventsOptions = {},
  onCommit: (listener: CommitListener) => void = () => {},
  shared: { name: string; identity: string } | null = null,
) {
  const service = new EventsService(
    {
      lastEventId: events.length,
      log: { name: shared?.name ?? 'memory', identity: shared?.identity ?? null, eventsPath: null },
      readEventLines: readEventLinesOf(events),
      onCommit,
    },
    { commonAfter: 20, ...options },
  )
  services.push(service)
  await service.load()
  return service
}

/** Waits until the text index covers the log, so the indexed path is the one tested. */
async function indexed(service: EventsService) {
  while (!service.indexReady) await Bun.sleep(1)
  return service
}

async function search(service: EventsService, params: URLSearchParams, caller: Caller = ADMIN) {
  const page = await service.search(parseEventQuery(Object.fromEntries(params)), caller)
  const body = JSON.parse(new TextDecoder().decode(page.body)) as { events: EventRecord[]; total: number }
  expect(body.total).toBe(page.total)
  return { ids: body.events.map(event => event.id), total: body.total, plan: page.plan }
}

describe('event search equals a brute-force filter', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`random logs and random filters agree with brute force, before and after the index is built (seed ${seed})`, async () => {
      const random = seededRandom(seed)
      const events = randomEvents(random, 400)
      const scanning = await serviceOver(events, { buildIndex: false })
      const indexing = await indexed(await serviceOver(events))
      // A database's log: copied to local files as it is handed to the worker, and searched in segments (of 64 events here) as a data directory's.
      const copied = await indexed(
        await serviceOver(events, { segmentEvents: 64 }, () => {}, { name: 'database', identity: 'test-log' }),
      )
      const plans = new Set<string>()
      for (let round = 0; round < 150; round++) {
        const params = randomParams(random, events)
        const caller = random.pick([ADMIN, ADMIN, VIEWER, SCOPED])
        const expected = bruteForce(events, params, caller)
        const context = `seed ${seed} round ${round} as ${caller.tokenName}: ?${params}`
        for (const service of [scanning, indexing, copied]) {
          const actual = await search(service, params, caller)
          plans.add(actual.plan)
          expect({ context, ids: actual.ids, total: actual.total }).toEqual({ context, ...expected })
        }
      }
      expect([...plans].sort()).toEqual(['index', 'none', 'scan'])
      // 1–3 s alone; room for a machine shared with other test runs.
    }, 30_000)
  }

  test('a substring inside a word is found (ther finds other and mother)', async () => {
    const events = randomEvents(seededRandom(99), 50)
    const service = await indexed(await serviceOver(events, { commonAfter: 1000 }))
    const expected = bruteForce(events, new URLSearchParams({ query: 'ther' }))
    expect(expected.total).toBeGreaterThan(0)
    const actual = await search(service, new URLSearchParams({ query: 'ther' }))
    expect(actual).toEqual({ ...expected, plan: 'index' })
  })

  test('events added after the service started are searchable', async () => {
    const events = randomEvents(seededRandom(5), 20)
    let listener: CommitListener = () => {}
    const service = await indexed(await serviceOver(events, {}, fn => (listener = fn)))
    const extra: EventRecord = {
      ...events[0],
      id: 21,
      data: { description: 'brand-new-word' },
      preData: null,
      tags: [],
    }
    listener([extra], [JSON.stringify(extra)])
    expect((await search(service, new URLSearchParams({ query: 'NEW-WOR' }))).ids).toEqual([21])
  })
})

describe('the worker started while a commit is being written', () => {
  test('a commit counted by the store but not yet durable when the worker starts is searchable once it completes', async () => {
    const events = randomEvents(seededRandom(11), 30)
    const durable = events.slice(0, 29)
    let listener: CommitListener = () => {}
    // The store already counts event 30 (its commit is being written) but its log holds 29 events.
    const store = {
      lastEventId: 29,
      log: { name: 'memory', identity: null, eventsPath: null },
      readEventLines: readEventLinesOf(durable),
      onCommit: (fn: CommitListener) => (listener = fn),
    }
    const service = new EventsService(store, {})
    services.push(service)
    store.lastEventId = 30
    const loading = service.load()
    listener([events[29]], [JSON.stringify(events[29])])
    await loading
    const found = await search(service, new URLSearchParams({ limit: '1000' }))
    expect(found.ids).toEqual(events.map(event => event.id).reverse())
  })
})

describe("a database's log, read while the service is already ready", () => {
  test('ready comes before the log is read; searches wait for all of it and for commits made meanwhile', async () => {
    // More events than one message to the worker holds, read in pages as from a database.
    const events = randomEvents(seededRandom(12), 12_001)
    const durable = events.slice(0, 12_000)
    let listener: CommitListener = () => {}
    let release = () => {}
    const paused = new Promise<void>(resolve => (release = resolve))
    const store = {
      lastEventId: 12_000,
      log: { name: 'database', identity: 'test-log', eventsPath: null },
      readEventLines: async (lastId: number, onLine: (line: string) => void, after = 0) => {
        for (let at = after; at < lastId; at += 1000) {
          if (at === 6000) await paused
          else await Bun.sleep(0)
          durable.slice(at, Math.min(at + 1000, lastId)).forEach(event => onLine(JSON.stringify(event)))
        }
      },
      onCommit: (fn: CommitListener) => (listener = fn),
    }
    const service = new EventsService(store, {})
    services.push(service)
    const loading = service.load()
    while (!service.ready) await Bun.sleep(1)
    // Ready with half the log still unread; a search made now, and a commit made now, both wait for the rest.
    const all = new URLSearchParams({ limit: '1000' })
    const oldest = new URLSearchParams({ limit: '1000', offset: '11500' })
    const early = [search(service, all), search(service, oldest)]
    store.lastEventId = 12_001
    listener([events[12_000]], [JSON.stringify(events[12_000])])
    release()
    await loading
    const [newest, oldestPage] = await Promise.all(early)
    expect({ ids: newest.ids, total: newest.total }).toEqual(bruteForce(events, all))
    expect(newest.total).toBe(12_001)
    expect({ ids: oldestPage.ids, total: oldestPage.total }).toEqual(bruteForce(events, oldest))
    await indexed(service)
    const random = seededRandom(13)
    for (const params of [all, oldest, ...Array.from({ length: 30 }, () => randomParams(random, events))]) {
      const actual = await search(service, params)
      expect({ params: `${params}`, ids: actual.ids, total: actual.total }).toEqual({
        params: `${params}`,
        ...bruteForce(events, params),
      })
    }
  }, 60_000)
})

describe('a database that goes away while its log is read for search', () => {
  test('the read is tried again after a notice and goes on where it stopped: searches equal the log, nothing twice, nothing missed', async () => {
    const events = randomEvents(seededRandom(21), 7_000)
    let failures = 0
    const store = {
      lastEventId: events.length,
      log: { name: 'database', identity: 'test-log', eventsPath: null },
      readEventLines: async (lastId: number, onLine: (line: string) => void, after = 0) => {
        for (let at = after; at < lastId; at += 1000) {
          // Twice, the connection drops part way through (at a different place each time).
          if (failures < 2 && at === 3000 + failures * 2000) {
            failures++
            throw new Error('Connection closed')
          }
          await Bun.sleep(0)
          events.slice(at, Math.min(at + 1000, lastId)).forEach(event => onLine(JSON.stringify(event)))
        }
      },
      onCommit: () => {},
    }
    const service = new EventsService(store, {})
    services.push(service)
    const notices: string[] = []
    service.onNotice = message => notices.push(message)
    await service.load()
    expect(failures).toBe(2)
    expect(notices).toEqual([
      expect.stringContaining('failed after 3000 of 7000 events (Connection closed); trying again in 250 ms'),
      expect.stringContaining('failed after 5000 of 7000 events (Connection closed); trying again in 500 ms'),
    ])
    const random = seededRandom(22)
    const all = new URLSearchParams({ limit: '1000' })
    for (const params of [
      all,
      new URLSearchParams({ limit: '1000', offset: '6500' }),
      ...Array.from({ length: 20 }, () => randomParams(random, events)),
    ]) {
      const actual = await search(service, params)
      expect({ params: `${params}`, ids: actual.ids, total: actual.total }).toEqual({
        params: `${params}`,
        ...bruteForce(events, params),
      })
    }
    expect((await search(service, all)).total).toBe(7_000)
  })
})
