/**
 * GET /api/admin/search/events (seed 2.12, 4.3, 8; contract §4, §5).
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENTS_FILE } from '../../../src/services'
import type { EventRecord } from '../../../src/storage/records'
import {
  makeApi,
  tempDir,
  tokenFor,
  type Api,
  expectOk,
  expectError,
  errorOf,
  ISO_MS,
  freshApiPerTest,
} from '../../helpers'
import { seededRandom } from '../../random'
import { FILTER_MAX_LENGTH, FILTER_MAX_VALUES } from '../../../src/features/events/event-query'

const EVENT_FIELDS = [
  'id',
  'createdAt',
  'type',
  'createdBy',
  'createdByUserId',
  'environment',
  'project',
  'featureName',
  'data',
  'preData',
  'tags',
]

let api: Api
freshApiPerTest(fresh => (api = fresh))

async function search(query: string, token?: string) {
  const response = await api.searchEvents(query, token === undefined ? undefined : { token })
  expectOk(response)
  return response.body as { events: EventRecord[]; total: number }
}

/** Ids of every match: asks for the largest page. */
async function ids(query: string): Promise<number[]> {
  const body = await search(`${query}${query.includes('?') ? '&' : '?'}limit=1000`)
  expect(body.total).toBe(body.events.length)
  return body.events.map(event => event.id)
}

/** The ids the contract says match, from the full log, newest first. */
function expected(predicate: (event: EventRecord) => boolean): number[] {
  return api
    .events()
    .filter(predicate)
    .map(event => event.id)
    .reverse()
}

async function newProject(id: string) {
  expectOk(await api.createProject(id), 201)
}

/** A small log: two projects, a few flags, toggles in both environments, a tag and a patch. */
async function sampleLog() {
  await newProject('shop')
  await api.newFlag('default', 'alpha')
  await api.newFlag('default', 'beta')
  await api.newFlag('shop', 'cart')
  expectOk(await api.toggle('default', 'alpha', 'development', true))
  expectOk(await api.toggle('default', 'alpha', 'production', true))
  expectOk(await api.toggle('shop', 'cart', 'production', true))
  expectOk(await api.post('/api/admin/features/beta/tags', { type: 'simple', value: 'tagged' }), 201)
  expectOk(await api.patchFlag('default', 'beta', [{ op: 'replace', path: '/stale', value: true }]))
}

describe('searchEvents: response', () => {
  test('searchEvents: the answer is {events, total}, each event shaped as seed 2.12', async () => {
    await sampleLog()
    const body = await search('')
    expect(Object.keys(body).sort()).toEqual(['events', 'total'])
    expect(Number.isInteger(body.total)).toBe(true)
    for (const event of body.events) {
      for (const field of EVENT_FIELDS) expect(event).toHaveProperty(field)
      expect(Number.isInteger(event.id) && event.id >= 1).toBe(true)
      expect(event.createdAt).toMatch(ISO_MS)
      expect(typeof event.type).toBe('string')
      expect(typeof event.createdBy).toBe('string')
      expect(Array.isArray(event.tags)).toBe(true)
    }
  })

  test('searchEvents: events are newest first (id descending) and total counts them all', async () => {
    await sampleLog()
    const body = await search('?limit=1000')
    expect(body.total).toBe(api.lastEventId())
    expect(body.events.map(event => event.id)).toEqual(expected(() => true))
    expect(body.events).toEqual(api.events().reverse() as never)
  })

  test('searchEvents: the default page size is 50 and total is exact', async () => {
    for (let i = 0; i < 52; i++) await api.newFlag('default', `many-${i}`)
    const last = api.lastEventId()
    expect(last).toBeGreaterThan(50)
    const body = await search('')
    expect(body.total).toBe(last)
    expect(body.events).toHaveLength(50)
    expect(body.events[0].id).toBe(last)
    expect(body.events[49].id).toBe(last - 49)
  })

  test('searchEvents: offset and limit page through the matches, total stays exact', async () => {
    for (let i = 0; i < 12; i++) await api.newFlag('default', `page-${i}`)
    const all = expected(event => event.type === 'feature-created')
    expect(all).toHaveLength(12)
    const pages: number[] = []
    for (const offset of [0, 5, 10]) {
      const body = await search(`?type=IS:feature-created&limit=5&offset=${offset}`)
      expect(body.total).toBe(12)
      expect(body.events.length).toBe(offset === 10 ? 2 : 5)
      pages.push(...body.events.map(event => event.id))
    }
    expect(pages).toEqual(all)
  })

  test('searchEvents: an offset past the end answers an empty page with the exact total', async () => {
    await sampleLog()
    const body = await search('?offset=100000')
    expect(body.events).toEqual([])
    expect(body.total).toBe(api.lastEventId())
  })

  test('searchEvents: limit 1000 (the maximum) is accepted', async () => {
    await sampleLog()
    const body = await search('?limit=1000')
    expect(body.events).toHaveLength(api.lastEventId())
  })
})

