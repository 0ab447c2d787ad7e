/**
 * One series of the usage table (usage-table.ts): the hourly counts of one flag × environment ×
 * application, in a ring of the 49 hours kept by hour number, with yes and no counts in one
 * Float64Array and a Float64Array per variant name only where variants were counted.
 */
import type { UsageRowRecord } from './metrics.records'
import { type UsageIncrement, setCount, sum } from './usage-cells'

/** Who a series counts for: a flag's name and createdAt. */
export interface FlagIdentity {
  name: string
  createdAt: string
}

export interface UsageCounts {
  yes: number
  no: number
  variants: Readonly<Record<string, number>>
}

/** What the flush writes for one flag and hour: increments to add, cells to take out. */
export interface HourChange {
  featureName: string
  timestamp: string
  flagCreatedAt: string
  add: Map<string, { environment: string; appName: string; increment: UsageIncrement }>
  remove: Set<string>
}

export interface UsageChanges {
  hours: Map<string, HourChange>
  /** usageHourKey()s (or keys of rows in the former format) to delete whole. */
  removed: string[]
}

/** The series of one environment and application, by flag: a report finds it once for all its flags. */
export interface UsageGroup {
  hour: number
  environment: string
  appName: string
  series: Map<string, Series>
}

/** The hours a series holds: the 48 kept and the one that began 48 hours ago, until the next flush prunes it. */
export const SLOTS = 49

/**
 * How much the table holds at most (docs/limits.md): at the series cap a new series takes the place
 * of those counted longest ago; anything else that would go past a cap is dropped silently.
 */
export const USAGE_LIMITS = {
  /** Series (flag × environment × application), each holding up to 49 hourly counts. */
  series: 100_000,
  /** Counts (environment × application) of one flag in one hour, so that no flag takes the whole history. */
  rowsPerFlagHour: 200,
  /** Distinct variant names counted in one hour of one series. */
  variantsPerRow: 100,
  /** Variant series (series × variant name) over all series. */
  variantCounters: 250_000,
  /** Longest variant name counted. */
  variantNameLength: 100,
  /** Hours that started longer ago than this are dropped. */
  hoursKept: 48,
}

export const HOUR_MS = 3_600_000
/** The hour number of an ISO timestamp, and back. */
export const hourNumber = (timestamp: string) => Math.floor(Date.parse(timestamp) / HOUR_MS)
export const hourTimestamp = (hour: number) => new Date(hour * HOUR_MS).toISOString()

/** The start of the UTC hour `time` falls in, as the API writes timestamps. */
export function hourOf(time: Date): string {
  return hourTimestamp(Math.floor(time.getTime() / HOUR_MS))
}

export interface Series {
  readonly featureName: string
  readonly environment: string
  readonly appName: string
  readonly flagCreatedAt: string
  /**
   * For slot `i` (hour number % SLOTS): at `i` the hour number it holds (0: empty), at SLOTS + i the
   * yes count, at 2 × SLOTS + i the no count.
   */
  readonly slots: Float64Array
  /** Per variant name counted in any slot, its count per slot. */
  variants: Map<string, Float64Array> | null
  /** Slots in use. */
  cells: number
  /** What each hour gained since the last flush, by hour number. */
  pending: Map<number, UsageIncrement> | null
}

export type Slot = number

export const Pending = {
  /** The series' increment of `hour`, made when missing. */
  of(series: Series, hour: number): UsageIncrement {
    series.pending ??= new Map()
    let increment = series.pending.get(hour)
    if (!increment) series.pending.set(hour, (increment = { yes: 0, no: 0, variants: {} }))
    return increment
  },

  addTo(target: UsageIncrement, increment: UsageIncrement): void {
    target.yes = sum(target.yes, increment.yes)
    target.no = sum(target.no, increment.no)
    for (const name in increment.variants)
      setCount(
        target.variants,
        name,
        sum(Object.hasOwn(target.variants, name) ? target.variants[name] : 0, increment.variants[name]),
      )
  },

  /** What a slot holds now. */
  counts(series: Series, slot: Slot): UsageIncrement {
    const variants: Record<string, number> = {}
    for (const [name, values] of series.variants ?? []) if (values[slot] !== 0) setCount(variants, name, values[slot])
    return { yes: series.slots[SLOTS + slot], no: series.slots[2 * SLOTS + slot], variants }
  },
}

