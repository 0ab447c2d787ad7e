/**
 * A segment's terms: every term as UTF-8, each after a newline (and the last followed by one), and
 * where each starts; a term's number is its place. A query token is found among them with native
 * byte search for its pattern (see prepareText in segment.ts: a newline before it for a term's
 * start, after it for a term's end, both for a whole term).
 */
export interface TermToken {
  bytes: Buffer
  match: 'exact' | 'prefix' | 'suffix' | 'infix'
}

export class TermDictionary {
  constructor(
    private readonly text: Buffer,
    /** Where each term starts in `text`; the last entry is the text's length. */
    private readonly starts: Uint32Array,
  ) {}

  private get count(): number {
    return this.starts.length - 1
  }

  all(): string[] {
    return this.text.toString('utf8').split('\n').slice(1, -1)
  }

  /** The number of the term holding byte `position` (or starting there). */
  private termAt(position: number): number {
    let low = 0
    let high = this.count - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (this.starts[middle] <= position) low = middle
      else high = middle - 1
    }
    return low
  }

  /** The numbers of the terms the token may stand for. */
  find(token: TermToken): number[] {
    const terms: number[] = []
    for (let from = 0; ; ) {
      const position = this.text.indexOf(token.bytes, from)
      if (position === -1) return terms
      // Terms hold no newline: the match lies in one term (exact and prefix patterns start at the newline before it).
      const j = this.termAt(token.match === 'exact' || token.match === 'prefix' ? position + 1 : position)
      terms.push(j)
      if (token.match === 'exact' || j + 1 >= this.count) return terms
      from = this.starts[j + 1] - 1
    }
  }

  /** Whether term `j` is one the token may stand for (one `find` would list). */
  matches(j: number, token: TermToken): boolean {
    const { bytes, match } = token
    // From the newline before the term to the one after it.
    const before = this.starts[j] - 1
    const after = this.starts[j + 1] - 1
    if (match === 'infix') {
      const at = this.text.indexOf(bytes, before)
      return at !== -1 && at + bytes.length <= after
    }
    // The pattern's newlines pin it to the term's start or end, or both.
    const start = match === 'suffix' ? after + 1 - bytes.length : before
    if (start < before || start + bytes.length > after + 1) return false
    return this.text.compare(bytes, 0, bytes.length, start, start + bytes.length) === 0
  }
}