describe('searchEvents: paging parameters that are refused', () => {
  test('searchEvents: limit 1001 answers 400 ValidationError with a message, not a silent 50', async () => {
    expectError(await api.searchEvents('?limit=1001'), 400, 'ValidationError', ['limit', '1000'])
  })

  test('searchEvents: limit abc answers 400 ValidationError naming limit', async () => {
    expectError(await api.searchEvents('?limit=abc'), 400, 'ValidationError', ['limit'])
    expectError(await api.searchEvents('?limit=-1'), 400, 'ValidationError', ['limit'])
    expectError(await api.searchEvents('?limit=1.5'), 400, 'ValidationError', ['limit'])
  })

  test('searchEvents: an offset that is not a whole number answers 400 naming offset', async () => {
    expectError(await api.searchEvents('?offset=abc'), 400, 'ValidationError', ['offset'])
    expectError(await api.searchEvents('?offset=-3'), 400, 'ValidationError', ['offset'])
  })

  test('searchEvents: limit 0 answers 400 (limit is 1 to 1000), offset 0 and limit 1 are accepted', async () => {
    await sampleLog()
    const response = await api.searchEvents('?limit=0')
    expectError(response, 400, 'ValidationError', ['limit', '1'])
    expect(errorOf(response).details).toEqual([expect.objectContaining({ path: '/limit' })])
    const body = await search('?limit=1&offset=0')
    expect(body.events).toHaveLength(1)
    expect(body.total).toBe(api.lastEventId())
  })

  test('searchEvents: limit or offset with a space, a sign or an exponent answers 400, not a trimmed number', async () => {
    for (const value of ['%201', '1%20', '%2B1', '1e2', '%091', '%0A1', '0x10', '']) {
      expectError(await api.searchEvents(`?limit=${value}`), 400, 'ValidationError', ['limit'])
      if (value !== '') expectError(await api.searchEvents(`?offset=${value}`), 400, 'ValidationError', ['offset'])
    }
  })
})

