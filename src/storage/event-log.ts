/**
 * The event log: `events.jsonl`, one event per line, only ever appended to (contract §4). The store
 * appends each commit's events here before it acknowledges the commit; the state journal records
 * the last event id a commit includes, so at start the log is cut back to what was acknowledged.
 * The store itself keeps no events in memory: readers (the event search) load them from here.
 *
 * A line is its event's JSON with one more member at the end, the number of the commit that wrote
 * it (`eventLine`: `…,"tags":[],"commitSeq":12}`), so that start-up tells the commits past the
 * state apart (`findEnd`). The number is the log's own: an event never leaves the store with it
 * (`eventOfLine`, `withoutCommit`; the event search cuts it from the bytes it serves with
 * `commitMemberAt`). Lines written before it existed have none, and still load.
 */
import { open, stat } from 'node:fs/promises'
import {
  fsyncDirectory,
  JOURNAL_FILE,
  readLines,
  realFileSystem,
  STATE_FILE,
  StoreLoadError,
  truncateFile,
  writeAll,
  type FileSystem,
} from './files'
import type { EventRecord } from './records'

/** The member a line ends with, before the commit's number and the closing brace. */
const COMMIT_MEMBER = ',"commitSeq":'

/** The line the log keeps for `event`, written by commit `commitSeq`. */
export function eventLine(event: EventRecord, commitSeq: number): string {
  const json = JSON.stringify(event)
  return `${json.slice(0, -1)}${COMMIT_MEMBER}${commitSeq}}`
}

/**
 * Where the commit member of the line `[start, end)` begins (its comma), or -1 for a line without
 * one. `at(i)` is the line's byte (or character: the member is ASCII) at `i`. The store writes every
 * event with `tags`, an array, last, so a line that ends in `,"commitSeq":<digits>}` ends in the member.
 */
export function commitMemberAt(at: (i: number) => number, start: number, end: number): number {
  let i = end - 1
  if (i <= start || at(i) !== 0x7d) return -1
  const lastDigit = --i
  while (i > start && at(i) >= 0x30 && at(i) <= 0x39) i--
  if (i === lastDigit || lastDigit - i > 16) return -1
  const member = i - COMMIT_MEMBER.length + 1
  if (member <= start) return -1
  for (let k = 0; k < COMMIT_MEMBER.length; k++) if (at(member + k) !== COMMIT_MEMBER.charCodeAt(k)) return -1
  return member
}

/** The line's event JSON, without the log's commit member. */
export function withoutCommit(line: string): string {
  const member = commitMemberAt(i => line.charCodeAt(i), 0, line.length)
  return member === -1 ? line : `${line.slice(0, member)}}`
}

/** The event a line of the log holds (without the log's commit number). */
export function eventOfLine(line: string): EventRecord {
  return JSON.parse(withoutCommit(line)) as EventRecord
}

export interface EventLog {
  /** Shown in load errors: the file path, or a name for the memory log. */
  readonly name: string
  /** The file, for readers in other threads; null for the memory log. */
  readonly path: string | null
  /** How long the log is (bytes for a file): what `cutTo` takes to undo later appends. */
  readonly size: number
  /**
   * Appends events, given as their JSON lines; they are durable when the promise resolves (with
   * fsync on). On failure some of them may be in the file: it is cut back with `cutTo`.
   */
  append(lines: readonly string[]): Promise<void>
  /** Cuts the log back to `size` (durably with fsync on). */
  cutTo(size: number): Promise<void>
  /**
   * The size the log must be cut to so that it ends at event `lastId`, and the file's size now.
   * Only a torn last line and the events of one unacknowledged commit (the one after commit
   * `commitSeq`, the state's last) may lie past it; anything else is a StoreLoadError. Changes nothing.
   */
  findEnd(lastId: number, commitSeq: number): Promise<{ end: number; size: number }>
  /**
   * Calls `onEvent` with every event up to `lastId` and its line as the log keeps it, oldest first,
   * checking that ids run 1, 2, 3…
   */
  read(lastId: number, onEvent: (line: string, event: EventRecord) => void): Promise<void>
  /** Whether the log holds nothing at all. */
  isEmpty(): Promise<boolean>
}

