/**
 * GET /api/admin/search/events (seed 2.12, 4.3, 8; contract §4, §5): the answer, paging and filters.
 */
import { describe, expect, test } from 'bun:test'

import { tokenFor, expectError, errorOf, ISO_MS } from '../../helpers'

import { EVENT_FIELDS, api, useFreshApi, search, ids, expected, sampleLog } from './search-events.setup'

useFreshApi()

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