describe('searchEvents: filters', () => {
  test('searchEvents: feature=IS:x keeps the events of that flag', async () => {
    await sampleLog()
    expect(await ids('?feature=IS:alpha')).toEqual(expected(event => event.featureName === 'alpha'))
    expect((await ids('?feature=IS:alpha')).length).toBeGreaterThan(2)
  })

  test('searchEvents: feature=IS_ANY_OF:a,b keeps the events of any of them', async () => {
    await sampleLog()
    expect(await ids('?feature=IS_ANY_OF:alpha,cart')).toEqual(
      expected(event => event.featureName === 'alpha' || event.featureName === 'cart'),
    )
  })

  test('searchEvents: project=IS and IS_ANY_OF filter by project', async () => {
    await sampleLog()
    expect(await ids('?project=IS:shop')).toEqual(expected(event => event.project === 'shop'))
    expect(await ids('?project=IS_ANY_OF:shop,default')).toEqual(
      expected(event => event.project === 'shop' || event.project === 'default'),
    )
  })

  test('searchEvents: type=IS and IS_ANY_OF filter by event type', async () => {
    await sampleLog()
    expect(await ids('?type=IS:feature-environment-enabled')).toEqual(
      expected(event => event.type === 'feature-environment-enabled'),
    )
    expect((await ids('?type=IS:feature-environment-enabled')).length).toBe(3)
    expect(await ids('?type=IS_ANY_OF:feature-created,feature-tagged')).toEqual(
      expected(event => ['feature-created', 'feature-tagged'].includes(event.type)),
    )
  })

  test('searchEvents: IS_ANY_OF values are trimmed and empty values dropped', async () => {
    await sampleLog()
    const want = expected(event => event.featureName === 'alpha' || event.featureName === 'cart')
    expect(await ids(`?feature=${encodeURIComponent('IS_ANY_OF: alpha , ,cart,')}`)).toEqual(want)
    expect(await ids(`?feature=${encodeURIComponent('IS_ANY_OF:,alpha,,  cart  ')}`)).toEqual(want)
  })

  test('searchEvents: an IS value is trimmed', async () => {
    await sampleLog()
    expect(await ids(`?feature=${encodeURIComponent('IS:  alpha ')}`)).toEqual(
      expected(event => event.featureName === 'alpha'),
    )
  })

  test('searchEvents: a filter value nothing has answers 200 with no events and total 0', async () => {
    await sampleLog()
    expect(await search('?feature=IS:nope')).toEqual({ events: [], total: 0 })
  })

  test('searchEvents: environment=IS and IS_ANY_OF filter by environment', async () => {
    await sampleLog()
    expect(await ids('?environment=IS:production')).toEqual(expected(event => event.environment === 'production'))
    expect((await ids('?environment=IS:production&type=IS:feature-environment-enabled')).length).toBe(2)
    expect(await ids('?environment=IS_ANY_OF:production,development')).toEqual(
      expected(event => event.environment === 'production' || event.environment === 'development'),
    )
  })

  test('searchEvents: id=IS and IS_ANY_OF filter by event id', async () => {
    await sampleLog()
    expect(await ids('?id=IS:3')).toEqual([3])
    expect(await ids('?id=IS_ANY_OF:2,5,7')).toEqual([7, 5, 2])
    expect(await ids('?id=IS:999999')).toEqual([])
  })

  test('searchEvents: createdBy matches the creator name', async () => {
    await sampleLog()
    const bot = await tokenFor(api, 'ci-bot', { role: 'editor' })
    await api.newFlag('default', 'by-bot', {}, { token: bot })
    expect(await ids('?createdBy=IS:ci-bot')).toEqual(expected(event => event.createdBy === 'ci-bot'))
    expect((await ids('?createdBy=IS:ci-bot')).length).toBe(1)
    expect(await ids('?createdBy=IS:admin-bootstrap')).toEqual(expected(event => event.createdBy === 'admin-bootstrap'))
  })

  test("searchEvents: createdBy matches the creator's numeric user id", async () => {
    await sampleLog()
    const bot = await tokenFor(api, 'ci-bot', { role: 'editor' })
    await api.newFlag('default', 'by-bot', {}, { token: bot })
    const [botEvent] = (await search('?createdBy=IS:ci-bot')).events
    expect(typeof botEvent.createdByUserId).toBe('number')
    expect(await ids(`?createdBy=IS:${botEvent.createdByUserId}`)).toEqual(
      expected(event => event.createdBy === 'ci-bot'),
    )
    expect(await ids('?createdBy=IS:-42')).toEqual(expected(event => event.createdByUserId === -42))
    expect((await ids('?createdBy=IS:-42')).length).toBeGreaterThan(5)
    expect(await ids(`?createdBy=IS_ANY_OF:${botEvent.createdByUserId},admin-bootstrap`)).toEqual(
      expected(event => event.createdBy === 'ci-bot' || event.createdBy === 'admin-bootstrap'),
    )
  })

  test('searchEvents: filters are ANDed', async () => {
    await sampleLog()
    expect(await ids('?project=IS:default&type=IS:feature-environment-enabled&environment=IS:production')).toEqual(
      expected(
        event =>
          event.project === 'default' &&
          event.type === 'feature-environment-enabled' &&
          event.environment === 'production',
      ),
    )
    expect(
      (await ids('?project=IS:default&type=IS:feature-environment-enabled&environment=IS:production')).length,
    ).toBe(1)
    expect(await ids('?feature=IS:cart&project=IS:default')).toEqual([])
  })
})

