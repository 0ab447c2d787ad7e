/**
 * Searches while the segments of a data directory are rebuilt from its log (a first start after
 * the segment format changed, or with search/ deleted): the segments already built answer their
 * part and the rest of the log is read, and every answer must be exactly the brute force's
 * (event-search-oracle.ts), at every point of the rebuild, with events appended meanwhile, and
 * across a restart in the middle of it (some segments written, the others not, a temporary file
 * of one cut short).
 *
 * The rebuild is paused between steps: directly (the test calls each step of SegmentedSearch, as
 * the worker does between messages), and through the service with a slowed pace.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { appendFileSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseEventQuery } from '../../../../src/features/events/event-query'
import { EventsService, visibilityOf } from '../../../../src/features/events/events.service'
import { SEARCH_DIR } from '../../../../src/features/events/search/segment-files'
import { SegmentedSearch } from '../../../../src/features/events/search/segmented-search'
import { lineParts, searchableText } from '../../../../src/features/events/search/searchable-text'
import { readEventLines, withoutCommit } from '../../../../src/storage/event-log'
import type { EventRecord } from '../../../../src/storage/records'
import type { CommitListener } from '../../../../src/storage/store'
import type { Caller } from '../../../../src/features/tokens/permissions'
import { tempDir } from '../../../helpers'
import { seededRandom, type Random } from '../../../random'
import { ADMIN, bruteForce, randomEvents, randomParams, SCOPED, stored, VIEWER } from './event-search-oracle'

const SEGMENT = 64
const dirs: { remove(): void }[] = []
const services: EventsService[] = []
afterAll(() => {
  services.forEach(service => service.close())
  dirs.forEach(dir => dir.remove())
})

function dataDir(events: EventRecord[]): string {
  const dir = tempDir('flags-rebuild-')
  dirs.push(dir)
  writeFileSync(join(dir.path, 'events.jsonl'), events.map(event => stored(event) + '\n').join(''), {
    mode: 0o600,
  })
  return dir.path
}

const segmentFiles = (dir: string) =>
  existsSync(join(dir, SEARCH_DIR))
    ? readdirSync(join(dir, SEARCH_DIR))
        .filter(name => name.endsWith('.seg'))
        .sort()
    : []

/** The search of a directory's log as the worker opens it, driven step by step by the test. */
async function openDirect(dir: string, lastId: number) {
  const notices: string[] = []
  const path = join(dir, 'events.jsonl')
  const segmented = new SegmentedSearch(path, {
    dataDir: dir,
    segmentEvents: SEGMENT,
    commonAfter: 20,
    readBackLimit: 0,
    log: message => notices.push(message),
  })
  segmented.openSegments(lastId)
  const toBuild = segmented.planRebuild(lastId)
  await readEventLines(path, lastId, (line, event) => segmented.add(line, event), {
    id: segmented.size,
    offset: segmented.logEnd,
  })
  return { segmented, notices, toBuild }
}

function searchDirect(segmented: SegmentedSearch, params: URLSearchParams, caller: Caller) {
  const result = segmented.search(parseEventQuery(Object.fromEntries(params)), visibilityOf(caller))
  const text = new TextDecoder().decode(segmented.pageJson(result))
  // The commit number is the log's own: no answer holds it.
  expect(text).not.toContain('commitSeq')
  const body = JSON.parse(text) as { events: EventRecord[]; total: number }
  expect(body.total).toBe(result.total)
  return { ids: body.events.map(event => event.id), total: body.total }
}

function randomSearch(random: Random, events: EventRecord[]) {
  const params = randomParams(random, events)
  if (random.chance(0.2)) params.set('offset', String(random.int(0, events.length)))
  return { params, caller: random.pick([ADMIN, ADMIN, VIEWER, SCOPED]) }
}

/** Random searches between random steps of the rebuild (and appends), each checked, until it is done. */
async function searchWhileRebuilding(
  segmented: SegmentedSearch,
  dir: string,
  events: EventRecord[],
  more: EventRecord[],
  random: Random,
  label: string,
) {
  let searched = 0
  for (let round = 0; segmented.rebuilding; round++) {
    for (let k = random.int(1, 4); k > 0; k--) {
      const { params, caller } = randomSearch(random, events)
      const context = `${label} round ${round} as ${caller.tokenName}: ?${params}`
      expect({ context, ...searchDirect(segmented, params, caller) }).toEqual({
        context,
        ...bruteForce(events, params, caller),
      })
      searched++
    }
    // The log's commit numbers are not searchable text: these match only where the brute force finds them.
    for (const query of ['commitseq', 'commi', 'seq":']) {
      const params = new URLSearchParams({ query, limit: '1000' })
      expect({ query, ...searchDirect(segmented, params, ADMIN) }).toEqual({
        query,
        ...bruteForce(events, params, ADMIN),
      })
    }
    // A commit meanwhile: appended to the log, then handed over, as the service does.
    if (more.length > 0 && random.chance(0.3)) {
      const batch = more.splice(0, random.int(1, 12))
      appendFileSync(join(dir, 'events.jsonl'), batch.map(event => stored(event) + '\n').join(''))
      for (const event of batch) segmented.add(stored(event), event)
      events.push(...batch)
    }
    segmented.rebuildStep(random.int(1, 90))
  }
  return searched
}

