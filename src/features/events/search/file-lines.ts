/**
 * The event log's lines kept on disk: only each line's byte offset is in memory, and a page's
 * lines are read back with positioned reads (from the page cache, usually), as bytes. The log file is only
 * ever appended to while the service runs, so an offset, once known, stays valid.
 */
import { randomUUID } from 'node:crypto'
import { openSync, readSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LineStore } from './line-store'

export class FileLines implements LineStore {
  private readonly fd: number
  /** Start offset of each line; `fileEnd` keeps the end of the last one. */
  private offsets = new Float64Array(1024)
  private count = 0
  private fileEnd = 0

  constructor(path: string) {
    this.fd = openSync(path, 'r')
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

  private start(index: number): number {
    return this.offsets[index]
  }

  /** Where line `index` ends, before its newline. */
  private end(index: number): number {
    return (index + 1 < this.count ? this.offsets[index + 1] : this.fileEnd) - 1
  }

  /**
   * The lines' bytes are copied from the file into the result without being decoded: a run of
   * consecutive lines (a page of the whole log, say) is one read, whatever its length.
   */
  join(indexes: readonly number[], prefix: string, separator: string, suffix: string): Uint8Array<ArrayBuffer> {
    const head = Buffer.from(prefix)
    const between = Buffer.from(separator)
    const tail = Buffer.from(suffix)
    let size = head.length + tail.length + Math.max(0, indexes.length - 1) * between.length
    for (const index of indexes) size += this.end(index) - this.start(index)
    const out = Buffer.from(new ArrayBuffer(size))
    let at = head.copy(out, 0)
    for (let k = 0; k < indexes.length; ) {
      // A run of lines next to each other in the file: indexes[k], indexes[k] - 1, … (newest first).
      let last = k
      while (last + 1 < indexes.length && indexes[last + 1] === indexes[last] - 1) last++
      const from = this.start(indexes[last])
      const span = Buffer.allocUnsafe(this.end(indexes[k]) + 1 - from)
      this.read(span, from)
      for (let j = k; j <= last; j++) {
        if (j > 0) at += between.copy(out, at)
        at += span.copy(out, at, this.start(indexes[j]) - from, this.end(indexes[j]) - from)
      }
      k = last + 1
    }
    tail.copy(out, at)
    return new Uint8Array(out.buffer)
  }

  private read(into: Buffer, position: number) {
    for (let done = 0; done < into.length; ) {
      const read = readSync(this.fd, into, done, into.length - done, position + done)
      if (read === 0) throw new Error(`the event log ended before byte ${position + into.length}`)
      done += read
    }
  }
}

/**
 * Lines of a log that has no file here (the PostgreSQL store's event log lives in its database):
 * written to a temp file of their own as they come, and read back as FileLines reads the log, so
 * that memory holds offsets only. The file is unlinked at once: its descriptors keep it while the
 * worker lives, and nothing is left behind however the process ends.
 */
export class SpilledLines implements LineStore {
  private readonly file: FileLines
  private readonly fd: number

  constructor(dir = tmpdir()) {
    const path = join(dir, `.flagstore-events-${process.pid}-${randomUUID()}.jsonl`)
    this.fd = openSync(path, 'wx+', 0o600)
    this.file = new FileLines(path)
    unlinkSync(path)
  }

  add(line: string): void {
    const bytes = Buffer.from(line + '\n')
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done)
    this.file.add(line, bytes.length)
  }

  join(indexes: readonly number[], prefix: string, separator: string, suffix: string): Uint8Array<ArrayBuffer> {
    return this.file.join(indexes, prefix, separator, suffix)
  }

  get size(): number {
    return this.file.size
  }
}
