/**
 * A segment: what search needs of a run of events, in one immutable, checksummed byte layout that
 * is used where it lies (a memory-mapped file, see segment-files.ts), so loading it reads nothing
 * per event. It is a cache keyed by event id: built from the events' JSON, their byte ranges in
 * `events.jsonl` and their searchable texts, whatever held them.
 *
 * Per event: its line's byte range in the log and its creation time. Per column (type, project,
 * flag, environment, creator name, creator id) the distinct values and, per value, its events.
 * Per term of the searchable texts, its events: a list of 16-bit event numbers, or a bitmap
 * when that is smaller (a term in more than 1/16 of the events), so the union of the terms a query
 * word may stand for, and its exact count, cost at most a bitmap's words however many events hold
 * them. A query is answered per segment as a bitmap of its matches, counted by popcount; only a
 * page's events are then looked up. A query of several words narrows to the events holding each
 * two of its words in a row with the very gap between them (word-pairs.ts), which for two words
 * and nothing outside them is the answer; whatever the bitmaps do not decide (more words,
 * separators outside the words) is checked per candidate against its token stream, the numbers of
 * its words and gaps (token-stream.ts), never reading the log. The byte layout and the building are
 * in segment-format.ts.
 */
import type { PreparedText, SegmentQuery } from './segment-query'
import { bitmapWords, PostingLists } from './postings'
import {
  HEADER,
  readHeader,
  SEGMENT_COLUMNS,
  SEGMENT_MAX_EVENTS,
  type Meta,
  type SegmentColumn,
} from './segment-format'
import { TokenStreams } from './token-stream'
import { TermDictionary } from './segment-terms'
import { WordPairs } from './word-pairs'

/** How a segment's candidates are checked when the needle has no word (the token streams can't tell): whether event `i`'s searchable text holds `needle`. */
export type TextCheck = (segment: Segment, i: number, needle: string) => boolean

export class Segment {
  readonly count: number
  readonly firstId: number
  private readonly bytes: Uint8Array
  private readonly meta: Meta
  readonly lineStart: Float64Array
  private readonly createdAt: Float64Array
  private readonly columnIds: Map<string | null, number>[]
  private readonly columnOffsets: Uint32Array[] = []
  private readonly columnPostings: Uint16Array[] = []
  private readonly dictionary: TermDictionary
  private readonly termLists: PostingLists
  private readonly gapLists: PostingLists
  private readonly words: number
  private readonly streams: TokenStreams
  /** Null in a segment of too many terms to keep them (see word-pairs.ts). */
  private readonly pairs: WordPairs | null

