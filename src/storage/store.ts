/**
 * The one way state changes. A write is a synchronous `work` function run inside `transact`:
 * it reads the current state, stages record changes and events on a `Tx`, and either returns
 * (everything it staged is applied) or throws (nothing is). Work runs one item at a time, in
 * arrival order, so writes are serialised without locks.
 *
 * Group commit: work items that arrive while a commit is on disk wait; the next batch runs all of
 * them, then makes their combined changes durable with one append to the event log and one line
 * in the state journal, and only then answers them. A write costs what it changed, whatever the
 * size of the history or of the state. The events of one commit share one `createdAt`: that, and
 * ids that run on without a gap, is how start-up knows the events past the state are the one
 * commit a crash can have left unacknowledged. Events are appended (and fsynced) first; the
 * journal line, naming the last event id the commit includes, acknowledges the commit (crash
 * atomicity; start-up's checks and cuts: load.ts).
 *
 * A failed commit (a full disk, an I/O error, a short write, a database that does not answer) is
 * undone, not latched: a batch is applied to the state as it runs (so later items of the batch,
 * and the record watchers of derived indexes, see earlier ones), and keeps what it replaced; if
 * the write fails, the records, counters and watchers are put back in reverse order and both files
 * are cut back to their length after the last durable commit, so the state in memory is exactly
 * what is on disk. The batch's writes answer 503, commit listeners (the event search) never hear
 * of it, and the next commit simply tries again: once space is freed the service recovers without
 * a restart. Until then `writeProblem` says why (for `/ready`). Between a batch's apply and its
 * fsync, readers can see its changes (like Redis with `appendfsync always`); they are undone if
 * the write fails. We chose this over staging a copy because work items of one batch must see
 * each other, and derived indexes follow the watchers either way.
 *
 * A checkpoint that fails (say no room for `.state.json.tmp`) does not fail the commit that
 * triggered it, which is already durable in the journal: the temp file is removed, a warning
 * logged, and the checkpoint tried again after a growing delay (1 s up to a minute).
 */
import type { Low } from 'lowdb'
import { StoreFailedError, type AppError } from '../errors'
import { describeIoError } from './files'
import { CATCH_UP_MS, type SharedCommit, type SharedLog } from './postgres'
import type { recordChecks } from './record-check'
import type { JournalEntry } from './state-journal'
import type { Collection, EventRecord, RecordOf, StateDoc } from './records'
import { committedReader, type EventAuthor, type RecordWatcher, type StateReader, type Tx } from './tx'
import { newKey } from './secret-key'
import { undoBatch } from './undo'
import { applySharedCommits, runBatch, failureOf, type RanBatch, type WorkItem } from './batch'
import { loadStore } from './load'
import {
  CHECKPOINT_AFTER_BYTES,
  CHECKPOINT_RETRY_MAX_MS,
  CHECKPOINT_RETRY_MIN_MS,
  PROBE_INTERVAL_MS,
  PROBE_MIN_BYTES,
  type CommitListener,
  type StoreFiles,
  type StoreOptions,
} from './store-files'

export { deepFreeze, Tx, type EventAuthor, type StagedEvent, type StateReader } from './tx'
export { CHECKPOINT_AFTER_BYTES, type CommitListener, type StoreFiles, type StoreOptions } from './store-files'

function logLine(level: 'warn' | 'error', msg: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }))
}

export class Store {
  private queue: WorkItem[] = []
  private committing = false
  /** Why the last commit could not be made durable; null once one is. */
  private problem: string | null = null
  /** A failed commit's bytes could not be cut off the files; the next commit cuts them first. */
  private cutPending = false
  /** The files' lengths after the last durable commit. */
  private durable = { events: 0, journal: 0 }
  private checkpointDelay = 0
  private checkpointNotBefore = 0
  private lastProbe = 0
  private probing: Promise<void> | null = null
  /** Bytes `/ready` asks the directory to take before it says writes work again: twice the failed commit's. */
  private probeBytes = PROBE_MIN_BYTES
  private idle: Promise<void> = Promise.resolve()
  private idleResolve: (() => void) | null = null
  private readonly listeners: CommitListener[] = []
  private readonly timers: ((seconds: number) => void)[] = []
  private readonly closeHooks: (() => Promise<void>)[] = []
  private readonly watchers: RecordWatcher[] = []
  private readonly notify: RecordWatcher = (collection, key, before, after) => {
    for (const watcher of this.watchers) watcher(collection, key, before, after)
  }
  /** Shared database: another instance committed (or the timer fired), so the loop reads what is new. */
  private catchUpWanted = false
  private catchUpTimer: ReturnType<typeof setInterval> | null = null
  /** Shared database: when the commit loop's current call to it began. */
  private callStarted = 0
  /** Shared database: bytes of the commits applied since the last checkpoint, and the commit that was at. */
  private sharedBytes = 0
  private sharedSince = 0
  private closed = false

