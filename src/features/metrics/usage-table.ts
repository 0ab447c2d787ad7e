/**
 * The hourly usage counts, held in memory and bounded. Every metrics request adds to rows here and
 * marks them changed; the metrics service's flush writes the changed rows in one commit. The table
 * holds the totals (what was flushed plus what was not yet), so reads are exact at once.
 */
import type { UsageRowRecord } from './metrics.records'
import { usageKey } from './metrics.records'

/** How much the table holds at most; what would go past a cap is dropped silently (README "Limits"). */
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
  put: string[]
  removed: string[]
}

export class UsageTable {
  private readonly rows = new Map<string, UsageRowRecord>()
  /** Row keys by flag name, for the per-flag read. */
  private readonly byFlag = new Map<string, Set<string>>()
  private variantCounters = 0
  private changed = new Set<string>()
  private removed = new Set<string>()

  /** Starts from the rows the store holds (copies: the store's records are frozen). */
  constructor(stored: Iterable<UsageRowRecord>) {
    for (const row of stored) this.insert({ ...row, variants: { ...row.variants } })
  }

  get size(): number {
    return this.rows.size
  }

  get hasChanges(): boolean {
    return this.changed.size > 0 || this.removed.size > 0
  }

  get variantCount(): number {
    return this.variantCounters
  }

  private insert(row: UsageRowRecord): void {
    const key = usageKey(row)
    this.rows.set(key, row)
    let keys = this.byFlag.get(row.featureName)
    if (!keys) this.byFlag.set(row.featureName, (keys = new Set()))
    keys.add(key)
    this.variantCounters += Object.keys(row.variants).length
  }

  /** Adds one report's counts for a flag; false when the row cap dropped them. */
  add(hour: string, environment: string, appName: string, featureName: string, counts: UsageCounts): boolean {
    const key = usageKey({ timestamp: hour, environment, featureName, appName })
    let row = this.rows.get(key)
    if (!row) {
      if (this.rows.size >= USAGE_LIMITS.rows) return false
      row = { featureName, appName, environment, timestamp: hour, yes: 0, no: 0, variants: {} }
      this.insert(row)
      this.removed.delete(key)
    }
    row.yes += counts.yes
    row.no += counts.no
    for (const [name, count] of Object.entries(counts.variants)) {
      if (Object.hasOwn(row.variants, name)) {
        row.variants[name] += count
      } else if (
        name.length <= USAGE_LIMITS.variantNameLength &&
        Object.keys(row.variants).length < USAGE_LIMITS.variantsPerRow &&
        this.variantCounters < USAGE_LIMITS.variantCounters
      ) {
        row.variants[name] = count
        this.variantCounters++
      }
    }
    this.changed.add(key)
    return true
  }

  /** Drops the rows of hours before `oldestHour` (an hourOf() value). */
  prune(oldestHour: string): void {
    for (const [key, row] of this.rows) {
      if (row.timestamp >= oldestHour) continue
      this.rows.delete(key)
      this.byFlag.get(row.featureName)?.delete(key)
      if (this.byFlag.get(row.featureName)?.size === 0) this.byFlag.delete(row.featureName)
      this.variantCounters -= Object.keys(row.variants).length
      this.changed.delete(key)
      this.removed.add(key)
    }
  }

  /** The rows of `featureName` from `sinceHour` on. The rows are live: copy before keeping them. */
  rowsOf(featureName: string, sinceHour: string): UsageRowRecord[] {
    const result: UsageRowRecord[] = []
    for (const key of this.byFlag.get(featureName) ?? []) {
      const row = this.rows.get(key)!
      if (row.timestamp >= sinceHour) result.push(row)
    }
    return result
  }

  /** Names of the flags `appName` reported from `sinceHour` on. */
  flagsOf(appName: string, sinceHour: string): string[] {
    const flags = new Set<string>()
    for (const row of this.rows.values()) if (row.appName === appName && row.timestamp >= sinceHour) flags.add(row.featureName)
    return [...flags].sort()
  }

  row(key: string): UsageRowRecord | undefined {
    return this.rows.get(key)
  }

  /** What changed since the last call, for a flush; `restore` gives it back if the flush failed. */
  takeChanges(): UsageChanges {
    const changes = { put: [...this.changed], removed: [...this.removed].filter((key) => !this.rows.has(key)) }
    this.changed = new Set()
    this.removed = new Set()
    return changes
  }

  restore(changes: UsageChanges): void {
    for (const key of changes.put) if (this.rows.has(key)) this.changed.add(key)
    for (const key of changes.removed) if (!this.rows.has(key)) this.removed.add(key)
  }
}
