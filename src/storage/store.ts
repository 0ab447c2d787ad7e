/**
 * The one way state changes. A write is a synchronous `work` function run inside `transact`:
 * it reads the current state, stages record changes and events on a `Tx`, and either returns
 * (everything it staged is applied) or throws (nothing is). Work runs one item at a time, in
 * arrival order, so writes are serialised without locks.
 *
 * Group commit: work items that arrive while a commit is being made durable wait; the next batch
 * runs all of them, then makes their combined changes durable with one commit of the log (log.ts;
 * on a data directory one append to the event log and one line in the state journal, on
 * PostgreSQL one transaction), and only then answers them. A write costs what it changed, whatever
 * the size of the history or of the state. The events of one commit share one `createdAt`, and
 * each line of the log carries the commit's number (event-log.ts): that, and ids that run on
 * without a gap, is how start-up knows the events past the state are the one commit a crash can
 * have left unacknowledged (files-log.ts).
 *
 * A failed commit (a full disk, an I/O error, a short write, a database that does not answer) is
 * undone, not latched: a batch is applied to the state as it runs (so later items of the batch,
 * and the record watchers of derived indexes, see earlier ones), and keeps what it replaced; if
 * the write fails, the log leaves nothing of it (a data directory's files are cut back to their
 * length after the last durable commit) and the records, counters and watchers are put back in
 * reverse order, so the state in memory is exactly what is durable. The batch's writes answer 503,
 * commit listeners (the event search) never hear of it, and the next commit simply tries again:
 * once space is freed the service recovers without a restart. Until then `writeProblem` says why
 * (for `/ready`). Between a batch's apply and its fsync, readers can see its changes (like Redis
 * with `appendfsync always`); they are undone if the write fails. We chose this over staging a
 * copy because work items of one batch must see each other, and derived indexes follow the
 * watchers either way.
 *
 * A checkpoint that fails (say no room for `.state.json.tmp`) does not fail the commit that
 * triggered it, which is already durable in the journal: the temp file is removed, a warning
 * logged, and the checkpoint tried again after a growing delay (1 s up to a minute).
 */
import type { AppError } from '../errors'
import type { Commit, StoreLog } from './log'
import type { recordChecks } from './record-check'
import type { Collection, EventRecord, RecordOf, StateDoc } from './records'
import { committedReader, type EventAuthor, type RecordWatcher, type StateReader, type Tx, type WriteRule } from './tx'
import { undoBatch } from './undo'
import { applyCommits, runBatch, failureOf, type EventDeriver, type RanBatch, type WorkItem } from './batch'
import { loadStore } from './load'
import { eventOfLine } from './event-log'
import { logAlways } from '../log'
import {
  CHECKPOINT_AFTER_BYTES,
  CHECKPOINT_RETRY_MAX_MS,
  CHECKPOINT_RETRY_MIN_MS,
  PROBE_INTERVAL_MS,
  type CommitListener,
  type StoreOptions,
} from './store-options'

export { deepFreeze, Tx, type EventAuthor, type StagedEvent, type StateReader, type WriteRule } from './tx'
export type { EventDeriver } from './batch'
export { CHECKPOINT_AFTER_BYTES, type CommitListener, type StoreOptions } from './store-options'

export class Store {
  private queue: WorkItem[] = []
  private committing = false
  /** Why the last commit could not be made durable; null once one is. */
  private problem: string | null = null
  private checkpointDelay = 0
  private checkpointNotBefore = 0
  private lastProbe = 0
  private probing: Promise<void> | null = null
  private idle: Promise<void> = Promise.resolve()
  private idleResolve: (() => void) | null = null
  private readonly listeners: CommitListener[] = []
  private readonly timers: ((seconds: number) => void)[] = []
  private readonly closeHooks: (() => Promise<void>)[] = []
  private readonly watchers: RecordWatcher[] = []
  private readonly derivers: EventDeriver[] = []
  private readonly rules: WriteRule[] = []
  private readonly notify: RecordWatcher = (collection, key, before, after) => {
    for (const watcher of this.watchers) watcher(collection, key, before, after)
  }
  /** Another writer committed (or the log's timer fired), so the loop reads what is new. */
  private catchUpWanted = false
  /** When the commit loop's current call to the log began. */
  private callStarted = 0
  private closed = false

  private constructor(
    private readonly data: StateDoc,
    /** Where the store keeps its history (log.ts): a data directory, memory, or a shared database. */
    readonly log: StoreLog,
    private readonly checkpointAfterBytes: number,
    private readonly checks: ReturnType<typeof recordChecks>,
  ) {}