describe('searchEvents: dates', () => {
  async function datedFlags() {
    const at = async (time: string, name: string) => {
      setSystemTime(new Date(time))
      await api.newFlag('default', name)
    }
    await at('2031-02-28T23:59:59.999Z', 'day-before')
    await at('2031-03-01T00:00:00.000Z', 'day-first-start')
    await at('2031-03-01T23:59:59.999Z', 'day-first-end')
    await at('2031-03-02T00:00:00.000Z', 'day-second-start')
    await at('2031-03-03T12:00:00.000Z', 'day-third')
    setSystemTime()
  }
  async function created(query: string) {
    const body = await search(`?type=IS:feature-created&limit=1000&${query}`)
    return body.events.map(event => event.featureName)
  }

  test('searchEvents: createdAtFrom and createdAtTo are inclusive UTC days', async () => {
    await datedFlags()
    expect(await created('createdAtFrom=IS:2031-03-01&createdAtTo=IS:2031-03-01')).toEqual([
      'day-first-end',
      'day-first-start',
    ])
    expect(await created('createdAtFrom=IS:2031-03-01&createdAtTo=IS:2031-03-02')).toEqual([
      'day-second-start',
      'day-first-end',
      'day-first-start',
    ])
  })

  test('searchEvents: createdAtFrom alone keeps events from the start of that day on', async () => {
    await datedFlags()
    expect(await created('createdAtFrom=IS:2031-03-02')).toEqual(['day-third', 'day-second-start'])
  })

  test('searchEvents: createdAtTo alone keeps events up to the end of that day', async () => {
    await datedFlags()
    const names = await created('createdAtTo=IS:2031-02-28')
    expect(names).toContain('day-before')
    expect(names).not.toContain('day-first-start')
  })

  test('searchEvents: from and to (Unleash 8 names) work as createdAtFrom and createdAtTo', async () => {
    await datedFlags()
    expect(await created('from=IS:2031-03-01&to=IS:2031-03-01')).toEqual(['day-first-end', 'day-first-start'])
    expect(await created('from=IS:2031-03-03')).toEqual(['day-third'])
  })

  test('searchEvents: a range that holds no day answers an empty page', async () => {
    await datedFlags()
    expect(await created('createdAtFrom=IS:2031-03-02&createdAtTo=IS:2031-03-01')).toEqual([])
  })

  test('searchEvents: a leap day is a valid date', async () => {
    expectOk(await api.searchEvents('?createdAtFrom=IS:2028-02-29'))
  })

  test('searchEvents: an impossible date answers 400 ValidationError (IS:2026-02-30)', async () => {
    expectError(await api.searchEvents('?createdAtFrom=IS:2026-02-30'), 400, 'ValidationError', ['createdAtFrom'])
    expectError(await api.searchEvents('?createdAtTo=IS:2026-13-01'), 400, 'ValidationError', ['createdAtTo'])
    expectError(await api.searchEvents('?from=IS:2027-02-29'), 400, 'ValidationError')
    expectError(await api.searchEvents('?to=IS:2026-04-00'), 400, 'ValidationError')
  })

  test('searchEvents: a date not written IS:yyyy-MM-dd answers 400 ValidationError', async () => {
    for (const value of [
      '2026-01-01',
      'IS:2026-1-1',
      'IS_ANY_OF:2026-01-01',
      'IS:2026-01-01T00:00:00Z',
      'IS:01-01-2026',
      'is:2026-01-01',
    ]) {
      expectError(await api.searchEvents(`?createdAtFrom=${encodeURIComponent(value)}`), 400, 'ValidationError', [
        'createdAtFrom',
      ])
    }
  })
})

