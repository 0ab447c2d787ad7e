/**
 * The event search of a data directory keeps older events in segment files (search/ in the data
 * directory). With segments of 64 events, random logs searched with random filters must still give
 * exactly what the brute force gives (event-search-oracle.ts): across segment boundaries, with
 * events appended while running (a segment written meanwhile), after a restart that maps the files,
 * and after every kind of damage a crash or a person can do to them, which must be noticed, ignored
 * and repaired from the log.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { parseEventQuery } from '../../../../src/features/events/event-query'
import { EventsService } from '../../../../src/features/events/events.service'
import { SEARCH_DIR } from '../../../../src/features/events/search/segment-files'
import { SegmentedSearch } from '../../../../src/features/events/search/segmented-search'
import type { EventRecord } from '../../../../src/storage/records'
import type { CommitListener } from '../../../../src/storage/store'
import type { Caller } from '../../../../src/features/tokens/permissions'
import { tempDir } from '../../../helpers'
import { seededRandom, type Random } from '../../../random'
import { ADMIN, bruteForce, randomEvents, randomParams, SCOPED, stored, VIEWER } from './event-search-oracle'

const SEGMENT = 64
const services: EventsService[] = []
const dirs: { remove(): void }[] = []
afterAll(() => {
  services.forEach(service => service.close())
  dirs.forEach(dir => dir.remove())
})

/** A data directory holding `events` in its log. */
function dataDir(events: EventRecord[]): string {
  const dir = tempDir('flags-segments-')
  dirs.push(dir)
  writeFileSync(join(dir.path, 'events.jsonl'), events.map(event => stored(event) + '\n').join(''), {
    mode: 0o600,
  })
  return dir.path
}

/** The event search over the directory's log, as the service runs it; `notices` collects what it reports. */
async function open(dir: string, lastId: number, options: { buildIndex?: boolean } = {}) {
  let listener: CommitListener = () => {}
  const notices: string[] = []
  const service = new EventsService(
    {
      lastEventId: lastId,
      log: { name: 'log', identity: null, eventsPath: join(dir, 'events.jsonl') },
      readEventLines: async () => {},
      onCommit: fn => (listener = fn),
    },
    // No event is read back from the log: the segments decide every well-formed needle (search-work.ts).
    { commonAfter: 20, segmentEvents: SEGMENT, readBackLimit: 0, ...options },
  )
  service.onNotice = message => notices.push(message)
  services.push(service)
  await service.load()
  // Segments missing at start are built in the background (searches meanwhile are the subject of
  // event-search-rebuild.property.test.ts); these tests look at the files once they are.
  while (service.segmentsRebuilding) await Bun.sleep(1)
  if (options.buildIndex !== false) while (!service.indexReady) await Bun.sleep(1)
  /** Commits events as the store does: appended to the log, then told. */
  const commit = (events: EventRecord[]) => {
    const lines = events.map(stored)
    appendFileSync(join(dir, 'events.jsonl'), lines.map(line => line + '\n').join(''))
    listener(events, lines)
  }
  return { service, notices, commit }
}

async function search(service: EventsService, params: URLSearchParams, caller: Caller = ADMIN) {
  const page = await service.search(parseEventQuery(Object.fromEntries(params)), caller)
  const text = new TextDecoder().decode(page.body)
  expect(text).not.toContain('commitSeq')
  const body = JSON.parse(text) as { events: EventRecord[]; total: number }
  expect(body.total).toBe(page.total)
  return { ids: body.events.map(event => event.id), total: body.total }
}

/** `rounds` random searches, each equal to the brute force over `events`. */
async function agrees(service: EventsService, events: EventRecord[], random: Random, rounds: number, label: string) {
  for (let round = 0; round < rounds; round++) {
    const params = randomParams(random, events)
    if (random.chance(0.2)) params.set('offset', String(random.int(0, events.length)))
    const caller = random.pick([ADMIN, ADMIN, VIEWER, SCOPED])
    const expected = bruteForce(events, params, caller)
    const context = `${label} round ${round} as ${caller.tokenName}: ?${params}`
    const actual = await search(service, params, caller)
    expect({ context, ...actual }).toEqual({ context, ...expected })
  }
}

