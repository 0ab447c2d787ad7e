/**
 * Random event logs searched with random filters must give exactly what a brute-force filter over
 * the same events gives: same events, same order, same total. The brute force below is written from
 * the contract (§5) on its own, sharing no code with the service.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { parseEventQuery } from '../../src/features/events/event-query'
import { EventsService, type EventsOptions } from '../../src/features/events/events.service'
import type { EventRecord } from '../../src/storage/records'
import type { CommitListener } from '../../src/storage/store'
import type { Caller } from '../../src/features/tokens/permissions'
import { seededRandom, type Random } from '../random'

const ADMIN: Caller = { tokenName: 'admin', kind: 'token', userId: 1, role: 'admin', projects: ['*'] }
/** May not list tokens (GET /api/admin/api-tokens needs ADMIN): sees no token events. */
const VIEWER: Caller = { tokenName: 'viewer', kind: 'token', userId: 2, role: 'viewer', projects: ['*'] }
/** Limited to two projects: sees their events only, none without a project. */
const SCOPED: Caller = { tokenName: 'scoped', kind: 'token', userId: 3, role: 'editor', projects: ['checkout', 'search'] }
const TOKEN_EVENTS = ['api-token-created', 'api-token-deleted']
const WORDS = ['alpha', 'Beta', 'other', 'mother', 'ÄPFEL', 'straße', 'naïve', '日本語', 'emoji🎉', 'a_b', 'x-y', 'C++', '50%', 'null', 'true', '"quoted"', 'back\\slash', 'İstanbul', 'ﬁle']
const TYPES = ['feature-created', 'feature-updated', 'feature-archived', 'feature-tagged', 'project-created', 'api-token-created', 'api-token-deleted']
const PROJECTS = ['default', 'checkout', 'search', null]
const FEATURES = ['alpha-flag', 'beta', 'gamma.flag', null]
const ENVIRONMENTS = ['development', 'production', null]
const CREATORS: [string, number | null][] = [['admin-bootstrap', -42], ['ci', 7], ['ops', 12], ['system', null]]

function randomText(random: Random): string {
  const parts: string[] = []
  for (let i = random.int(1, 4); i > 0; i--) parts.push(random.pick(WORDS))
  return parts.join(random.pick([' ', '-', '.', '', ', ']))
}