describe('searchEvents: malformed filters and repeated parameters', () => {
  test('searchEvents: a filter not written IS:x or IS_ANY_OF:x answers 400 naming the parameter', async () => {
    for (const parameter of ['feature', 'project', 'type', 'createdBy', 'environment', 'id']) {
      for (const value of ['alpha', 'IS_ANY:alpha', 'is:alpha', 'ISalpha', 'NOT:alpha']) {
        expectError(await api.searchEvents(`?${parameter}=${encodeURIComponent(value)}`), 400, 'ValidationError', [
          parameter,
        ])
      }
    }
  })

  test('searchEvents: a long hostile value list (the quadratic-regex input) answers 400 naming the parameter', async () => {
    await sampleLog()
    for (const size of [16 * 1024, 100 * 1024]) {
      const hostile = `IS_ANY_OF:${'a,'.repeat(size / 2)}a!`
      const response = await api.searchEvents(`?type=${encodeURIComponent(hostile)}`)
      // The length cap answers before the value is split or matched against anything.
      expectError(response, 400, 'ValidationError', ['type', `at most ${FILTER_MAX_LENGTH} characters`])
      expect(errorOf(response).details).toEqual([expect.objectContaining({ path: '/type' })])
    }
  })

  test('searchEvents: a filter of the maximum length is searched; one character more answers 400', async () => {
    await sampleLog()
    const padded = (length: number) => `IS_ANY_OF:alpha,cart,${' '.repeat(length - 'IS_ANY_OF:alpha,cart,'.length)}`
    expect(await ids(`?feature=${encodeURIComponent(padded(FILTER_MAX_LENGTH))}`)).toEqual(
      expected(event => event.featureName === 'alpha' || event.featureName === 'cart'),
    )
    expectError(
      await api.searchEvents(`?feature=${encodeURIComponent(padded(FILTER_MAX_LENGTH + 1))}`),
      400,
      'ValidationError',
      ['feature', String(FILTER_MAX_LENGTH)],
    )
  })

  test('searchEvents: IS_ANY_OF with the maximum number of values is searched; one more answers 400 naming the parameter', async () => {
    await sampleLog()
    const values = (count: number) => ['alpha', ...Array.from({ length: count - 1 }, (_, i) => `f${i}`)].join(',')
    expect(await ids(`?feature=IS_ANY_OF:${values(FILTER_MAX_VALUES)}`)).toEqual(
      expected(event => event.featureName === 'alpha'),
    )
    expect(
      await ids(`?id=IS_ANY_OF:${Array.from({ length: FILTER_MAX_VALUES }, (_, i) => i + 1).join(',')}`),
    ).toHaveLength(Math.min(FILTER_MAX_VALUES, api.lastEventId()))
    for (const parameter of ['feature', 'project', 'type', 'createdBy', 'environment']) {
      const response = await api.searchEvents(`?${parameter}=IS_ANY_OF:${values(FILTER_MAX_VALUES + 1)}`)
      expectError(response, 400, 'ValidationError', [parameter, `at most ${FILTER_MAX_VALUES} values`])
      expect(errorOf(response).details).toEqual([expect.objectContaining({ path: `/${parameter}` })])
    }
    expectError(
      await api.searchEvents(
        `?id=IS_ANY_OF:${Array.from({ length: FILTER_MAX_VALUES + 1 }, (_, i) => i + 1).join(',')}`,
      ),
      400,
      'ValidationError',
      ['id'],
    )
  })

  test('searchEvents: an IS value keeps its commas, so it matches nothing rather than several', async () => {
    await sampleLog()
    expect(await search('?feature=IS:alpha,cart')).toEqual({ events: [], total: 0 })
  })

  test('searchEvents: an id filter that is not numeric answers 400', async () => {
    expectError(await api.searchEvents('?id=IS:abc'), 400, 'ValidationError', ['id'])
  })

  test('searchEvents: a repeated parameter answers 400 naming it', async () => {
    expectError(await api.searchEvents('?feature=IS:a&feature=IS:b'), 400, 'ValidationError', ['feature'])
    expectError(await api.searchEvents('?limit=1&limit=2'), 400, 'ValidationError', ['limit'])
    expectError(await api.searchEvents('?query=a&query=b'), 400, 'ValidationError', ['query'])
    expectError(
      await api.searchEvents('?createdAtFrom=IS:2026-01-01&createdAtFrom=IS:2026-01-01'),
      400,
      'ValidationError',
      ['createdAtFrom'],
    )
  })
})

