/**
 * The state journal: `state.journal.jsonl`, one line per commit with the records it changed. With
 * the checkpoint (`state.json`), it makes a write cost what it changed rather than the size of the
 * whole state. Writing a commit's line is what acknowledges it. At start the checkpoint is loaded
 * and the journal's later commits replayed; a torn last line is a commit that was never
 * acknowledged and is cut. Once the journal is large, the store writes a new checkpoint and starts
 * the journal afresh.
 */
import { open, stat } from 'node:fs/promises'
import { fsyncDirectory, readJsonLines, StoreLoadError, truncateFile } from './files'
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
 * have no prototype), in order; `onRecord` sees each record put in. Returns false, having changed
 * nothing, when the journal does not follow on from the state: a commit is missing between them.
 */
export function replayJournal(state: StateDoc, entries: readonly JournalEntry[], onRecord: (record: unknown) => unknown = (record) => record): boolean {
  const later = entries.filter((entry) => entry.seq > state.commitSeq)
  if (later.some((entry, index) => entry.seq !== state.commitSeq + 1 + index)) return false
  for (const entry of later) {
    for (const [name, key, value] of entry.changes) {
      const records = state[name] as Record<string, unknown> | undefined
      if (!records) throw new Error(`commit ${entry.seq} changes an unknown collection "${name}"`)
      if (value === null) delete records[key]
      else records[key] = onRecord(value)
    }
    state.commitSeq = entry.seq
    state.lastEventId = entry.lastEventId
    state.nextUserId = entry.nextUserId
  }
  return true
}

export interface StateJournal {
  readonly name: string
  /** Bytes written since the last reset. */
  readonly size: number
  append(entry: JournalEntry): Promise<void>
  /** Every complete entry, oldest first; cuts a torn last line. */
  read(): Promise<JournalEntry[]>
  /** Empties the journal, once a checkpoint holds everything in it. */
  reset(): Promise<void>
}

export class JsonLinesJournal implements StateJournal {
  size = 0

  constructor(
    readonly name: string,
    private readonly sync: boolean,
  ) {}

  async append(entry: JournalEntry): Promise<void> {
    const line = JSON.stringify(entry) + '\n'
    const handle = await open(this.name, 'a')
    try {
      await handle.write(line)
      if (this.sync) {
        await handle.datasync()
        if (this.size === 0) fsyncDirectory(this.name)
      }
    } finally {
      await handle.close()
    }
    this.size += Buffer.byteLength(line)
  }

  async read(): Promise<JournalEntry[]> {
    const entries: JournalEntry[] = []
    const complete = await readJsonLines(this.name, (value, lineNumber) => {
      const entry = value as JournalEntry
      if (typeof entry !== 'object' || entry === null || !Number.isInteger(entry.seq) || !Array.isArray(entry.changes)) {
        throw new StoreLoadError(this.name, `line ${lineNumber} is not a journal entry`)
      }
      entries.push(entry)
    })
    const size = await stat(this.name).then((s) => s.size, () => 0)
    if (complete < size) await truncateFile(this.name, complete, this.sync)
    this.size = complete
    return entries
  }

  async reset(): Promise<void> {
    await truncateFile(this.name, 0, this.sync)
    this.size = 0
  }
}

/** No journal: the memory store has nothing to recover. */
export class MemoryJournal implements StateJournal {
  readonly name = 'memory journal'
  readonly size = 0
  async append(): Promise<void> {}
  async read(): Promise<JournalEntry[]> {
    return []
  }
  async reset(): Promise<void> {}
}