  /** Uses `bytes` as they are (checked by the caller, see `checkSegment`): nothing is copied. */
  constructor(bytes: Uint8Array) {
    const header = readHeader(bytes)!
    this.bytes = bytes
    this.count = header.count
    this.firstId = header.firstId
    const metaLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(28, true)
    this.meta = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + HEADER, metaLength).toString('utf8'))
    const { at, lengths } = this.meta
    const { buffer, byteOffset } = bytes
    const view = <T>(
      Type: { new (buffer: ArrayBufferLike, offset: number, length: number): T; BYTES_PER_ELEMENT: number },
      name: string,
    ) => new Type(buffer, byteOffset + at[name], lengths[name] / Type.BYTES_PER_ELEMENT)
    this.lineStart = new Float64Array(buffer, byteOffset + at.lineStart, this.count + 1)
    this.createdAt = new Float64Array(buffer, byteOffset + at.createdAt, this.count)
    this.columnIds = this.meta.dictionaries.map(values => new Map(values.map((value, id) => [value, id])))
    this.meta.dictionaries.forEach((values, c) => {
      this.columnOffsets.push(new Uint32Array(buffer, byteOffset + at[`columnOffsets${c}`], values.length + 1))
      this.columnPostings.push(new Uint16Array(buffer, byteOffset + at[`columnPostings${c}`], this.count))
    })
    const termStarts = new Uint32Array(buffer, byteOffset + at.termStarts, this.meta.termCount + 1)
    this.dictionary = new TermDictionary(
      Buffer.from(buffer, byteOffset + at.termText, termStarts[this.meta.termCount]),
      termStarts,
    )
    this.termLists = new PostingLists(
      view(Uint32Array, 'termCounts'),
      view(Uint32Array, 'termAt'),
      view(Uint16Array, 'termPostings'),
      this.count,
    )
    this.gapLists = new PostingLists(
      view(Uint32Array, 'gapCounts'),
      view(Uint32Array, 'gapAt'),
      view(Uint16Array, 'gapPostings'),
      this.count,
    )
    this.words = bitmapWords(this.count)
    this.streams = new TokenStreams(this.meta.gaps, view(Uint32Array, 'tokenStarts'), view(Uint8Array, 'tokenStream'))
    this.pairs = this.meta.pairs
      ? new WordPairs(
          view(Uint32Array, 'pairStart'),
          view(Uint32Array, 'pairGap'),
          view(Uint32Array, 'pairSecond'),
          new PostingLists(
            view(Uint32Array, 'pairCounts'),
            view(Uint32Array, 'pairAt'),
            view(Uint16Array, 'pairPostings'),
            this.count,
          ),
        )
      : null
  }

  get byteLength(): number {
    return this.bytes.byteLength
  }

  /** Where the log's bytes of this segment end. */
  get end(): number {
    return this.lineStart[this.count]
  }

  /** Line `i`'s byte range in the log, without its newline. */
  lineRange(i: number): [number, number] {
    return [this.lineStart[i], this.lineStart[i + 1] - 1]
  }

  private full(): Uint32Array {
    const bitmap = scratch(this.words).fill(0xffffffff)
    if (this.count & 31) bitmap[this.words - 1] = (1 << (this.count & 31)) - 1
    return bitmap
  }

  /** The events holding any of `values` in column `c` (null: the segment holds none). */
  private columnBitmap(
    columns: readonly SegmentColumn[],
    values: readonly string[],
    into: Uint32Array | null = null,
  ): Uint32Array | null {
    let bitmap = into
    for (const column of columns) {
      const c = SEGMENT_COLUMNS.indexOf(column)
      const offsets = this.columnOffsets[c]
      const postings = this.columnPostings[c]
      for (const value of values) {
        const id = this.columnIds[c].get(value)
        if (id === undefined) continue
        bitmap ??= scratch(this.words)
        for (let k = offsets[id]; k < offsets[id + 1]; k++) bitmap[postings[k] >>> 5] |= 1 << (postings[k] & 31)
      }
    }
    return bitmap
  }

  /** The terms, in the order of their numbers (for the vocabulary of every segment, vocabulary.ts). */
  terms(): string[] {
    return this.dictionary.all()
  }

  /** The events holding any of the terms numbered `terms` (null: none). */
  private termsBitmap(terms: readonly number[]): Uint32Array | null {
    if (terms.length === 0) return null
    const bitmap = scratch(this.words)
    for (const j of terms) this.termLists.or(j, bitmap)
    return bitmap
  }

  /**
   * The number of the query's matches in this segment, and those among them at `offset` and after
   * (newest first, at most `limit`), as event indexes (id - 1).
   */
  search(
    query: SegmentQuery,
    text: PreparedText | null,
    offset: number,
    limit: number,
    textCheck: TextCheck,
    /**
     * Per query token, the numbers of the terms it stands for here, when the vocabulary knows them
     * (null: look them up); 'many' for the last of several words standing for too many terms to
     * list: each term the pairs and the streams meet is then tested by its text.
     */
    tokenTerms: readonly (readonly number[] | 'many' | null)[] | null = null,
  ): { total: number; events: number[] } {
    const none = { total: 0, events: [] }
    // The bitmaps of the last segment's search are done with.
    scratchUsed = 0
    if (query.fromMs > this.meta.maxTime || query.toMs < this.meta.minTime) return none
    const timeBound = query.fromMs > this.meta.minTime || query.toMs < this.meta.maxTime
    const textOnly =
      query.conditions.length === 0 &&
      query.ids === null &&
      !timeBound &&
      !query.hiddenTypes.some(type => this.columnIds[0].has(type))
    // One word standing for one term here, and nothing else: the term's events are the answer, counted already.
    const only = tokenTerms?.[0]
    if (text?.decided && !text.separators && Array.isArray(only) && only.length === 1 && textOnly)
      return this.listPage(this.termLists, only![0], offset, limit)
    // Separators only: the gaps holding them. One gap, or one in every event, is the answer as it stands.
    const gaps = text?.separators ? this.streams.gapsHolding(text.needle) : null
    if (gaps !== null && gaps.length === 0) return none
    const everyEvent = gaps?.some(gap => this.gapLists.counts[gap] === this.count)
    if (gaps !== null && textOnly && (everyEvent || gaps.length === 1)) {
      return everyEvent ? this.listPage(null, 0, offset, limit) : this.listPage(this.gapLists, gaps[0], offset, limit)
    }
    // One column's values and nothing else: an event has one value, so the lists are disjoint and
    // their lengths add up to the count; the page is a slice of the one list holding it.
    const single =
      query.conditions.length === 1 && !Array.isArray(query.conditions[0].column) ? query.conditions[0] : null
    if (
      single &&
      text === null &&
      query.ids === null &&
      !timeBound &&
      !query.hiddenTypes.some(type => this.columnIds[0].has(type))
    ) {
      const c = SEGMENT_COLUMNS.indexOf(single.column as SegmentColumn)
      const offsets = this.columnOffsets[c]
      const ids = [...new Set(single.values.map(value => this.columnIds[c].get(value)).filter(id => id !== undefined))]
      let total = 0
      for (const id of ids) total += offsets[id + 1] - offsets[id]
      if (offset >= total || limit <= 0) return { total, events: [] }
      if (ids.length === 1) {
        const events: number[] = []
        const postings = this.columnPostings[c]
        for (let k = offsets[ids[0] + 1] - 1 - offset; k >= offsets[ids[0]] && events.length < limit; k--)
          events.push(this.firstId - 1 + postings[k])
        return { total, events }
      }
    }
    let bitmap: Uint32Array | null = null
    const and = (other: Uint32Array) => {
      if (bitmap === null) bitmap = other
      else for (let w = 0; w < this.words; w++) bitmap[w] &= other[w]
    }
    for (const condition of query.conditions) {
      const columns = Array.isArray(condition.column) ? condition.column : [condition.column]
      const matching = this.columnBitmap(columns, condition.values)
      if (matching === null) return none
      and(matching)
    }
    let phrase: ((i: number) => boolean) | null = null
    // Whether the bitmaps decide the text: one word alone, or two words and the gap between them alone.
    let decided = text === null || text.decided
    if (gaps !== null && !everyEvent) {
      const matching = scratch(this.words)
      for (const gap of gaps) this.gapLists.or(gap, matching)
      and(matching)
    } else if (text && !text.separators) {
      const { tokens } = text
      const known = tokens.map((token, k) => tokenTerms?.[k] ?? this.dictionary.find(token))
      if (known.some(list => list !== 'many' && list.length === 0)) return none
      const list = (k: number) =>
        (known[k] === 'many' ? (known[k] = this.dictionary.find(tokens[k])) : known[k]) as readonly number[]
      const set = (k: number) => (known[k] === 'many' ? (j: number) => this.dictionary.matches(j, tokens[k]) : list(k))
      if (this.pairs && tokens.length > 1) {
        for (let k = 0; k + 1 < tokens.length; k++) {
          const gap = this.streams.gapNumber(text.gaps[k + 1])
          const matching = scratch(this.words)
          if (gap === undefined || !this.pairs.or(list(k), gap, set(k + 1), matching)) return none
          and(matching)
        }
        decided = tokens.length === 2 && text.gaps[0] === '' && text.gaps[2] === ''
      } else {
        for (let k = 0; k < tokens.length; k++) {
          const matching = this.termsBitmap(list(k))
          if (matching === null) return none
          and(matching)
        }
      }
      if (!decided && tokens.length > 0) {
        phrase = this.streams.matcher(
          text.gaps,
          tokens.map((_, k) => (k === 0 || k === tokens.length - 1 ? set(k) : list(k))),
          this.meta.termCount,
        )
        if (phrase === null) return none
      }
    }
    if (query.hiddenTypes.length > 0) {
      const hidden = this.columnBitmap(['type'], query.hiddenTypes)
      if (hidden !== null) {
        const kept: Uint32Array = bitmap ?? this.full()
        for (let w = 0; w < this.words; w++) kept[w] &= ~hidden[w]
        bitmap = kept
      }
    }
    if (query.ids !== null) {
      const ids = scratch(this.words)
      for (const id of query.ids) {
        const i = id - this.firstId
        if (i >= 0 && i < this.count) ids[i >>> 5] |= 1 << (i & 31)
      }
      and(ids)
    }
    const check = (i: number) =>
      (!timeBound || (this.createdAt[i] >= query.fromMs && this.createdAt[i] <= query.toMs)) &&
      (decided || (phrase ? phrase(i) : textCheck(this, i, text!.needle)))

    const events: number[] = []
    if (bitmap === null && !timeBound && decided) {
      // Every event matches: the page is a range.
      for (let i = this.count - 1 - offset; i >= 0 && events.length < limit; i--) events.push(this.firstId - 1 + i)
      return { total: this.count, events }
    }
    const matches: Uint32Array = bitmap ?? this.full()
    if (!timeBound && decided) {
      let total = 0
      for (let w = 0; w < this.words; w++) total += popcount(matches[w])
      if (offset < total && limit > 0) this.walk(matches, () => true, offset, limit, events, true)
      return { total, events }
    }
    // Each candidate must be checked: every one is, to count them.
    const total = this.walk(matches, check, offset, limit, events)
    return { total, events }
  }

  /** The events of key `j` of `lists` (every event for null): how many, and those at `offset` and after (newest first, at most `limit`). */
  private listPage(
    lists: PostingLists | null,
    j: number,
    offset: number,
    limit: number,
  ): { total: number; events: number[] } {
    const events: number[] = []
    if (lists === null) {
      for (let i = this.count - 1 - offset; i >= 0 && events.length < limit; i--) events.push(this.firstId - 1 + i)
      return { total: this.count, events }
    }
    const { counts, at, postings } = lists
    const total = counts[j]
    if (offset >= total || limit <= 0) return { total, events }
    const bitmap = lists.bitmap(j)
    if (bitmap !== null) this.walk(bitmap, () => true, offset, limit, events, true)
    else
      for (let k = at[j] + total - 1 - offset; k >= at[j] && events.length < limit; k--)
        events.push(this.firstId - 1 + postings[k])
    return { total, events }
  }

  /** Walks the set bits newest first, counting those `keep` holds and paging them; returns the count. */
  private walk(
    bitmap: Uint32Array,
    keep: (i: number) => boolean,
    offset: number,
    limit: number,
    events: number[],
    pageOnly = false,
  ): number {
    let total = 0
    // Whole words before the page are only counted.
    let w = this.words - 1
    if (pageOnly) {
      for (let skipped = popcount(bitmap[w]); w > 0 && total + skipped <= offset; skipped = popcount(bitmap[w])) {
        total += skipped
        w--
      }
    }
    for (; w >= 0; w--) {
      let word = bitmap[w]
      while (word !== 0) {
        const bit = 31 - Math.clz32(word)
        word &= ~(1 << bit)
        const i = (w << 5) | bit
        if (!keep(i)) continue
        if (total >= offset && events.length < limit) events.push(this.firstId - 1 + i)
        total++
        if (pageOnly && events.length === limit) return total
      }
    }
    return total
  }
}

/**
 * Bitmaps for one segment's search, reused by the next: a query over a hundred segments would
 * otherwise allocate a megabyte of them, which the garbage collector, not counting memory outside
 * its heap, let pile up under load (measured: RSS past 2 GB with 32 connections on 10M events).
 */
const scratchPool: Uint32Array[] = []
let scratchUsed = 0

/** A zeroed bitmap of `words` words, valid until the next segment's search starts. */
function scratch(words: number): Uint32Array {
  if (scratchUsed === scratchPool.length) scratchPool.push(new Uint32Array(SEGMENT_MAX_EVENTS / 32))
  return scratchPool[scratchUsed++].subarray(0, words).fill(0)
}

function popcount(word: number): number {
  word -= (word >>> 1) & 0x55555555
  word = (word & 0x33333333) + ((word >>> 2) & 0x33333333)
  return (((word + (word >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}
