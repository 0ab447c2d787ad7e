/**
 * The event log as searches need it, built to answer `GET /api/admin/search/events` exactly and
 * fast on a million events. It runs inside the event-search worker (src/workers), one copy per
 * process.
 *
 * What it holds per event: the event's JSON line (returned as is), its searchable text (data,
 * preData and tags as lower-cased JSON, what `query` is matched against), and columns of dictionary
 * ids for type, project, flag, environment and creator, with a posting list (ascending event
 * indexes) per value. Structured filters are answered from the posting lists: a filtered page
 * walks only the events of the smallest list, a page of one list is a slice of it, and `total` is
 * exact.
 *
 * Free text: a MiniSearch index over the searchable text, made selective. A term found in more
 * than `commonAfter` (100) events is common: MiniSearch does not keep it, and a query token that can only
 * be matched through common terms is answered by a scan of the pre-lower-cased texts instead. Each
 * query token must match some term of an event (see `queryTokens`); a rare token's events, from
 * the index, are the candidates, and an exact substring check decides. The index is built in steps
 * after loading; until it covers the log, every text query is answered by the scan.
 */
import MiniSearch from 'minisearch'
import type { EventRecord } from '../../storage/records'
import { queryTokens, tokenize } from './event-tokens'
import type { EventQuery } from './event-query'
import { searchableText } from './searchable-text'

/** A growable array of 32-bit integers. */
class IntList {
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

  idOf(value: string | null): number {
    if (value === null) return 0
    let id = this.ids.get(value)
    if (id === undefined) {
      id = this.postings.length
      this.ids.set(value, id)
      this.postings.push(new IntList())
    }
    return id
  }

  find(value: string): number | undefined {
    return this.ids.get(value)
  }
}

/**
 * Where the engine keeps each event's JSON line: in memory, or (for the log file) only its byte
 * offset, reading the lines of a page back from the file: half the memory of the log.
 */
export interface LineStore {
  add(line: string): void
  get(index: number): string
  readonly size: number
}

export class MemoryLines implements LineStore {
  private readonly lines: string[] = []
  add(line: string) {
    this.lines.push(line)
  }
  get(index: number) {
    return this.lines[index]
  }
  get size() {
    return this.lines.length
  }
}

/** One structured filter: events whose column value is among `ids` (dictionary ids). */
interface ColumnFilter {
  column: IntList
  ids: Set<number>
  postings: Int32Array[]
  size: number
}

export interface SearchResult {
  total: number
  /** The page's events as JSON lines, newest first. */
  lines: string[]
  /** How the text query was answered, for benchmarks and tests. */
  plan: 'none' | 'index' | 'scan'
}

export interface EngineOptions {
  /** A term in more events than this is common and not kept in the text index. */
  commonAfter?: number
  /** Where the JSON lines are kept (default: in memory). */
  lines?: LineStore
}

export const COMMON_AFTER_DEFAULT = 100

const FILTER_COLUMNS = ['type', 'project', 'feature', 'environment'] as const

export class EventSearchEngine {
  private readonly lines: LineStore
  private readonly texts: string[] = []
  private readonly createdAt: number[] = []
  private datesAscending = true
  private readonly columns = {
    type: new IntList(),
    project: new IntList(),
    feature: new IntList(),
    environment: new IntList(),
    creatorName: new IntList(),
    creatorId: new IntList(),
  }
  private readonly dictionaries = {
    type: new Dictionary(),
    project: new Dictionary(),
    feature: new Dictionary(),
    environment: new Dictionary(),
    creatorName: new Dictionary(),
    creatorId: new Dictionary(),
  }

  /** Number of events each term appears in; counted for events `[0, counted)`. */
  private readonly documentFrequency = new Map<string, number>()
  private counted = 0
  /** Events `[0, indexed)` are in the text index. */
  private indexed = 0
  /** Set when the index first covers the log. */
  private built = false
  private readonly commonAfter: number
  private readonly textIndex: MiniSearch<{ id: number; text: string }>

  constructor(options: EngineOptions = {}) {
    this.commonAfter = options.commonAfter ?? COMMON_AFTER_DEFAULT
    this.lines = options.lines ?? new MemoryLines()
    this.textIndex = new MiniSearch({
      fields: ['text'],
      storeFields: [],
      tokenize,
      // Common terms are left out: they would cost memory and narrow nothing.
      processTerm: (term) => ((this.documentFrequency.get(term) ?? 0) > this.commonAfter ? null : term),
      searchOptions: { prefix: false, fuzzy: false, combineWith: 'OR' },
    })
  }

