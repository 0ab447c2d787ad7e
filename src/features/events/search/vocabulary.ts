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

export class Vocabulary {
  /** Every term, each followed by a newline (and one before the first). */
  private text = '\n'
  private readonly ids = new Map<string, number>()
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
    segment.terms().forEach((term, j) => {
      let id = this.ids.get(term)
      if (id === undefined) {
        id = this.first.length
        this.ids.set(term, id)
        this.first.push(-1)
        this.text += term + '\n'
      }
      // Entries are prepended: a term's list runs from its newest segment to its oldest.
      this.entrySegment.push(index)
      this.entryTerm.push(j)
      this.entryNext.push(this.first.data[id])
      this.first.data[id] = this.entrySegment.length - 1
    })
  }

  /** The ids of the terms a token stands for: equal to it, starting with it, ending with it or holding it. */
  private matching(token: string, match: 'exact' | 'prefix' | 'suffix' | 'infix'): number[] {
    if (match === 'exact') {
      const id = this.ids.get(token)
      return id === undefined ? [] : [id]
    }
    const text = this.text
    const pattern = match === 'prefix' ? '\n' + token : match === 'suffix' ? token + '\n' : token
    const found: number[] = []
    for (let from = 0; ; ) {
      const at = text.indexOf(pattern, from)
      if (at === -1) return found
      // Terms hold no newline, so the term around the match runs between the newlines about it.
      const start = match === 'prefix' ? at + 1 : text.lastIndexOf('\n', at - 1) + 1
      const end = text.indexOf('\n', match === 'prefix' ? at + 1 : at + token.length)
      found.push(this.ids.get(text.slice(start, end))!)
      from = end
    }
  }

  /** Per covered segment, the numbers of the terms a token stands for there (a segment missing from the map holds none). */
  termsBySegment(token: string, match: 'exact' | 'prefix' | 'suffix' | 'infix'): Map<number, number[]> {
    const bySegment = new Map<number, number[]>()
    for (const id of this.matching(token, match)) {
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
