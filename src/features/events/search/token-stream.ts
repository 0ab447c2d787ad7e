/**
 * A segment's token streams: each event's searchable text as the numbers of its words and of the
 * gaps between them (event-tokens.ts, `wordsAndGaps`), from which the text could be written out
 * again. A query the words alone do not decide (several words, or a word with separators next to
 * it) is checked against these numbers instead of reading the event back from the log: the query's
 * inner words must be these very terms, its inner gaps these very separator runs, its first word
 * the end of a term and its last the start of one (or whole terms where the query has separators
 * outside them, which must then end the gap before and start the gap after), all in a row. That is
 * exactly "the lower-cased text holds the needle", decided from a few bytes per word.
 *
 * Encoding: per event, `gap0 word1 gap1 … wordN gapN`, each an unsigned LEB128 number; a word by
 * its term number in the segment, a gap by its place in the segment's list of gaps. Both are
 * numbered most frequent first, so nearly every number is one byte.
 */
import type { TermSet } from './postings'
import { PairCollector } from './word-pairs'

export interface EncodedStreams {
  /** The distinct gaps, most frequent first (the empty gap where a text starts or ends with a word). */
  gaps: string[]
  /** Where event `i`'s stream starts; `starts[count]` is the streams' length. */
  starts: Uint32Array
  stream: Uint8Array
  /** The word pairs' arrays (word-pairs.ts), or null when the segment has too many terms to keep them. */
  pairs: [string, ArrayBufferView][] | null
  /**
   * Per gap (by number), the events holding it, ascending: a needle made only of separators lies
   * inside one gap, so its events are the union of the lists of the gaps that hold it (Segment.search).
   */
  gapEvents: number[][]
}

/** Encodes the events' texts, each given as `wordsAndGaps` split it, with the terms numbered by `termNumber`. */
export function encodeStreams(
  events: readonly (readonly string[])[],
  termNumber: ReadonlyMap<string, number>,
): EncodedStreams {
  const gapCounts = new Map<string, number>()
  for (const pieces of events)
    for (let g = 0; g < pieces.length; g += 2) gapCounts.set(pieces[g], (gapCounts.get(pieces[g]) ?? 0) + 1)
  const gaps = [...gapCounts.keys()].sort((a, b) => gapCounts.get(b)! - gapCounts.get(a)!)
  const gapNumber = new Map(gaps.map((gap, n) => [gap, n]))
  const pairs = new PairCollector(termNumber.size, gaps.length, events.length)
  let numbers = new Int32Array(64)
  const gapEvents: number[][] = gaps.map(() => [])
  // The last event each gap was listed for: an event holding a gap twice is listed once.
  const listedFor = new Int32Array(gaps.length).fill(-1)
  const starts = new Uint32Array(events.length + 1)
  let stream = new Uint8Array(1 << 16)
  let length = 0
  const put = (value: number) => {
    if (length + 5 > stream.length) {
      const grown = new Uint8Array(stream.length * 2)
      grown.set(stream)
      stream = grown
    }
    while (value >= 0x80) {
      stream[length++] = (value & 0x7f) | 0x80
      value >>>= 7
    }
    stream[length++] = value
  }
  events.forEach((pieces, i) => {
    starts[i] = length
    if (numbers.length < pieces.length) numbers = new Int32Array(pieces.length * 2)
    for (let p = 0; p < pieces.length; p++)
      put((numbers[p] = p & 1 ? termNumber.get(pieces[p])! : gapNumber.get(pieces[p])!))
    for (let p = 0; p < pieces.length; p += 2) {
      const gap = numbers[p]
      if (listedFor[gap] === i) continue
      listedFor[gap] = i
      gapEvents[gap].push(i)
    }
    if (pairs.possible) pairs.add(i, numbers, pieces.length)
  })
  starts[events.length] = length
  return {
    gaps,
    starts,
    stream: stream.subarray(0, length),
    pairs: pairs.possible ? pairs.encode(events.length) : null,
    gapEvents,
  }
}

/** Per term number, whether the query's first and last words may stand for it: the search's generation if so, its negation if not (see `matcher`). */
let firstMark = new Int32Array(0)
let lastMark = new Int32Array(0)
let generation = 0
/** One event's decoded stream. */
let words = new Int32Array(256)
let gapsOf = new Int32Array(257)

export class TokenStreams {
  private gapNumbers: Map<string, number> | null = null

  constructor(
    private readonly gaps: readonly string[],
    private readonly starts: Uint32Array,
    private readonly stream: Uint8Array,
  ) {}