  get size(): number {
    return this.lines.size
  }

  /** Whether the text index covers every event; until then text queries are answered by a scan. */
  get indexReady(): boolean {
    return this.built && this.indexed === this.lines.size
  }

  /** Adds the next event (its id must be `size + 1`), given as its JSON line. */
  add(line: string, event: EventRecord = JSON.parse(line)): void {
    const index = this.lines.size
    if (event.id !== index + 1) throw new Error(`expected event ${index + 1}, got ${event.id}`)
    this.lines.add(line)
    this.texts.push(searchableText(event))
    const time = Date.parse(event.createdAt)
    if (index > 0 && time < this.createdAt[index - 1]) this.datesAscending = false
    this.createdAt.push(time)
    this.put('type', event.type, index)
    this.put('project', event.project, index)
    this.put('feature', event.featureName, index)
    this.put('environment', event.environment, index)
    this.put('creatorName', event.createdBy, index)
    this.put('creatorId', event.createdByUserId === null ? null : String(event.createdByUserId), index)
    // Once the index has been built it is kept complete: new events are counted and indexed at once.
    if (this.built) this.indexStep(Infinity)
  }

  private put(name: keyof EventSearchEngine['columns'], value: string | null, index: number) {
    const id = this.dictionaries[name].idOf(value)
    this.columns[name].push(id)
    this.dictionaries[name].postings[id].push(index)
  }