describe('searches during a rebuild of the segments', () => {
  for (const seed of [1, 2, 3]) {
    test(`agree with brute force at every step of a rebuild from nothing, with appends (seed ${seed})`, async () => {
      const random = seededRandom(seed)
      const all = randomEvents(random, 760)
      const events = all.slice(0, 700)
      const dir = dataDir(events)
      const { segmented, notices, toBuild } = await openDirect(dir, 700)
      // 700 events: ten segments of 64 to build, newest first; 60 in memory.
      expect(toBuild).toBe(640)
      expect(notices).toEqual([expect.stringContaining('missing for events 1–640')])
      const searched = await searchWhileRebuilding(segmented, dir, events, all.slice(700), random, `seed ${seed}`)
      expect(searched).toBeGreaterThan(20)
      expect(segmentFiles(dir).length).toBe(Math.floor(events.length / SEGMENT))
      for (let round = 0; round < 40; round++) {
        const { params, caller } = randomSearch(random, events)
        expect(searchDirect(segmented, params, caller)).toEqual(bruteForce(events, params, caller))
      }
    }, 60_000)
  }

  test('needles that raw bytes hide or fake are answered as the lower-cased text is searched', async () => {
    const random = seededRandom(13)
    const events = randomEvents(random, 300)
    // Characters whose lower case is ASCII (the Kelvin sign is k, İ is i and a combining dot), keys
    // and separators of the line around data, a data object with keys named like the line's own.
    const texts = ['5 \u212A', 'İSTANBUL zuİ', 'Kilo', 'the "preData": key', 'ends with i', 'ﬁle']
    events.forEach((event, i) => {
      if (i % 3 === 0)
        event.data = {
          description: texts[i % texts.length],
          preData: { tags: 'x' },
          type: 'feature-created',
          createdBy: 'ci',
        }
      if (i % 5 === 0) event.preData = { note: texts[(i + 1) % texts.length] }
    })
    const dir = dataDir(events)
    const { segmented } = await openDirect(dir, 300)
    const needles = [
      '"data":',
      'null,"data',
      'data":{"description',
      ']}',
      'zui',
      'zui̇',
      'k',
      '5 k',
      'kilo',
      'i',
      'i̇',
      'istanbul',
      'İstanbul',
      'ﬁ',
      'fi',
      'with i',
      'predata',
      '"predata":',
      'predata":{',
      '},"predata',
      'tags',
      '"tags":[',
      'x"}}',
      'feature-created',
      '"createdby":"ci"',
      'ci',
      'null',
      '}',
      '":',
      'description',
      '"id":',
    ]
    for (const query of needles) {
      for (const caller of [ADMIN, VIEWER, SCOPED]) {
        const params = new URLSearchParams({ query, limit: '7', offset: String(random.int(0, 3)) })
        if (random.chance(0.3)) params.set('type', 'IS:feature-created')
        expect({ query, ...searchDirect(segmented, params, caller) }).toEqual({
          query,
          ...bruteForce(events, params, caller),
        })
      }
    }
    expect(segmented.rebuilding).toBe(true)
  })

  test('the log may end past the last committed event (a commit being written, half a line): the plan starts from that event', async () => {
    const random = seededRandom(19)
    const events = randomEvents(random, 700)
    const dir = dataDir(events)
    appendFileSync(join(dir, 'events.jsonl'), '{"id":701,"createdAt":"2026-')
    const { segmented, toBuild } = await openDirect(dir, 680)
    expect(toBuild).toBe(640)
    const committed = events.slice(0, 680)
    await searchWhileRebuilding(segmented, dir, committed, [], random, 'log past the last commit')
    expect(segmentFiles(dir)).toHaveLength(10)
  })

  test('the newest segments are built first, and a page of the newest events is answered from them', async () => {
    const events = randomEvents(seededRandom(7), 400)
    const dir = dataDir(events)
    const { segmented } = await openDirect(dir, 400)
    while (segmentFiles(dir).length < 2) segmented.rebuildStep(16)
    // Events 257–384 (the newest whole segments) first; the oldest ones are still read from the log.
    expect(segmentFiles(dir)).toEqual(['events-000000000257-64.seg', 'events-000000000321-64.seg'])
    const params = new URLSearchParams({ limit: '30', offset: '50' })
    expect(searchDirect(segmented, params, VIEWER)).toEqual(bruteForce(events, params, VIEWER))
  })

  test('a restart in the middle of a rebuild keeps the segments written, drops a torn one, and searches stay exact', async () => {
    const random = seededRandom(11)
    const events = randomEvents(random, 600)
    const dir = dataDir(events)
    const first = await openDirect(dir, 600)
    while (segmentFiles(dir).length < 4) {
      first.segmented.rebuildStep(20)
      const { params, caller } = randomSearch(random, events)
      expect(searchDirect(first.segmented, params, caller)).toEqual(bruteForce(events, params, caller))
    }
    // Stopped halfway through building the next one (the process killed): a few events read, and a temporary file it was writing.
    first.segmented.rebuildStep(20)
    const written = segmentFiles(dir)
    const inodes = written.map(name => statSync(join(dir, SEARCH_DIR, name)).ino)
    writeFileSync(join(dir, SEARCH_DIR, '.events-000000000129-64.seg.tmp'), 'half a segment')
    const again = await openDirect(dir, 600)
    // The four written are used as they are; the other five are built.
    expect(again.toBuild).toBe(5 * SEGMENT)
    expect(written.map(name => statSync(join(dir, SEARCH_DIR, name)).ino)).toEqual(inodes)
    expect(again.notices).toEqual([
      expect.stringContaining('not a segment'),
      expect.stringContaining('missing for events 1–320'),
    ])
    await searchWhileRebuilding(again.segmented, dir, events, [], random, 'after a restart')
    expect(segmentFiles(dir)).toHaveLength(9)
    const third = await openDirect(dir, 600)
    expect(third.toBuild).toBe(0)
    expect(third.notices).toEqual([])
  }, 60_000)
})

