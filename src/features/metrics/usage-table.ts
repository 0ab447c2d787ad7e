/**
 * The hourly usage counts, held in memory and bounded. Every metrics request adds to rows here and
 * to the row's increments since the last flush; the metrics service's flush adds those increments
 * to the stored rows in one commit, computed on the state the commit is applied to, so that counts
 * reported to several instances on one database add up exactly. The table holds the totals (what
 * is stored plus what was not flushed yet), so reads are exact at once, and follows the stored rows
 * whoever writes them (`followStored`).
 *
 * A row belongs to one flag, not to a name: it carries the flag's createdAt. The rows of a flag that
 * is deleted become orphans at once (flushed or not): the per-flag reads no longer find them and an
 * application's list names them as flags not found, until a flag is made again under the name (in
 * any project), which drops them: it starts with no usage.
 */
import type { UsageRowRecord } from './metrics.records'
import { usageKey } from './metrics.records'

/**
 * How much the table holds at most (docs/limits.md): at the row cap a later hour takes the place of
 * the oldest; anything else that would go past a cap is dropped silently.
 */
export const USAGE_LIMITS = {
  /** Rows (flag × environment × application × hour) over all the hours kept. */
  rows: 50_000,
  /** Rows (environment × application) of one flag in one hour, so that no flag takes the whole history. */
  rowsPerFlagHour: 200,
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

/** Who a row counts for: a flag's name and createdAt. */
export interface FlagIdentity {
  name: string
  createdAt: string
}

export interface UsageCounts {
  yes: number
  no: number
  variants: Readonly<Record<string, number>>
}

/** What a row gained since the last flush. */
export interface UsageIncrement {
  yes: number
  no: number
  variants: Record<string, number>
}

export interface UsageChanges {
  /** Each changed row (its identity and totals) with what it gained since the last flush. */
  put: { row: UsageRowRecord; increment: UsageIncrement }[]
  removed: string[]
}

/** Sets a variant's count: defined, not assigned, since a variant may be called __proto__ (assigning would set the prototype). */
function setCount(variants: Record<string, number>, name: string, count: number): void {
  Object.defineProperty(variants, name, { value: count, writable: true, enumerable: true, configurable: true })
}

/**
 * The row to store: `stored` (the row committed for that key, by any instance) plus what this
 * instance counted since its last flush, or the increment alone when none is stored for that flag.
 */
export function addedTo(
  stored: UsageRowRecord | undefined,
  row: UsageRowRecord,
  increment: UsageIncrement,
): UsageRowRecord {
  const base = stored && stored.flagCreatedAt === row.flagCreatedAt ? stored : { ...row, yes: 0, no: 0, variants: {} }
  const variants: Record<string, number> = { ...base.variants }
  for (const name in increment.variants) {
    if (Object.hasOwn(variants, name)) variants[name] = sum(variants[name], increment.variants[name])
    else if (Object.keys(variants).length < USAGE_LIMITS.variantsPerRow) {
      setCount(variants, name, increment.variants[name])
    }
  }
  return { ...base, yes: sum(base.yes, increment.yes), no: sum(base.no, increment.no), variants }
}

/** The rows of one hour, environment and application, by flag: a report finds it once for all its flags. */
export interface UsageGroup {
  key: string
  hour: string
  environment: string
  appName: string
  rows: Map<string, UsageRowRecord>
}

const groupKey = (row: Pick<UsageRowRecord, 'timestamp' | 'environment' | 'appName'>) =>
  `${row.timestamp}|${row.environment}|${row.appName}`

export class UsageTable {
  /** By `hour|environment|appName` (hours and environment names hold no `|`). */
  private readonly groups = new Map<string, UsageGroup>()
  /** The rows of each flag that exists, by name, for the per-flag read. */
  private readonly byFlag = new Map<string, Set<UsageRowRecord>>()
  /** The rows of flags deleted, by name. */
  private readonly orphans = new Map<string, Set<UsageRowRecord>>()
  /** Rows held per `hour|featureName` (flag names hold no `|`), for the per-flag cap. */
  private readonly flagHours = new Map<string, number>()
  private rowCount = 0
  private variantCounters = 0
  private changed = new Map<UsageRowRecord, UsageIncrement>()
  /** usageKey()s of rows dropped since the last flush. */
  private removed = new Set<string>()

  /**
   * Starts from the rows the store holds (copies: the store's records are frozen). `flagOf` is the
   * flag that exists under a name now: a row of another flag (deleted, or deleted and made again
   * before a crash) is an orphan. A row written before rows named their flag is the flag's unless
   * its hour ended before the flag was made.
   */
  constructor(
    stored: Iterable<UsageRowRecord>,
    private readonly flagOf: (name: string) => FlagIdentity | undefined,
  ) {
    for (const record of stored) {
      const row = { ...record, variants: { ...record.variants } }
      const flag = flagOf(row.featureName)
      if (row.flagCreatedAt === undefined && flag && Date.parse(row.timestamp) + HOUR_MS > Date.parse(flag.createdAt))
        row.flagCreatedAt = flag.createdAt
      this.insert(
        this.group(row.timestamp, row.environment, row.appName),
        row,
        flag !== undefined && row.flagCreatedAt === flag.createdAt,
      )
    }
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
    const key = groupKey({ timestamp: hour, environment, appName })
    return this.groups.get(key) ?? { key, hour, environment, appName, rows: new Map() }
  }

  private insert(group: UsageGroup, row: UsageRowRecord, live: boolean): void {
    if (group.rows.size === 0) this.groups.set(group.key, group)
    group.rows.set(row.featureName, row)
    this.index(live ? this.byFlag : this.orphans, row)
    const flagHour = `${row.timestamp}|${row.featureName}`
    this.flagHours.set(flagHour, (this.flagHours.get(flagHour) ?? 0) + 1)
    this.rowCount++
    for (const _ in row.variants) this.variantCounters++
  }

  /** Whether a new row of `featureName` in `hour` would go past a cap. */
  private full(hour: string, featureName: string): boolean {
    return (
      this.rowCount >= USAGE_LIMITS.rows ||
      (this.flagHours.get(`${hour}|${featureName}`) ?? 0) >= USAGE_LIMITS.rowsPerFlagHour
    )
  }

  /**
   * At the row cap, a report of a later hour than the oldest held makes room: the rows of the
   * oldest hour go (all of them, so that this runs once per hour rather than per row). Recent
   * hours are worth more than old ones to whoever reads the history; within one hour, the rows
   * held first stay.
   */
  private makeRoom(hour: string): void {
    if (this.rowCount < USAGE_LIMITS.rows) return
    let oldest: string | undefined
    for (const group of this.groups.values()) if (oldest === undefined || group.hour < oldest) oldest = group.hour
    if (oldest === undefined || oldest >= hour) return
    for (const group of [...this.groups.values()])
      if (group.hour === oldest) for (const row of [...group.rows.values()]) this.remove(group, row)
  }

  private index(index: Map<string, Set<UsageRowRecord>>, row: UsageRowRecord): void {
    let rows = index.get(row.featureName)
    if (!rows) index.set(row.featureName, (rows = new Set()))
    rows.add(row)
  }

  private isLive(row: UsageRowRecord): boolean {
    return this.byFlag.get(row.featureName)?.has(row) ?? false
  }

  /** Takes a row out of its group and the counts; `removed` has its key written away at the next flush. */
  private remove(group: UsageGroup, row: UsageRowRecord): void {
    this.drop(group, row)
    this.removed.add(usageKey(row))
  }

  private drop(group: UsageGroup, row: UsageRowRecord): void {
    group.rows.delete(row.featureName)
    if (group.rows.size === 0) this.groups.delete(group.key)
    for (const index of [this.byFlag, this.orphans]) {
      const rows = index.get(row.featureName)
      if (rows?.delete(row) && rows.size === 0) index.delete(row.featureName)
    }
    const flagHour = `${row.timestamp}|${row.featureName}`
    const left = this.flagHours.get(flagHour)! - 1
    if (left === 0) this.flagHours.delete(flagHour)
    else this.flagHours.set(flagHour, left)
    this.rowCount--
    this.variantCounters -= Object.keys(row.variants).length
    this.changed.delete(row)
  }

  /**
   * The flag called `name` is deleted: its rows become orphans, whether flushed or not. (A deletion
   * undone because its commit failed leaves them orphans: that flag's counts start again.)
   */
  orphan(name: string): void {
    for (const row of this.byFlag.get(name) ?? []) this.index(this.orphans, row)
    this.byFlag.delete(name)
  }

  /** A flag is made under `name`: the rows of the one deleted before are of no flag anyone can name any more. */
  dropOrphans(name: string): void {
    for (const row of [...(this.orphans.get(name) ?? [])]) this.remove(this.groups.get(groupKey(row))!, row)
  }

  /** Adds one report's counts for a flag; false when the row cap dropped them. */
  add(group: UsageGroup, flag: FlagIdentity, counts: UsageCounts): boolean {
    const featureName = flag.name
    let row = group.rows.get(featureName)
    // An orphan in this row's place (a flag deleted, maybe made again): the new flag starts from nothing.
    if (row && (row.flagCreatedAt !== flag.createdAt || !this.isLive(row))) {
      this.remove(group, row)
      row = undefined
    }
    if (!row) {
      this.makeRoom(group.hour)
      if (this.full(group.hour, featureName)) return false
      row = {
        featureName,
        appName: group.appName,
        environment: group.environment,
        timestamp: group.hour,
        yes: 0,
        no: 0,
        variants: {},
        flagCreatedAt: flag.createdAt,
      }
      this.insert(group, row, true)
    }
    let increment = this.changed.get(row)
    if (!increment) this.changed.set(row, (increment = { yes: 0, no: 0, variants: {} }))
    row.yes = sum(row.yes, counts.yes)
    row.no = sum(row.no, counts.no)
    increment.yes = sum(increment.yes, counts.yes)
    increment.no = sum(increment.no, counts.no)
    for (const name in counts.variants) {
      const count = counts.variants[name]
      if (Object.hasOwn(row.variants, name)) {
        row.variants[name] = sum(row.variants[name], count)
      } else if (
        name.length <= USAGE_LIMITS.variantNameLength &&
        Object.keys(row.variants).length < USAGE_LIMITS.variantsPerRow &&
        this.variantCounters < USAGE_LIMITS.variantCounters
      ) {
        setCount(row.variants, name, count)
        this.variantCounters++
      } else continue
      setCount(
        increment.variants,
        name,
        sum(Object.hasOwn(increment.variants, name) ? increment.variants[name] : 0, count),
      )
    }
    return true
  }

  /**
   * A stored row changed (a flush of this instance or of another one on the same database, or an
   * undone one): the row here becomes the stored one plus what is counted here and not flushed yet.
   */
  followStored(before: UsageRowRecord | undefined, after: UsageRowRecord | undefined): void {
    const identity = after ?? before!
    const group = this.groups.get(groupKey(identity))
    const row = group?.rows.get(identity.featureName)
    if (!after) {
      // Removed by whoever pruned or dropped it; what is counted here since goes on in a new row.
      if (row && group && !this.changed.has(row) && row.flagCreatedAt === before?.flagCreatedAt) this.drop(group, row)
      return
    }
    if (row && row.flagCreatedAt === after.flagCreatedAt) {
      const increment = this.changed.get(row)
      const total = increment ? addedTo(after, row, increment) : after
      this.setTotals(row, total)
      return
    }
    if (row || this.full(after.timestamp, after.featureName)) return
    const flag = this.flagOf(after.featureName)
    const copy = { ...after, variants: { ...after.variants } }
    this.insert(
      this.group(copy.timestamp, copy.environment, copy.appName),
      copy,
      flag !== undefined && flag.createdAt === copy.flagCreatedAt,
    )
  }

  /** Makes `row`'s counts those of `total` (the stored row plus what is not flushed yet). */
  private setTotals(row: UsageRowRecord, total: UsageRowRecord): void {
    this.variantCounters += Object.keys(total.variants).length - Object.keys(row.variants).length
    row.yes = total.yes
    row.no = total.no
    row.variants = { ...total.variants }
  }

  /** Drops the rows of hours before `oldestHour` (an hourOf() value). */
  prune(oldestHour: string): void {
    for (const group of this.groups.values()) {
      if (group.hour >= oldestHour) continue
      for (const row of [...group.rows.values()]) this.remove(group, row)
    }
  }

  /** The rows of `featureName` from `sinceHour` on. The rows are live: copy before keeping them. */
  rowsOf(featureName: string, sinceHour: string): UsageRowRecord[] {
    return [...(this.byFlag.get(featureName) ?? [])].filter(row => row.timestamp >= sinceHour)
  }

  /** Names of the flags `appName` reported from `sinceHour` on, each with whether it is a flag that exists (false: deleted since). */
  flagsOf(appName: string, sinceHour: string): [name: string, exists: boolean][] {
    const flags = new Map<string, boolean>()
    for (const group of this.groups.values()) {
      if (group.appName !== appName || group.hour < sinceHour) continue
      for (const row of group.rows.values()) flags.set(row.featureName, flags.get(row.featureName) || this.isLive(row))
    }
    return [...flags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  }

  /** What changed since the last call, for a flush; `restore` gives it back if the flush failed. */
  takeChanges(): UsageChanges {
    const changes = {
      put: [...this.changed].map(([row, increment]) => ({ row, increment })),
      removed: [...this.removed],
    }
    this.changed = new Map()
    this.removed = new Set()
    return changes
  }

  /**
   * A flush failed: what it took is counted again, to be added at the next, and each row's total
   * is again what is stored (`storedOf`, whatever the failed commit left) plus what is not flushed.
   */
  restore(changes: UsageChanges, storedOf: (key: string) => UsageRowRecord | undefined): void {
    for (const { row, increment } of changes.put) {
      const group = this.group(row.timestamp, row.environment, row.appName)
      let current = group.rows.get(row.featureName)
      // Another flag's row took its place meanwhile: the deleted flag's counts go with it.
      if (current && current.flagCreatedAt !== row.flagCreatedAt) continue
      if (!current) {
        // Undoing the flush took the row it had stored away: it comes back with its counts.
        if (this.full(row.timestamp, row.featureName)) continue
        const flag = this.flagOf(row.featureName)
        this.insert(group, row, flag !== undefined && flag.createdAt === row.flagCreatedAt)
        current = row
      }
      const pending = this.changed.get(current)
      const merged = pending ? addedTo({ ...current, ...pending }, current, increment) : increment
      this.changed.set(current, { yes: merged.yes, no: merged.no, variants: { ...merged.variants } })
      const total = addedTo(storedOf(usageKey(current)), current, this.changed.get(current)!)
      this.setTotals(current, total)
    }
    for (const key of changes.removed) this.removed.add(key)
  }
}