function randomEvents(random: Random, count: number): EventRecord[] {
  const events: EventRecord[] = []
  let time = Date.UTC(2026, 0, 30, 20)
  for (let id = 1; id <= count; id++) {
    time += random.int(0, 6) * 3_600_000 + random.int(0, 59_999)
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

/** A substring of some event's text, in random case, or a random word. */
function randomQuery(random: Random, events: EventRecord[]): string {
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

function randomParams(random: Random, events: EventRecord[]): URLSearchParams {
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
  filter('createdBy', CREATORS.flatMap(([name, id]) => [name, id === null ? null : String(id)]))
  if (random.chance(0.2)) params.set('id', `IS_ANY_OF:${random.some(events.map((e) => String(e.id)), 5).join(',') || '1'}`)
  if (random.chance(0.3)) params.set(random.pick(['createdAtFrom', 'from']), `IS:${day(random.pick(events).createdAt)}`)
  if (random.chance(0.3)) params.set(random.pick(['createdAtTo', 'to']), `IS:${day(random.pick(events).createdAt)}`)
  if (random.chance(0.6)) params.set('query', randomQuery(random, events))
  if (random.chance(0.5)) params.set('offset', String(random.int(0, 30)))
  if (random.chance(0.5)) params.set('limit', String(random.int(1, 40)))
  return params
}

function values(raw: string | null): string[] | null {
  if (raw === null) return null
  if (raw.startsWith('IS_ANY_OF:')) return raw.slice(10).split(',').map((v) => v.trim()).filter(Boolean)
  return [raw.slice(3).trim()].filter(Boolean)
}

function bruteForce(events: EventRecord[], params: URLSearchParams, caller: Caller = ADMIN) {
  const type = values(params.get('type'))
  const project = values(params.get('project'))
  const feature = values(params.get('feature'))
  const environment = values(params.get('environment'))
  const createdBy = values(params.get('createdBy'))
  const ids = values(params.get('id'))
  const from = params.get('createdAtFrom') ?? params.get('from')
  const to = params.get('createdAtTo') ?? params.get('to')
  const query = params.get('query')?.toLowerCase() || null
  const matches = events.filter((event) => {
    if (caller.role !== 'admin' && TOKEN_EVENTS.includes(event.type)) return false
    if (!caller.projects.includes('*') && !caller.projects.includes(event.project as string)) return false
    if (type && !type.includes(event.type)) return false
    if (project && !project.includes(event.project as string)) return false
    if (feature && !feature.includes(event.featureName as string)) return false
    if (environment && !environment.includes(event.environment as string)) return false
    if (createdBy && !createdBy.includes(event.createdBy) && !createdBy.includes(String(event.createdByUserId))) return false
    if (ids && !ids.includes(String(event.id))) return false
    if (from && day(event.createdAt) < from.slice(3)) return false
    if (to && day(event.createdAt) > to.slice(3)) return false
    if (query) {
      const text = [event.data, event.preData, event.tags].map((part) => JSON.stringify(part).toLowerCase())
      if (!text.some((part) => part.includes(query))) return false
    }
    return true
  })
  matches.sort((a, b) => b.id - a.id)
  const offset = Number(params.get('offset') ?? 0)
  const limit = Number(params.get('limit') ?? 50)
  return { ids: matches.slice(offset, offset + limit).map((e) => e.id), total: matches.length }
}

const services: EventsService[] = []
afterAll(() => services.forEach((service) => service.close()))

/**
 * The search (in its worker) over a fixed log, as the service sees a store holding it. A small
 * `commonAfter` makes frequent words common, so that queries exercise both the index and the scan.
 */
async function serviceOver(
  events: EventRecord[],
  options: EventsOptions = {},
  onCommit: (listener: CommitListener) => void = () => {},
) {
  const service = new EventsService(
    { lastEventId: events.length, eventLogPath: null, readEvents: async (onEvent) => events.forEach(onEvent), onCommit },
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
  return { ids: body.events.map((event) => event.id), total: body.total, plan: page.plan }
}

describe('event search equals a brute-force filter', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`random logs and random filters agree with brute force, before and after the index is built (seed ${seed})`, async () => {
      const random = seededRandom(seed)
      const events = randomEvents(random, 400)
      const scanning = await serviceOver(events, { buildIndex: false })
      const indexing = await indexed(await serviceOver(events))
      const plans = new Set<string>()
      for (let round = 0; round < 150; round++) {
        const params = randomParams(random, events)
        const caller = random.pick([ADMIN, ADMIN, VIEWER, SCOPED])
        const expected = bruteForce(events, params, caller)
        const context = `seed ${seed} round ${round} as ${caller.tokenName}: ?${params}`
        for (const service of [scanning, indexing]) {
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
    const service = await indexed(await serviceOver(events, {}, (fn) => (listener = fn)))
    const extra: EventRecord = { ...events[0], id: 21, data: { description: 'brand-new-word' }, preData: null, tags: [] }
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
    const store = { lastEventId: 29, eventLogPath: null, readEvents: async (onEvent: (event: EventRecord) => void) => durable.forEach(onEvent), onCommit: (fn: CommitListener) => (listener = fn) }
    const service = new EventsService(store, {})
    services.push(service)
    store.lastEventId = 30
    const loading = service.load()
    listener([events[29]], [JSON.stringify(events[29])])
    await loading
    const found = await search(service, new URLSearchParams({ limit: '1000' }))
    expect(found.ids).toEqual(events.map((event) => event.id).reverse())
  })
})
