/**
 * searchFeatures (Unleash's `GET /api/admin/search/features`): filter, order, then cut the live
 * flags, so that only the page's flags are turned into views. This is what a table of thousands of
 * flags asks for: a page answers in milliseconds where the whole list is megabytes.
 */
import type { FlagRecord } from './flags.records'
import type { FeatureView } from './flag-view'

export interface FlagSearch {
  /** Only flags of these projects. */
  project?: string[]
  /** Case-insensitive substring of the name or the description. */
  query?: string
  sortBy?: 'name' | 'type' | 'createdAt' | 'lastSeenAt'
  sortOrder?: 'asc' | 'desc'
  offset?: number
  limit?: number
}

/** When metrics last reported the flag in any environment ('' when never: sorts first). */
function latestSeen(flag: FlagRecord, lastSeen: Readonly<Record<string, string>>): string {
  let latest = ''
  for (const [name, environment] of Object.entries(flag.environments)) {
    const seen = Object.hasOwn(lastSeen, name) ? lastSeen[name] : environment.lastSeenAt
    if (seen && seen > latest) latest = seen
  }
  return latest
}

/**
 * `records`: the live flags in scope, by createdAt then name (the order equal values keep).
 * `lastSeenOf` as LastSeenSource gives it; `view` makes a flag's list view.
 */
export function searchPage(
  records: FlagRecord[],
  filters: FlagSearch,
  lastSeenOf: (flag: FlagRecord) => Readonly<Record<string, string>>,
  view: (flag: FlagRecord) => FeatureView,
): { features: FeatureView[]; total: number } {
  const needle = filters.query?.trim().toLowerCase() ?? ''
  const matching = records.filter(
    flag =>
      needle === '' ||
      flag.name.toLowerCase().includes(needle) ||
      (flag.description ?? '').toLowerCase().includes(needle),
  )
  const key = filters.sortBy ?? 'createdAt'
  if (key !== 'createdAt') {
    const values = new Map(
      matching.map(flag => [flag, key === 'lastSeenAt' ? latestSeen(flag, lastSeenOf(flag)) : flag[key]]),
    )
    // Array.prototype.sort is stable: equal values keep the createdAt-then-name order.
    matching.sort((a, b) => {
      const x = values.get(a)!
      const y = values.get(b)!
      return x < y ? -1 : x > y ? 1 : 0
    })
  }
  if (filters.sortOrder === 'desc') matching.reverse()
  const offset = filters.offset ?? 0
  return { features: matching.slice(offset, offset + (filters.limit ?? 50)).map(view), total: matching.length }
}