describe('searchEvents: free-text query', () => {
  /** What the contract says query matches: a case-insensitive substring of the JSON of data, preData and tags. */
  function textMatches(needle: string) {
    const lower = needle.toLowerCase()
    return (event: EventRecord) =>
      [event.data, event.preData, event.tags].some(part => JSON.stringify(part).toLowerCase().includes(lower))
  }

  test('searchEvents: query matches a case-insensitive substring of the event data, inside a word', async () => {
    await api.newFlag('default', 'query-flag', { description: 'The Supercalifragilistic switch' })
    await api.newFlag('default', 'query-other', { description: 'unrelated' })
    const matches = await ids('?query=CALIFRAGILIS')
    expect(matches).toEqual(expected(textMatches('califragilis')))
    expect(matches).toHaveLength(1)
    expect((await search('?query=califragilis')).events[0]).toMatchObject({
      type: 'feature-created',
      featureName: 'query-flag',
    })
    expect(await ids('?query=supercali')).toEqual(matches)
    expect(await ids('?query=gilistic%20sw')).toEqual(matches)
  })

  test('searchEvents: query matches preData too', async () => {
    await api.newFlag('default', 'pre-flag', { description: 'Zebracrossing' })
    expectOk(await api.patchFlag('default', 'pre-flag', [{ op: 'replace', path: '/description', value: 'plain' }]))
    const matches = await ids('?query=zebracross&type=IS:feature-metadata-updated')
    expect(matches).toHaveLength(1)
    expect(matches).toEqual(
      expected(event => event.type === 'feature-metadata-updated' && textMatches('zebracross')(event)),
    )
  })

  test('searchEvents: query matches the event tags too', async () => {
    await api.newFlag('default', 'tag-flag')
    expectOk(await api.post('/api/admin/features/tag-flag/tags', { type: 'simple', value: 'Ultramarine' }), 201)
    expectOk(await api.toggle('default', 'tag-flag', 'development', true))
    const matches = await ids('?query=LTRAMAR&type=IS:feature-environment-enabled')
    expect(matches).toHaveLength(1)
    expect((await search('?query=LTRAMAR&type=IS:feature-environment-enabled')).events[0].tags).toEqual([
      { type: 'simple', value: 'Ultramarine' },
    ])
  })

  test('searchEvents: query does not match the event type', async () => {
    await api.newFlag('default', 'type-flag')
    expectOk(await api.toggle('default', 'type-flag', 'development', true))
    expect(await search('?query=environment-enabled&type=IS:feature-environment-enabled')).toEqual({
      events: [],
      total: 0,
    })
    expect((await search('?type=IS:feature-environment-enabled')).total).toBe(1)
  })

  test('searchEvents: query does not match the featureName or project columns', async () => {
    await newProject('qzproject')
    await api.newFlag('qzproject', 'xyzzyflag')
    expectOk(await api.toggle('qzproject', 'xyzzyflag', 'development', true))
    expect((await search('?feature=IS:xyzzyflag&type=IS:feature-environment-enabled')).total).toBe(1)
    expect(await search('?query=xyzzy&type=IS:feature-environment-enabled')).toEqual({ events: [], total: 0 })
    expect(await search('?query=qzproj&type=IS:feature-environment-enabled')).toEqual({ events: [], total: 0 })
  })

  test('searchEvents: query does not match the creator', async () => {
    const bot = await tokenFor(api, 'quokka-bot', { role: 'editor' })
    await api.newFlag('default', 'creator-flag')
    expectOk(await api.toggle('default', 'creator-flag', 'development', true, { token: bot }))
    expect((await search('?createdBy=IS:quokka-bot&type=IS:feature-environment-enabled')).total).toBe(1)
    expect(await search('?query=quokka&type=IS:feature-environment-enabled')).toEqual({ events: [], total: 0 })
  })

  test('searchEvents: a query spanning word separators matches as a plain substring', async () => {
    await api.newFlag('default', 'words-flag', { description: 'alpha beta-gamma delta' })
    const want = expected(textMatches('alpha beta-gamma delta'))
    expect(want).toHaveLength(1)
    for (const query of ['ha beta-gam', 'PHA BETA', 'a-g', 'lpha beta-gamma del', 'beta-gamma delta', ' beta']) {
      expect(await ids(`?query=${encodeURIComponent(query)}`)).toEqual(expected(textMatches(query)))
      expect(await ids(`?query=${encodeURIComponent(query)}&feature=IS:words-flag`)).toEqual(want)
    }
    for (const query of ['alpha gamma', 'beta gamma', 'alphabeta', 'delta alpha']) {
      expect(await ids(`?query=${encodeURIComponent(query)}&feature=IS:words-flag`)).toEqual([])
    }
  })

  test('searchEvents: query matches JSON text, punctuation included', async () => {
    await api.newFlag('default', 'json-flag', { description: 'semi' })
    expect(await ids(`?query=${encodeURIComponent('"description":"semi"')}`)).toEqual(
      expected(textMatches('"description":"semi"')),
    )
    expect((await ids(`?query=${encodeURIComponent('"description":"semi"')}`)).length).toBe(1)
  })

  test('searchEvents: % and _ in a query are literal characters, not wildcards', async () => {
    await api.newFlag('default', 'literal-flag', { description: 'abc 50 percent' })
    expect(await ids('?query=a_c&feature=IS:literal-flag')).toEqual([])
    expect(await ids(`?query=${encodeURIComponent('a%c')}&feature=IS:literal-flag`)).toEqual([])
    expect(await ids(`?query=${encodeURIComponent('50%')}&feature=IS:literal-flag`)).toEqual([])
    await api.newFlag('default', 'literal-flag-2', { description: 'a_c at 50%' })
    expect(await ids('?query=a_c')).toEqual(expected(textMatches('a_c')))
    expect((await ids('?query=a_c')).length).toBe(1)
    expect(await ids(`?query=${encodeURIComponent('50%')}`)).toEqual(expected(textMatches('50%')))
  })

  test('searchEvents: for many random substrings of the log, in random case, query answers exactly what a substring scan gives', async () => {
    const random = seededRandom(4242)
    const words = [
      'alpha',
      'Beta',
      'mother',
      'other',
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
      'quote"d',
      'back\\slash',
      'tab\there',
    ]
    const text = () =>
      Array.from({ length: random.int(1, 4) }, () => random.pick(words)).join(random.pick([' ', '-', '.', '', ', ']))
    for (let i = 0; i < 12; i++) {
      await api.newFlag('default', `rnd-${i}`, { description: text() })
      if (random.chance(0.5))
        expectOk(await api.patchFlag('default', `rnd-${i}`, [{ op: 'replace', path: '/description', value: text() }]))
      if (random.chance(0.4))
        expectOk(
          await api.post(`/api/admin/features/rnd-${i}/tags`, { type: 'simple', value: `${random.pick(words)}-${i}` }),
          201,
        )
      if (random.chance(0.3)) expectOk(await api.toggle('default', `rnd-${i}`, 'development', true))
    }
    const events = api.events()
    const mismatches: unknown[] = []
    for (let q = 0; q < 120; q++) {
      let query: string
      if (random.chance(0.8)) {
        const event = random.pick(events)
        const source = JSON.stringify(random.pick([event.data, event.preData, event.tags]))
        const start = random.int(0, Math.max(0, source.length - 1))
        query = source.slice(start, start + random.int(1, 14))
        if (random.chance(0.4)) query = query.toUpperCase()
        else if (random.chance(0.3)) query = query.toLowerCase()
      } else {
        query = random.pick([...words, 'ther', 'THER', 'zzz', '":', '{', ' ', 'a b', 'ha be', 'pha-', '-y'])
      }
      const got = await ids(`?query=${encodeURIComponent(query)}`)
      const want = expected(textMatches(query))
      if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push({ query, got, want })
    }
    expect(mismatches).toEqual([])
  })

  test('searchEvents: an empty query matches everything', async () => {
    await sampleLog()
    expect((await search('?query=')).total).toBe(api.lastEventId())
  })

  test('searchEvents: query combines with the other filters and with paging', async () => {
    for (let i = 0; i < 7; i++) await api.newFlag('default', `combo-${i}`, { description: `Needle number ${i}` })
    const want = expected(event => event.type === 'feature-created' && textMatches('needle')(event))
    expect(want).toHaveLength(7)
    const page = await search('?query=NEEDLE&type=IS:feature-created&limit=3&offset=2')
    expect(page.total).toBe(7)
    expect(page.events.map(event => event.id)).toEqual(want.slice(2, 5))
  })
})