  private constructor(
    private readonly stateDb: Low<StateDoc>,
    private readonly files: StoreFiles,
    private readonly checkpointAfterBytes: number,
    private readonly checks: ReturnType<typeof recordChecks>,
  ) {
    this.durable = { events: files.events.size, journal: files.journal.size }
  }

  /**
   * Loads the checkpoint, replays the journal, checks every record, and only then cuts what a
   * crash left half written (a torn journal line, the events of one unacknowledged commit).
   */
  static async open(files: StoreFiles, options: StoreOptions): Promise<Store> {
    const { stateDb, checks, journal } = await loadStore(files, options.collections)
    const store = new Store(stateDb, files, options.checkpointAfterBytes ?? CHECKPOINT_AFTER_BYTES, checks)
    if (files.shared) await store.share(files.shared, journal.entries)
    return store
  }

  /** Starts hearing of other instances' commits: at once through NOTIFY, and every CATCH_UP_MS whatever happens. */
  private async share(shared: SharedLog, replayed: readonly JournalEntry[]) {
    this.sharedSince = this.state.commitSeq - replayed.length
    this.sharedBytes = replayed.reduce((sum, entry) => sum + JSON.stringify(entry.changes).length, 0)
    await shared.listen(seq => {
      if (seq > this.state.commitSeq) this.catchUp()
    })
    this.catchUpTimer = setInterval(() => this.catchUp(), CATCH_UP_MS)
    this.catchUpTimer.unref?.()
  }

  /** Has the commit loop read and apply other instances' commits, after any writes already queued. */
  private catchUp() {
    if (this.closed) return
    this.catchUpWanted = true
    if (!this.committing) void this.commitLoop()
  }

  /** The committed state. Its records are frozen: copy one before changing it, and change it only in `transact`. */
  get state(): Readonly<StateDoc> {
    return this.stateDb.data
  }

  /** The key that token secrets are hashed with: the directory's, kept out of the state. */
  get secretKey(): Buffer {
    return (this.files.secretKey ??= newKey())
  }

  /** Reads of the committed state; records are frozen. */
  readonly reader: StateReader = committedReader(this)

  /** The id of the last event; events are numbered 1, 2, 3… */
  get lastEventId(): number {
    return this.stateDb.data.lastEventId
  }

  /** The event log file, for readers in other threads; null for a memory store. */
  get eventLogPath(): string | null {
    return this.files.events.path
  }

  /** Why writes cannot be made durable (the last commit failed), or null. */
  get writeProblem(): string | null {
    return this.problem
  }

  /**
   * While writes fail, probes the data directory (at most once a second): once it takes writes
   * again, `writeProblem` clears without waiting for a client to write. Resolves to `writeProblem`,
   * or, while a call to a shared database has waited past its bound, to that.
   */
  async recheck(): Promise<string | null> {
    const { shared } = this.files,
      waited = Date.now() - this.callStarted
    if (shared && this.committing && waited > shared.timeoutMs) return `${shared.name}: no answer for ${waited} ms`
    if (this.problem === null || this.committing || this.probing || Date.now() - this.lastProbe < PROBE_INTERVAL_MS)
      return this.problem
    this.lastProbe = Date.now()
    // A commit that starts meanwhile waits for this, so that the files are never cut under it.
    this.probing = (async () => {
      try {
        if (this.cutPending) await this.cutBack()
        await this.files.probe?.(this.probeBytes)
        this.problem = null
      } catch (error) {
        this.problem = shared ? shared.describe(error) : describeIoError(error)
      }
    })()
    await this.probing
    this.probing = null
    return this.problem
  }

  /** Calls `onEvent` for every committed event, oldest first. */
  readEvents(onEvent: (event: EventRecord) => void): Promise<void> {
    return this.files.events.read(this.lastEventId, onEvent)
  }

  /** The JSON lines of the committed events after `after` up to `lastId`, oldest first: as kept where the log keeps lines (a database), else printed. */
  readEventLines(lastId: number, onLine: (line: string) => void, after = 0): Promise<void> {
    const { events } = this.files
    return (
      events.readLines?.(lastId, onLine, after) ??
      events.read(
        this.lastEventId,
        event => void (event.id > after && event.id <= lastId && onLine(JSON.stringify(event))),
      )
    )
  }

  /** The database the store is kept in (its name for logs, its identity for caches of its log, the sign-in counts), or null for files or memory. */
  get shared(): (Pick<SharedLog, 'name' | 'identity'> & Partial<Pick<SharedLog, 'failures'>>) | null {
    return this.files.shared ?? null
  }

  /** Called after each durable commit with how long making it durable took, in seconds (metrics). */
  onCommitTimed(listener: (seconds: number) => void): void {
    this.timers.push(listener)
  }

