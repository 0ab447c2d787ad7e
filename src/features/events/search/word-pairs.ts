/**
 * A segment's word pairs: for each two words in a row in an event's text (event-tokens.ts,
 * `wordsAndGaps`) and the gap between them, the events holding them so. A query of several words
 * narrows to the events holding each of its adjacent pairs with the very gap between them, instead
 * of the events merely holding its words; for a query of two words and nothing outside them that
 * is exactly its answer, counted without looking at any event. The pairs are found from the first
 * word's terms: per term, its pairs sorted by gap, then second term.
 */
import { encodePostings, PostingLists, type TermSet } from './postings'

/** Collects the pairs of a segment's events as they are encoded (token-stream.ts). */
export class PairCollector {
  private readonly lists = new Map<number, number[]>()

  constructor(
    private readonly terms: number,
    private readonly gaps: number,
  ) {}

  /** Whether pairs fit a number key (`first`, `gap`, `second`): a segment of very many terms keeps none. */
  get possible(): boolean {
    return this.terms * this.terms * Math.max(1, this.gaps) < 2 ** 53
  }

  /** Event `i`'s numbers as its stream holds them: gap, word, gap, …, word, gap. */
  add(i: number, numbers: ArrayLike<number>, length: number) {
    for (let p = 1; p + 2 < length; p += 2) {
      const key = (numbers[p] * this.gaps + numbers[p + 1]) * this.terms + numbers[p + 2]
      let list = this.lists.get(key)
      if (list === undefined) this.lists.set(key, (list = []))
      if (list[list.length - 1] !== i) list.push(i)
    }
  }

  /** The arrays a segment stores (in this order: pairStart, pairGap, pairSecond, pairCounts, pairAt, pairPostings). */
  encode(count: number): [string, ArrayBufferView][] {
    const keys = [...this.lists.keys()].sort((a, b) => a - b)
    const start = new Uint32Array(this.terms + 1)
    const gap = new Uint32Array(keys.length)
    const second = new Uint32Array(keys.length)
    keys.forEach((key, n) => {
      second[n] = key % this.terms
      const rest = (key - second[n]) / this.terms
      gap[n] = rest % this.gaps
      start[(rest - gap[n]) / this.gaps + 1]++
    })
    for (let j = 0; j < this.terms; j++) start[j + 1] += start[j]
    const { counts, at, postings } = encodePostings(keys.map((key) => this.lists.get(key)!), count)
    this.lists.clear()
    return [
      ['pairStart', start],
      ['pairGap', gap],
      ['pairSecond', second],
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