describe('searchEvents: authentication', () => {
  test('searchEvents: without a token it answers 401 AuthenticationRequired', async () => {
    expectError(await api.searchEvents('', { token: null }), 401, 'AuthenticationRequired')
  })

  test('searchEvents: a client (SDK) token answers 403 NoAccessError', async () => {
    const client = await tokenFor(api, 'sdk', { type: 'client', project: 'default', environment: 'development' })
    expectError(await api.searchEvents('', { token: client }), 403, 'NoAccessError')
  })

  test('searchEvents: a token limited to some projects finds no events of other projects', async () => {
    await sampleLog()
    const scoped = await tokenFor(api, 'shop-only', { role: 'viewer', projects: ['shop'] })
    const body = await search('?limit=1000', scoped)
    expect(body.events.length).toBeGreaterThan(0)
    for (const event of body.events) expect(event.project).toBe('shop')
    expect(body.total).toBe(body.events.length)
    expect(await search('?project=IS:default', scoped)).toEqual({ events: [], total: 0 })
  })

  test('searchEvents: a viewer token may search, and finds every event but the token events it may not list', async () => {
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const tokenEvents = api.events().filter(event => event.type.startsWith('api-token-')).length
    expect(tokenEvents).toBeGreaterThan(0)
    expect((await search('', viewer)).total).toBe(api.lastEventId() - tokenEvents)
  })
})

