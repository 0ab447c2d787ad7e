/**
 * Where the engine keeps each event's JSON line: in memory, or (for the log file, see
 * file-lines.ts) only its byte offset, reading the lines of a page back from the file.
 */
import { withoutCommit } from '../../../storage/event-log'

export interface LineStore {
  add(line: string): void
  /** The lines at `indexes`, in that order, between `prefix` and `suffix` and split by `separator`, as UTF-8. */
  join(indexes: readonly number[], prefix: string, separator: string, suffix: string): Uint8Array<ArrayBuffer>
  readonly size: number
}

/** The lines of a log held in memory, kept as the events' JSON (without the log's commit member). */
export class MemoryLines implements LineStore {
  private readonly lines: string[] = []
  add(line: string) {
    this.lines.push(withoutCommit(line))
  }
  join(indexes: readonly number[], prefix: string, separator: string, suffix: string): Uint8Array<ArrayBuffer> {
    return new TextEncoder().encode(prefix + indexes.map(i => this.lines[i]).join(separator) + suffix)
  }
  get size() {
    return this.lines.length
  }
}
