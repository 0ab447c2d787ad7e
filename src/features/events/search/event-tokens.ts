/**
 * Words of the searchable text, as the text index splits them, and how a query's words must match
 * an event's words (see term-index.ts).
 *
 * How a query string narrows: split it into word tokens as the index splits documents. A token
 * with separators on both sides must be a whole term of the event; the first token may be the end
 * of a term (unless the query starts with a separator), the last may be the start of one, and a
 * query that is a single token may sit anywhere inside a term. Every token must be matched.
 */

/** Words are runs of letters, digits and combining marks; everything else separates. */
const WORD_CHARACTER = /[\p{L}\p{N}\p{M}]/u
const ASCII_WORD = new Uint8Array(128)
for (let code = 0; code < 128; code++) ASCII_WORD[code] = WORD_CHARACTER.test(String.fromCharCode(code)) ? 1 : 0

/** Whether the code point at `index` is a word character; ASCII is decided by a table (it is most text). */
function isWord(text: string, index: number, code: number): boolean {
  return code < 128 ? ASCII_WORD[code] === 1 : WORD_CHARACTER.test(String.fromCodePoint(text.codePointAt(index)!))
}

/** What separates words: one or more characters that are not word characters. */
export const WORD_SEPARATORS = /[^\p{L}\p{N}\p{M}]+/u

/** The words of `text`, in order (a native split: the index splits a block of 64 texts the same way). */
export function tokenize(text: string): string[] {
  const tokens = text.split(WORD_SEPARATORS)
  // A separator at either end leaves an empty piece there.
  if (tokens.length > 0 && tokens[tokens.length - 1] === '') tokens.pop()
  if (tokens.length > 0 && tokens[0] === '') tokens.shift()
  return tokens
}

/** Word runs, captured: splitting by them alternates gaps and words (see `wordsAndGaps`). */
const WORD_RUNS = /([\p{L}\p{N}\p{M}]+)/u

/**
 * A text as its gaps and words, alternating and starting and ending with a gap (empty where the text
 * starts or ends with a word): `[gap0, word1, gap1, …, wordN, gapN]`, whose concatenation is the text.
 * The words are those of `tokenize`; a gap is the whole run of separators between two words.
 */
export function wordsAndGaps(text: string): string[] {
  return text.split(WORD_RUNS)
}

export type TokenMatch = 'exact' | 'prefix' | 'suffix' | 'infix'

/** The tokens of a (lower-cased) query and how each must match an event's terms. */
export function queryTokens(query: string): { token: string; match: TokenMatch }[] {
  // A query holding half a surrogate pair may start or end inside a character of the text, where
  // word boundaries cannot be judged; it gets no tokens and so is answered by a scan. Whole pairs
  // (an emoji, a letter outside the first plane) are characters like any other.
  if (!query.isWellFormed()) return []
  const tokens = tokenize(query)
  if (tokens.length === 0) return []
  const openStart = isWord(query, 0, query.charCodeAt(0))
  // The last character starts a code unit early when it is a surrogate pair.
  const lastAt =
    query.length >= 2 && /[\uDC00-\uDFFF]/.test(query[query.length - 1]) ? query.length - 2 : query.length - 1
  const openEnd = isWord(query, lastAt, query.charCodeAt(lastAt))
  return tokens.map((token, index) => {
    const first = index === 0 && openStart
    const last = index === tokens.length - 1 && openEnd
    const match: TokenMatch = first && last ? 'infix' : first ? 'suffix' : last ? 'prefix' : 'exact'
    return { token, match }
  })
}
