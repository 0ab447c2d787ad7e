/**
 * The free-text index: a MiniSearch index whose documents are the blocks of 64 events (see
 * block-texts.ts), each holding the block's rare terms, those found in at most `commonAfter` events.
 * A term's entry in MiniSearch lists the few blocks that hold it; a query token is looked up as the
 * whole terms it may stand for (one OR query per token), and MiniSearch answers with the blocks.
 *
 * Next to it, the vocabulary: how many events hold each term (what makes a term common, and also
 * says when a term is in no event at all) and every term in one newline-separated string, where a
 * token that may be the start, end or inside of terms is found with native substring search.
 * MiniSearch's radix tree could answer prefixes, but not ends or insides of terms, and a prefix of a
 * common term must be known to be common, so every partial token goes through that string.
 *
 * Built in steps after loading: every event's terms are counted, each block gathering the terms
 * still rare when it was counted; then the blocks go to MiniSearch without the terms that turned out
 * common. From then on each block is indexed as it fills, by the counts of that moment: a term that
 * becomes common later is no longer added (its earlier blocks stay, unused), and queries treat it as
 * common, so what MiniSearch holds for a rare term is always complete. The last, partial block is
 * not in MiniSearch: the planner scans it.
 */
import MiniSearch from 'minisearch'
import { queryTokens, tokenize } from './event-tokens'
import { BLOCK, type BlockTexts } from './block-texts'

export const COMMON_AFTER_DEFAULT = 100

interface TermCount {
  term: string
  /** Number of events holding the term. */
  events: number
  /** Index of the last event counted for it. */
  last: number
  /** The last block whose document got it. */
  block: number
}

export class TermIndex {
  private readonly counts = new Map<string, TermCount>()
  /** Every term, each followed by a newline (and one before the first). */
  private termText = '\n'
  /** Events `[0, counted)` are counted. */
  private counted = 0
  /** The terms of the block being counted that were rare when counted. */
  private blockTerms: TermCount[] = []
  /** The counted blocks waiting for MiniSearch while it is first built: their terms rare when counted. */
  private pending: { id: number; terms: TermCount[] }[] = []
  private built = false
  private readonly miniSearch = new MiniSearch<{ id: number; terms: string }>({
    fields: ['terms'],
    storeFields: [],
    // A document is its block's rare terms, already split into words and deduplicated by `count`
    // (a trailing space leaves an empty piece, dropped by processTerm).
    tokenize: terms => terms.split(' '),
    processTerm: term => term || null,
    searchOptions: {
      tokenize: term => [term],
      processTerm: term => term,
      prefix: false,
      fuzzy: false,
      combineWith: 'OR',
    },
  })

  constructor(
    private readonly texts: BlockTexts,
    private readonly commonAfter: number = COMMON_AFTER_DEFAULT,
  ) {}

  /** Whether MiniSearch covers every full block; until then text queries are answered by a scan. */
  get ready(): boolean {
    return this.built
  }

  /** Does about `budget` events of index work; returns true once MiniSearch covers every full block. */
  step(budget: number): boolean {
    let work = 0
    for (; this.counted < this.texts.size && work < budget; work++) {
      this.count(this.counted++)
      if (this.counted % BLOCK !== 0) continue
      const block = { id: this.counted / BLOCK - 1, terms: this.blockTerms }
      this.blockTerms = []
      if (this.built) this.miniSearch.add(this.document(block))
      else this.pending.push(block)
    }
    if (this.built || this.counted < this.texts.size) return this.built
    // A document stands for a block's 64 events of work.
    const blocks = this.pending.splice(0, Math.max(1, Math.ceil((budget - work) / BLOCK)))
    this.miniSearch.addAll(blocks.map(block => this.document(block)))
    if (this.pending.length === 0) this.built = true
    return this.built
  }

  /** A block's MiniSearch document: its terms that are (still) rare. */
  private document(block: { id: number; terms: TermCount[] }): { id: number; terms: string } {
    let terms = ''
    for (const entry of block.terms) if (entry.events <= this.commonAfter) terms += entry.term + ' '
    return { id: block.id, terms }
  }

  private count(index: number) {
    const block = Math.floor(index / BLOCK)
    for (const term of tokenize(this.texts.get(index))) {
      let entry = this.counts.get(term)
      if (!entry) {
        this.counts.set(term, (entry = { term, events: 0, last: -1, block: -1 }))
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
      const terms: string[] = []
      let common = false
      if (match === 'exact') {
        const count = this.counts.get(token)
        if (count === undefined) {
          // No event holds the term.
          narrowing.push(new Set())
          continue
        }
        if (count.events > this.commonAfter) common = true
        else terms.push(token)
      } else {
        for (const term of this.termsMatching(token, match)) {
          if (this.counts.get(term)!.events > this.commonAfter) {
            common = true
            break
          }
          terms.push(term)
        }
      }
      if (common) continue
      const blocks = new Set<number>()
      if (terms.length > 0)
        for (const hit of this.miniSearch.search({ queries: terms, combineWith: 'OR' })) blocks.add(hit.id as number)
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