/**
 * Reads events 1 to `lastId` of a log file, oldest first, with each one's line as the file holds
 * it (the event without the commit member is the second argument), checking
 * that the ids run 1, 2, 3… and that none is missing. Stops reading after `lastId`. `from` starts
 * the reading after event `from.id`, whose line ends at byte `from.offset`.
 */
export async function readEventLines(
  path: string,
  lastId: number,
  onEvent: (line: string, event: EventRecord) => void,
  from: { id: number; offset: number } = { id: 0, offset: 0 },
): Promise<void> {
  let count = from.id
  await readLines(
    path,
    (line, lineInRead) => {
      const lineNumber = from.id + lineInRead
      if (lineNumber > lastId) return false
      let event: EventRecord
      try {
        event = eventOfLine(line)
      } catch (error) {
        throw new StoreLoadError(path, `line ${lineNumber} is not valid JSON (${(error as Error).message})`)
      }
      if (typeof event !== 'object' || event === null || event.id !== lineNumber) {
        throw new StoreLoadError(path, `line ${lineNumber} is not event ${lineNumber}`)
      }
      count = lineNumber
      onEvent(line, event)
    },
    from.offset,
  )
  if (count < lastId)
    throw new StoreLoadError(path, `holds ${count} events but the state includes events up to ${lastId}`)
}

export class JsonLinesEventLog implements EventLog {
  size = 0

  get path(): string {
    return this.name
  }

  constructor(
    readonly name: string,
    private readonly sync: boolean,
    private readonly fs: FileSystem = realFileSystem,
  ) {}

  async append(lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return
    const bytes = Buffer.from(lines.join('\n') + '\n')
    const handle = await this.fs.open(this.name, 'a')
    try {
      this.size = (await handle.stat()).size
      await writeAll(handle, bytes, this.name)
      if (this.sync) {
        await handle.datasync()
        if (this.size === 0) fsyncDirectory(this.name)
      }
    } finally {
      await handle.close()
    }
    this.size += bytes.length
  }

  async cutTo(size: number): Promise<void> {
    await truncateFile(this.name, size, this.sync, this.fs)
    this.size = size
  }

  /**
   * Reads backwards from the end, so start-up costs what the tail holds, not the whole log. A crash
   * can leave a torn last line and the events of the one commit that was in flight: events numbered
   * on from `lastId` without a gap, each written by commit `commitSeq + 1`. Lines written before
   * they carried their commit's number are told apart by the one `createdAt` a commit gives its
   * events instead (two such commits made in the same millisecond look like one).
   */
  async findEnd(lastId: number, commitSeq: number): Promise<{ end: number; size: number }> {
    const size = await stat(this.name).then(
      s => s.size,
      () => 0,
    )
    if (size === 0) {
      if (lastId > 0)
        throw new StoreLoadError(this.name, `is missing or empty, but the state includes events up to ${lastId}`)
      return { end: 0, size }
    }
    this.size = size
    const handle = await open(this.name, 'r')
    try {
      return { end: await this.findEndOf(lastId, commitSeq, handle, size), size }
    } finally {
      await handle.close()
    }
  }