/** The series' counts of the hours that started at `from` (epoch ms) or later, as the API answers them. */
export function seriesRows(series: Series, from: number): Omit<UsageRowRecord, 'flagCreatedAt'>[] {
  const rows: Omit<UsageRowRecord, 'flagCreatedAt'>[] = []
  for (let slot = 0; slot < SLOTS; slot++) {
    const hour = series.slots[slot]
    if (hour === 0 || hour * HOUR_MS < from) continue
    const { yes, no, variants } = Pending.counts(series, slot)
    rows.push({
      featureName: series.featureName,
      appName: series.appName,
      environment: series.environment,
      timestamp: new Date(hour * HOUR_MS).toISOString(),
      yes,
      no,
      variants,
    })
  }
  return rows
}

/**
 * Makes a slot's counts the stored `cell` plus `pending`; a variant name new to the series is kept
 * while `room` (variant series the cap still allows) lasts. Returns the variant series added.
 */
export function writeSlot(
  series: Series,
  slot: Slot,
  cell: UsageCounts,
  pending: UsageIncrement | undefined,
  room: number,
): number {
  let added = 0
  series.slots[SLOTS + slot] = sum(cell.yes, pending?.yes ?? 0)
  series.slots[2 * SLOTS + slot] = sum(cell.no, pending?.no ?? 0)
  const names = new Set([...Object.keys(cell.variants), ...Object.keys(pending?.variants ?? {})])
  for (const [name, values] of series.variants ?? []) if (!names.has(name)) values[slot] = 0
  const own = (counts: Readonly<Record<string, number>> | undefined, name: string) =>
    counts && Object.hasOwn(counts, name) ? counts[name] : 0
  for (const name of names) {
    let values = series.variants?.get(name)
    if (!values) {
      if (added >= room) continue
      series.variants ??= new Map()
      series.variants.set(name, (values = new Float64Array(SLOTS)))
      added++
    }
    values[slot] = sum(own(cell.variants, name), own(pending?.variants, name))
  }
  return added
}

/**
 * Adds a report's variant counts to a slot and to its increment: a name new to the slot is counted
 * while the slot names fewer than the cap, and a name new to the series while `room` (variant
 * series the cap still allows) lasts. Returns the variant series added.
 */
export function addVariants(
  series: Series,
  slot: Slot,
  variants: Readonly<Record<string, number>>,
  increment: UsageIncrement,
  room: number,
): number {
  let added = 0
  for (const name in variants) {
    const count = variants[name]
    let values = series.variants?.get(name)
    if (!values || values[slot] === 0) {
      if (name.length > USAGE_LIMITS.variantNameLength) continue
      let named = 0
      for (const other of series.variants?.values() ?? []) if (other[slot] !== 0) named++
      if (named >= USAGE_LIMITS.variantsPerRow) continue
      if (!values) {
        if (added >= room) continue
        series.variants ??= new Map()
        series.variants.set(name, (values = new Float64Array(SLOTS)))
        added++
      }
    }
    values[slot] = sum(values[slot], count)
    setCount(
      increment.variants,
      name,
      sum(Object.hasOwn(increment.variants, name) ? increment.variants[name] : 0, count),
    )
  }
  return added
}

/** Adds `by` to a count in `map`, which holds no zeros. */
export function adjust<K>(map: Map<K, number>, key: K, by: number): void {
  const value = (map.get(key) ?? 0) + by
  if (value === 0) map.delete(key)
  else map.set(key, value)
}
