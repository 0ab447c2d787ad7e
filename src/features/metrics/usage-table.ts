/**
 * The hourly usage counts, held in memory and bounded. Every metrics request adds to rows here and
 * marks them changed; the metrics service's flush writes the changed rows in one commit. The table
 * holds the totals (what was flushed plus what was not yet), so reads are exact at once.
 */
import type { UsageRowRecord } from './metrics.records'
import { usageKey } from './metrics.records'

/** How much the table holds at most; what would go past a cap is dropped silently (docs/limits.md). */
export const USAGE_LIMITS = {
  /** Rows (flag × environment × application × hour) over all the hours kept. */
  rows: 50_000,
  /** Distinct variant names counted in one row. */
  variantsPerRow: 100,
  /** Variant counters over all rows. */
  variantCounters: 250_000,
  /** Longest variant name counted. */
  variantNameLength: 100,
  /** Rows whose hour started longer ago than this are dropped. */
  hoursKept: 48,
}

const HOUR_MS = 3_600_000

/**
 * Counts add up to Number.MAX_SAFE_INTEGER and stay there: past it a sum is no longer a whole
 * number anyone can read back exactly (each report's counts are at most that, so two could pass it).
 */
const sum = (a: number, b: number) => Math.min(a + b, Number.MAX_SAFE_INTEGER)

/** The start of the UTC hour `time` falls in, as the API writes timestamps. */
export function hourOf(time: Date): string {
  return new Date(Math.floor(time.getTime() / HOUR_MS) * HOUR_MS).toISOString()
}

export interface UsageCounts {
  yes: number
  no: number
  variants: Readonly<Record<string, number>>
}

export interface UsageChanges {
  put: UsageRowRecord[]
  removed: string[]
}

/** The rows of one hour, environment and application, by flag: a report finds it once for all its flags. */
export interface UsageGroup {
  key: string
  hour: string
  environment: string
  appName: string
  rows: Map<string, UsageRowRecord>
}

export class UsageTable {
  /** By `hour|environment|appName` (hours and environment names hold no `|`). */
  private readonly groups = new Map<string, UsageGroup>()
  /** Row keys by flag name, for the per-flag read. */
  private readonly byFlag = new Map<string, Set<UsageRowRecord>>()
  private rowCount = 0
  private variantCounters = 0
  private changed = new Set<UsageRowRecord>()
  /** usageKey()s of rows dropped since the last flush. */
  private removed = new Set<string>()

  /** Starts from the rows the store holds (copies: the store's records are frozen). */
  constructor(stored: Iterable<UsageRowRecord>) {
    for (const row of stored) this.insert(this.group(row.timestamp, row.environment, row.appName), { ...row, variants: { ...row.variants } })
  }

  get size(): number {
    return this.rowCount
  }

  get hasChanges(): boolean {
    return this.changed.size > 0 || this.removed.size > 0
  }

  get variantCount(): number {
    return this.variantCounters
  }

  get groupCount(): number {
    return this.groups.size
  }

  /** The group of a report; a new one is kept only once a row is added to it, so that reports of nothing leave nothing. */
  group(hour: string, environment: string, appName: string): UsageGroup {
    const key = `${hour}|${environment}|${appName}`
    return this.groups.get(key) ?? { key, hour, environment, appName, rows: new Map() }
  }

  private insert(group: UsageGroup, row: UsageRowRecord): void {
    if (group.rows.size === 0) this.groups.set(group.key, group)
    group.rows.set(row.featureName, row)
    let rows = this.byFlag.get(row.featureName)
    if (!rows) this.byFlag.set(row.featureName, (rows = new Set()))
    rows.add(row)
    this.rowCount++
    for (const _ in row.variants) this.variantCounters++
  }

  /** Adds one report's counts for a flag; false when the row cap dropped them. */
  add(group: UsageGroup, featureName: string, counts: UsageCounts): boolean {
    let row = group.rows.get(featureName)
    if (!row) {
      if (this.rowCount >= USAGE_LIMITS.rows) return false
      row = { featureName, appName: group.appName, environment: group.environment, timestamp: group.hour, yes: 0, no: 0, variants: {} }
      this.insert(group, row)
    }
    row.yes = sum(row.yes, counts.yes)
    row.no = sum(row.no, counts.no)
    for (const name in counts.variants) {
      const count = counts.variants[name]
      if (Object.hasOwn(row.variants, name)) {
        row.variants[name] = sum(row.variants[name], count)
      } else if (
        name.length <= USAGE_LIMITS.variantNameLength &&
        Object.keys(row.variants).length < USAGE_LIMITS.variantsPerRow &&
        this.variantCounters < USAGE_LIMITS.variantCounters
      ) {
        // Defined, not assigned: a variant may be called __proto__ (assigning would set the prototype).
        Object.defineProperty(row.variants, name, { value: count, writable: true, enumerable: true, configurable: true })
        this.variantCounters++
      }
    }
    this.changed.add(row)
    return true
  }

  /** Drops the rows of hours before `oldestHour` (an hourOf() value). */
  prune(oldestHour: string): void {
    for (const [key, group] of this.groups) {
      if (group.hour >= oldestHour) continue
      this.groups.delete(key)
      for (const row of group.rows.values()) {
        const rows = this.byFlag.get(row.featureName)!
        rows.delete(row)
        if (rows.size === 0) this.byFlag.delete(row.featureName)
        this.rowCount--
        this.variantCounters -= Object.keys(row.variants).length
        this.changed.delete(row)
        this.removed.add(usageKey(row))
      }
    }
  }

  /** The rows of `featureName` from `sinceHour` on. The rows are live: copy before keeping them. */
  rowsOf(featureName: string, sinceHour: string): UsageRowRecord[] {
    return [...(this.byFlag.get(featureName) ?? [])].filter((row) => row.timestamp >= sinceHour)
  }

  /** Names of the flags `appName` reported from `sinceHour` on. */
  flagsOf(appName: string, sinceHour: string): string[] {
    const flags = new Set<string>()
    for (const group of this.groups.values()) {
      if (group.appName === appName && group.hour >= sinceHour) for (const name of group.rows.keys()) flags.add(name)
    }
    return [...flags].sort()
  }

  /** What changed since the last call, for a flush; `restore` gives it back if the flush failed. */
  takeChanges(): UsageChanges {
    const changes = { put: [...this.changed], removed: [...this.removed] }
    this.changed = new Set()
    this.removed = new Set()
    return changes
  }

  restore(changes: UsageChanges): void {
    for (const row of changes.put) if (this.byFlag.get(row.featureName)?.has(row)) this.changed.add(row)
    for (const key of changes.removed) this.removed.add(key)
  }
}
