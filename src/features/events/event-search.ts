/** Answers event searches over the in-memory log: filters ANDed, newest first, exact total. */
import type { EventRecord } from '../../storage/records'
import type { EventQuery } from './event-query'

export interface EventPage {
  events: EventRecord[]
  total: number
}

/** The text `query` is matched against: data, preData and tags as JSON, lower-cased. */
export function searchableText(event: EventRecord): string {
  return `${JSON.stringify(event.data)}\n${JSON.stringify(event.preData)}\n${JSON.stringify(event.tags)}`.toLowerCase()
}

export type EventPredicate = (event: EventRecord) => boolean

/** One predicate for every filter of the query; `visibleProjects` limits what a scoped token sees. */
export function eventPredicate(query: EventQuery, visibleProjects: readonly string[] | null): EventPredicate {
  const checks: EventPredicate[] = []
  const set = (values: readonly (string | number)[]) => new Set<string | number | null>(values)
  if (visibleProjects) {
    const visible = set(visibleProjects)
    checks.push((event) => visible.has(event.project))
  }
  if (query.feature) {
    const wanted = set(query.feature)
    checks.push((event) => wanted.has(event.featureName))
  }
  if (query.project) {
    const wanted = set(query.project)
    checks.push((event) => wanted.has(event.project))
  }
  if (query.type) {
    const wanted = set(query.type)
    checks.push((event) => wanted.has(event.type))
  }
  if (query.environment) {
    const wanted = set(query.environment)
    checks.push((event) => wanted.has(event.environment))
  }
  if (query.id) {
    const wanted = set(query.id)
    checks.push((event) => wanted.has(event.id))
  }
  if (query.createdBy) {
    const wanted = set(query.createdBy)
    checks.push((event) => wanted.has(event.createdBy) || (event.createdByUserId !== null && wanted.has(String(event.createdByUserId))))
  }
  if (query.from) {
    const from = query.from
    checks.push((event) => event.createdAt >= from)
  }
  if (query.to) {
    const to = query.to
    checks.push((event) => event.createdAt <= to)
  }
  if (query.query) {
    const needle = query.query.toLowerCase()
    // The three JSON texts are joined by newlines, which JSON text never holds; so a needle with a
    // newline could only match across two of them, and a substring of one never has one.
    if (needle.includes('\n')) checks.push(() => false)
    else checks.push((event) => searchableText(event).includes(needle))
  }
  return (event) => checks.every((check) => check(event))
}

/** Scans the log newest first. `events[i].id === i + 1`. */
export function scanEvents(events: readonly EventRecord[], query: EventQuery, visibleProjects: readonly string[] | null): EventPage {
  const matches = eventPredicate(query, visibleProjects)
  const page: EventRecord[] = []
  let total = 0
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]
    if (!matches(event)) continue
    if (total >= query.offset && page.length < query.limit) page.push(event)
    total++
  }
  return { events: page, total }
}
