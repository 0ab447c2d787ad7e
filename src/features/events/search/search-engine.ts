/**
 * Events in memory as searches need them: a memory store's whole log, or a data directory's tail
 * (the events not yet in a segment, see segmented-search.ts). It runs inside the event-search
 * worker.
 *
 * Per event it holds the JSON line (returned as is, line-store.ts), the searchable text (data,
 * preData and tags as lower-cased JSON, block-texts.ts), and the structured columns with their
 * posting lists (columns.ts); free text is narrowed by the term index (term-index.ts). This file is
 * the planner: it walks the smallest posting list (or the blocks the term index proposes, or
 * everything), checks each candidate, and counts every match, so `total` is exact.
 */
import { eventOfLine } from '../../../storage/event-log'
import type { EventRecord } from '../../../storage/records'
import type { EventQuery } from '../event-query'
import { BLOCK, BlockTexts } from './block-texts'
import { clip, Columns, FILTER_COLUMNS, mergeSorted, type ColumnFilter } from './columns'
import { MemoryLines, type LineStore } from './line-store'
import { searchableText } from './searchable-text'
import { TermIndex } from './term-index'

export type SearchPlan = 'none' | 'index' | 'scan'

export interface SearchResult {
  total: number
  /** The page's events (their indexes, id - 1), newest first; `pageJson` makes the answer from them. */
  events: number[]
  /** How the text query was answered, for benchmarks and tests. */
  plan: SearchPlan
}

/** What a caller may see of the log: the events of these projects only (null: all), and none of these types. */
export interface EventVisibility {
  projects: readonly string[] | null
  hiddenTypes: readonly string[]
}

/** The positions in `[start, end)` of the candidates (`structured`, or every event when null) that `hidden` holds, ascending. */
function hiddenPositions(
  hidden: ColumnFilter,
  structured: ArrayLike<number> | null,
  start: number,
  end: number,
): number[] {
  const positions: number[] = []
  for (const i of mergeSorted(hidden.postings)) {
    const [position, after] = structured ? clip(structured, i, i + 1) : [i, i + 1]
    if (after > position && position >= start && position < end) positions.push(position)
  }
  return positions
}

export interface EngineOptions {
  /** A term in more events than this is common and not kept in the text index. */
  commonAfter?: number
  /** Where the JSON lines are kept (default: in memory). */
  lines?: LineStore
  /** How many events come before the first this engine holds (kept elsewhere: segments, see segment.ts). */
  base?: number
}

export class EventSearchEngine {
  private readonly lines: LineStore
  readonly texts = new BlockTexts()
  readonly columns = new Columns()
  private readonly terms: TermIndex
  readonly base: number

  constructor(options: EngineOptions = {}) {
    this.lines = options.lines ?? new MemoryLines()
    this.base = options.base ?? 0
    this.terms = new TermIndex(this.texts, options.commonAfter)
  }

  get size(): number {
    return this.lines.size
  }

  /** Whether the text index covers every event; until then text queries are answered by a scan. */
  get indexReady(): boolean {
    return this.terms.ready
  }

  /** Adds the next event (its id must be `base + size + 1`), given as its JSON line. */
  add(line: string, event: EventRecord = eventOfLine(line)): void {
    const index = this.lines.size
    if (event.id !== this.base + index + 1) throw new Error(`expected event ${this.base + index + 1}, got ${event.id}`)
    this.lines.add(line)
    this.texts.add(searchableText(event))
    this.columns.add(event, index)
    // Once the index has been built it is kept complete: new events are indexed at once.
    if (this.terms.ready) this.terms.step(Infinity)
  }

  /** Does about `budget` events of index work; true once the text index covers the log. */
  indexStep(budget: number): boolean {
    return this.terms.step(budget)
  }