const segmentFiles = (dir: string) => readdirSync(join(dir, SEARCH_DIR)).sort()

describe('segments of the event log', () => {
  for (const seed of [1, 2, 3]) {
    test(`random searches agree with brute force across segments, with appends, and after a restart (seed ${seed})`, async () => {
      const random = seededRandom(seed)
      const events = randomEvents(random, 460)
      const dir = dataDir(events.slice(0, 400))
      const first = await open(dir, 400, { buildIndex: seed !== 1 })
      // 400 events: six segments of 64 and 16 in memory.
      expect(segmentFiles(dir)).toHaveLength(6)
      await agrees(first.service, events.slice(0, 400), random, 80, `seed ${seed}`)
      // Commits fill the seventh segment while the service runs.
      first.commit(events.slice(400, 430))
      first.commit(events.slice(430))
      // A search is answered after the appends before it.
      expect((await search(first.service, new URLSearchParams({ limit: '1' }))).total).toBe(460)
      expect(segmentFiles(dir)).toHaveLength(7)
      await agrees(first.service, events, random, 80, `seed ${seed} after appends`)
      first.service.close()
      const again = await open(dir, 460)
      expect(again.notices).toEqual([])
      expect(segmentFiles(dir)).toHaveLength(7)
      await agrees(again.service, events, random, 80, `seed ${seed} after a restart`)
    }, 60_000)
  }

  test('pages walk the whole log across segment boundaries, newest first, and totals count every event', async () => {
    const events = randomEvents(seededRandom(21), 300)
    const dir = dataDir(events)
    const { service } = await open(dir, 300)
    const seen: number[] = []
    for (let offset = 0; offset < 300; offset += 37) {
      const page = await search(service, new URLSearchParams({ offset: String(offset), limit: '37' }))
      expect(page.total).toBe(300)
      seen.push(...page.ids)
    }
    expect(seen).toEqual(events.map(event => event.id).reverse())
  })
})

/**
 * Logs made to trip a check of several words against the segments' token streams (token-stream.ts):
 * few words, repeated within a text; texts adjacent in one field and apart or reversed in another;
 * a word ending one field and another starting the next; separators of several characters, and ones
 * differing by a character; words whose lower case differs in length or by context (İ, ß, final Σ,
 * ligatures, combining marks).
 */
const PHRASE_WORDS = [
  'alpha',
  'beta',
  'Alpha',
  'BETA',
  'alphabet',
  'ab',
  'a',
  'b',
  'İstanbul',
  'ΣΑΣ',
  'σας',
  'straße',
  'STRASSE',
  'ﬁle',
  'naïve',
  'nai\u0308ve',
  '日本',
  '42',
  '4',
]
const PHRASE_GAPS = [' ', '  ', '-', '.', '. ', ', ', ' -- ', '::', ':', '/', '_', '"', "'", ' (', ') ', '\\', '🎉', '']

function phraseText(random: Random): string {
  let text = random.chance(0.2) ? random.pick(PHRASE_GAPS) : ''
  for (let i = random.int(1, 7); i > 0; i--)
    text += random.pick(PHRASE_WORDS) + (i > 1 || random.chance(0.2) ? random.pick(PHRASE_GAPS) : '')
  return text
}

function phraseEvents(random: Random, count: number): EventRecord[] {
  return randomEvents(random, count).map(event => {
    const text = phraseText(random)
    // The same words in another field, often rearranged or with another separator.
    const words = text.split(/([\p{L}\p{N}\p{M}]+)/u)
    const other = random.chance(0.5)
      ? words.reverse().join('')
      : text.replace(/[^\p{L}\p{N}\p{M}]+/u, random.pick(PHRASE_GAPS))
    return {
      ...event,
      data: random.chance(0.9)
        ? { text, n: random.int(0, 9), [random.pick(PHRASE_WORDS)]: random.pick([true, null, 'alpha']) }
        : random.pick([null, { v: 42 }, { v: 'alpha beta' }, { v: ['ab', 'beta'] }]),
      preData: random.chance(0.6) ? { text: other } : null,
      tags: random.chance(0.4) ? [{ type: random.pick(PHRASE_WORDS), value: phraseText(random) }] : [],
    }
  })
}