describe("searchEvents: the answer is made of the log's own lines", () => {
  /**
   * The worker builds the whole answer as bytes (reading them straight from events.jsonl on a data
   * directory): it must be exactly `{"events":[…],"total":N}` with each event's line as the log
   * holds it, for pages of consecutive events and scattered ones, events loaded at start and
   * appended since, and a scoped token's filtered view.
   */
  for (const mode of ['memory', 'data directory'] as const) {
    test(`searchEvents: every page is the log's lines byte for byte, newest first (${mode})`, async () => {
      const dir = mode === 'memory' ? null : tempDir('search-bytes-')
      const open = () => makeApi(dir ? { dataDir: dir.path } : {})
      await api.close()
      api = await open()
      try {
        const write = async (round: number) => {
          await newProject(`shop-${round}`)
          for (let i = 0; i < 6; i++) {
            await api.newFlag(i % 2 ? 'default' : `shop-${round}`, `bytes-${round}-${i}`, {
              description: `straße 日本語 🎉 "quoted" back\\slash ${round}.${i}`,
            })
          }
          expectOk(await api.toggle(`shop-${round}`, `bytes-${round}-0`, 'production', true))
        }
        await write(1)
        if (dir) {
          // Reopened: these events reach the worker from the file, the next ones as they are committed.
          await api.close()
          api = await open()
        }
        await write(2)
        const scoped = await tokenFor(api, 'shop-2-only', { role: 'viewer', projects: ['shop-2'] })
        const lineOf = new Map<number, string>()
        const lines = dir
          ? readFileSync(join(dir.path, EVENTS_FILE), 'utf8').split('\n').filter(Boolean)
          : api.events().map(event => JSON.stringify(event))
        for (const line of lines) lineOf.set(JSON.parse(line).id, line)
        expect(lineOf.size).toBe(api.lastEventId())

        const check = async (
          query: string,
          predicate: (event: EventRecord) => boolean,
          offset: number,
          limit: number,
          token?: string,
        ) => {
          const response = await api.searchEvents(query, token === undefined ? undefined : { token })
          expectOk(response)
          expect(response.headers.get('content-type')).toBe('application/json')
          const all = expected(predicate)
          const page = all.slice(offset, offset + limit)
          expect(page.length).toBeGreaterThan(0)
          expect(response.text).toBe(`{"events":[${page.map(id => lineOf.get(id)).join(',')}],"total":${all.length}}`)
        }
        await check('?limit=1000', () => true, 0, 1000)
        await check('?offset=3&limit=7', () => true, 3, 7)
        await check('?type=IS:feature-created&limit=1000', event => event.type === 'feature-created', 0, 1000)
        await check(
          '?type=IS_ANY_OF:feature-created,project-created&offset=2&limit=5',
          event => ['feature-created', 'project-created'].includes(event.type),
          2,
          5,
        )
        await check(
          '?query=%C3%9FE%20%E6%97%A5&limit=1000',
          event => JSON.stringify(event.data ?? null).includes('ße 日'),
          0,
          1000,
        )
        await check('?limit=1000', event => event.project === 'shop-2', 0, 1000, scoped)
        expect(await search('?project=IS:shop-1', scoped)).toEqual({ events: [], total: 0 })
      } finally {
        await api.close()
        // afterEach closes `api` again; a fresh memory app keeps that harmless.
        api = await makeApi()
        dir?.remove()
      }
    })
  }
})

describe('searchEvents: the search worker starts with the first search', () => {
  /**
   * An app that never searches starts no worker (most tests never search); the worker that starts
   * later reads the log as it is then and gets every commit after that, in order.
   */
  for (const mode of ['memory', 'data directory'] as const) {
    test(`searchEvents: no worker before the first search, which sees every earlier write, and later writes are seen at once (${mode})`, async () => {
      const dir = mode === 'memory' ? null : tempDir('search-lazy-')
      await api.close()
      api = await makeApi(dir ? { dataDir: dir.path } : {})
      try {
        await newProject('lazy')
        await api.newFlag('lazy', 'lazy-before', { description: 'written before the worker' })
        expect(api.services.events.started).toBe(false)
        // Writes racing the start: the search starts the worker while these commits are under way.
        const racing = Promise.all([0, 1, 2].map(i => api.newFlag('lazy', `lazy-racing-${i}`)))
        const first = ids('?project=IS:lazy')
        await racing
        const seen = await first
        expect(api.services.events.started).toBe(true)
        const all = expected(event => event.project === 'lazy')
        // The search may or may not see the racing writes, but it sees a prefix of the log: no gaps.
        expect(seen).toEqual(all.slice(all.length - seen.length))
        expect(seen.length).toBeGreaterThanOrEqual(all.length - 3)
        expect(await ids('?project=IS:lazy')).toEqual(all)
        await api.newFlag('lazy', 'lazy-after')
        expect(await ids('?project=IS:lazy')).toEqual(expected(event => event.project === 'lazy'))
        expect(await ids('?query=written%20before')).toEqual(
          expected(event => JSON.stringify(event.data ?? '').includes('written before')),
        )
      } finally {
        await api.close()
        dir?.remove()
        api = await makeApi()
      }
    })
  }
})
