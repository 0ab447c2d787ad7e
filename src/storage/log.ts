/**
 * The one seam between the store (store.ts) and where it keeps its history: a data directory's
 * files, memory (files-log.ts), or a PostgreSQL database shared with other instances (postgres.ts).
 *
 * Every backend keeps the same three things: a checkpoint of the state, the journal of the commits
 * after it (one entry per commit, the records it changed) and the event log (one JSON line per
 * event). The store holds the whole state in memory and has one commit path over this interface:
 * `commit` hands the batch the commits other writers made since this store's last (none on a
 * backend with one writer), the batch runs on that state, and the backend makes its journal entry
 * and events durable before the promise resolves. A backend that fails leaves nothing of the commit
 * behind (or, for a COMMIT left unanswered, says so with a CommitInDoubt); the store undoes the
 * batch in memory and answers its writes 503.
 */
import type { FailureTable } from './failure-table'
import type { StateDoc } from './records'
import type { JournalEntry } from './state-journal'

/**
 * One commit, as written and as read back: its journal entry and its events' lines, each the
 * event's JSON ending with the commit's number (`eventLine` in event-log.ts).
 */
export interface Commit {
  entry: JournalEntry
  lines: string[]
  /** The entry's changes as JSON, as stored (its length counts towards the next checkpoint). */
  changesText: string
}

/** Where the store's state stood after its last commit: `commit` and `read` hand on what follows. */
export interface LogPosition {
  seq: number
  lastEventId: number
}

/** A reading of a log as it stands, made beside its writers, changing nothing (`StoreLog.snapshot`: a backup). */
export interface Snapshot {
  /** The latest checkpoint, and the commits after it, which follow on from it. */
  checkpoint: StateDoc
  commits: readonly JournalEntry[]
  /** The secret key, or null while the log has none. */
  secretKey: Buffer | null
  /** Calls `onLine` with the JSON line of events 1 to `lastId`, oldest first, checking that the ids run on. */
  events(lastId: number, onLine: (line: string) => void): Promise<void>
}

/** What a restore writes into a log that holds no store (`StoreLog.fill`), in this order. */
export interface Filling {
  /** Appends events (their lines as the log keeps them, `firstId` the first one's id), from event 1 on, in order. */
  events(lines: string[], firstId: number): Promise<void>
  /** Last: the state the events lead to, as the checkpoint, and the secret key (null: none yet). */
  checkpoint(state: StateDoc, secretKey: Buffer | null): Promise<void>
}

/** What a store opens on (`StoreLog.load`). */
export interface Loaded {
  /** The latest checkpoint, or null for a new store (which then starts from the empty state). */
  checkpoint: StateDoc | null
  /** The commits after the checkpoint, oldest first, for the store to replay. */
  commits: readonly JournalEntry[]
}

export interface StoreLog {
  /** The log in words, for logs and for `/ready` ("PostgreSQL host:5432/db schema public"). */
  readonly name: string
  /** The checkpoint's and the journal's names, for the errors that stop a start. */
  readonly checkpointName: string
  readonly journalName: string

  /**
   * Reads the latest checkpoint and the commits after it, changing nothing that holds data. Throws
   * a StoreLoadError for what a crash cannot leave (a checkpoint missing beside data, say).
   */
  load(): Promise<Loaded>
  /**
   * Once the store has checked the checkpoint and replayed the commits onto it (`state`): checks
   * that the rest of the log agrees with that state, that it can be written, and only then cuts
   * what a crash left half written and writes a first checkpoint for a new store. Throws a
   * StoreLoadError (or a DataDirError) having changed nothing.
   */
  recover(state: StateDoc): Promise<void>

