/**
 * The store's log in a data directory (or in memory): the checkpoint `state.json`, the state
 * journal and the event log (state-journal.ts, event-log.ts), for one writer, the process holding
 * the directory's lock.
 *
 * A commit appends its events (fsynced) first, then its journal line, which names the last event id
 * the commit includes and so acknowledges it. A commit that fails is cut back off both files, to
 * their length after the last durable commit, before `commit` rejects; if even the cut fails, the
 * next commit (or `probe`) cuts first. At open, what a crash can leave half written (a torn journal
 * line, the events of the one commit that was in flight) is cut only once everything else checks.
 */
import type { Adapter } from 'lowdb'
import { join } from 'node:path'
import { JsonLinesEventLog, type EventLog } from './event-log'
import {
  AtomicJsonFile,
  DataDirError,
  describeIoError,
  EVENTS_FILE,
  JOURNAL_FILE,
  probeDataDir,
  realFileSystem,
  STATE_FILE,
  StoreLoadError,
  type FileSystem,
} from './files'
import { fillDataDir } from './files-fill'
import type { Commit, Filling, Loaded, LogPosition, Snapshot, StoreLog } from './log'
import type { StateDoc } from './records'
import { newKey } from './secret-key'
import { JsonLinesJournal, type JournalContents, type StateJournal } from './state-journal'

/** The least a probe writes after a failed commit: a few free pages are not room for the next commit. */
export const PROBE_MIN_BYTES = 16 * 1024

export interface FilesLogParts {
  /** The checkpoint of the state (an AtomicJsonFile, or lowdb's Memory). */
  checkpoint: Adapter<StateDoc>
  journal: StateJournal
  events: EventLog
  /** Shown in load errors: the checkpoint's file path. */
  checkpointName?: string
  /** The data directory, named when it cannot be written. */
  dataDir?: string
  /**
   * Checks that the directory takes a file of `bytes` (creating the journal and the event log if
   * missing); throws the file system's error. Run at open, before anything is cut, and after a
   * failed commit, to see whether writes can be made durable again.
   */
  probe?: (bytes?: number) => Promise<void>
  /** The data directory's secret key (secret-key.ts); a memory store gets a new one. */
  secretKey?: Buffer
}

/** The log of the data directory `dataDir` (its files: files.ts); nothing is read or written until it is used. */
export function dataDirLog(
  dataDir: string,
  options: { sync: boolean; fs?: FileSystem; secretKey?: Buffer | null },
): FilesLog {
  const fs = options.fs ?? realFileSystem
  const checkpointPath = join(dataDir, STATE_FILE)
  return new FilesLog({
    checkpoint: new AtomicJsonFile<StateDoc>(checkpointPath, options.sync, fs),
    journal: new JsonLinesJournal(join(dataDir, JOURNAL_FILE), options.sync, fs),
    events: new JsonLinesEventLog(join(dataDir, EVENTS_FILE), options.sync, fs),
    checkpointName: checkpointPath,
    dataDir,
    probe: bytes => probeDataDir(dataDir, fs, bytes),
    secretKey: options.secretKey ?? undefined,
  })
}

export class FilesLog implements StoreLog {
  readonly timeoutMs = Infinity
  readonly checkpointOnClose = true
  readonly identity = null
  readonly secretKey: Buffer
  /** The files' lengths after the last durable commit. */
  private durable = { events: 0, journal: 0 }
  /** A failed commit's bytes could not be cut off the files; the next commit (or probe) cuts them first. */
  private cutPending = false
  /** Bytes the probe asks the directory to take before writes count as working again: twice the failed commit's. */
  private probeBytes = PROBE_MIN_BYTES
  /** What `load` read, for `recover`. */
  private opening: { checkpoint: StateDoc | null; journal: JournalContents; journalExpected: boolean } | null = null

  constructor(private readonly parts: FilesLogParts) {
    this.secretKey = parts.secretKey ?? newKey()
  }

  get name(): string {
    return this.parts.dataDir ?? this.checkpointName
  }

  get checkpointName(): string {
    return this.parts.checkpointName ?? 'state'
  }

  get journalName(): string {
    return this.parts.journal.name
  }

  get eventsPath(): string | null {
    return this.parts.events.path
  }

  get journalBytes(): number {
    return this.parts.journal.size
  }

  async load(): Promise<Loaded> {
    const checkpoint = await this.parts.checkpoint.read()
    // A checkpoint without commitSeq predates the journal: it may have none.
    const journalExpected = checkpoint !== null && checkpoint.commitSeq !== undefined
    const journal = await this.parts.journal.read()
    if (checkpoint === null && (journal.size > 0 || !(await this.parts.events.isEmpty()))) {
      // A new data directory gets a checkpoint at once, so that a missing checkpoint next to a
      // journal or events always means a damaged directory rather than a first start.
      throw new StoreLoadError(
        this.checkpointName,
        'is missing, but the journal or the event log holds data; restore it or move the directory away',
      )
    }
    this.opening = { checkpoint, journal, journalExpected }
    return { checkpoint, commits: journal.entries }
  }

