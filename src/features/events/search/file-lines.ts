/**
 * The event log's lines kept on disk: only each line's byte offset is in memory, and a page's
 * lines are read back with positioned reads (from the page cache, usually), as bytes. The log file is only
 * ever appended to while the service runs, so an offset, once known, stays valid.
 */
import { openSync, readSync } from 'node:fs'
import { commitMemberAt } from '../../../storage/event-log'
import type { LineStore } from './line-store'

export class FileLines implements LineStore {
  private readonly fd: number
  /** Start offset of each line; `fileEnd` keeps the end of the last one. */
  private offsets = new Float64Array(1024)
  private count = 0
  private fileEnd = 0

  /** Lines from byte `start` of the file on (where the events before them, kept elsewhere, end). */
  constructor(path: string | number, start = 0) {
    this.fd = typeof path === 'number' ? path : openSync(path, 'r')
    this.fileEnd = start
  }

  /** The file's descriptor, shared with whatever else reads lines of it. */
  get descriptor(): number {
    return this.fd
  }

  /** Where the lines added so far end. */
  get end(): number {
    return this.fileEnd
  }

  /** Records the next line; it must be the bytes that follow the previous line in the file. */
  add(line: string, byteLength = Buffer.byteLength(line) + 1): void {
    if (this.count === this.offsets.length) {
      const grown = new Float64Array(this.offsets.length * 2)
      grown.set(this.offsets)
      this.offsets = grown
    }
    this.offsets[this.count++] = this.fileEnd
    this.fileEnd += byteLength
  }

  get size(): number {
    return this.count
  }

  /** Where line `index` starts; `start(size)` is where the last one ends (past its newline). */
  start(index: number): number {
    return index < this.count ? this.offsets[index] : this.fileEnd
  }

  /** Line `index`'s byte range, without its newline. */
  range(index: number): [number, number] {
    return [this.start(index), this.start(index + 1) - 1]
  }

  join(indexes: readonly number[], prefix: string, separator: string, suffix: string): Uint8Array<ArrayBuffer> {
    return joinRanges(
      this.fd,
      indexes.map(index => this.range(index)),
      prefix,
      separator,
      suffix,
    )
  }
}

/** Reads `into.length` bytes of `fd` at `position`. */
export function readFully(fd: number, into: Uint8Array, position: number) {
  for (let done = 0; done < into.length; ) {
    const read = readSync(fd, into, done, into.length - done, position + done)
    if (read === 0) throw new Error(`the event log ended before byte ${position + into.length}`)
    done += read
  }
}

/**
 * Lines of a file, by byte range, between `prefix` and `suffix` and split by `separator`, each
 * without the log's commit member (storage/event-log.ts: the events as the store hands them out). The
 * bytes are copied into the result without being decoded: a run of lines next to each other (a page
 * of the whole log, say, newest first) is one read, whatever its length.
 */
export function joinRanges(
  fd: number,
  ranges: readonly [number, number][],
  prefix: string,
  separator: string,
  suffix: string,
): Uint8Array<ArrayBuffer> {
  const head = Buffer.from(prefix)
  const between = Buffer.from(separator)
  const tail = Buffer.from(suffix)
  let size = head.length + tail.length + Math.max(0, ranges.length - 1) * between.length
  /** Each line's bytes `[start, end)` of the run read with it, and whether a commit member was cut off (its `}` then added). */
  const lines: { span: Buffer; start: number; end: number; cut: boolean }[] = []
  for (let k = 0; k < ranges.length; ) {
    // A run of lines, each ending where the next one (in the list) starts after its newline.
    let last = k
    while (last + 1 < ranges.length && ranges[last + 1][1] + 1 === ranges[last][0]) last++
    const from = ranges[last][0]
    const span = Buffer.allocUnsafe(ranges[k][1] - from)
    readFully(fd, span, from)
    for (let j = k; j <= last; j++) {
      const start = ranges[j][0] - from
      const member = commitMemberAt(i => span[i], start, ranges[j][1] - from)
      const end = member === -1 ? ranges[j][1] - from : member
      lines.push({ span, start, end, cut: member !== -1 })
      size += end - start + (member === -1 ? 0 : 1)
    }
    k = last + 1
  }
  const out = Buffer.from(new ArrayBuffer(size))
  let at = head.copy(out, 0)
  for (let j = 0; j < lines.length; j++) {
    if (j > 0) at += between.copy(out, at)
    const { span, start, end, cut } = lines[j]
    at += span.copy(out, at, start, end)
    if (cut) out[at++] = 0x7d
  }
  tail.copy(out, at)
  return new Uint8Array(out.buffer)
}
