/** A query as every segment answers it: the structured conditions and the text, prepared once for all segments. */
import { queryTokens, wordsAndGaps } from './event-tokens'
import type { SegmentColumn } from './segment-format'

/** One structured filter: events whose value in `column` is among `values`. */
export interface ColumnCondition {
  column: SegmentColumn | SegmentColumn[]
  values: readonly string[]
}

/** A query as every segment answers it (see EventSearchEngine.search for its meaning). */
export interface SegmentQuery {
  /** All must hold; a condition naming several columns holds when any of them does. */
  conditions: ColumnCondition[]
  hiddenTypes: readonly string[]
  /** Event ids, or null for any. */
  ids: ReadonlySet<number> | null
  fromMs: number
  toMs: number
  /** The lower-cased needle, or null for no text. */
  needle: string | null
}

/** A query's text, prepared once for every segment. */
export interface PreparedText {
  needle: string
  tokens: { token: string; bytes: Buffer; match: 'exact' | 'prefix' | 'suffix' | 'infix' }[]
  /** Whether the terms decide the match (one word, nothing else): no event need be checked. */
  decided: boolean
  /**
   * Whether the needle is made only of separators (whole characters, no word character): it then
   * lies inside one gap of a text, and the gaps' event lists decide it.
   */
  separators: boolean
  /** The needle's gaps around and between its tokens, as `wordsAndGaps` splits it (token-stream.ts). */
  gaps: string[]
}

export function prepareText(needle: string): PreparedText {
  const tokens = queryTokens(needle)
  const decided = tokens.length === 1 && tokens[0].token === needle
  const bytes = (token: string, match: string) =>
    Buffer.from(
      match === 'exact'
        ? `\n${token}\n`
        : match === 'prefix'
          ? `\n${token}`
          : match === 'suffix'
            ? `${token}\n`
            : token,
    )
  const gaps = wordsAndGaps(needle).filter((_, p) => p % 2 === 0)
  // Half a surrogate pair may be half of a word's character in the text: not a separator then.
  const separators = needle !== '' && gaps.length === 1 && needle.isWellFormed()
  return {
    needle,
    tokens: tokens.map(({ token, match }) => ({ token, bytes: bytes(token, match), match })),
    decided: decided || separators,
    gaps,
    separators,
  }
}