  /**
   * Loads the checkpoint, replays the journal, checks every record, and only then has the log cut
   * what a crash left half written (a torn journal line, the events of one unacknowledged commit).
   * Then hears of other writers' commits, if the log has any.
   */
  static async open(log: StoreLog, options: StoreOptions): Promise<Store> {
    const { state, checks } = await loadStore(log, options.collections)
    const store = new Store(state, log, options.checkpointAfterBytes ?? CHECKPOINT_AFTER_BYTES, checks)
    await log.listen(seq => {
      if (seq === null || seq > store.state.commitSeq) store.catchUp()
    })
    return store
  }

  /** Has the commit loop read and apply other writers' commits, after any writes already queued. */
  private catchUp() {
    if (this.closed) return
    this.catchUpWanted = true
    if (!this.committing) void this.commitLoop()
  }

  /** The committed state. Its records are frozen: copy one before changing it, and change it only in `transact`. */
  get state(): Readonly<StateDoc> {
    return this.data
  }

  /** The key that token secrets are hashed with: the log's, kept out of the state. */
  get secretKey(): Buffer {
    return this.log.secretKey
  }

  /** Reads of the committed state; records are frozen. */
  readonly reader: StateReader = committedReader(this)

  /** The id of the last event; events are numbered 1, 2, 3… */
  get lastEventId(): number {
    return this.data.lastEventId
  }

  /** Why writes cannot be made durable (the last commit failed), or null. */
  get writeProblem(): string | null {
    return this.problem
  }

  /**
   * While writes fail, probes the log (at most once a second): once it takes writes again,
   * `writeProblem` clears without waiting for a client to write. Resolves to `writeProblem`, or,
   * while a call to the log has waited past its bound, to that.
   */
  async recheck(): Promise<string | null> {
    const waited = Date.now() - this.callStarted
    if (this.committing && waited > this.log.timeoutMs) return `${this.log.name}: no answer for ${waited} ms`
    if (this.problem === null || this.committing || this.probing || Date.now() - this.lastProbe < PROBE_INTERVAL_MS)
      return this.problem
    this.lastProbe = Date.now()
    // A commit that starts meanwhile waits for this, so that the files are never cut under it.
    this.probing = (async () => {
      try {
        await this.log.probe()
        this.problem = null
      } catch (error) {
        this.problem = this.log.describe(error)
      }
    })()
    await this.probing
    this.probing = null
    return this.problem
  }

  /** Calls `onEvent` for every committed event after `after` up to `lastId`, oldest first. */
  readEvents(onEvent: (event: EventRecord) => void, after = 0, lastId = this.lastEventId): Promise<void> {
    return this.log.readEvents(after, lastId, line => onEvent(eventOfLine(line)))
  }

  /**
   * The lines of the committed events after `after` up to `lastId`, oldest first, as the log keeps
   * them: each ends with its commit's number, which `eventOfLine` (event-log.ts) takes off.
   */
  readEventLines(lastId: number, onLine: (line: string) => void, after = 0): Promise<void> {
    return this.log.readEvents(after, lastId, onLine)
  }

  /** Called after each durable commit with how long making it durable took, in seconds (metrics). */
  onCommitTimed(listener: (seconds: number) => void): void {
    this.timers.push(listener)
  }

  /**
   * Called after each durable commit (never a failed one), this store's and other writers' alike,
   * with the events it added and their lines as the log keeps them (made once, for the log and for
   * listeners alike; each ends with the commit's number, see `eventOfLine` in event-log.ts),
   * before its writes are answered.
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
    for (const [key, record] of Object.entries(this.data[collection])) listener(key, undefined, record as RecordOf<C>)
    this.watchers.push((changed, key, before, after) => {
      if (changed === collection) listener(key, before as RecordOf<C> | undefined, after as RecordOf<C> | undefined)
    })
  }

  /** Holds every write from now on to `rule` (see WriteRule): a feature's rule over what other features write. */
  addRule(rule: WriteRule): void {
    this.rules.push(rule)
  }

