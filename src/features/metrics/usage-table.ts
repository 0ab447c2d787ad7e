/**
 * The hourly usage counts, held in memory and bounded, as series (usage-series.ts). Every metrics
 * request adds to a series and to what it gained since the last flush; the flush adds those
 * increments to the stored records (one per flag and hour, usage-cells.ts) in one commit, computed
 * on the state the commit is applied to, so that counts reported to several instances on one
 * database add up exactly. The table holds the totals (stored plus not flushed yet), so reads are
 * exact at once, and follows the stored records whoever writes them (`followStored`).
 *
 * A series belongs to one flag, not to a name: it carries the flag's createdAt. The series of a
 * flag that is deleted become orphans at once (flushed or not): the per-flag reads no longer find
 * them and an application's list names them as flags not found, until a flag is made again under
 * the name (in any project), which drops them: it starts with no usage.
 */
import { isHourRecord, type UsageHourRecord, type UsageRowRecord, usageHourKey } from './metrics.records'
import { type UsageIncrement, decodeCells, sourceKey, sum } from './usage-cells'
import {
  type FlagIdentity,
  type HourChange,
  type Series,
  type UsageChanges,
  type UsageCounts,
  type UsageGroup,
  HOUR_MS,
  Pending,
  SLOTS,
  USAGE_LIMITS,
  addVariants,
  adjust,
  hourNumber,
  hourTimestamp,
  seriesRows,
  writeSlot,
} from './usage-series'

export type { UsageIncrement } from './usage-cells'
export { USAGE_LIMITS, hourNumber, hourOf, hourTimestamp } from './usage-series'
export type { FlagIdentity, HourChange, UsageChanges, UsageCounts, UsageGroup } from './usage-series'

export class UsageTable {
  /** By sourceKey(environment, appName). */
  private readonly sources = new Map<string, Map<string, Series>>()
  /** The series of each flag that exists, by name, and of flags deleted. */
  private readonly byFlag = new Map<string, Set<Series>>()
  private readonly orphans = new Map<string, Set<Series>>()
  /** Counts held per `hour|featureName`, for the per-flag cap. */
  private readonly flagHours = new Map<string, number>()
  /** Counts held per hour number. */
  private readonly hourCounts = new Map<number, number>()
  /** Flag names with a stored record, per hour number (another instance's too), for the pruning. */
  private readonly stored = new Map<number, Set<string>>()
  private seriesCount = 0
  private cellCount = 0
  private variantSeries = 0
  private dirty = new Set<Series>()
  private changes: UsageChanges = { hours: new Map(), removed: [] }

  /** `flagOf`: the flag that exists under a name now; a series of another flag is an orphan. */
  constructor(private readonly flagOf: (name: string) => FlagIdentity | undefined) {}

  /** What is held: counts (series × hour), series, variant series. */
  get sizes() {
    return { rows: this.cellCount, series: this.seriesCount, variants: this.variantSeries }
  }

  get hasChanges(): boolean {
    return this.dirty.size > 0 || this.changes.hours.size > 0 || this.changes.removed.length > 0
  }

  /** The group of a report, made when missing. */
  group(hour: string, environment: string, appName: string): UsageGroup {
    if (hour !== this.lastHour) [this.lastHour, this.lastHourNumber] = [hour, hourNumber(hour)]
    return { hour: this.lastHourNumber, environment, appName, series: this.seriesOf(environment, appName) }
  }

  private lastHour = ''
  private lastHourNumber = 0
  /** The series of an environment and application, by flag name, made when missing. */
  private seriesOf(environment: string, appName: string): Map<string, Series> {
    const key = sourceKey(environment, appName)
    let series = this.sources.get(key)
    if (!series) this.sources.set(key, (series = new Map()))
    return series
  }

  private isLive(series: Series): boolean {
    return this.byFlag.get(series.featureName)?.has(series) ?? false
  }

  private newSeries(group: Pick<UsageGroup, 'environment' | 'appName'>, name: string, createdAt: string): Series {
    const series: Series = {
      featureName: name,
      environment: group.environment,
      appName: group.appName,
      flagCreatedAt: createdAt,
      slots: new Float64Array(3 * SLOTS),
      variants: null,
      cells: 0,
      pending: null,
    }
    const live = this.flagOf(name)?.createdAt === createdAt
    this.sources.get(sourceKey(group.environment, group.appName))!.set(name, series)
    const index = live ? this.byFlag : this.orphans
    let set = index.get(name)
    if (!set) index.set(name, (set = new Set()))
    set.add(series)
    this.seriesCount++
    return series
  }