  /** The byte offset just past event `lastId` (0 for none), reading the file backwards. */
  private async findEndOf(
    lastId: number,
    commitSeq: number,
    handle: Awaited<ReturnType<typeof open>>,
    size: number,
  ): Promise<number> {
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
    // The events past `lastId`, newest first: they must be one commit's.
    let unacknowledged: { id: number; commit: string; written: unknown } | null = null
    // Past the state, only the commit after its last: `end`, once every event past the state is seen to be of one commit.
    const oneCommit = (end: number) => {
      const written = unacknowledged?.written
      if (written !== undefined && written !== commitSeq + 1) {
        throw new StoreLoadError(
          this.name,
          `holds events past event ${lastId}, the last the state includes, written by commit ${String(written)}, but the state includes commits up to ${commitSeq}; ` +
            `a crash leaves only the events of commit ${commitSeq + 1}, so the state is missing acknowledged commits: check ${JOURNAL_FILE} and ${STATE_FILE}`,
        )
      }
      return end
    }
    for (;;) {
      if (end === 0) return oneCommit(this.noneBefore(lastId, 0))
      // The line is [start, end - 1); find the newline before it, reading more of the file if needed.
      const newlineBefore = (offset: number) =>
        offset - bufferStart >= 0 ? buffer.lastIndexOf(0x0a, offset - bufferStart) : -1
      let previous = newlineBefore(end - 2)
      while (previous === -1 && bufferStart > 0) {
        await readMore()
        previous = newlineBefore(end - 2)
      }
      const start = previous === -1 ? 0 : bufferStart + previous + 1
      const line = buffer.subarray(start - bufferStart, end - 1 - bufferStart).toString('utf8')
      let event: Partial<EventRecord> | null
      try {
        event = JSON.parse(line) as Partial<EventRecord> | null
      } catch (error) {
        throw new StoreLoadError(
          this.name,
          `the line ending at byte ${end} is not valid JSON (${(error as Error).message})`,
        )
      }
      const id = event?.id
      if (id === lastId) return oneCommit(end)
      if (typeof id !== 'number' || id < lastId) {
        throw new StoreLoadError(
          this.name,
          `ends at event ${String(id)} but the state includes events up to ${lastId}; acknowledged events are missing`,
        )
      }
      // The commit that wrote the event: its number, or for a line without one its `createdAt`.
      const written = (event as { commitSeq?: unknown }).commitSeq
      const commit = written === undefined ? `the commit of ${String(event!.createdAt)}` : `commit ${String(written)}`
      if (unacknowledged !== null && (id !== unacknowledged.id - 1 || commit !== unacknowledged.commit)) {
        throw new StoreLoadError(
          this.name,
          `holds events past event ${lastId}, the last the state includes, from more than one commit (event ${id} of ${commit} and event ${unacknowledged.id} of ${unacknowledged.commit}); ` +
            `a crash leaves at most one, so the state is missing acknowledged commits: check ${JOURNAL_FILE} and ${STATE_FILE}`,
        )
      }
      unacknowledged = { id, commit, written }
      end = start
    }
  }

  private noneBefore(lastId: number, offset: number): number {
    if (lastId === 0) return offset
    throw new StoreLoadError(this.name, `does not hold event ${lastId}, which the state includes`)
  }

  async isEmpty(): Promise<boolean> {
    return (
      (await stat(this.name).then(
        s => s.size,
        () => 0,
      )) === 0
    )
  }

  async read(lastId: number, onEvent: (line: string, event: EventRecord) => void): Promise<void> {
    await readEventLines(this.name, lastId, onEvent)
  }
}

/** The event log in memory, for tests and throwaway instances. */
export class MemoryEventLog implements EventLog {
  readonly name = 'memory event log'
  readonly path = null
  private readonly lines: string[] = []

  get size(): number {
    return this.lines.length
  }

  async append(lines: readonly string[]): Promise<void> {
    this.lines.push(...lines)
  }

  async cutTo(size: number): Promise<void> {
    this.lines.length = Math.min(this.lines.length, size)
  }

  async findEnd(lastId: number, _commitSeq: number): Promise<{ end: number; size: number }> {
    return { end: Math.min(this.lines.length, lastId), size: this.lines.length }
  }

  async read(lastId: number, onEvent: (line: string, event: EventRecord) => void): Promise<void> {
    for (const line of this.lines.slice(0, lastId)) onEvent(line, eventOfLine(line))
  }

  async isEmpty(): Promise<boolean> {
    return this.lines.length === 0
  }
}
