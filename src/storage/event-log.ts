/**
 * The event log: `events.jsonl`, one event per line, only ever appended to (contract §4). The store
 * appends each commit's events here before it acknowledges the commit; the state journal records
 * the last event id a commit includes, so at start the log is cut back to what was acknowledged.
 * The store itself keeps no events in memory: readers (the event search) load them from here.
 */
import { open, stat } from 'node:fs/promises'
import { fsyncDirectory, readLines, StoreLoadError, truncateFile } from './files'
import type { EventRecord } from './records'

export interface EventLog {
  /** Shown in load errors: the file path, or a name for the memory log. */
  readonly name: string
  /** The file, for readers in other threads; null for the memory log. */
  readonly path: string | null
  /** Appends events, given with their JSON lines; they are durable when the promise resolves (with fsync on). */
  append(events: readonly EventRecord[], lines: readonly string[]): Promise<void>
  /** Makes the log end at event `lastId`: cuts a torn line and unacknowledged events. */
  trimTo(lastId: number): Promise<void>
  /** Calls `onEvent` for every event up to `lastId`, oldest first, checking that ids run 1, 2, 3… */
  read(lastId: number, onEvent: (event: EventRecord) => void): Promise<void>
  /** Whether the log holds nothing at all. */
  isEmpty(): Promise<boolean>
}

/**
 * Reads events 1 to `lastId` of a log file, oldest first, with each one's JSON line, checking
 * that the ids run 1, 2, 3… and that none is missing. Stops reading after `lastId`.
 */
export async function readEventLines(path: string, lastId: number, onEvent: (line: string, event: EventRecord) => void): Promise<void> {
  let count = 0
  await readLines(path, (line, lineNumber) => {
    if (lineNumber > lastId) return false
    let event: EventRecord
    try {
      event = JSON.parse(line)
    } catch (error) {
      throw new StoreLoadError(path, `line ${lineNumber} is not valid JSON (${(error as Error).message})`)
    }
    if (typeof event !== 'object' || event === null || event.id !== lineNumber) {
      throw new StoreLoadError(path, `line ${lineNumber} is not event ${lineNumber}`)
    }
    count = lineNumber
    onEvent(line, event)
  })
  if (count < lastId) throw new StoreLoadError(path, `holds ${count} events but the state includes events up to ${lastId}`)
}

export class JsonLinesEventLog implements EventLog {
  get path(): string {
    return this.name
  }

  constructor(
    readonly name: string,
    private readonly sync: boolean,
  ) {}

  async append(_events: readonly EventRecord[], lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return
    const text = lines.join('\n') + '\n'
    const handle = await open(this.name, 'a')
    try {
      const created = (await handle.stat()).size === 0
      await handle.write(text)
      if (this.sync) {
        await handle.datasync()
        if (created) fsyncDirectory(this.name)
      }
    } finally {
      await handle.close()
    }
  }

  /**
   * Reads backwards from the end, so start-up costs what the tail holds, not the whole log. A crash
   * can leave a torn last line and the events of one unacknowledged commit; both are cut.
   */
  async trimTo(lastId: number): Promise<void> {
    const size = await stat(this.name).then((s) => s.size, () => 0)
    if (size === 0) {
      if (lastId > 0) throw new StoreLoadError(this.name, `is missing or empty, but the state includes events up to ${lastId}`)
      return
    }
    const handle = await open(this.name, 'r')
    let cut: number
    try {
      cut = await this.findEndOf(lastId, handle, size)
    } finally {
      await handle.close()
    }
    if (cut < size) await truncateFile(this.name, cut, this.sync)
  }

  /** The byte offset just past event `lastId` (0 for none), reading the file backwards. */
  private async findEndOf(lastId: number, handle: Awaited<ReturnType<typeof open>>, size: number): Promise<number> {
    let buffer = Buffer.alloc(0)
    let bufferStart = size
    const readMore = async () => {
      const length = Math.min(65536, bufferStart)
      bufferStart -= length
      const chunk = Buffer.alloc(length)
      await handle.read(chunk, 0, length, bufferStart)
      buffer = Buffer.concat([chunk, buffer])
    }
    // The end of the last complete line; bytes after it are a torn line.
    let end = -1
    while (end === -1) {
      if (bufferStart === 0) return this.noneBefore(lastId, 0)
      await readMore()
      const newline = buffer.lastIndexOf(0x0a)
      if (newline !== -1) end = bufferStart + newline + 1
    }
    for (;;) {
      if (end === 0) return this.noneBefore(lastId, 0)
      // The line is [start, end - 1); find the newline before it, reading more of the file if needed.
      const newlineBefore = (offset: number) => (offset - bufferStart >= 0 ? buffer.lastIndexOf(0x0a, offset - bufferStart) : -1)
      let previous = newlineBefore(end - 2)
      while (previous === -1 && bufferStart > 0) {
        await readMore()
        previous = newlineBefore(end - 2)
      }
      const start = previous === -1 ? 0 : bufferStart + previous + 1
      const line = buffer.subarray(start - bufferStart, end - 1 - bufferStart).toString('utf8')
      let id: unknown
      try {
        id = (JSON.parse(line) as EventRecord).id
      } catch (error) {
        throw new StoreLoadError(this.name, `the line ending at byte ${end} is not valid JSON (${(error as Error).message})`)
      }
      if (id === lastId) return end
      if (typeof id !== 'number' || id < lastId) {
        throw new StoreLoadError(this.name, `ends at event ${String(id)} but the state includes events up to ${lastId}; acknowledged events are missing`)
      }
      end = start
    }
  }

  private noneBefore(lastId: number, offset: number): number {
    if (lastId === 0) return offset
    throw new StoreLoadError(this.name, `does not hold event ${lastId}, which the state includes`)
  }

  async isEmpty(): Promise<boolean> {
    return (await stat(this.name).then((s) => s.size, () => 0)) === 0
  }

  async read(lastId: number, onEvent: (event: EventRecord) => void): Promise<void> {
    await readEventLines(this.name, lastId, (_line, event) => onEvent(event))
  }
}

/** The event log in memory, for tests and throwaway instances. */
export class MemoryEventLog implements EventLog {
  readonly name = 'memory event log'
  readonly path = null
  private readonly events: EventRecord[] = []

  async append(events: readonly EventRecord[]): Promise<void> {
    this.events.push(...events)
  }

  async trimTo(lastId: number): Promise<void> {
    this.events.length = Math.min(this.events.length, lastId)
  }

  async read(lastId: number, onEvent: (event: EventRecord) => void): Promise<void> {
    for (const event of this.events.slice(0, lastId)) onEvent(event)
  }

  async isEmpty(): Promise<boolean> {
    return this.events.length === 0
  }
}
