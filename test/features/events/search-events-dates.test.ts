/**
 * GET /api/admin/search/events: date ranges, and filters and parameters that are refused.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'

import { expectOk, expectError, errorOf } from '../../helpers'

import { FILTER_MAX_LENGTH, FILTER_MAX_VALUES } from '../../../src/features/events/event-query'
import { api, useFreshApi, search, ids, expected, sampleLog } from './search-events.setup'

useFreshApi()

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