  /** Takes a series out of every index; `record` writes its cells' removal at the next flush. */
  private dropSeries(series: Series, record: boolean): void {
    for (let slot = 0; slot < SLOTS; slot++) if (series.slots[slot] !== 0) this.clearSlot(series, slot, record)
    this.sources.get(sourceKey(series.environment, series.appName))?.delete(series.featureName)
    for (const index of [this.byFlag, this.orphans]) {
      const set = index.get(series.featureName)
      if (set?.delete(series) && set.size === 0) index.delete(series.featureName)
    }
    this.dirty.delete(series)
    this.seriesCount--
  }

  /** Starts counting `hour` in its slot (which must be empty). False past the per-flag cap. */
  private openSlot(series: Series, slot: number, hour: number): boolean {
    const flagHour = `${hour}|${series.featureName}`
    if ((this.flagHours.get(flagHour) ?? 0) >= USAGE_LIMITS.rowsPerFlagHour) return false
    series.slots[slot] = hour
    series.cells++
    this.cellCount++
    adjust(this.flagHours, flagHour, 1)
    adjust(this.hourCounts, hour, 1)
    return true
  }

  /** Empties a slot; `record` takes the cell out of the stored record too at the next flush. */
  private clearSlot(series: Series, slot: number, record: boolean): void {
    const hour = series.slots[slot]
    if (record) this.change(series, hour).remove.add(sourceKey(series.environment, series.appName))
    series.slots[slot] = 0
    series.slots[SLOTS + slot] = 0
    series.slots[2 * SLOTS + slot] = 0
    series.pending?.delete(hour)
    for (const [name, counts] of series.variants ?? []) {
      counts[slot] = 0
      if (counts.every(count => count === 0)) {
        series.variants!.delete(name)
        this.variantSeries--
      }
    }
    series.cells--
    this.cellCount--
    adjust(this.flagHours, `${hour}|${series.featureName}`, -1)
    adjust(this.hourCounts, hour, -1)
  }

  private change(series: Series, hour: number): HourChange {
    const timestamp = hourTimestamp(hour)
    const key = usageHourKey(timestamp, series.featureName)
    let change = this.changes.hours.get(key)
    if (!change || change.flagCreatedAt !== series.flagCreatedAt) {
      // Another flag of the name: its record replaces the old one's (whose cells go with it).
      change = {
        featureName: series.featureName,
        timestamp,
        flagCreatedAt: series.flagCreatedAt,
        add: new Map(),
        remove: new Set(),
      }
      this.changes.hours.set(key, change)
    }
    return change
  }

  /**
   * At the series cap, a report of a later hour than any counted makes room: the series counted
   * longest ago go (all of those last counted in that hour). Recent series are worth more to
   * whoever reads the history than old ones.
   */
  private makeRoom(hour: number): void {
    if (this.seriesCount < USAGE_LIMITS.series) return
    let oldest = Number.POSITIVE_INFINITY
    const latest = (series: Series) => Math.max(...series.slots.subarray(0, SLOTS))
    for (const map of this.sources.values())
      for (const series of map.values()) oldest = Math.min(oldest, latest(series))
    if (!(oldest < hour)) return
    for (const map of this.sources.values())
      for (const series of [...map.values()]) if (latest(series) === oldest) this.dropSeries(series, true)
  }

  /** The flag called `name` is deleted: its series become orphans, whether flushed or not. */
  orphan(name: string): void {
    const live = this.byFlag.get(name)
    if (!live) return
    const set = this.orphans.get(name) ?? new Set()
    for (const series of live) set.add(series)
    this.orphans.set(name, set)
    this.byFlag.delete(name)
  }

  /** A flag is made under `name`: the series of the one deleted before are of no flag anyone can name any more. */
  dropOrphans(name: string): void {
    for (const series of [...(this.orphans.get(name) ?? [])]) this.dropSeries(series, true)
  }

