/**
 * GET /api/admin/search/events: the free-text query, and who may search.
 */
import { describe, expect, test } from 'bun:test'

import type { EventRecord } from '../../../src/storage/records'
import { tokenFor, expectOk, expectError } from '../../helpers'
import { seededRandom } from '../../random'

import { api, useFreshApi, search, ids, expected, newProject, sampleLog } from './search-events.setup'

useFreshApi()

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
