/**
 * The event log's lines kept on disk: only each line's byte offset is in memory, and a page's
 * lines are read back with positioned reads (from the page cache, usually). The log file is only
 * ever appended to while the service runs, so an offset, once known, stays valid.
 */
import { closeSync, openSync, readSync } from 'node:fs'
import type { LineStore } from '../features/events/search-engine'

export class FileLines implements LineStore {
  private readonly fd: number
  /** Start offset of each line; `ends` keeps the end of the last one. */
  private offsets = new Float64Array(1024)
  private count = 0
  private end = 0

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
    this.offsets[this.count++] = this.end
    this.end += byteLength
  }

  get size(): number {
    return this.count
  }

  get(index: number): string {
    const start = this.offsets[index]
    const end = index + 1 < this.count ? this.offsets[index + 1] : this.end
    const buffer = Buffer.allocUnsafe(end - start - 1)
    readSync(this.fd, buffer, 0, buffer.length, start)
    return buffer.toString('utf8')
  }

  close(): void {
    closeSync(this.fd)
  }
}
