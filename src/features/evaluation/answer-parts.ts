/**
 * Where the protocols put their answers together from parts made once per compiled scope (each
 * protocol decides which parts an answer holds: ofrep.answers.ts, frontend.answers.ts).
 *
 * The parts are kept as UTF-8, each with the comma that separates it from the one before, all of a
 * compiled scope's in one buffer (AnswerParts), and an answer (1,000 parts, 100 KB) is copied
 * together from them inside that buffer. Measured on the frontend benchmark's flags
 * (docs/ofrep.md): as text it cost a join, a copy for the encoding and twice the garbage per request;
 * as one Uint8Array per part, copied into a new buffer per answer, the copying was a quarter of the
 * answer's CPU (each part's object and bytes elsewhere in memory) and each answer's buffer was
 * pages the allocator gave back and faulted in again.
 */
export type Bytes = Uint8Array<ArrayBuffer>

export const encoder = new TextEncoder()

/** A part of a compiled scope's answers: its place in the scope's AnswerParts. */
export type PartId = number

const SPACE = 0x20
/** Room kept for the end of an answer (a list's end and further members); a longer end takes a copy. */
const END_ROOM = 1024

/**
 * Every part a compiled scope's answers can hold, in one buffer, and the place after them where
 * answers are put together: there the answer's start (`open`, ending with the list's `[`) and the
 * parts no context changes (`fixed`) are written once, and each answer copies its other parts after
 * them, then its end. The first part's comma becomes a space (`first: 'space'`) or goes (`'drop'`:
 * the start moves up by one byte onto it). The bytes of an answer are valid until the next answer
 * is put together: a protocol makes its Response of them (which copies them) at once.
 */
export class AnswerParts {
  private readonly texts: string[] = []
  private buffer = new Uint8Array(0) as Bytes
  private starts = new Int32Array(0)
  private ends = new Int32Array(0)
  private readonly open: Bytes
  /** Where the answers start, where their first part starts, and where their fixed part ends. */
  private answerStart = 0
  private firstPart = 0
  private fixedEnd = 0

  constructor(
    open: string,
    private readonly first: 'space' | 'drop',
  ) {
    this.open = encoder.encode(open) as Bytes
  }

  /** Adds a part (its leading comma included) and gives its id; before `seal`. */
  add(text: string): PartId {
    return this.texts.push(text) - 1
  }

  /** The ids added so far are 0 to count - 1. */
  get count(): number {
    return this.texts.length
  }

  /**
   * Lays the parts out, once all are added, with the fixed part of the answers, and room for one
   * part (the longest) of each of the `varying` id ranges (a flag's parts: from, up to).
   */
  seal(fixed: readonly PartId[], varying: readonly (readonly [PartId, PartId])[]): void {
    const texts = this.texts
    // One call into native code for all (a scope of 1,000 flags has about 10,000 parts); when
    // every part is ASCII its bytes are its characters, else each part's bytes are counted.
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
    const length = (id: PartId) => this.ends[id] - this.starts[id]
    const longest = ([from, upTo]: readonly [PartId, PartId]) => {
      let most = 0
      for (let id = from; id < upTo; id++) most = Math.max(most, length(id))
      return most
    }
    const room =
      fixed.reduce((sum, id) => sum + length(id), 0) + varying.reduce((sum, range) => sum + longest(range), 0)
    // One spare byte before the start, where a `drop` answer's start begins.
    this.buffer = new Uint8Array(at + 1 + this.open.length + room + END_ROOM) as Bytes
    this.buffer.set(all)
    this.answerStart = at += 1
    this.buffer.set(this.open, at)
    this.firstPart = at += this.open.length
    for (const id of fixed) this.buffer.copyWithin(at, this.starts[id], this.ends[id]), (at += length(id))
    this.fixedEnd = at
    this.texts.length = 0
  }

  /** One part alone, without its comma. */
  alone(id: PartId): Bytes {
    return this.buffer.subarray(this.starts[id] + 1, this.ends[id])
  }

  /** An answer: the start, the fixed parts, then the first `count` of `ids`, then `end`. */
  join(ids: Int32Array, count: number, end: Bytes): Bytes {
    const buffer = this.buffer
    const starts = this.starts
    const ends = this.ends
    let at = this.fixedEnd
    for (let index = 0; index < count; index++) {
      const id = ids[index]
      const start = starts[id]
      const stop = ends[id]
      buffer.copyWithin(at, start, stop)
      at += stop - start
    }
    let from = this.answerStart
    if (at > this.firstPart) {
      if (this.first === 'space') buffer[this.firstPart] = SPACE
      else buffer.set(this.open, (from = this.answerStart + 1))
    } else if (this.first === 'drop') buffer.set(this.open, from)
    if (at + end.length <= buffer.length) {
      buffer.set(end, at)
      return buffer.subarray(from, at + end.length)
    }
    return Bun.concatArrayBuffers([buffer.subarray(from, at), end], Infinity, true) as Bytes
  }
}
