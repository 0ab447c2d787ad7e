/**
 * Random event logs, random queries and the brute-force answer, written from the contract (§5) on
 * its own, sharing no code with the service: what the event-search property tests compare with.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventLine } from '../../../../src/storage/event-log'
import type { EventRecord } from '../../../../src/storage/records'
import type { Caller } from '../../../../src/features/tokens/permissions'
import type { Random } from '../../../random'

/** Callers of reads: their credential is never checked again (only writes do that). */
export const ADMIN: Caller = {
  tokenName: 'admin',
  kind: 'token',
  userId: 1,
  role: 'admin',
  projects: ['*'],
  credential: { check: () => 'admin' },
  permission: 'NONE',
}
/** May not list tokens (GET /api/admin/api-tokens needs ADMIN): sees no token events. */
export const VIEWER: Caller = {
  tokenName: 'viewer',
  kind: 'token',
  userId: 2,
  role: 'viewer',
  projects: ['*'],
  credential: { check: () => 'viewer' },
  permission: 'NONE',
}
/** Limited to two projects: sees their events only, none without a project. */
export const SCOPED: Caller = {
  tokenName: 'scoped',
  kind: 'token',
  userId: 3,
  role: 'editor',
  projects: ['checkout', 'search'],
  credential: { check: () => 'editor' },
  permission: 'NONE',
}
const TOKEN_EVENTS = ['api-token-created', 'api-token-deleted']
const WORDS = [
  'alpha',
  '𐐀𝐀x',
  'Beta',
  'other',
  'mother',
  'ÄPFEL',
  'straße',
  'naïve',
  '日本語',
  'emoji🎉',
  'a_b',
  'x-y',
  'C++',
  '50%',
  'null',
  'true',
  '"quoted"',
  'back\\slash',
  'İstanbul',
  'ﬁle',
]
const TYPES = [
  'feature-created',
  'feature-updated',
  'feature-archived',
  'feature-tagged',
  'project-created',
  'api-token-created',
  'api-token-deleted',
]
const PROJECTS = ['default', 'checkout', 'search', null]
const FEATURES = ['alpha-flag', 'beta', 'gamma.flag', null]
const ENVIRONMENTS = ['development', 'production', null]
const CREATORS: [string, number | null][] = [
  ['admin-bootstrap', -42],
  ['ci', 7],
  ['ops', 12],
  ['system', null],
]

function randomText(random: Random): string {
  const parts: string[] = []
  for (let i = random.int(1, 4); i > 0; i--) parts.push(random.pick(WORDS))
  return parts.join(random.pick([' ', '-', '.', '', ', ']))
}

export function randomEvents(random: Random, count: number): EventRecord[] {
  const events: EventRecord[] = []
  let time = Date.UTC(2026, 0, 30, 20)
  for (let id = 1; id <= count; id++) {
    time += random.int(0, 6) * 3_600_000 + random.int(0, 59_999)
    // One event in eight on a day's last or the next day's first millisecond: where a day filter's
    // inclusive bound and an exclusive one (or a bound a millisecond off) answer differently.
    if (random.chance(0.125)) time = time - (time % 86_400_000) + 86_400_000 - random.int(0, 1)
    const [createdBy, createdByUserId] = random.pick(CREATORS)
    events.push({
      id,
      createdAt: new Date(time).toISOString(),
      type: random.pick(TYPES),
      createdBy,
      createdByUserId,
      environment: random.pick(ENVIRONMENTS),
      project: random.pick(PROJECTS),
      featureName: random.pick(FEATURES),
      data: random.chance(0.8) ? { description: randomText(random), n: random.int(0, 99) } : null,
      preData: random.chance(0.4) ? { note: randomText(random) } : null,
      tags: random.chance(0.3) ? [{ type: 'simple', value: random.pick(WORDS) }] : [],
    })
  }
  return events
}

/** Runs of characters that are neither letters, digits nor marks: what separates words. */
const SEPARATOR_RUNS = /[^\p{L}\p{N}\p{M}]+/gu

/**
 * A needle made only of separators: a whole run of some event's text or a piece of one (a single
 * character, with the spaces around it), a run longer than any in the data, or a mix of quotes,
 * colons, spaces and symbols, with spaces before or after.
 */
export function separatorQuery(random: Random, events: EventRecord[]): string {
  const event = random.pick(events)
  const text = JSON.stringify(random.pick([event.data, event.preData, event.tags]))
  const runs = text.match(SEPARATOR_RUNS) ?? ['"']
  const run = random.pick(runs)
  const chars = [...run]
  switch (random.int(0, 5)) {
    case 0:
      return run
    case 1:
      return random.pick(chars)
    case 2: {
      const start = random.int(0, chars.length - 1)
      return chars.slice(start, start + random.int(1, 4)).join('')
    }
    case 3:
      return random.pick([
        '"',
        ':',
        ',',
        '{',
        '}',
        '[',
        ']',
        '-',
        '.',
        '_',
        '%',
        '+',
        '\\',
        '🎉',
        '"'.repeat(12),
        ':'.repeat(9),
        ', '.repeat(7),
        '}}}}}}}}',
        '🎉🎉🎉',
      ])
    case 4:
      return random.pick(
        [
          '";"',
          ';;',
          '":"',
          '","',
          '":{"',
          '"}',
          '" ',
          ' "',
          '  ',
          ' ',
          ' , ',
          ' ":',
          '": ',
          '":null',
          '"\\"',
          '🎉"',
          '\\\\',
        ].filter(needle => !/[\p{L}\p{N}]/u.test(needle)),
      )
    default:
      return random.pick(['', ' ', '  ']) + random.pick(chars) + random.pick(['', ' ', '  '])
  }
}