describe('a line read without parsing its data (how segments are built)', () => {
  test('gives the head and searchable text the parsed event gives, or declines where keys repeat inside the texts', () => {
    const random = seededRandom(17)
    const events = randomEvents(random, 400)
    const tricky = [
      { a: 0, preData: 1 },
      { a: 0, tags: [',"tags":'] },
      { a: 0, data: { b: 0, preData: null } },
      'x,"preData":y',
      { a: ',"data":' },
      [{ type: 'simple', value: '","tags":[' }],
    ]
    events.forEach((event, i) => {
      if (i % 4 === 1) event.data = { nested: random.pick(tricky) } as EventRecord['data']
      if (i % 4 === 2) event.preData = { nested: random.pick(tricky) } as EventRecord['preData']
      if (i % 4 === 3) event.tags = [{ type: 'simple', value: JSON.stringify(random.pick(tricky)) }]
    })
    let declined = 0
    for (const event of events) {
      // The segment build reads a line of the log without its commit member, as lineParts takes it.
      const parts = lineParts(withoutCommit(stored(event)))
      if (parts === null) {
        declined++
        continue
      }
      const { data, preData, tags, ...head } = event
      expect(parts).toEqual({ head, text: searchableText(event) })
    }
    // Plain events are read so; only some of the tricky ones are declined.
    expect(declined).toBeGreaterThan(0)
    expect(declined).toBeLessThan(events.length / 2)
    // Keys in another order than the store's: not read so.
    const { id, data, ...rest } = events[0]
    expect(lineParts(JSON.stringify({ id, data, ...rest }))).toBeNull()
  })
})

describe('the service during a rebuild', () => {
  test('answers searches, exact, while a slowed rebuild runs in its worker, and commits made meanwhile are seen', async () => {
    const random = seededRandom(5)
    const all = randomEvents(random, 1100)
    const events = all.slice(0, 1000)
    const dir = dataDir(events)
    let listener: CommitListener = () => {}
    const service = new EventsService(
      {
        lastEventId: 1000,
        log: { name: 'log', identity: null, eventsPath: join(dir, 'events.jsonl') },
        readEventLines: async () => {},
        onCommit: fn => (listener = fn),
      },
      // Two events a step, a pause of 5 ms after each: the rebuild of 960 events takes seconds.
      // The part not yet rebuilt is read from the log, the segments built read no event back (readBackLimit 0).
      { commonAfter: 20, segmentEvents: SEGMENT, rebuild: { stepEvents: 2, pauseMs: 5 }, readBackLimit: 0 },
    )
    services.push(service)
    await service.load()
    let during = 0
    for (let round = 0; round < 400 && (service.segmentsRebuilding || round < 60); round++) {
      if (round % 10 === 5 && events.length < all.length) {
        const batch = all.slice(events.length, events.length + 20)
        const lines = batch.map(stored)
        appendFileSync(join(dir, 'events.jsonl'), lines.map(line => line + '\n').join(''))
        listener(batch, lines)
        events.push(...batch)
      }
      const rebuilding = service.segmentsRebuilding
      const { params, caller } = randomSearch(random, events)
      const page = await service.search(parseEventQuery(Object.fromEntries(params)), caller)
      const text = new TextDecoder().decode(page.body)
      expect(text).not.toContain('commitSeq')
      const body = JSON.parse(text) as { events: EventRecord[]; total: number }
      const context = `round ${round} as ${caller.tokenName}: ?${params}`
      expect({ context, ids: body.events.map(event => event.id), total: body.total }).toEqual({
        context,
        ...bruteForce(events, params, caller),
      })
      if (rebuilding) during++
    }
    expect(during).toBeGreaterThan(0)
    while (!service.indexReady) await Bun.sleep(5)
    expect(service.segmentsRebuilding).toBe(false)
    expect(segmentFiles(dir)).toHaveLength(Math.floor(events.length / SEGMENT))
  }, 120_000)
})
