/**
 * lowdb adapters for the two files of the data directory. lowdb's own `JSONFile` neither fsyncs nor
 * appends, and its preset silently swaps in memory under `NODE_ENV=test`, so we open these
 * explicitly everywhere.
 *
 * - `state.json`: one compact JSON document, replaced atomically (temp file, fsync, rename, fsync
 *   of the directory) so a reader never meets a half-written document.
 * - `events.jsonl`: the event log, one JSON object per line, only ever appended to. A torn last line
 *   (a crash mid-append) is detected at read time and cut off.
 */
import type { Adapter } from 'lowdb'
import { closeSync, fsyncSync, openSync } from 'node:fs'
import { open, readFile, rename, truncate } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import type { EventRecord } from './records'

/** A data file that cannot be trusted. Start-up stops with this message; nothing is replaced. */
export class StoreLoadError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`)
    this.name = 'StoreLoadError'
  }
}

function fsyncDirectory(path: string) {
  const fd = openSync(dirname(path), 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

async function readIfExists(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new StoreLoadError(path, (error as Error).message)
  }
}

export class AtomicJsonFile<T> implements Adapter<T> {
  constructor(
    readonly path: string,
    private readonly sync: boolean,
  ) {}

  async read(): Promise<T | null> {
    const bytes = await readIfExists(this.path)
    if (bytes === null) return null
    try {
      return JSON.parse(bytes.toString('utf8')) as T
    } catch (error) {
      throw new StoreLoadError(this.path, `not valid JSON (${(error as Error).message})`)
    }
  }

  async write(data: T): Promise<void> {
    const text = JSON.stringify(data)
    const temp = `${dirname(this.path)}/.${basename(this.path)}.tmp`
    const handle = await open(temp, 'w')
    try {
      await handle.writeFile(text)
      if (this.sync) await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, this.path)
    if (this.sync) fsyncDirectory(this.path)
  }
}

/** An adapter over the event log that can drop events that were written but never acknowledged. */
export interface EventLogAdapter extends Adapter<EventRecord[]> {
  /** Forget every event from index `count` on, on disk too. */
  discardFrom(count: number): Promise<void>
}

export class JsonLinesEventLog implements EventLogAdapter {
  /** How many events of the array given to `write` are already on disk. */
  private persisted = 0
  /** Byte length of the file up to the end of each persisted event (for `discardFrom`). */
  private lineEnds: number[] = []

  constructor(
    readonly path: string,
    private readonly sync: boolean,
  ) {}

  async read(): Promise<EventRecord[] | null> {
    const bytes = await readIfExists(this.path)
    if (bytes === null) return null
    const events: EventRecord[] = []
    const ends: number[] = []
    let start = 0
    let lineNumber = 0
    while (start < bytes.length) {
      lineNumber++
      const newline = bytes.indexOf(0x0a, start)
      if (newline === -1) {
        // The last append was cut short by a crash: it was never acknowledged, so it is dropped.
        break
      }
      const line = bytes.subarray(start, newline).toString('utf8')
      let event: EventRecord
      try {
        event = JSON.parse(line)
      } catch (error) {
        throw new StoreLoadError(this.path, `line ${lineNumber} is not valid JSON (${(error as Error).message})`)
      }
      if (typeof event !== 'object' || event === null || event.id !== events.length + 1) {
        throw new StoreLoadError(this.path, `line ${lineNumber} is not event ${events.length + 1}`)
      }
      events.push(event)
      ends.push(newline + 1)
      start = newline + 1
    }
    const validLength = ends.at(-1) ?? 0
    if (validLength < bytes.length) await truncate(this.path, validLength)
    this.persisted = events.length
    this.lineEnds = ends
    return events
  }

  async write(events: EventRecord[]): Promise<void> {
    if (events.length === this.persisted) return
    let text = ''
    const ends: number[] = []
    let length = this.lineEnds.at(-1) ?? 0
    for (let i = this.persisted; i < events.length; i++) {
      const line = JSON.stringify(events[i]) + '\n'
      text += line
      length += Buffer.byteLength(line)
      ends.push(length)
    }
    const handle = await open(this.path, 'a')
    try {
      await handle.write(text)
      if (this.sync) await handle.sync()
    } finally {
      await handle.close()
    }
    if (this.sync && this.persisted === 0) fsyncDirectory(this.path)
    this.persisted = events.length
    this.lineEnds.push(...ends)
  }

  async discardFrom(count: number): Promise<void> {
    if (count >= this.persisted) return
    await truncate(this.path, count === 0 ? 0 : this.lineEnds[count - 1])
    if (this.sync) {
      const handle = await open(this.path, 'r+')
      await handle.sync()
      await handle.close()
    }
    this.persisted = count
    this.lineEnds.length = count
  }
}

/** The event log in memory, for tests and throwaway instances. */
export class MemoryEventLog implements EventLogAdapter {
  private events: EventRecord[] | null = null
  async read() {
    return this.events
  }
  async write(events: EventRecord[]) {
    this.events = events
  }
  async discardFrom(count: number) {
    this.events?.splice(count)
  }
}
