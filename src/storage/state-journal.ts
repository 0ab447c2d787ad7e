/**
 * The state journal: `state.journal.jsonl`, one line per commit with the records it changed. With
 * the checkpoint (`state.json`), it makes a write cost what it changed rather than the size of the
 * whole state. Writing a commit's line is what acknowledges it. At start the checkpoint is loaded
 * and the journal's later commits replayed; a torn last line is a commit that was never
 * acknowledged and is cut. Once the journal is large, the store writes a new checkpoint and starts
 * the journal afresh.
 */
import { stat } from 'node:fs/promises'
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import {
  fsyncDirectory,
  readJsonLines,
  realFileSystem,
  StoreLoadError,
  truncateFile,
  writeAll,
  type FileSystem,
} from './files'
import type { Collection, StateDoc } from './records'

export interface JournalEntry {
  /** Commit sequence number, one more than the previous commit's. */
  seq: number
  /** The last event id this commit includes. */
  lastEventId: number
  nextUserId: number
  /** Records written, `null` for a deleted one, in order. */
  changes: [Collection, string, unknown][]
}

/**
 * Applies the journal's commits that follow `state.commitSeq` to `state` (whose collections must
 * have no prototype), in order; `onRecord` sees each record put in, and `onChange` each change with
 * the record it replaced (the record watchers, when another instance's commits are applied to a
 * running store), and `onCommit` each commit once applied. Returns false, having changed nothing,
 * when the journal does not follow on from the state: a commit is missing between them.
 */
export function replayJournal(
  state: StateDoc,
  entries: readonly JournalEntry[],
  onRecord: (record: unknown, collection: Collection, key: string, seq: number) => unknown = record => record,
  onChange?: (collection: Collection, key: string, before: unknown, after: unknown) => void,
  onCommit?: (entry: JournalEntry) => void,
): boolean {
  const later = entries.filter(entry => entry.seq > state.commitSeq)
  if (later.some((entry, index) => entry.seq !== state.commitSeq + 1 + index)) return false
  for (const entry of later) {
    for (const [name, key, value] of entry.changes) {
      const records = state[name] as Record<string, unknown> | undefined
      if (!records) throw new Error(`commit ${entry.seq} changes an unknown collection "${name}"`)
      const before = records[key]
      let after: unknown
      if (value === null) delete records[key]
      else records[key] = after = onRecord(value, name, key, entry.seq)
      onChange?.(name, key, before, after)
    }
    state.commitSeq = entry.seq
    state.lastEventId = entry.lastEventId
    state.nextUserId = entry.nextUserId
    onCommit?.(entry)
  }
  return true
}

export interface JournalContents {
  /** Every complete entry, oldest first. */
  entries: JournalEntry[]
  /** Whether the file is there at all (an emptied journal is an empty file, not a missing one). */
  exists: boolean
  /** Bytes of complete lines; anything after is a torn last line, for `cutTo` once the start is sure. */
  complete: number
  /** The file's size. */
  size: number
}

export interface StateJournal {
  readonly name: string
  /** Bytes written since the last reset. */
  readonly size: number
  /** Appends one commit's line, durably (with fsync on). On failure the store cuts it back with `cutTo`. */
  append(entry: JournalEntry): Promise<void>
  /** Reads the journal, changing nothing. */
  read(): Promise<JournalContents>
  /** Cuts the journal back to `size` bytes (durably with fsync on). */
  cutTo(size: number): Promise<void>
  /** Empties the journal, once a checkpoint holds everything in it. */
  reset(): Promise<void>
}

/** A journal line as read back: checked by schema, as records are, before anything is replayed. */
const JournalEntrySchema = Type.Object({
  seq: Type.Integer(),
  lastEventId: Type.Integer(),
  nextUserId: Type.Integer(),
  changes: Type.Array(Type.Tuple([Type.String(), Type.String(), Type.Unknown()])),
})
const journalEntryCheck = TypeCompiler.Compile(JournalEntrySchema)

function isJournalEntry(entry: unknown): entry is JournalEntry {
  return journalEntryCheck.Check(entry)
}

export class JsonLinesJournal implements StateJournal {
  size = 0

  constructor(
    readonly name: string,
    private readonly sync: boolean,
    private readonly fs: FileSystem = realFileSystem,
  ) {}

  async append(entry: JournalEntry): Promise<void> {
    const bytes = Buffer.from(JSON.stringify(entry) + '\n')
    const handle = await this.fs.open(this.name, 'a')
    try {
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

  async read(): Promise<JournalContents> {
    const entries: JournalEntry[] = []
    const complete = await readJsonLines(this.name, (value, lineNumber) => {
      if (!isJournalEntry(value)) throw new StoreLoadError(this.name, `line ${lineNumber} is not a journal entry`)
      entries.push(value)
    })
    const size = await stat(this.name).then(
      s => s.size,
      () => -1,
    )
    this.size = complete
    return { entries, exists: size >= 0, complete, size: Math.max(size, 0) }
  }

  async cutTo(size: number): Promise<void> {
    await truncateFile(this.name, size, this.sync, this.fs)
    this.size = size
  }

  async reset(): Promise<void> {
    await this.cutTo(0)
  }
}

/** No journal: the memory store has nothing to recover. */
export class MemoryJournal implements StateJournal {
  readonly name = 'memory journal'
  readonly size = 0
  async append(): Promise<void> {}
  async read(): Promise<JournalContents> {
    return { entries: [], exists: true, complete: 0, size: 0 }
  }
  async cutTo(): Promise<void> {}
  async reset(): Promise<void> {}
}
