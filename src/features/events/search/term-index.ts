/**
 * The free-text index of the tail: for each term found in at most `commonAfter` events (a rare
 * term), the blocks of 64 events (see block-texts.ts) that hold it, kept on the term's own count;
 * a query token is looked up as the whole terms it may stand for, and the union of their blocks
 * is what may hold it.
 *
 * Next to it, the vocabulary: how many events hold each term (what makes a term common, and also
 * says when a term is in no event at all) and every term in one newline-separated string, where a
 * token that may be the start, end or inside of terms is found with native substring search, so
 * every partial token goes through that string and a prefix of a common term is known to be common.
 *
 * Not a full-text library's index (MiniSearch, with a document per block): its radix tree holds a
 * Map per node, about 75,000 for 20,000 events of the benchmark's data and 60 MiB of resident
 * memory, where a term's blocks are all a query asks of it, at most `commonAfter` of them.
 *
 * Built in steps after loading: every event's terms are counted, each block gathering the terms
 * still rare when it was counted; then the blocks are indexed without the terms that turned out
 * common. From then on each block is indexed as it fills, by the counts of that moment: a term that
 * becomes common later is no longer added (its earlier blocks stay, unused), and queries treat it as
 * common, so what is held for a rare term is always complete. The last, partial block is not
 * indexed: the planner scans it.
 */
import { queryTokens, tokenize } from './event-tokens'
import { BLOCK, type BlockTexts } from './block-texts'

export const COMMON_AFTER_DEFAULT = 100

interface TermCount {
  term: string
  /** Number of events holding the term. */
  events: number
  /** Index of the last event counted for it. */
  last: number
  /** The last block that gathered it. */
  block: number
  /** The indexed blocks holding it while it was rare, ascending: none (-1), one, or several. */
  blocks: number | number[]
}

export class TermIndex {
  private readonly counts = new Map<string, TermCount>()
  /** Every term, each followed by a newline (and one before the first). */
  private termText = '\n'
  /** Events `[0, counted)` are counted. */
  private counted = 0
  /** The terms of the block being counted that were rare when counted. */
  private blockTerms: TermCount[] = []
  /** The counted blocks waiting to be indexed while the index is first built: their terms rare when counted. */
  private pending: { id: number; terms: TermCount[] }[] = []
  private built = false
  constructor(
    private readonly texts: BlockTexts,
    private readonly commonAfter: number = COMMON_AFTER_DEFAULT,
  ) {}

  /** Whether every full block is indexed; until then text queries are answered by a scan. */
  get ready(): boolean {
    return this.built
  }

  /** Does about `budget` events of index work; returns true once every full block is indexed. */
  step(budget: number): boolean {
    let work = 0
    for (; this.counted < this.texts.size && work < budget; work++) {
      this.count(this.counted++)
      if (this.counted % BLOCK !== 0) continue
      const block = { id: this.counted / BLOCK - 1, terms: this.blockTerms }
      this.blockTerms = []
      if (this.built) this.index(block)
      else this.pending.push(block)
    }
    if (this.built || this.counted < this.texts.size) return this.built
    // A block stands for its 64 events of work.
    const blocks = this.pending.splice(0, Math.max(1, Math.ceil((budget - work) / BLOCK)))
    for (const block of blocks) this.index(block)
    if (this.pending.length === 0) this.built = true
    return this.built
  }

  /** Indexes a block under its terms that are (still) rare; blocks come in ascending order. */
  private index(block: { id: number; terms: TermCount[] }) {
    for (const entry of block.terms) {
      if (entry.events > this.commonAfter) continue
      const held = entry.blocks
      if (held === -1) entry.blocks = block.id
      else if (typeof held === 'number') entry.blocks = [held, block.id]
      else held.push(block.id)
    }
  }

  private count(index: number) {
    const block = Math.floor(index / BLOCK)
    for (const term of tokenize(this.texts.get(index))) {
      let entry = this.counts.get(term)
      if (!entry) {
        this.counts.set(term, (entry = { term, events: 0, last: -1, block: -1, blocks: -1 }))
        this.termText += term + '\n'
      }
      if (entry.last === index) continue
      entry.last = index
      if (++entry.events > this.commonAfter || entry.block === block) continue
      entry.block = block
      this.blockTerms.push(entry)
    }
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
   * The indexed blocks (ascending) whose events may contain `needle`; null when the index cannot
   * narrow (not built yet, no word in the needle, or every token matches only through common
   * terms). Blocks past the indexed ones are never excluded: the caller scans them.
   */
  candidates(needle: string): number[] | null {
    if (!this.built) return null
    const narrowing: Set<number>[] = []
    for (const { token, match } of queryTokens(needle)) {
      const terms: TermCount[] = []
      let common = false
      if (match === 'exact') {
        const count = this.counts.get(token)
        if (count === undefined) {
          // No event holds the term.
          narrowing.push(new Set())
          continue
        }
        if (count.events > this.commonAfter) common = true
        else terms.push(count)
      } else {
        for (const term of this.termsMatching(token, match)) {
          const count = this.counts.get(term)!
          if (count.events > this.commonAfter) {
            common = true
            break
          }
          terms.push(count)
        }
      }
      if (common) continue
      const blocks = new Set<number>()
      for (const { blocks: held } of terms)
        if (typeof held !== 'number') for (const block of held) blocks.add(block)
        else if (held !== -1) blocks.add(held)
      narrowing.push(blocks)
    }
    if (narrowing.length === 0) return null
    narrowing.sort((a, b) => a.size - b.size)
    const [smallest, ...others] = narrowing
    const blocks: number[] = []
    for (const block of smallest) if (others.every(set => set.has(block))) blocks.push(block)
    return blocks.sort((a, b) => a - b)
  }
}
