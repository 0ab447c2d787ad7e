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
  /** The lines at `indexes`, in that order, between `prefix` and `suffix` and split by `separator`, as UTF-8. */
  join(indexes: readonly number[], prefix: string, separator: string, suffix: string): Uint8Array<ArrayBuffer>
  readonly size: number
}

export class MemoryLines implements LineStore {
  private readonly lines: string[] = []
  add(line: string) {
    this.lines.push(line)
  }
  join(indexes: readonly number[], prefix: string, separator: string, suffix: string): Uint8Array<ArrayBuffer> {
    return new TextEncoder().encode(prefix + indexes.map((i) => this.lines[i]).join(separator) + suffix)
  }
  get size() {
    return this.lines.length
  }
}

interface TermEntry {
  /** Number of events holding the term. */
  events: number
  /** Index of the last event counted for it. */
  last: number
  /** Blocks it appears in, ascending, without repeats; null once the term is common. */
  blocks: number[] | null
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
  /** The page's events (their indexes, id - 1), newest first; `pageJson` makes the answer from them. */
  events: number[]
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
/** Events per document of the text index. */
const BLOCK = 64

const FILTER_COLUMNS = ['type', 'project', 'feature', 'environment'] as const

/**
 * The searchable texts, a full block of 64 events joined into one string (by newlines, which no
 * JSON text holds and no needle may hold), the events of the last, partial block one string each.
 * A scan then finds matches with native substring search across a block instead of one call per
 * event, and the log costs one string per 64 events.
 */
class BlockTexts {
  private readonly blocks: string[] = []
  /** Start of each event's text within its block's string. */
  private readonly starts = new IntList()
  private tail: string[] = []

  get size() {
    return this.blocks.length * BLOCK + this.tail.length
  }

  get fullBlocks() {
    return this.blocks.length
  }

  add(text: string) {
    this.tail.push(text)
    if (this.tail.length < BLOCK) return
    let offset = 0
    for (const part of this.tail) {
      this.starts.push(offset)
      offset += part.length + 1
    }
    this.blocks.push(this.tail.join('\n'))
    this.tail = []
  }

  private end(index: number, block: string) {
    return (index + 1) % BLOCK === 0 ? block.length : this.starts.data[index + 1] - 1
  }

  get(index: number): string {
    const block = Math.floor(index / BLOCK)
    if (block === this.blocks.length) return this.tail[index - block * BLOCK]
    return this.blocks[block].slice(this.starts.data[index], this.end(index, this.blocks[block]))
  }

  contains(index: number, needle: string): boolean {
    const block = Math.floor(index / BLOCK)
    if (block === this.blocks.length) return this.tail[index - block * BLOCK].includes(needle)
    const text = this.blocks[block]
    const end = this.end(index, text)
    const at = text.indexOf(needle, this.starts.data[index])
    return at !== -1 && at + needle.length <= end
  }

  /** Appends to `out`, ascending, the events of full block `block` whose text contains `needle`. */
  matchesInBlock(block: number, needle: string, out: number[]) {
    const text = this.blocks[block]
    const last = (block + 1) * BLOCK - 1
    let event = block * BLOCK
    for (let at = text.indexOf(needle); at !== -1; ) {
      while (event < last && this.starts.data[event + 1] <= at) event++
      out.push(event)
      if (event === last) return
      at = text.indexOf(needle, this.starts.data[event + 1])
    }
  }
}

export class EventSearchEngine {
  private readonly lines: LineStore
  private readonly texts = new BlockTexts()
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