  /**
   * Has `deriver` stage records from every write's events, in the same commit as the events (see
   * EventDeriver in batch.ts): an outbox written with what it is about, or not at all.
   */
  deriveFromEvents(deriver: EventDeriver): void {
    this.derivers.push(deriver)
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
   * Waits for queued writes, then (on a log that wants one) writes a checkpoint so the next start
   * has no journal to replay, and closes the log. Resolves to why the checkpoint could not be
   * written, or null: either way every acknowledged write is durable (in the journal if not in the
   * checkpoint).
   */
  async close(): Promise<string | null> {
    if (this.closed) return null
    for (const hook of this.closeHooks) await hook()
    await this.flush()
    const problem = this.log.checkpointOnClose && this.log.journalBytes > 0 ? await this.tryCheckpoint() : null
    this.closed = true
    await this.log.close()
    return problem
  }

  private async commitLoop() {
    this.committing = true
    this.idle = new Promise(resolve => (this.idleResolve = resolve))
    if (this.probing) await this.probing
    while (this.queue.length > 0 || this.catchUpWanted) {
      const batch = this.queue
      this.queue = []
      await this.commit(batch)
    }
    this.committing = false
    this.idleResolve?.()
  }

  /**
   * The one commit path. A batch (or, with none queued, a catch-up alone) is one call to the log:
   * the commits other writers made are applied first, then the batch runs on that state and the
   * log makes its commit durable. Its writes are answered once it is (before any checkpoint). A
   * commit that fails is undone; one left in doubt (a COMMIT unanswered, see CommitInDoubt) too,
   * its writes answered as of unknown outcome.
   */
  private async commit(batch: WorkItem[]) {
    this.catchUpWanted = false
    this.callStarted = Date.now()
    const state = this.data
    let ran: RanBatch | null = null
    try {
      const after = { seq: state.commitSeq, lastEventId: state.lastEventId }
      if (batch.length === 0) this.applyOthers(await this.log.read(after))
      else
        await this.log.commit(after, others => {
          this.applyOthers(others)
          ran = runBatch(state, batch, this.notify, this.rules, this.derivers)
          if (ran === null) return null
          return {
            entry: {
              seq: state.commitSeq,
              lastEventId: state.lastEventId,
              nextUserId: state.nextUserId,
              changes: ran.changes,
            },
            lines: ran.lines,
            changesText: JSON.stringify(ran.changes),
          }
        })
    } catch (error) {
      const { problem, refused, answer, timedOut } = failureOf(error, cause => this.log.describe(cause))
      if (ran) await this.undo(ran, problem, error, answer)
      else if (problem !== this.problem)
        logAlways(
          'error',
          batch.length > 0
            ? 'commit failed before it ran; the next write tries again'
            : 'cannot read the commits of other instances; trying again',
          { error: problem },
        )
      this.problem = problem
      this.catchUpWanted = false // until the log's next look: a loop never idle would hold up `flush` (and a stop)
      // Writes queued behind an unanswered call have waited the bound already (undo's keep its answer).
      for (const item of [...batch, ...(timedOut ? this.queue.splice(0) : [])]) item.reject(refused)
      return
    }
    this.problem = null
    const acknowledged = ran as RanBatch | null
    if (acknowledged) this.acknowledge(acknowledged)
    if (this.log.journalBytes >= this.checkpointAfterBytes && Date.now() >= this.checkpointNotBefore)
      await this.tryCheckpoint()
  }

  /** A batch's commit is durable: listeners hear of it, then its writes are answered. */
  private acknowledge(ran: RanBatch) {
    const seconds = (performance.now() - ran.started) / 1000
    for (const timer of this.timers) timer(seconds)
    for (const listener of this.listeners) listener(ran.added, ran.lines)
    for (const { item, result } of ran.done) item.resolve(result)
  }

  /** A failed commit (the log has already left nothing of it) is undone in memory before its writes get `answer`. */
  private async undo(ran: RanBatch, problem: string, detail: unknown, answer: AppError) {
    undoBatch(this.data, ran.replaced, ran.counters, this.notify)
    this.problem = problem
    logAlways('error', 'commit failed and was undone; the next write tries again', {
      error: problem,
      detail: (detail as Error)?.message,
    })
    for (const { item } of ran.done) item.reject(answer)
  }

  /** Other writers' commits, applied as this store's own are heard of (see batch.ts). */
  private applyOthers(commits: readonly Commit[]) {
    applyCommits(this.data, commits, this.checks, this.notify, (commit, events) => {
      for (const listener of this.listeners) listener(events, commit.lines)
    })
  }

  /**
   * Writes a checkpoint (between batches, so the state is whole; the commit loop waits for this, so
   * it stays so); on failure logs it, backs off, and resolves to the problem instead of throwing.
   */
  private async tryCheckpoint(): Promise<string | null> {
    try {
      this.callStarted = Date.now()
      await this.log.checkpoint(this.data)
      this.checkpointDelay = 0
      this.checkpointNotBefore = 0
      return null
    } catch (error) {
      const { problem, refused, timedOut } = failureOf(error, cause => this.log.describe(cause))
      if (timedOut) for (const item of this.queue.splice(0)) item.reject(refused)
      this.checkpointDelay = Math.min(
        Math.max(this.checkpointDelay * 2, CHECKPOINT_RETRY_MIN_MS),
        CHECKPOINT_RETRY_MAX_MS,
      )
      this.checkpointNotBefore = Date.now() + this.checkpointDelay
      logAlways('warn', 'checkpoint failed; the journal holds every commit, the checkpoint is tried again later', {
        error: problem,
        retryAfterMs: this.checkpointDelay,
      })
      return problem
    }
  }
}