  /**
   * Makes one commit durable. `body` gets the commits made after `after` by other writers (none
   * for a backend with one writer), oldest first, and returns the commit to write, or null to
   * write nothing. Resolves once the commit is durable (fsynced, or COMMIT answered); rejects
   * having left nothing of it, or with a CommitInDoubt when the outcome cannot be known (the
   * commit then comes back through `read` if it took effect). Never waits past `timeoutMs`.
   */
  commit(after: LogPosition, body: (others: Commit[]) => Commit | null): Promise<void>
  /** The commits made after `after` by other writers, oldest first (catching up); bounded as `commit`. */
  read(after: LogPosition): Promise<Commit[]>
  /**
   * Has `listener` hear of commits other writers make: with the commit's number (a NOTIFY) or with
   * null (a periodic look, for a notification lost), best effort. A backend with one writer never calls it.
   */
  listen(listener: (seq: number | null) => void): Promise<void>

  /** Bytes of commits since the last checkpoint this store knows of: past its bound the store checkpoints. */
  readonly journalBytes: number
  /**
   * Writes a checkpoint of `state` (between batches, so it is whole) so that later starts replay
   * less; the commits it covers can then go. Resolves to whether it wrote one (another writer may
   * have just done so). On failure the log is as it was: every commit is still in the journal.
   */
  checkpoint(state: StateDoc): Promise<boolean>
  /**
   * Whether closing the store writes a final checkpoint: a data directory's does; a shared database
   * is checkpointed by the instances that go on.
   */
  readonly checkpointOnClose: boolean

  /**
   * While commits fail: throws when the log still cannot be written (having first cut off what a
   * failed commit left), resolves once it can. `/ready` calls it.
   */
  probe(): Promise<void>
  /** How long one call (`commit`, `read`, `checkpoint`) may wait, in ms: Infinity for local files. */
  readonly timeoutMs: number
  /** A failure of this log in words, for `/ready`, the 503 and the log: "no space left on device (ENOSPC)". */
  describe(error: unknown): string

  /**
   * Calls `onLine` with the JSON line of each committed event after `after` up to `lastId`, oldest
   * first, checking that the ids run on without a gap.
   */
  readEvents(after: number, lastId: number, onLine: (line: string) => void): Promise<void>
  /** The event log as a file of this machine that other threads can read (the event search), or null. */
  readonly eventsPath: string | null
  /**
   * Which log this is, for a log kept elsewhere that other threads read from a local copy (the event
   * search's, which this names so that it knows the copy again); null when there is nothing to copy:
   * the log is a file here (`eventsPath`), or lives and dies in this process's memory.
   */
  readonly identity: string | null

  /** The key token secrets are hashed with, kept with the log (outside the state). */
  readonly secretKey: Buffer
  /** The sign-in throttle's counts when the log keeps them for every instance; else the throttle keeps its own. */
  readonly failures?: FailureTable

  /**
   * Reads the log as it stands, changing nothing, beside writers that go on (a backup), and hands the
   * reading to `use`, which runs while it holds (a database's snapshot stays open until `use`
   * resolves). Throws when the log holds no store.
   */
  snapshot<T>(use: (snapshot: Snapshot) => Promise<T>): Promise<T>
  /**
   * Fills the log, which must hold no store (else it throws, having changed nothing), with the
   * store `use` writes through the Filling it is handed (a restore). The log holds that store only
   * once `use` resolves, all at once (files moved into place, one transaction); if `use` throws,
   * the log is left as it was.
   */
  fill<T>(use: (filling: Filling) => Promise<T>): Promise<T>

  /** Stops listening and lets go of files and connections; every acknowledged commit is already durable. */
  close(): Promise<void>
}

/**
 * A commit whose COMMIT was sent but not answered (the connection broke, or the database did not
 * answer in time): it may have taken effect or not. The store undoes it in memory, as for any
 * failed commit, and reads the log: if it did take effect, it comes back as a commit of the log,
 * applied once. Its writes are answered as of unknown outcome, never as failed.
 */
export class CommitInDoubt extends Error {
  override name = 'CommitInDoubt'
  constructor(override readonly cause: unknown) {
    super((cause as Error)?.message ?? String(cause))
  }
}