  /** The numbers of the gaps that hold `part` (a needle made only of separators). */
  gapsHolding(part: string): number[] {
    const found: number[] = []
    this.gaps.forEach((gap, n) => {
      if (gap.includes(part)) found.push(n)
    })
    return found
  }

  /** The number of a gap in this segment, if any text holds it. */
  gapNumber(gap: string): number | undefined {
    this.gapNumbers ??= new Map(this.gaps.map((text, n) => [text, n]))
    return this.gapNumbers.get(gap)
  }

  /**
   * Whether event `i`'s text holds the needle whose gaps are `needleGaps` (as `wordsAndGaps` splits
   * it: the outer two empty where the needle starts or ends inside a word) and whose words may be,
   * word by word, the terms `terms` (inner words: their one number), in a segment of `termCount`
   * terms. Null when no event of the segment can hold it. The check is valid until the next call
   * (it shares its marks with every segment).
   */
  matcher(
    needleGaps: readonly string[],
    terms: readonly TermSet[],
    termCount: number,
  ): ((i: number) => boolean) | null {
    const k = terms.length - 1
    // The inner gaps must be whole gaps of the text, the inner words whole terms: one number each.
    const innerGaps = new Int32Array(k)
    const innerWords = new Int32Array(k + 1)
    for (let m = 1; m <= k; m++) {
      const gap = this.gapNumber(needleGaps[m])
      if (gap === undefined) return null
      innerGaps[m - 1] = gap
      if (m < k) {
        const inner = terms[m]
        if (typeof inner === 'function' || inner.length !== 1) return null
        innerWords[m] = inner[0]
      }
    }
    const lead = this.outerGaps(needleGaps[0], (gap, part) => gap.endsWith(part))
    const trail = this.outerGaps(needleGaps[k + 1], (gap, part) => gap.startsWith(part))
    if (lead === false || trail === false) return null
    if (firstMark.length < termCount) {
      firstMark = new Int32Array(Math.max(termCount, firstMark.length * 2))
      lastMark = new Int32Array(firstMark.length)
    }
    // Marks from a search long ago could pass for this one's once the generation wraps: cleared first.
    if (generation === 2 ** 30) {
      generation = 0
      firstMark.fill(0)
      lastMark.fill(0)
    }
    const mark = ++generation
    const first = accepts(terms[0], firstMark, mark)
    const last = accepts(terms[k], lastMark, mark)
    const { starts, stream } = this

    return (i: number): boolean => {
      let at = starts[i]
      const end = starts[i + 1]
      // Each number takes a byte at least: the event has fewer words than bytes.
      if (words.length < end - at) {
        words = new Int32Array(end - at)
        gapsOf = new Int32Array(end - at + 1)
      }
      let n = 0
      let gap = true
      while (at < end) {
        let value = stream[at++]
        if (value & 0x80) {
          value &= 0x7f
          for (let shift = 7; ; shift += 7) {
            const byte = stream[at++]
            value |= (byte & 0x7f) << shift
            if (!(byte & 0x80)) break
          }
        }
        if (gap) gapsOf[n] = value
        else words[n++] = value
        gap = !gap
      }
      // Words p … p + k are the needle's, with gaps p … p + k + 1 around them.
      for (let p = 0; p + k < n; p++) {
        if (!first(words[p]) || !last(words[p + k])) continue
        if ((lead !== null && lead[gapsOf[p]] !== 1) || (trail !== null && trail[gapsOf[p + k + 1]] !== 1)) continue
        let m = 1
        while (m <= k && gapsOf[p + m] === innerGaps[m - 1] && (m === k || words[p + m] === innerWords[m])) m++
        if (m > k) return true
      }
      return false
    }
  }

  /**
   * The gaps an outer part of the needle may lie in (flags by gap number), null when the needle has
   * none there (it starts or ends inside a word), false when no gap of the segment fits.
   */
  private outerGaps(part: string, fits: (gap: string, part: string) => boolean): Uint8Array | null | false {
    if (part === '') return null
    const flags = new Uint8Array(this.gaps.length)
    let any = false
    this.gaps.forEach((gap, n) => {
      if (!fits(gap, part)) return
      flags[n] = 1
      any = true
    })
    return any ? flags : false
  }
}

/** A test of term numbers against `set`, through `marks` (a test's answers are kept there for the rest of the search). */
function accepts(set: TermSet, marks: Int32Array, mark: number): (j: number) => boolean {
  if (typeof set !== 'function') {
    for (const j of set) marks[j] = mark
    return j => marks[j] === mark
  }
  return j => {
    if (marks[j] === mark) return true
    if (marks[j] === -mark) return false
    const yes = set(j)
    marks[j] = yes ? mark : -mark
    return yes
  }
}
