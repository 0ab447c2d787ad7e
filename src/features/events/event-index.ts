/**
 * A MiniSearch index over the searchable text of events (data, preData and tags as lower-cased
 * JSON), used to narrow free-text searches. The index only proposes candidates; the caller's exact
 * substring check decides, so the answer is always what a scan would give.
 *
 * How a query string narrows: split it into word tokens as the index splits documents. A token
 * with separators on both sides must be a whole term of the event; the first token may be the end
 * of a term (unless the query starts with a separator), the last may be the start of one, and a
 * query that is a single token may sit anywhere inside a term. Every token must be matched.
 */
import MiniSearch from 'minisearch'
import type { EventRecord } from '../../storage/records'
import { searchableText } from './event-search'

/** Words are runs of letters, digits and combining marks; everything else separates. */
const SEPARATOR = /[^\p{L}\p{N}\p{M}]+/u
const WORD_CHARACTER = /[\p{L}\p{N}\p{M}]/u

export function tokenize(text: string): string[] {
  return text.split(SEPARATOR).filter((token) => token !== '')
}

type TokenMatch = 'exact' | 'prefix' | 'suffix' | 'infix'

/** The tokens of a (lower-cased) query and how each must match an event's terms. */
export function queryTokens(query: string): { token: string; match: TokenMatch }[] {
  const tokens = tokenize(query)
  if (tokens.length === 0) return []
  const openStart = WORD_CHARACTER.test(query[0])
  const openEnd = WORD_CHARACTER.test(query.at(-1)!)
  return tokens.map((token, index) => {
    const first = index === 0 && openStart
    const last = index === tokens.length - 1 && openEnd
    const match: TokenMatch = first && last ? 'infix' : first ? 'suffix' : last ? 'prefix' : 'exact'
    return { token, match }
  })
}

export class EventTextIndex {
  private readonly index = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    storeFields: [],
    tokenize,
    processTerm: (term) => term,
    searchOptions: { prefix: false, fuzzy: false, combineWith: 'OR' },
  })

  add(events: readonly EventRecord[]): void {
    this.index.addAll(events.map((event) => ({ id: event.id, text: searchableText(event) })))
  }

  /** Ids of events that may contain `query` (case-insensitive); null when the query cannot narrow. */
  candidates(query: string): Set<number> | null {
    const tokens = queryTokens(query.toLowerCase())
    if (tokens.length === 0) return null
    // Longer tokens first: they are usually rarer, so the intersection shrinks fast.
    const [first, ...rest] = tokens.sort((a, b) => b.token.length - a.token.length)
    let result = this.idsFor(first.token, first.match)
    for (const { token, match } of rest) {
      if (result.size === 0) break
      const ids = this.idsFor(token, match)
      result = new Set([...result].filter((id) => ids.has(id)))
    }
    return result
  }

  private idsFor(token: string, match: TokenMatch): Set<number> {
    if (match === 'exact' || match === 'prefix') {
      return new Set(this.index.search(token, { prefix: match === 'prefix' }).map((hit) => hit.id as number))
    }
    const terms: string[] = []
    for (const term of this.terms()) {
      if (match === 'suffix' ? term.endsWith(token) : term.includes(token)) terms.push(term)
    }
    if (terms.length === 0) return new Set()
    return new Set(this.index.search({ queries: terms, combineWith: 'OR' }).map((hit) => hit.id as number))
  }

  /** MiniSearch's term dictionary. It is not public API, but it is the index's own list of terms. */
  private terms(): Iterable<string> {
    return (this.index as unknown as { _index: { keys(): Iterable<string> } })._index.keys()
  }
}
