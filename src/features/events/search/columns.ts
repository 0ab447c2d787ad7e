/**
 * The structured side of the event log: per event, a dictionary id for type, project, flag,
 * environment and creator, and its creation time; per value, a posting list (ascending event
 * indexes). Filters are answered from these: a page walks only the events of the smallest list.
 */
import type { EventRecord } from '../../../storage/records'
import type { EventQuery } from '../event-query'

/** A growable array of 32-bit integers. */
export class IntList {
  data = new Int32Array(16)
  length = 0
  push(value: number) {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    this.data[this.length++] = value
  }
  view(): Int32Array {
    return this.data.subarray(0, this.length)
  }
}

/** Strings to small numbers; 0 stands for null. */
class Dictionary {
  private readonly ids = new Map<string, number>()
  readonly postings: IntList[] = [new IntList()]
  /** The value of each id. */
  readonly values: (string | null)[] = [null]

  idOf(value: string | null): number {
    if (value === null) return 0
    let id = this.ids.get(value)
    if (id === undefined) {
      id = this.postings.length
      this.ids.set(value, id)
      this.values.push(value)
      this.postings.push(new IntList())
    }
    return id
  }

  find(value: string): number | undefined {
    return this.ids.get(value)
  }
}

/** One column and its dictionary. */
class Column {
  readonly values = new IntList()
  readonly dictionary = new Dictionary()

  push(value: string | null, index: number) {
    const id = this.dictionary.idOf(value)
    this.values.push(id)
    this.dictionary.postings[id].push(index)
  }

  /** Event `index`'s value. */
  valueAt(index: number): string | null {
    return this.dictionary.values[this.values.data[index]]
  }

  /** Events whose value is among `values`: their ids, posting lists and how many they hold. */
  filter(values: readonly string[]): ColumnFilter {
    const ids = new Set<number>()
    const postings: Int32Array[] = []
    let size = 0
    for (const value of values) {
      const id = this.dictionary.find(value)
      if (id === undefined || ids.has(id)) continue
      ids.add(id)
      const list = this.dictionary.postings[id].view()
      postings.push(list)
      size += list.length
    }
    return { values: this.values.data, ids, postings, size }
  }
}

/** One structured filter: events whose column value (in `values`) is among `ids`. */
export interface ColumnFilter {
  values: Int32Array
  ids: Set<number>
  postings: Int32Array[]
  size: number
}

export const FILTER_COLUMNS = ['type', 'project', 'feature', 'environment'] as const

/** Every column, by the name the event query and the segments give it. */
export const COLUMN_NAMES = [...FILTER_COLUMNS, 'creatorName', 'creatorId'] as const
export type ColumnName = (typeof COLUMN_NAMES)[number]

/** An event's value in a column: the one definition the tail, the segments and the log scan share. */
export function eventColumn(event: Omit<EventRecord, 'data' | 'preData' | 'tags'>, column: ColumnName): string | null {
  switch (column) {
    case 'type':
      return event.type
    case 'project':
      return event.project
    case 'feature':
      return event.featureName
    case 'environment':
      return event.environment
    case 'creatorName':
      return event.createdBy
    case 'creatorId':
      return event.createdByUserId === null ? null : String(event.createdByUserId)
  }
}

export class Columns {
  readonly type = new Column()
  readonly project = new Column()
  readonly feature = new Column()
  readonly environment = new Column()
  readonly creatorName = new Column()
  readonly creatorId = new Column()
  readonly createdAt: number[] = []
  /** Whether creation times ascend with ids (they do unless clocks went back): date bounds are then an index range. */
  datesAscending = true

  get size() {
    return this.createdAt.length
  }

  add(event: EventRecord, index: number) {
    const time = Date.parse(event.createdAt)
    if (index > 0 && time < this.createdAt[index - 1]) this.datesAscending = false
    this.createdAt.push(time)
    for (const name of COLUMN_NAMES) this[name].push(eventColumn(event, name), index)
  }

  /** The event index range `[from, to)` of the date bounds, when dates ascend with ids. */
  dateRange(query: EventQuery): [number, number] {
    if (!this.datesAscending) return [0, this.size]
    const from = query.from ? lowerBound(this.createdAt, Date.parse(query.from)) : 0
    const to = query.to ? upperBound(this.createdAt, Date.parse(query.to)) : this.size
    return [from, Math.max(from, to)]
  }
}

/** Merges ascending lists into one ascending list without repeats. */
export function mergeSorted(lists: Int32Array[]): Int32Array {
  const merged = new Int32Array(lists.reduce((n, list) => n + list.length, 0))
  let length = 0
  for (const list of lists) {
    merged.set(list, length)
    length += list.length
  }
  merged.sort()
  let unique = 0
  for (let i = 0; i < merged.length; i++) if (i === 0 || merged[i] !== merged[i - 1]) merged[unique++] = merged[i]
  return merged.subarray(0, unique)
}

/** The positions `[start, end)` of `sorted` whose values are in `[from, to)`. */
export function clip(sorted: ArrayLike<number>, from: number, to: number): [number, number] {
  return [lowerBound(sorted, from), lowerBound(sorted, to)]
}

function lowerBound(sorted: ArrayLike<number>, value: number): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (sorted[middle] < value) low = middle + 1
    else high = middle
  }
  return low
}

function upperBound(sorted: ArrayLike<number>, value: number): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (sorted[middle] <= value) low = middle + 1
    else high = middle
  }
  return low
}