  /**
   * Every term of the counted events `[0, counted)`: how many events hold it, the last one counted,
   * and, while it is rare, the blocks it appears in (dropped once it becomes common).
   */
  private readonly terms = new Map<string, TermEntry>()
  /**
   * Every term, each followed by a newline (and one before the first): a query word that may sit
   * at the start, end or inside of terms is found with native substring search over this text
   * rather than a walk over the dictionary.
   */
  private termText = '\n'
  private counted = 0
  /** Blocks `[0, indexedBlocks)` are in the text index. */
  private indexedBlocks = 0
  /** Rare terms per block, gathered once counting is done; drained into MiniSearch in steps. */
  private pendingBlocks: { id: number; text: string }[] | null = null
  /** Set when the index first covers the log; from then on it is kept up to date as events come. */
  private built = false
  private readonly commonAfter: number
  private readonly textIndex = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    storeFields: [],
    tokenize: (text) => text.split(' '),
    processTerm: (term) => term,
    searchOptions: { prefix: false, fuzzy: false, combineWith: 'OR' },
  })

  constructor(options: EngineOptions = {}) {
    this.commonAfter = options.commonAfter ?? COMMON_AFTER_DEFAULT
    this.lines = options.lines ?? new MemoryLines()
  }

  get size(): number {
    return this.lines.size
  }

  /** Whether the text index covers every event; until then text queries are answered by a scan. */
  get indexReady(): boolean {
    return this.built
  }

  /** Adds the next event (its id must be `size + 1`), given as its JSON line. */
  add(line: string, event: EventRecord = JSON.parse(line)): void {
    const index = this.lines.size
    if (event.id !== index + 1) throw new Error(`expected event ${index + 1}, got ${event.id}`)
    this.lines.add(line)
    this.texts.add(searchableText(event))
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
   * Does about `budget` events of index work: first counting the terms of every event, then
   * handing the full blocks to MiniSearch. Returns true once the index covers every full block.
   */
  indexStep(budget: number): boolean {
    let work = 0
    while (this.counted < this.lines.size && work < budget) {
      this.count(this.counted++)
      work++
    }
    if (this.counted < this.lines.size) return false
    const fullBlocks = Math.floor(this.lines.size / BLOCK)
    if (this.built) {
      // Keeping up: index each block as it fills, from its events' rare terms.
      while (this.indexedBlocks < fullBlocks) this.textIndex.add({ id: this.indexedBlocks, text: this.rareTermsOf(this.indexedBlocks++) })
      return true
    }
    this.pendingBlocks ??= this.gatherBlocks(fullBlocks)
    const documents = this.pendingBlocks.splice(0, Math.max(1, Math.ceil((budget - work) / BLOCK)))
    if (documents.length > 0) this.textIndex.addAll(documents)
    this.indexedBlocks += documents.length
    if (this.pendingBlocks.length === 0) {
      this.pendingBlocks = null
      // Blocks that filled while the documents were being handed over.
      while (this.indexedBlocks < Math.floor(this.lines.size / BLOCK)) {
        this.textIndex.add({ id: this.indexedBlocks, text: this.rareTermsOf(this.indexedBlocks++) })
      }
      this.built = true
    }
    return this.built
  }

  private count(index: number) {
    const block = Math.floor(index / BLOCK)
    for (const term of tokenize(this.texts.get(index))) {
      let entry = this.terms.get(term)
      if (!entry) {
        this.terms.set(term, (entry = { events: 0, last: -1, blocks: [] }))
        this.termText += term + '\n'
      }
      if (entry.last === index) continue
      entry.last = index
      entry.events++
      if (entry.blocks === null) continue
      if (entry.events > this.commonAfter) entry.blocks = null
      else if (entry.blocks.at(-1) !== block) entry.blocks.push(block)
    }
  }

  /** The index's documents for blocks `[0, fullBlocks)`: each block's rare terms. */
  private gatherBlocks(fullBlocks: number): { id: number; text: string }[] {
    const termsOf: string[][] = Array.from({ length: fullBlocks }, () => [])
    for (const [term, entry] of this.terms) {
      if (entry.blocks === null) continue
      for (const block of entry.blocks) if (block < fullBlocks) termsOf[block].push(term)
    }
    return termsOf.map((terms, id) => ({ id, text: terms.join(' ') }))
  }

  private rareTermsOf(block: number): string {
    const rare = new Set<string>()
    for (let i = block * BLOCK; i < (block + 1) * BLOCK; i++) {
      for (const term of tokenize(this.texts.get(i))) if (this.terms.get(term)!.blocks !== null) rare.add(term)
    }
    return [...rare].join(' ')
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
    if (needle?.includes('\n')) return { total: 0, events: [], plan: 'scan' }

    const matchesStructure = (i: number) => {
      if (i < from || i >= to) return false
      if (idSet && !idSet.has(i)) return false
      for (const filter of filters) if (!filter.ids.has(filter.column.data[i])) return false
      if (creator && !creator.names.has(this.columns.creatorName.data[i]) && !creator.ids.has(this.columns.creatorId.data[i])) return false
      if (timeBound && (this.createdAt[i] < fromMs || this.createdAt[i] > toMs)) return false
      return true
    }

    // The structured candidates: the smallest posting list (or the given ids); null for all events.
    const lists: { size: number; postings: Int32Array[] }[] = [...filters]
    if (creator) lists.push(creator)
    let structured: ArrayLike<number> | null = null
    if (idSet) structured = [...idSet].filter((i) => i >= 0 && i < this.lines.size).sort((a, b) => a - b)
    else if (lists.length > 0) {
      const smallest = lists.reduce((a, b) => (b.size < a.size ? b : a))
      structured = smallest.postings.length === 1 ? smallest.postings[0] : mergeSorted(smallest.postings)
    }

    let total = 0
    const events: number[] = []
    const take = (i: number) => {
      if (total >= query.offset && events.length < query.limit) events.push(i)
      total++
    }

    if (needle === undefined) {
      // No text: when a single list (or none) is exactly the answer, a page is a slice of it.
      if (!idSet && !timeBound && filters.length + (creator ? 1 : 0) <= 1) {
        const [start, end] = structured ? clip(structured, from, to) : [from, to]
        for (let k = end - 1 - query.offset; k >= start && events.length < query.limit; k--) events.push(structured ? structured[k] : k)
        return { total: Math.max(0, end - start), events, plan: 'none' }
      }
      const [start, end] = structured ? clip(structured, from, to) : [from, to]
      for (let k = end - 1; k >= start; k--) {
        const i = structured ? structured[k] : k
        if (matchesStructure(i)) take(i)
      }
      return { total, events, plan: 'none' }
    }

    // Text: the blocks the index proposes (null: every block), plus the unindexed last events.
    const blocks = this.textCandidates(needle)
    const plan: SearchResult['plan'] = blocks ? 'index' : 'scan'
    const fullBlocks = this.texts.fullBlocks
    const blockEvents = (blocks ? blocks.length : fullBlocks) * BLOCK
    const [start, end] = structured ? clip(structured, from, to) : [from, to]
    if (structured && end - start <= blockEvents / 16) {
      // Few structured candidates: check each one's text.
      for (let k = end - 1; k >= start; k--) {
        const i = structured[k]
        if (matchesStructure(i) && this.texts.contains(i, needle)) take(i)
      }
      return { total, events, plan }
    }
    for (let i = Math.min(to, this.lines.size) - 1; i >= Math.max(from, fullBlocks * BLOCK); i--) {
      if (matchesStructure(i) && this.texts.contains(i, needle)) take(i)
    }
    const firstBlock = Math.floor(from / BLOCK)
    const lastBlock = Math.min(fullBlocks, Math.ceil(to / BLOCK)) - 1
    const matches: number[] = []
    const scanBlock = (block: number) => {
      matches.length = 0
      this.texts.matchesInBlock(block, needle, matches)
      for (let m = matches.length - 1; m >= 0; m--) if (matchesStructure(matches[m])) take(matches[m])
    }
    if (blocks) {
      for (let b = blocks.length - 1; b >= 0; b--) if (blocks[b] >= firstBlock && blocks[b] <= lastBlock) scanBlock(blocks[b])
    } else {
      for (let b = lastBlock; b >= firstBlock; b--) scanBlock(b)
    }
    return { total, events, plan }
  }

  /**
   * The search answer's JSON text, `{"events":[…],"total":N}`, as UTF-8: the page's lines go in as
   * they are in the log, so the HTTP thread only sends these bytes.
   */
  pageJson(result: SearchResult): Uint8Array<ArrayBuffer> {
    return this.lines.join(result.events, '{"events":[', ',', `],"total":${result.total}}`)
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

  /** Terms that start with (`prefix`), end with (`suffix`) or contain (`infix`) `token`, each once. */
  private *termsMatching(token: string, match: 'prefix' | 'suffix' | 'infix'): Iterable<string> {
    const text = this.termText
    const pattern = match === 'prefix' ? '\n' + token : match === 'suffix' ? token + '\n' : token
    for (let from = 0; ; ) {
      const at = text.indexOf(pattern, from)
      if (at === -1) return
      // Terms hold no newline, so the term around the match runs between the newlines about it.
      const start = match === 'prefix' ? at + 1 : text.lastIndexOf('\n', at - 1) + 1
      const end = text.indexOf('\n', match === 'prefix' ? at + 1 : at + token.length)
      yield text.slice(start, end)
      from = end
    }
  }

  /**
   * The indexed blocks (ascending) whose events may contain `needle`, from the text index; null
   * when the index cannot narrow (not built yet, no word in the needle, or every token matches
   * only through common terms). Events past the indexed blocks are never excluded.
   */
  private textCandidates(needle: string): number[] | null {
    if (!this.indexReady) return null
    const narrowing: Set<number>[] = []
    for (const { token, match } of queryTokens(needle)) {
      const terms: string[] = []
      let common = false
      if (match === 'exact') {
        const frequency = this.terms.get(token)?.events
        if (frequency === undefined) {
          // No event holds the term.
          narrowing.push(new Set())
          continue
        }
        if (frequency > this.commonAfter) common = true
        else terms.push(token)
      } else {
        for (const term of this.termsMatching(token, match)) {
          if (this.terms.get(term)!.events > this.commonAfter) {
            common = true
            break
          }
          terms.push(term)
        }
      }
      if (common) continue
      const blocks = new Set<number>()
      if (terms.length > 0) for (const hit of this.textIndex.search({ queries: terms, combineWith: 'OR' })) blocks.add(hit.id as number)
      narrowing.push(blocks)
    }
    if (narrowing.length === 0) return null
    narrowing.sort((a, b) => a.size - b.size)
    const [smallest, ...others] = narrowing
    const blocks: number[] = []
    for (const block of smallest) if (others.every((set) => set.has(block))) blocks.push(block)
    return blocks.sort((a, b) => a - b)
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