  /**
   * Does up to `budget` events of index work: first counting term frequencies over the whole log,
   * then indexing. Returns true once the index covers every event.
   */
  indexStep(budget: number): boolean {
    let work = 0
    while (this.counted < this.lines.size && work < budget) {
      for (const term of new Set(tokenize(this.texts[this.counted]))) {
        this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1)
      }
      this.counted++
      work++
    }
    if (this.counted < this.lines.size) return false
    const end = Math.min(this.lines.size, this.indexed + Math.max(0, budget - work))
    if (end > this.indexed) {
      const documents = []
      for (let i = this.indexed; i < end; i++) documents.push({ id: i, text: this.texts[i] })
      this.textIndex.addAll(documents)
      this.indexed = end
    }
    if (this.indexed === this.lines.size) this.built = true
    return this.indexReady
  }

  search(query: EventQuery, visibleProjects: readonly string[] | null): SearchResult {
    const filters: ColumnFilter[] = []
    const idSet = query.id ? new Set(query.id.map((id) => id - 1)) : null
    for (const name of FILTER_COLUMNS) {
      const values = query[name]
      if (values) filters.push(this.columnFilter(this.columns[name], this.dictionaries[name], values))
    }
    if (visibleProjects) filters.push(this.columnFilter(this.columns.project, this.dictionaries.project, visibleProjects))
    let creator: { names: Set<number>; ids: Set<number>; size: number; postings: Int32Array[] } | null = null
    if (query.createdBy) {
      const byName = this.columnFilter(this.columns.creatorName, this.dictionaries.creatorName, query.createdBy)
      const byId = this.columnFilter(this.columns.creatorId, this.dictionaries.creatorId, query.createdBy)
      creator = { names: byName.ids, ids: byId.ids, size: byName.size + byId.size, postings: [...byName.postings, ...byId.postings] }
    }
    const [from, to] = this.dateRange(query)
    const timeBound = !this.datesAscending && (query.from !== undefined || query.to !== undefined)
    const fromMs = query.from ? Date.parse(query.from) : -Infinity
    const toMs = query.to ? Date.parse(query.to) : Infinity
    const needle = query.query?.toLowerCase()
    // A needle with a newline could only match across two of the three JSON texts (see event-search.ts).
    if (needle?.includes('\n')) return { total: 0, lines: [], plan: 'scan' }

    const matchesStructure = (i: number) => {
      if (i < from || i >= to) return false
      if (idSet && !idSet.has(i)) return false
      for (const filter of filters) if (!filter.ids.has(filter.column.data[i])) return false
      if (creator && !creator.names.has(this.columns.creatorName.data[i]) && !creator.ids.has(this.columns.creatorId.data[i])) return false
      if (timeBound && (this.createdAt[i] < fromMs || this.createdAt[i] > toMs)) return false
      return true
    }

    // The candidates, newest first: from the text index when it narrows, else the smallest list.
    let plan: SearchResult['plan'] = needle ? 'scan' : 'none'
    let candidates: ArrayLike<number> | null = needle ? this.textCandidates(needle) : null
    if (candidates) plan = 'index'
    else {
      const lists: { size: number; postings: Int32Array[] }[] = [...filters]
      if (creator) lists.push(creator)
      if (idSet) candidates = [...idSet].filter((i) => i >= 0 && i < this.lines.size).sort((a, b) => a - b)
      else if (lists.length > 0) {
        const smallest = lists.reduce((a, b) => (b.size < a.size ? b : a))
        candidates = smallest.postings.length === 1 ? smallest.postings[0] : mergeSorted(smallest.postings)
      }
    }

    // The fast path: no text and a single source that is exactly the answer.
    const onlyList = !needle && !idSet && !timeBound && filters.length + (creator ? 1 : 0) <= 1
    if (onlyList) {
      const all = candidates ?? null
      const [start, end] = all ? clip(all, from, to) : [from, to]
      const total = Math.max(0, end - start)
      const lines: string[] = []
      for (let k = end - 1 - query.offset; k >= start && lines.length < query.limit; k--) {
        lines.push(this.lines.get(all ? all[k] : k))
      }
      return { total, lines, plan }
    }

    let total = 0
    const lines: string[] = []
    const visit = (i: number) => {
      if (!matchesStructure(i)) return
      if (needle !== undefined && !this.texts[i].includes(needle)) return
      if (total >= query.offset && lines.length < query.limit) lines.push(this.lines.get(i))
      total++
    }
    if (candidates) {
      const [start, end] = clip(candidates, from, to)
      for (let k = end - 1; k >= start; k--) visit(candidates[k])
    } else {
      for (let i = to - 1; i >= from; i--) visit(i)
    }
    return { total, lines, plan }
  }

  private columnFilter(column: IntList, dictionary: Dictionary, values: readonly string[]): ColumnFilter {
    const ids = new Set<number>()
    const postings: Int32Array[] = []
    let size = 0
    for (const value of values) {
      const id = dictionary.find(value)
      if (id === undefined || ids.has(id)) continue
      ids.add(id)
      const list = dictionary.postings[id].view()
      postings.push(list)
      size += list.length
    }
    return { column, ids, postings, size }
  }

  /** The event index range `[from, to)` of the date bounds, when dates ascend with ids. */
  private dateRange(query: EventQuery): [number, number] {
    if (!this.datesAscending) return [0, this.lines.size]
    const from = query.from ? lowerBound(this.createdAt, Date.parse(query.from)) : 0
    const to = query.to ? upperBound(this.createdAt, Date.parse(query.to)) : this.lines.size
    return [from, Math.max(from, to)]
  }

  /**
   * Event indexes (ascending) that may contain `needle`, from the text index; null when the index
   * cannot narrow (not built yet, no word in the needle, or every token matches a common term).
   */
  private textCandidates(needle: string): Int32Array | null {
    if (!this.indexReady) return null
    const narrowing: Set<number>[] = []
    for (const { token, match } of queryTokens(needle)) {
      const terms: string[] = []
      let common = false
      if (match === 'exact') {
        const frequency = this.documentFrequency.get(token)
        if (frequency === undefined) return new Int32Array(0)
        if (frequency > this.commonAfter) common = true
        else terms.push(token)
      } else {
        for (const [term, frequency] of this.documentFrequency) {
          const fits = match === 'prefix' ? term.startsWith(token) : match === 'suffix' ? term.endsWith(token) : term.includes(token)
          if (!fits) continue
          if (frequency > this.commonAfter) {
            common = true
            break
          }
          terms.push(term)
        }
      }
      if (common) continue
      const ids = new Set<number>()
      if (terms.length > 0) for (const hit of this.textIndex.search({ queries: terms, combineWith: 'OR' })) ids.add(hit.id as number)
      if (ids.size === 0) return new Int32Array(0)
      narrowing.push(ids)
    }
    if (narrowing.length === 0) return null
    narrowing.sort((a, b) => a.size - b.size)
    const [smallest, ...others] = narrowing
    const result: number[] = []
    for (const id of smallest) if (others.every((ids) => ids.has(id))) result.push(id)
    return Int32Array.from(result).sort()
  }
}

/** Merges ascending lists into one ascending list without repeats. */
function mergeSorted(lists: Int32Array[]): Int32Array {
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
function clip(sorted: ArrayLike<number>, from: number, to: number): [number, number] {
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