/** A needle of a few words from some event's field, cut anywhere in its first and last word or gap, often changed a little. */
function phraseQuery(random: Random, events: EventRecord[]): string {
  const event = random.pick(events)
  const text = JSON.stringify(random.pick([event.data, event.preData, event.tags, event.data]))
  const pieces = text.split(/([\p{L}\p{N}\p{M}]+)/u)
  const from = random.int(0, pieces.length - 1)
  const to = Math.min(pieces.length - 1, from + random.int(1, 6))
  const first = pieces[from].slice(random.int(0, pieces[from].length))
  const last = pieces[to].slice(0, random.int(0, pieces[to].length))
  let needle = first + pieces.slice(from + 1, to).join('') + last
  // Two pairs of words the text holds, joined on their shared word: the triple may be nowhere.
  const word = 1 + 2 * random.int(0, Math.max(0, (pieces.length - 4) / 2))
  const joined = pieces.findIndex(
    (piece, j) =>
      j % 2 === 1 && j + 2 < pieces.length && j !== word + 2 && piece.toLowerCase() === pieces[word + 2]?.toLowerCase(),
  )
  if (joined !== -1 && random.chance(0.6))
    return pieces.slice(word, word + 3).join('') + pieces.slice(joined + 1, joined + 3).join('')
  if (random.chance(0.25)) needle = needle.replace(/[^\p{L}\p{N}\p{M}]+/u, random.pick(PHRASE_GAPS))
  if (random.chance(0.15)) needle = needle.replace(/[\p{L}\p{N}\p{M}]+/u, random.pick(PHRASE_WORDS))
  if (random.chance(0.1)) needle = `${random.pick(PHRASE_WORDS)}${random.pick(PHRASE_GAPS)}${random.pick(PHRASE_WORDS)}`
  if (random.chance(0.3)) needle = needle.toUpperCase()
  // A needle cut inside a surrogate pair is a scan's to answer; keep it whole here.
  return needle.replace(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/g, '') || 'alpha beta'
}

describe('queries of several words or with separators are decided from the token streams', () => {
  for (const seed of [61, 62, 63, 64]) {
    test(`equal to brute force across segments, with appends, and after a restart (seed ${seed})`, async () => {
      const random = seededRandom(seed)
      const events = phraseEvents(random, 420)
      const dir = dataDir(events.slice(0, 380))
      const asked = (all: EventRecord[], rounds: number, label: string, service: EventsService) => {
        const answers: Promise<void>[] = []
        for (let round = 0; round < rounds; round++) {
          const params = random.chance(0.3) ? randomParams(random, all) : new URLSearchParams()
          params.set('query', phraseQuery(random, all))
          if (random.chance(0.3)) params.set('offset', String(random.int(0, 60)))
          const expected = bruteForce(all, params)
          answers.push(
            search(service, params).then(
              actual =>
                void expect({ label, round, query: params.get('query'), ...actual }).toEqual({
                  label,
                  round,
                  query: params.get('query'),
                  ...expected,
                }),
            ),
          )
        }
        return Promise.all(answers)
      }
      const first = await open(dir, 380, { buildIndex: seed % 2 === 0 })
      expect(segmentFiles(dir)).toHaveLength(5)
      await asked(events.slice(0, 380), 150, 'first', first.service)
      first.commit(events.slice(380))
      await asked(events, 150, 'after appends', first.service)
      expect(segmentFiles(dir)).toHaveLength(6)
      first.service.close()
      const again = await open(dir, 420)
      expect(again.notices).toEqual([])
      await asked(events, 150, 'after a restart', again.service)
    }, 60_000)
  }
})

test('the last of several words tested term by term (standing for too many terms to list) gives the same answers', () => {
  const random = seededRandom(65)
  const events = phraseEvents(random, 400)
  const dir = dataDir(events)
  // Every last word counts as standing for too many terms.
  const segmented = new SegmentedSearch(join(dir, 'events.jsonl'), {
    dataDir: dir,
    segmentEvents: SEGMENT,
    commonAfter: 20,
    manyTerms: 0,
    readBackLimit: 0,
  })
  segmented.openSegments(events.length)
  for (const event of events) segmented.add(stored(event), event)
  while (!segmented.indexStep(1000));
  expect(segmented.segmentCount).toBe(6)
  for (let round = 0; round < 300; round++) {
    const params = random.chance(0.3) ? randomParams(random, events) : new URLSearchParams()
    params.set('query', phraseQuery(random, events))
    const expected = bruteForce(events, params)
    const result = segmented.search(parseEventQuery(Object.fromEntries(params)), { projects: null, hiddenTypes: [] })
    const actual = { ids: result.events.map(index => index + 1), total: result.total }
    expect({ round, query: params.get('query'), ...actual }).toEqual({ round, query: params.get('query'), ...expected })
  }
})