/** A substring of some event's text, in random case, or a random word, or separators alone. */
function randomQuery(random: Random, events: EventRecord[]): string {
  if (random.chance(0.25)) return separatorQuery(random, events)
  const event = random.pick(events)
  const text = JSON.stringify(random.pick([event.data, event.preData, event.tags]))
  if (random.chance(0.7) && text.length > 2) {
    const start = random.int(0, text.length - 1)
    const piece = text.slice(start, start + random.int(1, 12))
    return random.chance(0.5) ? piece.toUpperCase() : piece
  }
  return random.pick([...WORDS, 'ther', 'THER', 'zzz', '":', '{', '🎉', ' ', 'a b', '}\nnull', 'null\n'])
}

function day(iso: string) {
  return iso.slice(0, 10)
}

export function randomParams(random: Random, events: EventRecord[]): URLSearchParams {
  const params = new URLSearchParams()
  const filter = (name: string, values: (string | null)[]) => {
    const present = values.filter((v): v is string => v !== null)
    if (present.length === 0 || !random.chance(0.35)) return
    const chosen = random.some(present, 3)
    if (chosen.length <= 1 && random.chance(0.5)) params.set(name, `IS:${chosen[0] ?? present[0]}`)
    else params.set(name, `IS_ANY_OF:${(chosen.length ? chosen : [present[0]]).join(',')}`)
  }
  filter('type', TYPES)
  filter('project', PROJECTS)
  filter('feature', FEATURES)
  filter('environment', ENVIRONMENTS)
  filter(
    'createdBy',
    CREATORS.flatMap(([name, id]) => [name, id === null ? null : String(id)]),
  )
  if (random.chance(0.2))
    params.set(
      'id',
      `IS_ANY_OF:${
        random
          .some(
            events.map(e => String(e.id)),
            5,
          )
          .join(',') || '1'
      }`,
    )
  if (random.chance(0.3)) params.set(random.pick(['createdAtFrom', 'from']), `IS:${day(random.pick(events).createdAt)}`)
  if (random.chance(0.3)) params.set(random.pick(['createdAtTo', 'to']), `IS:${day(random.pick(events).createdAt)}`)
  if (random.chance(0.6)) params.set('query', randomQuery(random, events))
  if (random.chance(0.5)) params.set('offset', String(random.int(0, 30)))
  if (random.chance(0.5)) params.set('limit', String(random.int(1, 40)))
  return params
}

function values(raw: string | null): string[] | null {
  if (raw === null) return null
  if (raw.startsWith('IS_ANY_OF:'))
    return raw
      .slice(10)
      .split(',')
      .map(v => v.trim())
      .filter(Boolean)
  return [raw.slice(3).trim()].filter(Boolean)
}

export function bruteForce(events: EventRecord[], params: URLSearchParams, caller: Caller = ADMIN) {
  const type = values(params.get('type'))
  const project = values(params.get('project'))
  const feature = values(params.get('feature'))
  const environment = values(params.get('environment'))
  const createdBy = values(params.get('createdBy'))
  const ids = values(params.get('id'))
  const from = params.get('createdAtFrom') ?? params.get('from')
  const to = params.get('createdAtTo') ?? params.get('to')
  const query = params.get('query')?.toLowerCase() || null
  const matches = events.filter(event => {
    if (caller.role !== 'admin' && TOKEN_EVENTS.includes(event.type)) return false
    if (!caller.projects.includes('*') && !caller.projects.includes(event.project as string)) return false
    if (type && !type.includes(event.type)) return false
    if (project && !project.includes(event.project as string)) return false
    if (feature && !feature.includes(event.featureName as string)) return false
    if (environment && !environment.includes(event.environment as string)) return false
    if (createdBy && !createdBy.includes(event.createdBy) && !createdBy.includes(String(event.createdByUserId)))
      return false
    if (ids && !ids.includes(String(event.id))) return false
    if (from && day(event.createdAt) < from.slice(3)) return false
    if (to && day(event.createdAt) > to.slice(3)) return false
    if (query) {
      const text = [event.data, event.preData, event.tags].map(part => JSON.stringify(part).toLowerCase())
      if (!text.some(part => part.includes(query))) return false
    }
    return true
  })
  matches.sort((a, b) => b.id - a.id)
  const offset = Number(params.get('offset') ?? 0)
  const limit = Number(params.get('limit') ?? 50)
  return { ids: matches.slice(offset, offset + limit).map(e => e.id), total: matches.length }
}

/**
 * An event's line as the store writes it, ending with its commit's number (five events a commit),
 * or, for every third event, as a version before that wrote it: an upgraded log holds both.
 */
export function stored(event: EventRecord): string {
  return event.id % 3 === 0 ? JSON.stringify(event) : eventLine(event, Math.ceil(event.id / 5))
}

/** The events of a data directory's log, read straight from its `events.jsonl` (without the log's commit numbers). */
export function logEvents(dataDir: string): EventRecord[] {
  return readFileSync(join(dataDir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map(line => {
      const { commitSeq: _, ...event } = JSON.parse(line) as EventRecord & { commitSeq?: number }
      return event
    })
}

/** What a search of a data directory's log must answer, by brute force over the file (up to 1,000 events unless `limit` says). */
export function scanLog(
  dataDir: string,
  params: URLSearchParams | Record<string, string>,
): { ids: number[]; total: number } {
  const asked = new URLSearchParams(params)
  if (!asked.has('limit')) asked.set('limit', '1000')
  return bruteForce(logEvents(dataDir), asked)
}
