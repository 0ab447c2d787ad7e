/**
 * A segment's word pairs: for each two words in a row in an event's text (event-tokens.ts,
 * `wordsAndGaps`) and the gap between them, the events holding them so. A query of several words
 * narrows to the events holding each of its adjacent pairs with the very gap between them, instead
 * of the events merely holding its words; for a query of two words and nothing outside them that
 * is exactly its answer, counted without looking at any event. The pairs are found from the first
 * word's terms: per term, its pairs sorted by gap, then second term.
 */
import { encodePostings, type PostingLists, type TermSet } from './postings'

/**
 * Collects the pairs of a segment's events as they are encoded (token-stream.ts): per first term,
 * (gap, second term, event) as one number, then sorted natively group by group (a map of millions
 * of pair keys took most of a segment's building).
 */
export class PairCollector {
  private firsts = new Int32Array(1 << 16)
  private rests = new Float64Array(1 << 16)
  private length = 0

  constructor(
    private readonly terms: number,
    private readonly gaps: number,
    private readonly events: number,
  ) {}

  /** Whether a pair and its event fit one number: a segment of very many terms and gaps keeps no pairs. */
  get possible(): boolean {
    return this.gaps * this.terms * this.events < 2 ** 53
  }

  /** Event `i`'s numbers as its stream holds them: gap, word, gap, …, word, gap. */
  add(i: number, numbers: ArrayLike<number>, length: number) {
    const pairs = (length - 1) / 2 - 1
    if (pairs <= 0) return
    if (this.length + pairs > this.firsts.length) {
      const size = Math.max(this.firsts.length * 2, this.length + pairs)
      const firsts = new Int32Array(size)
      const rests = new Float64Array(size)
      firsts.set(this.firsts)
      rests.set(this.rests)
      this.firsts = firsts
      this.rests = rests
    }
    for (let p = 1; p + 2 < length; p += 2) {
      this.firsts[this.length] = numbers[p]
      this.rests[this.length++] = (numbers[p + 1] * this.terms + numbers[p + 2]) * this.events + i
    }
  }

  /** The arrays a segment stores (in this order: pairStart, pairGap, pairSecond, pairCounts, pairAt, pairPostings). */
  encode(count: number): [string, ArrayBufferView][] {
    // Grouped by first term (a counting sort), each group sorted by gap, second term, event.
    const start = new Uint32Array(this.terms + 1)
    for (let n = 0; n < this.length; n++) start[this.firsts[n] + 1]++
    for (let j = 0; j < this.terms; j++) start[j + 1] += start[j]
    const sorted = new Float64Array(this.length)
    const next = start.slice(0, this.terms)
    for (let n = 0; n < this.length; n++) sorted[next[this.firsts[n]]++] = this.rests[n]
    const gap: number[] = []
    const second: number[] = []
    const lists: number[][] = []
    const pairStart = new Uint32Array(this.terms + 1)
    for (let j = 0; j < this.terms; j++) {
      const group = sorted.subarray(start[j], start[j + 1]).sort()
      let last = -1
      for (const rest of group) {
        const i = rest % this.events
        const key = (rest - i) / this.events
        if (key !== last) {
          last = key
          second.push(key % this.terms)
          gap.push((key - (key % this.terms)) / this.terms)
          lists.push([])
        }
        const list = lists[lists.length - 1]
        if (list[list.length - 1] !== i) list.push(i)
      }
      pairStart[j + 1] = lists.length
    }
    this.firsts = new Int32Array(0)
    this.rests = new Float64Array(0)
    const { counts, at, postings } = encodePostings(lists, count)
    return [
      ['pairStart', pairStart],
      ['pairGap', Uint32Array.from(gap)],
      ['pairSecond', Uint32Array.from(second)],
      ['pairCounts', counts],
      ['pairAt', at],
      ['pairPostings', postings],
    ]
  }
}

/** Second words a pair may end with, marked with the lookup's generation. */
let marks = new Int32Array(0)
let generation = 0

export class WordPairs {
  constructor(
    private readonly start: Uint32Array,
    private readonly gap: Uint32Array,
    private readonly second: Uint32Array,
    private readonly lists: PostingLists,
  ) {}

  /** Adds to `bitmap` the events holding a term of `firsts`, then gap `gap`, then a term of `seconds`; false when none does. */
  or(firsts: readonly number[], gap: number, seconds: TermSet, bitmap: Uint32Array): boolean {
    const terms = this.start.length - 1
    if (marks.length < terms) marks = new Int32Array(Math.max(terms, marks.length * 2))
    // Marks from a lookup long ago could pass for this one's once the generation wraps: cleared first.
    if (generation === 2 ** 30) {
      generation = 0
      marks.fill(0)
    }
    const mark = ++generation
    if (typeof seconds !== 'function') for (const j of seconds) marks[j] = mark
    const isSecond = typeof seconds === 'function' ? seconds : (j: number) => marks[j] === mark
    let any = false
    for (const first of firsts) {
      // This term's pairs, by gap then second term: the first of gap `gap`, then on while it lasts.
      let low = this.start[first]
      let high = this.start[first + 1]
      while (low < high) {
        const middle = (low + high) >>> 1
        if (this.gap[middle] < gap) low = middle + 1
        else high = middle
      }
      for (let n = low; n < this.start[first + 1] && this.gap[n] === gap; n++) {
        if (!isSecond(this.second[n])) continue
        this.lists.or(n, bitmap)
        any = true
      }
    }
    return any
  }
}
