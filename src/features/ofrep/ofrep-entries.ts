/**
 * Where OFREP's answers are put together (ofrep.answers.ts decides which entries go in them).
 *
 * OFREP's entries are kept as UTF-8, each with the comma that separates it from the one before, all
 * of a compiled scope's in one buffer (OfrepEntries), and a bulk answer (1,000 entries, 100 KB) is
 * copied together from them inside that buffer. Measured on the frontend benchmark's flags
 * (docs/ofrep.md): as text it cost a join, a copy for the encoding and twice the garbage per request;
 * as one Uint8Array per entry, copied into a new buffer per answer, the copying was a quarter of the
 * answer's CPU (each entry's object and bytes elsewhere in memory) and each answer's buffer was
 * pages the allocator gave back and faulted in again.
 */
export type Bytes = Uint8Array<ArrayBuffer>

/** A JSON answer of `bytes` (the Response copies them). */
export const json = (bytes: Bytes, headers: Record<string, string> = {}) =>
  new Response(bytes, { headers: { ...headers, 'content-type': 'application/json' } })

export const encoder = new TextEncoder()
/** The start and the plain end of a bulk answer (OfrepEntries.bulk copies it together). */
export const BULK_OPEN = encoder.encode('{"flags":[') as Bytes
export const BULK_END = encoder.encode(']}') as Bytes

/** An entry of a compiled scope: its place in the scope's OfrepEntries. */
export type EntryId = number

const SPACE = 0x20
/** Room kept for the end of a bulk answer (`],"eventStreams":[…]}`, with the service's base path); a longer end takes a copy. */
const END_ROOM = 1024

/**
 * Every OFREP entry a compiled scope can answer, in one buffer, and the place after them where bulk
 * answers are put together: there the answer's start and the entries no context changes (`fixed`)
 * are written once, and each answer copies its other entries after them, then its end. The bytes
 * of an answer never leave: `bulk` gives the `Response` made of them, which copies them before the
 * next answer is put together in the same place.
 */
export class OfrepEntries {
  private readonly texts: string[] = []
  private buffer = new Uint8Array(0) as Bytes
  private starts = new Int32Array(0)
  private ends = new Int32Array(0)
  /** Where the answers start, where their first entry starts, and where their fixed part ends. */
  private answerStart = 0
  private firstEntry = 0
  private fixedEnd = 0

  /** Adds an entry (its leading comma included) and gives its id; before `seal`. */
  add(text: string): EntryId {
    return this.texts.push(text) - 1
  }

  /** The ids added so far are 0 to count - 1. */
  get count(): number {
    return this.texts.length
  }

  /**
   * Lays the entries out, once all are added, with the fixed part of the answers, and room for one
   * entry (the longest) of each of the `varying` id ranges (a flag's entries: from, up to).
   */
  seal(fixed: readonly EntryId[], varying: readonly (readonly [EntryId, EntryId])[]): void {
    const texts = this.texts
    // One call into native code for all (a scope of 1,000 flags has about 10,000 entries); when
    // every entry is ASCII its bytes are its characters, else each entry's bytes are counted.
    const joined = texts.join('')
    const all = encoder.encode(joined)
    const ascii = all.length === joined.length
    this.starts = new Int32Array(texts.length)
    this.ends = new Int32Array(texts.length)
    let at = 0
    texts.forEach((text, id) => {
      this.starts[id] = at
      this.ends[id] = at += ascii ? text.length : Buffer.byteLength(text)
    })
    const length = (id: EntryId) => this.ends[id] - this.starts[id]
    const longest = ([from, upTo]: readonly [EntryId, EntryId]) => {
      let most = 0
      for (let id = from; id < upTo; id++) most = Math.max(most, length(id))
      return most
    }
    const room =
      fixed.reduce((sum, id) => sum + length(id), 0) + varying.reduce((sum, range) => sum + longest(range), 0)
    this.buffer = new Uint8Array(at + BULK_OPEN.length + room + END_ROOM) as Bytes
    this.buffer.set(all)
    this.answerStart = at
    this.buffer.set(BULK_OPEN, at)
    this.firstEntry = at += BULK_OPEN.length
    for (const id of fixed) this.buffer.copyWithin(at, this.starts[id], this.ends[id]), (at += length(id))
    this.fixedEnd = at
    this.texts.length = 0
  }

  /** One flag's answer: its entry without the comma, as a JSON response. */
  alone(id: EntryId): Response {
    return json(this.buffer.subarray(this.starts[id] + 1, this.ends[id]))
  }

  /** A bulk answer: the fixed entries, then those of `ids`, then `end`, as a JSON response with `headers`. */
  bulk(ids: Int32Array, end: Bytes, headers: Record<string, string>): Response {
    const buffer = this.buffer
    const starts = this.starts
    const ends = this.ends
    let at = this.fixedEnd
    for (let index = 0; index < ids.length; index++) {
      const id = ids[index]
      const start = starts[id]
      const stop = ends[id]
      buffer.copyWithin(at, start, stop)
      at += stop - start
    }
    // The first entry's comma becomes a space (JSON allows it).
    if (at > this.firstEntry) buffer[this.firstEntry] = SPACE
    if (at + end.length <= buffer.length) {
      buffer.set(end, at)
      return json(buffer.subarray(this.answerStart, at + end.length), headers)
    }
    return json(Bun.concatArrayBuffers([buffer.subarray(this.answerStart, at), end], Infinity, true) as Bytes, headers)
  }
}
