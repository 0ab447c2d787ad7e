/**
 * The terms of every segment in one place: each distinct term once, with the segments holding it
 * and its number in each. A query word is looked up here once (a whole term in a map; the start,
 * end or inside of terms by native substring search over one newline-separated string of the
 * distinct terms, as term-index.ts does for the tail), instead of in each segment's own list, whose
 * terms largely repeat from one segment to the next: the lookup then costs the distinct terms, not
 * the segments times their terms.
 *
 * Built in the background from the segments' term lists (a segment not yet in it is looked up in its
 * own list, with the same answer), and kept in memory: it grows with the distinct terms, which grow
 * far slower than the events.
 */
import { IntList } from './columns'
import type { Segment } from './segment'
import { madeGarbage } from '../../../workers/garbage'

export class Vocabulary {
  /** Every term as UTF-8, each followed by a newline (and one before the first): searched with native byte search. */
  private bytes = Buffer.alloc(1 << 16, '\n')
  private used = 1
  private readonly ids = new Map<string, number>()
  /** Where each term starts in `text` (a term's id is its place here). */
  private readonly starts = new IntList()
  /** Per term, its first entry in the lists below; per entry, the segment, the term's number there and the next entry. */
  private readonly first = new IntList()
  private readonly entrySegment = new IntList()
  private readonly entryTerm = new IntList()
  private readonly entryNext = new IntList()
  /** Segments `[0, covered)` are in. */
  covered = 0

  /** Adds segment number `covered`. */
  add(segment: Segment): void {
    const index = this.covered++
    const terms = segment.terms()
    let made = 0
    terms.forEach((term, j) => {
      // A rough count of the garbage (workers/garbage.ts): each term string's length and its cell.
      made += term.length + 32
      let id = this.ids.get(term)
      if (id === undefined) {
        id = this.first.length
        this.ids.set(term, id)
        this.first.push(-1)
        this.append(term)
      }
      // Entries are prepended: a term's list runs from its newest segment to its oldest.
      this.entrySegment.push(index)
      this.entryTerm.push(j)
      this.entryNext.push(this.first.data[id])
      this.first.data[id] = this.entrySegment.length - 1
    })
    madeGarbage(made)
  }

  /** Appends a term and its newline to `bytes`, recording where it starts. */
  private append(term: string) {
    const encoded = Buffer.from(term + '\n')
    if (this.used + encoded.length > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(this.bytes.length * 2, this.used + encoded.length))
      this.bytes.copy(grown, 0, 0, this.used)
      this.bytes = grown
    }
    this.starts.push(this.used)
    this.used += encoded.copy(this.bytes, this.used)
  }

  /** The ids of the terms a token stands for: equal to it, starting with it, ending with it or holding it. */
  private matching(token: string, match: 'exact' | 'prefix' | 'suffix' | 'infix'): number[] {
    if (match === 'exact') {
      const id = this.ids.get(token)
      return id === undefined ? [] : [id]
    }
    const text = this.bytes.subarray(0, this.used)
    const pattern = Buffer.from(match === 'prefix' ? '\n' + token : match === 'suffix' ? token + '\n' : token)
    const found: number[] = []
    for (let from = 0; ; ) {
      const at = text.indexOf(pattern, from)
      if (at === -1) return found
      // Terms hold no newline, so the match lies in one term: the last that starts at or before it.
      const id = this.termAt(match === 'prefix' ? at + 1 : at)
      found.push(id)
      // On from the newline that ends it (a prefix pattern starts with one).
      from = id + 1 < this.starts.length ? this.starts.data[id + 1] - 1 : this.used
    }
  }

  /** The id of the term that holds byte `position` of `bytes`. */
  private termAt(position: number): number {
    const starts = this.starts.data
    let low = 0
    let high = this.starts.length - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (starts[middle] <= position) low = middle
      else high = middle - 1
    }
    return low
  }

  /**
   * Per covered segment, the numbers of the terms a token stands for there (a segment missing from
   * the map holds none); null when the token stands for more than `most` distinct terms.
   */
  termsBySegment(
    token: string,
    match: 'exact' | 'prefix' | 'suffix' | 'infix',
    most = Infinity,
  ): Map<number, number[]> | null {
    const bySegment = new Map<number, number[]>()
    const ids = this.matching(token, match)
    if (ids.length > most) return null
    for (const id of ids) {
      for (let entry = this.first.data[id]; entry !== -1; entry = this.entryNext.data[entry]) {
        const segment = this.entrySegment.data[entry]
        let terms = bySegment.get(segment)
        if (terms === undefined) bySegment.set(segment, (terms = []))
        terms.push(this.entryTerm.data[entry])
      }
    }
    return bySegment
  }
}