  /** Adds one report's counts for a flag; false when a cap dropped them. */
  add(group: UsageGroup, flag: FlagIdentity, counts: UsageCounts): boolean {
    let series = group.series.get(flag.name)
    // An orphan in this series' place (a flag deleted, maybe made again): the new flag starts from nothing.
    if (series && (series.flagCreatedAt !== flag.createdAt || !this.isLive(series))) {
      this.dropSeries(series, true)
      series = undefined
    }
    const hour = group.hour
    const slot = hour % SLOTS
    if (!series || series.slots[slot] !== hour) {
      if (!series) {
        this.makeRoom(hour)
        if (this.seriesCount >= USAGE_LIMITS.series) return false
      }
      const target = series ?? this.newSeries(group, flag.name, flag.createdAt)
      // A slot still holding an hour 49 hours back (not pruned yet): that hour's cell goes.
      if (target.slots[slot] !== 0) this.clearSlot(target, slot, true)
      if (!this.openSlot(target, slot, hour)) {
        if (target.cells === 0) this.dropSeries(target, false)
        return false
      }
      series = target
    }
    // A series with something not flushed is among the dirty ones already.
    if (series.pending === null) this.dirty.add(series)
    const increment = Pending.of(series, hour)
    series.slots[SLOTS + slot] = sum(series.slots[SLOTS + slot], counts.yes)
    series.slots[2 * SLOTS + slot] = sum(series.slots[2 * SLOTS + slot], counts.no)
    increment.yes = sum(increment.yes, counts.yes)
    increment.no = sum(increment.no, counts.no)
    if (counts.variants) {
      const room = USAGE_LIMITS.variantCounters - this.variantSeries
      this.variantSeries += addVariants(series, slot, counts.variants, increment, room)
    }
    return true
  }

  /**
   * A stored record changed (a flush of this instance or of another one on the same database, or
   * an undone one; at start, each stored record): the counts here become the stored ones plus what
   * is counted here and not flushed yet.
   */
  followStored(key: string, before: UsageHourRecord | UsageRowRecord | undefined, after: typeof before): void {
    const record = (after ?? before)!
    if (!isHourRecord(record)) {
      // The former format, at start: counted again as not flushed, to be written as hourly records.
      if (!after || isHourRecord(after)) return
      this.adoptRow(after)
      this.changes.removed.push(key)
      return
    }
    const hour = hourNumber(record.timestamp)
    const slot = hour % SLOTS
    const stored = after && isHourRecord(after) ? after : undefined
    const names = this.stored.get(hour) ?? new Set()
    if (stored) this.stored.set(hour, names.add(record.featureName))
    else if (names.delete(record.featureName) && names.size === 0) this.stored.delete(hour)
    const cells = new Map(
      (stored ? decodeCells(stored.cells) : []).map(cell => [sourceKey(cell.environment, cell.appName), cell]),
    )
    const live = this.flagOf(record.featureName)?.createdAt
    // Cells held here of that flag and hour that the record no longer has: what is not flushed stays.
    for (const index of [this.byFlag, this.orphans])
      for (const series of [...(index.get(record.featureName) ?? [])]) {
        if (series.slots[slot] !== hour || series.flagCreatedAt !== record.flagCreatedAt) continue
        if (stored && cells.has(sourceKey(series.environment, series.appName))) continue
        const pending = series.pending?.get(hour)
        if (pending) this.setSlot(series, slot, { yes: 0, no: 0, variants: {} }, pending)
        else this.clearSlot(series, slot, false)
        if (series.cells === 0) this.dropSeries(series, false)
      }
    if (!stored) return
    for (const [source, cell] of cells) {
      const series = this.sources.get(source)?.get(record.featureName)
      if (series && series.flagCreatedAt !== stored.flagCreatedAt) {
        // The flag that exists wins; a record of a deleted flag is replaced at that flag's next flush.
        if (series.flagCreatedAt === live || stored.flagCreatedAt !== live) continue
        this.dropSeries(series, false)
      }
      const held = this.holding(cell.environment, cell.appName, record.featureName, stored.flagCreatedAt, hour)
      if (held) this.setSlot(held, slot, cell, held.pending?.get(hour))
    }
  }

  /**
   * The series of that flag, environment and application with a slot open for `hour`, made or
   * opened when the caps allow; undefined when they do not.
   */
  private holding(environment: string, appName: string, name: string, createdAt: string, hour: number) {
    const slot = hour % SLOTS
    let series = this.seriesOf(environment, appName).get(name)
    if (series && series.flagCreatedAt !== createdAt) return undefined
    if (!series) {
      if (this.seriesCount >= USAGE_LIMITS.series) return undefined
      series = this.newSeries({ environment, appName }, name, createdAt)
    }
    if (series.slots[slot] !== hour) {
      if (series.slots[slot] > hour) return undefined
      if (series.slots[slot] !== 0) this.clearSlot(series, slot, true)
      if (!this.openSlot(series, slot, hour)) {
        if (series.cells === 0) this.dropSeries(series, false)
        return undefined
      }
    }
    return series
  }

