/**
 * How the usage history is written down: one record per flag and hour (metrics.records.ts
 * UsageHourRecord), whose `cells` string holds that hour's counts of every environment ×
 * application, instead of one record per flag × environment × application × hour. 48 hours of
 * 1,000 flags × 3 environments × 20 applications are then 48,000 records of about a kilobyte, not
 * 2.88 million objects; a flush rewrites only the current hour's record of each flag it counted.
 *
 * The format: cells separated by `;`, each `environment,appName,yes,no` followed by `,name=count`
 * per variant counted. In names `%`, `,`, `;` and `=` are written as `%25`, `%2C`, `%3B`, `%3D`.
 */

export interface UsageCell {
  environment: string
  appName: string
  yes: number
  no: number
  variants: Record<string, number>
}

/** What a cell gained since the last flush. */
export interface UsageIncrement {
  yes: number
  no: number
  variants: Record<string, number>
}

const NAME = '[^,;=]*'
const COUNT = '\\d{1,16}'
const CELL = `${NAME},${NAME},${COUNT},${COUNT}(?:,${NAME}=${COUNT})*`
/** The pattern a stored `cells` string matches (the record check refuses any other at load). */
export const CELLS_PATTERN = `^(?:${CELL}(?:;${CELL})*)?$`

const escapeName = (name: string) => name.replace(/[%,;=]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
const unescapeName = (text: string) =>
  text.includes('%') ? text.replace(/%(25|2C|3B|3D)/g, (_, hex) => String.fromCharCode(Number.parseInt(hex, 16))) : text

/**
 * Counts add up to Number.MAX_SAFE_INTEGER and stay there: past it a sum is no longer a whole
 * number anyone can read back exactly (each report's counts are at most that, so two could pass it).
 */
export const sum = (a: number, b: number) => Math.min(a + b, Number.MAX_SAFE_INTEGER)

/** Sets a variant's count: defined, not assigned, since a variant may be called __proto__ (assigning would set the prototype). */
export function setCount(variants: Record<string, number>, name: string, count: number): void {
  Object.defineProperty(variants, name, { value: count, writable: true, enumerable: true, configurable: true })
}

export function decodeCells(text: string): UsageCell[] {
  if (text === '') return []
  return text.split(';').map(part => {
    const fields = part.split(',')
    const variants: Record<string, number> = {}
    for (let i = 4; i < fields.length; i++) {
      const at = fields[i].indexOf('=')
      setCount(variants, unescapeName(fields[i].slice(0, at)), Number(fields[i].slice(at + 1)))
    }
    return {
      environment: unescapeName(fields[0]),
      appName: unescapeName(fields[1]),
      yes: Number(fields[2]),
      no: Number(fields[3]),
      variants,
    }
  })
}

export function encodeCells(cells: Iterable<UsageCell>): string {
  const parts: string[] = []
  for (const cell of cells) {
    let part = `${escapeName(cell.environment)},${escapeName(cell.appName)},${cell.yes},${cell.no}`
    for (const name in cell.variants) part += `,${escapeName(name)}=${cell.variants[name]}`
    parts.push(part)
  }
  return parts.join(';')
}

/** Where a cell sits among the cells of one flag and hour: environment names hold no `|`. */
export const sourceKey = (environment: string, appName: string) => `${environment}|${appName}`

/**
 * Adds `increment` to `cell` (a new cell when undefined), keeping at most `variantsPerCell` names;
 * returns the cell.
 */
export function addToCell(
  cell: UsageCell | undefined,
  environment: string,
  appName: string,
  increment: UsageIncrement,
  variantsPerCell: number,
): UsageCell {
  const target = cell ?? { environment, appName, yes: 0, no: 0, variants: {} }
  target.yes = sum(target.yes, increment.yes)
  target.no = sum(target.no, increment.no)
  for (const name in increment.variants) {
    if (Object.hasOwn(target.variants, name))
      target.variants[name] = sum(target.variants[name], increment.variants[name])
    else if (Object.keys(target.variants).length < variantsPerCell)
      setCount(target.variants, name, increment.variants[name])
  }
  return target
}