  search(query: EventQuery, visibility: EventVisibility): SearchResult {
    const columns = this.columns
    const { projects: visibleProjects } = visibility
    // Events of types the caller may not read are left out of everything, the count included.
    const hiddenTypes = visibility.hiddenTypes.length > 0 ? columns.type.filter(visibility.hiddenTypes) : null
    const hides = hiddenTypes && hiddenTypes.size > 0 ? hiddenTypes : null
    const isHidden = (i: number) => hides?.ids.has(hides.values[i])
    const filters: ColumnFilter[] = []
    const idSet = query.id ? new Set(query.id.map(id => id - 1 - this.base)) : null
    for (const name of FILTER_COLUMNS) {
      const values = query[name]
      if (values) filters.push(columns[name].filter(values))
    }
    if (visibleProjects) filters.push(columns.project.filter(visibleProjects))
    let creator: { names: ColumnFilter; ids: ColumnFilter; size: number; postings: Int32Array[] } | null = null
    if (query.createdBy) {
      const names = columns.creatorName.filter(query.createdBy)
      const ids = columns.creatorId.filter(query.createdBy)
      creator = { names, ids, size: names.size + ids.size, postings: [...names.postings, ...ids.postings] }
    }
    const [from, to] = columns.dateRange(query)
    const timeBound = !columns.datesAscending && (query.from !== undefined || query.to !== undefined)
    const fromMs = query.from ? Date.parse(query.from) : -Infinity
    const toMs = query.to ? Date.parse(query.to) : Infinity
    const needle = query.query?.toLowerCase()
    // A needle with a newline could only match across two of the three JSON texts (see searchable-text.ts).
    if (needle?.includes('\n')) return { total: 0, events: [], plan: 'scan' }

    const matchesStructure = (i: number) => {
      if (i < from || i >= to) return false
      if (isHidden(i)) return false
      if (idSet && !idSet.has(i)) return false
      for (const filter of filters) if (!filter.ids.has(filter.values[i])) return false
      if (creator && !creator.names.ids.has(creator.names.values[i]) && !creator.ids.ids.has(creator.ids.values[i]))
        return false
      if (timeBound && (columns.createdAt[i] < fromMs || columns.createdAt[i] > toMs)) return false
      return true
    }

    // The structured candidates: the smallest posting list (or the given ids); null for all events.
    const lists: { size: number; postings: Int32Array[] }[] = [...filters]
    if (creator) lists.push(creator)
    let structured: ArrayLike<number> | null = null
    if (idSet) structured = [...idSet].filter(i => i >= 0 && i < this.lines.size).sort((a, b) => a - b)
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
        // Less the hidden events in it, which are few: the page is still found without walking the offset.
        const hidden = hides ? hiddenPositions(hides, structured, start, end) : []
        let k = end - 1
        let h = hidden.length - 1
        let skip = query.offset
        while (skip > 0 && k >= start) {
          while (h >= 0 && hidden[h] > k) h--
          const below = h >= 0 ? hidden[h] : start - 1
          // Every position in (below, k] is visible.
          if (skip < k - below) {
            k -= skip
            skip = 0
          } else {
            skip -= k - below
            k = below - 1
            h--
          }
        }
        for (; k >= start && events.length < query.limit; k--) {
          while (h >= 0 && hidden[h] > k) h--
          if (h >= 0 && hidden[h] === k) continue
          events.push(structured ? structured[k] : k)
        }
        return { total: Math.max(0, end - start) - hidden.length, events, plan: 'none' }
      }
      const [start, end] = structured ? clip(structured, from, to) : [from, to]
      for (let k = end - 1; k >= start; k--) {
        const i = structured ? structured[k] : k
        if (matchesStructure(i)) take(i)
      }
      return { total, events, plan: 'none' }
    }

    // Text: the blocks the index proposes (null: every block), plus the unindexed last events.
    const blocks = this.terms.candidates(needle)
    const plan: SearchPlan = blocks ? 'index' : 'scan'
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
      for (let b = blocks.length - 1; b >= 0; b--)
        if (blocks[b] >= firstBlock && blocks[b] <= lastBlock) scanBlock(blocks[b])
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
}
