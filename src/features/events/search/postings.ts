/**
 * Posting lists as a segment keeps them (segment.ts): per key (a term, a pair of words), its events
 * in ascending order, as 16-bit event numbers or, for a key in more than 1/16 of the events, as a
 * bitmap, whichever is smaller; so the union of many keys and its exact count cost at most a
 * bitmap's words however many events hold them.
 */

/**
 * The terms a query word may stand for: their numbers, or a test of a term by its number (for a
 * word standing for too many terms to list, see Segment.search).
 */
export type TermSet = readonly number[] | ((j: number) => boolean)

export function bitmapWords(count: number) {
  return (count + 31) >>> 5
}

/** A key in more than 1/16 of the events is kept as a bitmap: it is then the smaller form. */
export function isBitmap(events: number, count: number) {
  return events * 16 > count
}

export interface EncodedPostings {
  /** Per key, how many events hold it. */
  counts: Uint32Array
  /** Per key, where its list or bitmap starts in `postings` (in 16-bit units; a bitmap on a 32-bit boundary). */
  at: Uint32Array
  postings: Uint16Array
}

/** Encodes the keys' event lists (each ascending, without repeats) for a segment of `count` events. */
export function encodePostings(lists: readonly (readonly number[])[], count: number): EncodedPostings {
  const counts = new Uint32Array(lists.length)
  const at = new Uint32Array(lists.length)
  const words = bitmapWords(count)
  let units = 0
  lists.forEach((list, j) => {
    counts[j] = list.length
    if (isBitmap(list.length, count)) units += units & 1
    at[j] = units
    units += isBitmap(list.length, count) ? words * 2 : list.length
  })
  const postings = new Uint16Array(units + 2)
  lists.forEach((list, j) => {
    if (!isBitmap(list.length, count)) return postings.set(list, at[j])
    const bitmap = new Uint32Array(postings.buffer, at[j] * 2, words)
    for (const i of list) bitmap[i >>> 5] |= 1 << (i & 31)
  })
  return { counts, at, postings }
}

/** Encoded posting lists, read where they lie. */
export class PostingLists {
  private readonly words: number

  constructor(
    readonly counts: Uint32Array,
    readonly at: Uint32Array,
    readonly postings: Uint16Array,
    private readonly count: number,
  ) {
    this.words = bitmapWords(count)
  }

  /** Key `j`'s bitmap, or null when it is kept as a list. */
  bitmap(j: number): Uint32Array | null {
    if (!isBitmap(this.counts[j], this.count)) return null
    return new Uint32Array(this.postings.buffer, this.postings.byteOffset + this.at[j] * 2, this.words)
  }

  /** Adds key `j`'s events to `bitmap`. */
  or(j: number, bitmap: Uint32Array) {
    const words = this.bitmap(j)
    if (words !== null) {
      for (let w = 0; w < this.words; w++) bitmap[w] |= words[w]
      return
    }
    const postings = this.postings
    for (let k = this.at[j], end = k + this.counts[j]; k < end; k++)
      bitmap[postings[k] >>> 5] |= 1 << (postings[k] & 31)
  }
}
