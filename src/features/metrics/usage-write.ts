/**
 * The usage table's changes written in the metrics flush's transaction: each flag-hour record
 * becomes the stored one (whoever wrote it) with this instance's increments added and its dropped
 * cells taken out.
 */
import type { Tx } from '../../storage/store'
import { isHourRecord, usageHourKey } from './metrics.records'
import { type UsageCell, addToCell, decodeCells, encodeCells, sourceKey } from './usage-cells'
import { USAGE_LIMITS, type UsageChanges } from './usage-table'

export function writeUsage(tx: Tx, changes: UsageChanges): void {
  const written = new Set<string>()
  for (const change of changes.hours.values()) {
    const key = usageHourKey(change.timestamp, change.featureName)
    written.add(key)
    const stored = tx.get('flagUsage', key)
    const storedHour = stored && isHourRecord(stored) ? stored : undefined
    let base: UsageCell[] = []
    if (storedHour && storedHour.flagCreatedAt === change.flagCreatedAt) base = decodeCells(storedHour.cells)
    else if (storedHour && storedHour.flagCreatedAt === tx.get('flags', change.featureName)?.createdAt) {
      // The record is of the flag that exists now; these are counts of one deleted since.
      continue
    }
    const cells = new Map(base.map(cell => [sourceKey(cell.environment, cell.appName), cell]))
    for (const source of change.remove) cells.delete(source)
    for (const [source, { environment, appName, increment }] of change.add) {
      const cell = cells.get(source)
      // Two instances, each under the cap, may together pass it: the cells stored first stay.
      if (!cell && cells.size >= USAGE_LIMITS.rowsPerFlagHour) continue
      cells.set(source, addToCell(cell, environment, appName, increment, USAGE_LIMITS.variantsPerRow))
    }
    if (cells.size > 0)
      tx.put('flagUsage', key, {
        featureName: change.featureName,
        timestamp: change.timestamp,
        flagCreatedAt: change.flagCreatedAt,
        cells: encodeCells(cells.values()),
      })
    else if (stored) tx.delete('flagUsage', key)
  }
  // A record counted again after it was dropped (the clock set back) is kept.
  for (const key of new Set(changes.removed))
    if (!written.has(key) && tx.get('flagUsage', key)) tx.delete('flagUsage', key)
}
