/**
 * Words of the searchable text, as the text index splits them, and how a query's words must match
 * an event's words (see search-engine.ts).
 *
 * How a query string narrows: split it into word tokens as the index splits documents. A token
 * with separators on both sides must be a whole term of the event; the first token may be the end
 * of a term (unless the query starts with a separator), the last may be the start of one, and a
 * query that is a single token may sit anywhere inside a term. Every token must be matched.
 */

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