  async recover(state: StateDoc): Promise<void> {
    const { checkpoint, journal, journalExpected } = this.opening!
    this.opening = null
    const { events } = this.parts
    // Every store opened since the journal exists has one (opening creates it, a checkpoint empties it).
    const journalMissing = (why: string) =>
      new StoreLoadError(
        this.journalName,
        `is missing, but ${why}, so commits written to it would be lost; restore it or move the directory away`,
      )
    const missing = !journal.exists && journalExpected
    if (missing && state.commitSeq > 0) throw journalMissing(`the checkpoint includes commit ${state.commitSeq}`)
    const end = await events.findEnd(state.lastEventId, state.commitSeq).catch(error => {
      throw missing
        ? journalMissing(`the event log does not end where the checkpoint does (${(error as Error).message})`)
        : error
    })
    if (missing && end.end < end.size) throw journalMissing('the event log holds events past the checkpoint')
    if (this.parts.probe) {
      try {
        await this.parts.probe()
      } catch (error) {
        throw new DataDirError(this.parts.dataDir ?? this.checkpointName, describeIoError(error))
      }
    }
    if (checkpoint === null) await this.parts.checkpoint.write(state)
    if (journal.complete < journal.size) await this.parts.journal.cutTo(journal.complete)
    if (end.end < end.size) await events.cutTo(end.end)
    this.durable = { events: events.size, journal: this.parts.journal.size }
  }

  async commit(_after: LogPosition, body: (others: Commit[]) => Commit | null): Promise<void> {
    const commit = body([])
    if (commit === null) return
    try {
      if (this.cutPending) await this.cutBack()
      await this.parts.events.append(commit.lines)
      await this.parts.journal.append(commit.entry)
    } catch (error) {
      const bytes = commit.lines.reduce((sum, line) => sum + line.length + 1, 0) + commit.changesText.length
      this.probeBytes = Math.max(PROBE_MIN_BYTES, 2 * bytes)
      await this.cutBack().catch(() => void (this.cutPending = true))
      throw error
    }
    this.durable = { events: this.parts.events.size, journal: this.parts.journal.size }
  }

  async read(): Promise<Commit[]> {
    return []
  }

  async listen(): Promise<void> {}

  async checkpoint(state: StateDoc): Promise<boolean> {
    try {
      if (this.cutPending) await this.cutBack().catch(() => {})
      await this.parts.checkpoint.write(state)
      await this.parts.journal.reset()
      return true
    } finally {
      this.durable = { events: this.parts.events.size, journal: this.parts.journal.size }
    }
  }

  async probe(): Promise<void> {
    if (this.cutPending) await this.cutBack()
    await this.parts.probe?.(this.probeBytes)
  }

  describe(error: unknown): string {
    return describeIoError(error)
  }

  async readEvents(after: number, lastId: number, onLine: (line: string) => void): Promise<void> {
    await this.parts.events.read(lastId, (line, event) => void (event.id > after && onLine(line)))
  }

  /**
   * The checkpoint and the journal, read until the journal follows on from the checkpoint (one
   * written between the two reads empties the journal: the read is made again); the event log only
   * ever grows, so its first events are final.
   */
  async snapshot<T>(use: (snapshot: Snapshot) => Promise<T>): Promise<T> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const checkpoint = await this.parts.checkpoint.read()
      if (checkpoint === null) throw new StoreLoadError(this.checkpointName, 'is missing: the directory holds no store')
      // Only complete lines are read: a line still being written is not acknowledged yet.
      const { entries } = await this.parts.journal.read()
      const later = entries.filter(entry => entry.seq > checkpoint.commitSeq)
      if (later.some((entry, index) => entry.seq !== checkpoint.commitSeq + 1 + index)) continue
      return use({
        checkpoint,
        commits: entries,
        secretKey: this.parts.secretKey ?? null,
        events: (lastId, onLine) => this.readEvents(0, lastId, onLine),
      })
    }
    throw new Error(`${this.name}: the state kept changing under the backup; try again`)
  }

  /** A data directory's (files-fill.ts); a store in memory is not restored into. */
  fill<T>(use: (filling: Filling) => Promise<T>): Promise<T> {
    if (this.parts.dataDir === undefined) throw new Error(`${this.name}: only a data directory is restored into`)
    return fillDataDir(this.parts.dataDir, use)
  }

  async close(): Promise<void> {
    if (this.cutPending) await this.cutBack().catch(() => {})
  }

  /** Cuts both files back to their length after the last durable commit. */
  private async cutBack() {
    await this.parts.events.cutTo(this.durable.events)
    await this.parts.journal.cutTo(this.durable.journal)
    this.cutPending = false
  }
}