  /** A row in the former format, at start: whose it is decided as before, then counted as not flushed. */
  private adoptRow(row: UsageRowRecord): void {
    const flag = this.flagOf(row.featureName)
    const createdAt =
      row.flagCreatedAt ??
      (flag && Date.parse(row.timestamp) + HOUR_MS > Date.parse(flag.createdAt) ? flag.createdAt : row.timestamp)
    const group = this.group(row.timestamp, row.environment, row.appName)
    const series = group.series.get(row.featureName)
    if (series && series.flagCreatedAt !== createdAt) return
    this.add(group, { name: row.featureName, createdAt }, row)
  }

  /** Makes a slot's counts the stored `cell` plus `pending` (not flushed yet). */
  private setSlot(series: Series, slot: number, cell: UsageCounts, pending: UsageIncrement | undefined): void {
    this.variantSeries += writeSlot(series, slot, cell, pending, USAGE_LIMITS.variantCounters - this.variantSeries)
  }

  /** Drops the hours before `oldestHour` (an hourOf() value), held or stored. */
  prune(oldestHour: string): void {
    const oldest = hourNumber(oldestHour)
    if ([...this.hourCounts.keys()].some(hour => hour < oldest))
      for (const map of this.sources.values())
        for (const series of [...map.values()]) {
          for (let slot = 0; slot < SLOTS; slot++)
            if (series.slots[slot] !== 0 && series.slots[slot] < oldest) this.clearSlot(series, slot, false)
          if (series.cells === 0) this.dropSeries(series, false)
        }
    for (const [hour, names] of this.stored)
      if (hour < oldest) for (const name of names) this.changes.removed.push(usageHourKey(hourTimestamp(hour), name))
  }

  /** The counts of `featureName` from `since` (an ISO time) on, as the API answers them. */
  rowsOf(featureName: string, since: string): Omit<UsageRowRecord, 'flagCreatedAt'>[] {
    const from = Date.parse(since)
    return [...(this.byFlag.get(featureName) ?? [])].flatMap(series => seriesRows(series, from))
  }

  /** Names of the flags `appName` reported from `sinceHour` on, each with whether it is a flag that exists (false: deleted since). */
  flagsOf(appName: string, sinceHour: string): [name: string, exists: boolean][] {
    const from = Date.parse(sinceHour) / HOUR_MS
    const flags = new Map<string, boolean>()
    for (const map of this.sources.values())
      for (const series of map.values()) {
        if (series.appName !== appName || !series.slots.subarray(0, SLOTS).some(hour => hour >= from)) continue
        flags.set(series.featureName, flags.get(series.featureName) || this.isLive(series))
      }
    return [...flags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  }

  /** What changed since the last call, for a flush; `restore` gives it back if the flush failed. */
  takeChanges(): UsageChanges {
    for (const series of this.dirty)
      for (const [hour, increment] of series.pending ?? []) {
        const key = sourceKey(series.environment, series.appName)
        this.change(series, hour).add.set(key, { environment: series.environment, appName: series.appName, increment })
      }
    for (const series of this.dirty) series.pending = null
    this.dirty = new Set()
    const taken = this.changes
    this.changes = { hours: new Map(), removed: [] }
    return taken
  }

  /** A flush failed: what it took is counted again as not flushed, to be written at the next. */
  restore(taken: UsageChanges): void {
    for (const change of taken.hours.values()) {
      const hour = hourNumber(change.timestamp)
      for (const { environment, appName, increment } of change.add.values()) {
        // Undoing the flush took what it had stored away: the series comes back with its counts.
        const series = this.holding(environment, appName, change.featureName, change.flagCreatedAt, hour)
        if (!series) continue
        const slot = hour % SLOTS
        this.setSlot(series, slot, Pending.counts(series, slot), increment)
        Pending.addTo(Pending.of(series, hour), increment)
        this.dirty.add(series)
      }
      const current = this.changes.hours.get(usageHourKey(change.timestamp, change.featureName))
      if (change.remove.size === 0) continue
      if (current && current.flagCreatedAt !== change.flagCreatedAt) continue
      if (current) for (const source of change.remove) current.remove.add(source)
      else this.changes.hours.set(usageHourKey(change.timestamp, change.featureName), { ...change, add: new Map() })
    }
    this.changes.removed.push(...taken.removed)
  }
}