describe('damaged or missing segments are ignored and rebuilt from the log', () => {
  const damages: [string, (path: string) => void, RegExp][] = [
    [
      'a segment cut short (a crash in the middle of writing it)',
      path => truncateSync(path, statSync(path).size - 100),
      /bytes, not/,
    ],
    [
      'a segment with a flipped byte (bad checksum)',
      path => {
        const bytes = readFileSync(path)
        bytes[bytes.length - 3] ^= 0x55
        writeFileSync(path, bytes)
      },
      /checksum/,
    ],
    [
      'a segment of an older format',
      path => {
        const bytes = readFileSync(path)
        bytes.writeUInt32LE(0, 8)
        writeFileSync(path, bytes)
      },
      /version 0/,
    ],
    ['a segment deleted by hand', path => rmSync(path), /segments missing for events 129–192 /],
    ['a file that is not a segment', path => writeFileSync(path, 'garbage'), /not a segment/],
  ]
  for (const [what, damage, notice] of damages) {
    test(what, async () => {
      const random = seededRandom(31)
      const events = randomEvents(random, 330)
      const dir = dataDir(events)
      ;(await open(dir, 330)).service.close()
      const before = segmentFiles(dir)
      expect(before).toHaveLength(5)
      const inode = (name: string) => statSync(join(dir, SEARCH_DIR, name)).ino
      const kept = [before[0], before[1], before[3], before[4]].map(inode)
      damage(join(dir, SEARCH_DIR, before[2]))
      const again = await open(dir, 330)
      // The third segment is ignored and rebuilt from the log; the others, whole, are used as they are.
      expect(again.notices.some(message => notice.test(message))).toBe(true)
      expect(segmentFiles(dir)).toEqual(before)
      expect([before[0], before[1], before[3], before[4]].map(inode)).toEqual(kept)
      await agrees(again.service, events, random, 60, what)
      again.service.close()
      const third = await open(dir, 330)
      expect(third.notices).toEqual([])
    }, 30_000)
  }

  test('a temporary file left by a crash before the rename is removed', async () => {
    const events = randomEvents(seededRandom(32), 200)
    const dir = dataDir(events)
    ;(await open(dir, 200)).service.close()
    const leftover = join(dir, SEARCH_DIR, '.events-000000000193-64.seg.tmp')
    writeFileSync(leftover, 'half a segment')
    const again = await open(dir, 200)
    expect(existsSync(leftover)).toBe(false)
    expect(again.notices).toEqual([expect.stringContaining('not a segment')])
    await agrees(again.service, events, seededRandom(33), 40, 'after a leftover temporary file')
  })

  test('segments of another log (a restore put a different log in place) are not used', async () => {
    const dir = dataDir(randomEvents(seededRandom(41), 256))
    ;(await open(dir, 256)).service.close()
    const other = randomEvents(seededRandom(42), 256)
    writeFileSync(join(dir, 'events.jsonl'), other.map(event => JSON.stringify(event) + '\n').join(''))
    const again = await open(dir, 256)
    expect(again.notices.some(message => /does not match the event log/.test(message))).toBe(true)
    await agrees(again.service, other, seededRandom(43), 60, 'another log')
  })

  test('the segment directory is 0700 and its files 0600', async () => {
    const dir = dataDir(randomEvents(seededRandom(51), 130))
    await open(dir, 130)
    expect((statSync(join(dir, SEARCH_DIR)).mode & 0o777).toString(8)).toBe('700')
    for (const name of segmentFiles(dir))
      expect((statSync(join(dir, SEARCH_DIR, name)).mode & 0o777).toString(8)).toBe('600')
  })
})
