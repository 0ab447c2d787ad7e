/** What an SDK's metrics report and a history query say, read and checked before anything is counted. */
import { ValidationError } from '../../errors'
import { dotSegmentProblem } from '../names'
import type { UsageCounts } from './usage-table'

const pointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A count as SDKs send it; the JSON pointer is only made for the error. */
function count(value: unknown, path: () => string): number {
  if (value === undefined) return 0
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw ValidationError.at(path(), `must be a whole number ≥ 0, got ${JSON.stringify(value)}`)
  return value
}

/**
 * Checks every entry of `toggles` before anything is counted, so that a bad body changes nothing.
 * (for…in rather than Object.entries: this runs for every flag of every report.)
 */
export function readToggles(toggles: Record<string, unknown>): [string, UsageCounts][] {
  const result: [string, UsageCounts][] = []
  for (const name in toggles) {
    const entry = toggles[name]
    const at = () => `/bucket/toggles/${pointer(name)}`
    if (!isObject(entry)) throw ValidationError.at(at(), 'must be an object {yes, no, variants}')
    const variants = entry.variants ?? {}
    if (!isObject(variants)) throw ValidationError.at(`${at()}/variants`, 'must be an object of variant name → count')
    for (const variant in variants) count(variants[variant], () => `${at()}/variants/${pointer(variant)}`)
    result.push([
      name,
      {
        yes: count(entry.yes, () => `${at()}/yes`),
        no: count(entry.no, () => `${at()}/no`),
        variants: variants as Record<string, number>,
      },
    ])
  }
  return result
}

/** An application is read at /api/admin/metrics/applications/<appName>: a name no path can hold is refused (features/names.ts). */
export function checkAppName(appName: string): void {
  const dots = dotSegmentProblem(appName, 'An application name')
  if (dots) throw ValidationError.at('/appName', dots)
}

/** `hoursBack` of the history (as Unleash: 1 to 48, 1 when absent); digits only, else a 400 naming it. */
export function hoursBackOf(raw: string | undefined, max: number): number {
  if (raw === undefined) return 1
  const value = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(value >= 1 && value <= max))
    throw ValidationError.at(
      '/hoursBack',
      `hoursBack must be a whole number from 1 to ${max}, got ${JSON.stringify(raw.slice(0, 100))}`,
    )
  return value
}
