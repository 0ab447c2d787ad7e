/**
 * The query language of `GET /api/admin/search/events` (seed 4.3, contract §5).
 */
import { ValidationError } from '../../errors'

export const SEARCH_LIMIT_DEFAULT = 50
export const SEARCH_LIMIT_MAX = 1000
export const QUERY_MAX_LENGTH = 500
/** Longest filter parameter (`type=IS_ANY_OF:…`), checked before anything else is done with it. */
export const FILTER_MAX_LENGTH = 2000
/** Most values one IS_ANY_OF filter may list. */
export const FILTER_MAX_VALUES = 100

const DATE = /^IS:(\d{4})-(\d{2})-(\d{2})$/

export interface EventQuery {
  query?: string
  feature?: string[]
  project?: string[]
  type?: string[]
  environment?: string[]
  createdBy?: string[]
  id?: number[]
  /** Inclusive bounds as ISO strings: start of the first day, end of the last day (UTC). */
  from?: string
  to?: string
  offset: number
  limit: number
}

const FILTERS = ['feature', 'project', 'type', 'environment', 'createdBy', 'id'] as const
const KNOWN = new Set<string>([...FILTERS, 'query', 'createdAtFrom', 'createdAtTo', 'from', 'to', 'offset', 'limit'])

function invalid(message: string, parameter: string): never {
  throw new ValidationError(message, [{ message, path: `/${parameter}` }])
}

/**
 * The seed's filter syntax, `IS:value` or `IS_ANY_OF:value1,value2`, read with string operations
 * only: a regular expression here once backtracked quadratically on a long value list, on the HTTP
 * thread. An IS value is taken whole (commas included); values are trimmed, empty ones dropped and
 * duplicates counted once.
 */
export function parseFilter(raw: string, parameter: string): string[] {
  if (raw.length > FILTER_MAX_LENGTH)
    invalid(`${parameter} must be at most ${FILTER_MAX_LENGTH} characters, got ${raw.length}`, parameter)
  let listed: string[]
  if (raw.startsWith('IS:')) listed = [raw.slice('IS:'.length)]
  else if (raw.startsWith('IS_ANY_OF:')) listed = raw.slice('IS_ANY_OF:'.length).split(',')
  else
    invalid(
      `${parameter} must look like IS:value or IS_ANY_OF:value1,value2, got ${JSON.stringify(raw.slice(0, 100))}`,
      parameter,
    )
  const values = listed.map(value => value.trim()).filter(value => value !== '')
  if (values.length > FILTER_MAX_VALUES)
    invalid(`${parameter} may list at most ${FILTER_MAX_VALUES} values, got ${values.length}`, parameter)
  return [...new Set(values)]
}

function parseDay(raw: string, parameter: string, end: boolean): string {
  const match = DATE.exec(raw)
  if (!match) invalid(`${parameter} must look like IS:yyyy-MM-dd, got ${JSON.stringify(raw.slice(0, 100))}`, parameter)
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    invalid(`${parameter} holds an impossible date: ${match[1]}-${match[2]}-${match[3]}`, parameter)
  }
  return end ? new Date(date.getTime() + 86_400_000 - 1).toISOString() : date.toISOString()
}

/** Digits only: no sign, no spaces (`limit=%201` is a 400 like any other malformed value), no exponent. */
export function parseCount(
  raw: string | undefined,
  parameter: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return fallback
  if (!/^\d{1,15}$/.test(raw))
    invalid(
      `${parameter} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw.slice(0, 100))}`,
      parameter,
    )
  const value = Number(raw)
  if (value < min) invalid(`${parameter} must be at least ${min}, got ${value}`, parameter)
  if (value > max) invalid(`${parameter} must be at most ${max}, got ${value}`, parameter)
  return value
}

/**
 * The query as the HTTP layer validated it (src/http/query.ts: each parameter at most once, every
 * value a string) into plain values; a malformed value is a ValidationError naming the parameter.
 */
export function parseEventQuery(raw: Readonly<Partial<Record<string, string>>>): EventQuery {
  const single: Record<string, string> = {}
  for (const key of KNOWN) if (typeof raw[key] === 'string') single[key] = raw[key]
  for (const [modern, legacy] of [
    ['from', 'createdAtFrom'],
    ['to', 'createdAtTo'],
  ] as const) {
    if (single[modern] !== undefined && single[legacy] !== undefined)
      invalid(`Give either ${legacy} or ${modern}, not both`, modern)
  }
  const query: EventQuery = {
    offset: parseCount(single.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    limit: parseCount(single.limit, 'limit', SEARCH_LIMIT_DEFAULT, 1, SEARCH_LIMIT_MAX),
  }
  if (single.query !== undefined && single.query !== '') {
    if (single.query.length > QUERY_MAX_LENGTH) invalid(`query must be at most ${QUERY_MAX_LENGTH} characters`, 'query')
    query.query = single.query
  }
  for (const key of FILTERS) {
    if (single[key] === undefined) continue
    const values = parseFilter(single[key], key)
    if (key === 'id') {
      const ids = values.map(value =>
        /^\d{1,15}$/.test(value)
          ? Number(value)
          : invalid(`id values must be whole numbers, got ${JSON.stringify(value)}`, 'id'),
      )
      query.id = ids
    } else {
      query[key] = values
    }
  }
  const from = single.from ?? single.createdAtFrom
  const to = single.to ?? single.createdAtTo
  if (from !== undefined) query.from = parseDay(from, single.from !== undefined ? 'from' : 'createdAtFrom', false)
  if (to !== undefined) query.to = parseDay(to, single.to !== undefined ? 'to' : 'createdAtTo', true)
  return query
}