  /**
   * Called after each durable commit (never a failed one) with the events it added and their JSON
   * lines (made once, for the log and for listeners alike), before its writes are answered.
   */
  onCommit(listener: CommitListener): void {
    this.listeners.push(listener)
  }

  /**
   * Calls `listener` for every record of `collection` now, then for each record a commit changes
   * (`before` undefined for a new record, `after` undefined for a deleted one), and again, the other
   * way round, when a failed commit is undone. For derived indexes.
   */
  watch<C extends Collection>(
    collection: C,
    listener: (key: string, before: RecordOf<C> | undefined, after: RecordOf<C> | undefined) => void,
  ): void {
    for (const [key, record] of Object.entries(this.stateDb.data[collection]))
      listener(key, undefined, record as RecordOf<C>)
    this.watchers.push((changed, key, before, after) => {
      if (changed === collection) listener(key, before as RecordOf<C> | undefined, after as RecordOf<C> | undefined)
    })
  }

  /**
   * Runs `hook` first thing in `close`, for a service that gathers writes in memory and commits them
   * in batches (SDK metrics): its last batch is then part of the final checkpoint.
   */
  beforeClose(hook: () => Promise<void>): void {
    this.closeHooks.push(hook)
  }

  transact<T>(actor: EventAuthor, work: (tx: Tx) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ actor, work, resolve: resolve as (value: unknown) => void, reject })
      if (!this.committing) void this.commitLoop()
    })
  }

  /** Resolves once every write queued so far is durable (or has failed). */
  async flush(): Promise<void> {
    await this.idle
  }

  /**
   * Waits for queued writes, then writes a checkpoint so the next start has no journal to replay.
   * Resolves to why the checkpoint could not be written, or null: either way every acknowledged
   * write is on disk (in the journal if not in the checkpoint).
   */
  async close(): Promise<string | null> {
    if (this.closed) return null
    for (const hook of this.closeHooks) await hook()
    await this.flush()
    if (this.files.shared) {
      // Every acknowledged write is in the database; the instances that go on checkpoint it.
      this.closed = true
      if (this.catchUpTimer) clearInterval(this.catchUpTimer)
      await this.files.shared.close()
      return null
    }
    if (this.cutPending) await this.cutBack().catch(() => {})
    return this.files.journal.size > 0 ? this.tryCheckpoint() : null
  }

  private async commitLoop() {
    this.committing = true
    this.idle = new Promise(resolve => (this.idleResolve = resolve))
    if (this.probing) await this.probing
    while (this.queue.length > 0 || this.catchUpWanted) {
      const batch = this.queue
      this.queue = []
      if (this.files.shared) await this.commitShared(this.files.shared, batch)
      else if (batch.length > 0) await this.commitFiles(batch)
    }
    this.committing = false
    this.idleResolve?.()
  }

  /** A batch's commit is durable: listeners hear of it, then its writes are answered. */
  private acknowledge(ran: RanBatch) {
    this.problem = null
    const seconds = (performance.now() - ran.started) / 1000
    for (const timer of this.timers) timer(seconds)
    for (const listener of this.listeners) listener(ran.added, ran.lines)
    for (const { item, result } of ran.done) item.resolve(result)
  }

  /** A failed commit is undone (and `cleanUp` run, cutting the files back) before its writes get `answer`, by default 503 saying why. */
  private async undo(
    ran: RanBatch,
    problem: string,
    detail: unknown,
    cleanUp?: () => Promise<void>,
    answer: AppError = new StoreFailedError(`The write could not be saved: ${problem}`),
  ) {
    undoBatch(this.stateDb.data, ran.replaced, ran.counters, this.notify)
    this.problem = problem
    await cleanUp?.()
    logLine('error', 'commit failed and was undone; the next write tries again', {
      error: problem,
      detail: (detail as Error)?.message,
    })
    for (const { item } of ran.done) item.reject(answer)
  }

  private async commitFiles(batch: WorkItem[]) {
    const ran = runBatch(this.stateDb.data, batch, this.notify)
    if (ran === null) return
    const state = this.stateDb.data
    try {
      if (this.cutPending) await this.cutBack()
      await this.files.events.append(ran.added, ran.lines)
      await this.files.journal.append({
        seq: state.commitSeq,
        lastEventId: state.lastEventId,
        nextUserId: state.nextUserId,
        changes: ran.changes,
      })
    } catch (error) {
      this.probeBytes = Math.max(
        PROBE_MIN_BYTES,
        2 * (ran.lines.reduce((sum, line) => sum + line.length + 1, 0) + JSON.stringify(ran.changes).length),
      )
      await this.undo(ran, describeIoError(error), error, () =>
        this.cutBack().catch(() => void (this.cutPending = true)),
      )
      return
    }
    this.durable = { events: this.files.events.size, journal: this.files.journal.size }
    if (this.files.journal.size >= this.checkpointAfterBytes && Date.now() >= this.checkpointNotBefore)
      await this.tryCheckpoint()
    this.acknowledge(ran)
  }

  /**
   * On a shared database, a batch (or, with none queued, a catch-up alone) is one transaction under
   * the cluster-wide commit lock: the commits others made are applied first, then the batch runs on
   * that state and its commit is written. Its writes are answered once the COMMIT is (before any
   * checkpoint); a COMMIT left unanswered is undone like a failure (see CommitInDoubt).
   */
  private async commitShared(shared: SharedLog, batch: WorkItem[]) {
    this.catchUpWanted = false
    this.callStarted = Date.now()
    const state = this.stateDb.data
    let ran: RanBatch | null = null
    let changesBytes = 0
    try {
      const after = { seq: state.commitSeq, lastEventId: state.lastEventId }
      if (batch.length === 0) this.applyShared(await shared.read(after))
      else
        await shared.commit(after, remote => {
          this.applyShared(remote)
          ran = runBatch(this.stateDb.data, batch, this.notify)
          if (ran === null) return null
          const changesText = JSON.stringify(ran.changes)
          changesBytes = changesText.length
          return {
            entry: {
              seq: state.commitSeq,
              lastEventId: state.lastEventId,
              nextUserId: state.nextUserId,
              changes: ran.changes,
            },
            lines: ran.lines,
            changesText,
          }
        })
    } catch (error) {
      const { problem, refused, answer, timedOut } = failureOf(error, cause => shared.describe(cause))
      if (ran) await this.undo(ran, problem, error, undefined, answer)
      else if (problem !== this.problem)
        logLine(
          'error',
          batch.length > 0
            ? 'commit failed before it ran; the next write tries again'
            : 'cannot read the commits of other instances; trying again',
          { error: problem },
        )
      this.problem = problem
      this.catchUpWanted = false // until the timer's next tick: a loop never idle would hold up `flush` (and a stop)
      // Writes queued behind an unanswered call have waited the bound already (undo's keep its answer).
      for (const item of [...batch, ...(timedOut ? this.queue.splice(0) : [])]) item.reject(refused)
      return
    }
    this.problem = null
    this.sharedBytes += changesBytes
    const acknowledged = ran as RanBatch | null
    if (acknowledged) this.acknowledge(acknowledged)
    if (this.sharedBytes >= this.checkpointAfterBytes && Date.now() >= this.checkpointNotBefore)
      await this.tryCheckpoint()
  }

  /** Other instances' commits, applied as this one's own are heard of (see batch.ts). */
  private applyShared(commits: readonly SharedCommit[]) {
    applySharedCommits(this.stateDb.data, commits, this.checks, this.notify, (commit, events) => {
      this.sharedBytes += commit.changesText.length
      for (const listener of this.listeners) listener(events, commit.lines)
    })
  }

  /** Cuts both files back to their length after the last durable commit. */
  private async cutBack() {
    await this.files.events.cutTo(this.durable.events)
    await this.files.journal.cutTo(this.durable.journal)
    this.cutPending = false
  }

  /** Writes a checkpoint; on failure logs it, backs off, and resolves to the problem instead of throwing. */
  private async tryCheckpoint(): Promise<string | null> {
    try {
      await this.checkpoint()
      this.checkpointDelay = 0
      this.checkpointNotBefore = 0
      return null
    } catch (error) {
      const { problem, refused, timedOut } = failureOf(error, cause =>
        this.files.shared ? this.files.shared.describe(cause) : describeIoError(cause),
      )
      if (timedOut) for (const item of this.queue.splice(0)) item.reject(refused)
      this.checkpointDelay = Math.min(
        Math.max(this.checkpointDelay * 2, CHECKPOINT_RETRY_MIN_MS),
        CHECKPOINT_RETRY_MAX_MS,
      )
      this.checkpointNotBefore = Date.now() + this.checkpointDelay
      logLine('warn', 'checkpoint failed; the journal holds every commit, the checkpoint is tried again later', {
        error: problem,
        retryAfterMs: this.checkpointDelay,
      })
      return problem
    } finally {
      this.durable = { events: this.files.events.size, journal: this.files.journal.size }
    }
  }

  /** The checkpoint holds every commit so far, so the journal can start afresh. */
  private async checkpoint() {
    const shared = this.files.shared
    if (shared) {
      // Between batches, so the state is whole; the commit loop waits for this, so it stays so.
      const state = this.stateDb.data
      this.callStarted = Date.now()
      await shared.checkpoint(state.commitSeq, this.sharedSince, () => JSON.stringify(state))
      this.sharedBytes = 0
      this.sharedSince = state.commitSeq
      return
    }
    await this.stateDb.write()
    await this.files.journal.reset()
  }
}
