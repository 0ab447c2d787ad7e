/**
 * The one way state changes. A write is a synchronous `work` function run inside `transact`:
 * it reads the current state, stages record changes and events on a `Tx`, and either returns
 * (everything it staged is applied) or throws (nothing is). Work runs one item at a time, in
 * arrival order, so writes are serialised without locks.
 *
 * Group commit: work items that arrive while a commit is on disk wait; the next batch runs all of
 * them, then makes their combined changes durable with one append to the event log and one line
 * in the state journal. Every item of the batch is answered only after that. A write therefore
 * costs what it changed, whatever the size of the history or of the state.
 *
 * Crash atomicity: events are appended (and fsynced) first; the journal line, which names the
 * last event id the commit includes, is what acknowledges the commit. At start, the checkpoint
 * (`state.json`) is loaded, the journal's later commits replayed, and events past the last
 * acknowledged id cut off. When the journal has grown, a new checkpoint is written and the
 * journal starts afresh.
 *
 * Between a batch's apply and its fsync, readers can already see its changes (like Redis with
 * `appendfsync always`). If the disk write fails the store stops taking writes: the process must
 * restart from what is on disk.
 */
import { Low, type Adapter } from 'lowdb'
import { StoreFailedError } from '../errors'
import type { EventLog } from './event-log'
import { StoreLoadError } from './files'
import { replayJournal, type JournalEntry, type StateJournal } from './state-journal'
import { collection, COLLECTIONS, emptyState, type Collection, type EventRecord, type RecordOf, type StateDoc, type TagRecord } from './records'

export interface Actor {
  /** Recorded as the events' `createdBy`: a token name, or `system` for start-up seeding. */
  name: string
  userId: number | null
}

export const SYSTEM_ACTOR: Actor = { name: 'system', userId: -1337 }

export interface NewEvent {
  type: string
  project?: string | null
  featureName?: string | null
  environment?: string | null
  data?: unknown
  preData?: unknown
  tags?: readonly TagRecord[]
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/** A JSON-only deep copy: what the store keeps is exactly what the files will hold. */
function jsonCopy<T>(value: T): T {
  return value === undefined ? value : JSON.parse(JSON.stringify(value))
}

/** Read access to records, the same inside a transaction (`Tx`) and outside it (`Store.reader`). */
export interface StateReader {
  get<C extends Collection>(collection: C, key: string): RecordOf<C> | undefined
  values<C extends Collection>(collection: C): RecordOf<C>[]
}

function committedReader(store: { state: Readonly<StateDoc> }): StateReader {
  return {
    get: (collection, key) => {
      const records = store.state[collection]
      return Object.hasOwn(records, key) ? (records[key] as never) : undefined
    },
    values: (collection) => Object.values(store.state[collection]) as never,
  }
}

/** The staged changes of one write. Reads through it see its own staged records. */
export class Tx implements StateReader {
  readonly now = new Date().toISOString()
  private readonly puts = new Map<Collection, Map<string, unknown>>()
  private readonly stagedEvents: NewEvent[] = []
  private userIds = 0

  constructor(
    private readonly state: StateDoc,
    readonly actor: Actor,
  ) {}

  get<C extends Collection>(collection: C, key: string): RecordOf<C> | undefined {
    const staged = this.puts.get(collection)
    if (staged?.has(key)) return (staged.get(key) ?? undefined) as RecordOf<C> | undefined
    return Object.hasOwn(this.state[collection], key) ? (this.state[collection][key] as RecordOf<C>) : undefined
  }

  values<C extends Collection>(collection: C): RecordOf<C>[] {
    const staged = this.puts.get(collection)
    const result: RecordOf<C>[] = []
    for (const [key, value] of Object.entries(this.state[collection])) {
      if (!staged?.has(key)) result.push(value as RecordOf<C>)
    }
    if (staged) for (const value of staged.values()) if (value !== null) result.push(value as RecordOf<C>)
    return result
  }

  put<C extends Collection>(collection: C, key: string, value: RecordOf<C>): void {
    this.stage(collection, key, jsonCopy(value))
  }

  delete(collection: Collection, key: string): void {
    this.stage(collection, key, null)
  }

  appendEvent(event: NewEvent): void {
    this.stagedEvents.push(event)
  }

  allocateUserId(): number {
    return this.state.nextUserId + this.userIds++
  }

  /** The records this transaction has staged in `collection` (null for a deletion). */
  *staged<C extends Collection>(collection: C): Iterable<[string, RecordOf<C> | null]> {
    const staged = this.puts.get(collection)
    if (staged) for (const [key, value] of staged) yield [key, value as RecordOf<C> | null]
  }

  private stage(collection: Collection, key: string, value: unknown) {
    let staged = this.puts.get(collection)
    if (!staged) this.puts.set(collection, (staged = new Map()))
    staged.set(key, value)
  }

  /**
   * Applies the staged changes to `state`, adds them to `changes` (for the journal) and returns the
   * new events. Called by the store only.
   */
  applyTo(state: StateDoc, changes: JournalEntry['changes'], notify: RecordWatcher): EventRecord[] {
    for (const [collection, staged] of this.puts) {
      const records = state[collection] as Record<string, unknown>
      for (const [key, value] of staged) {
        const before = records[key]
        if (value === null) delete records[key]
        else records[key] = deepFreeze(value)
        changes.push([collection, key, value])
        notify(collection, key, before, value ?? undefined)
      }
    }
    state.nextUserId += this.userIds
    const added: EventRecord[] = []
    for (const event of this.stagedEvents) {
      const record: EventRecord = deepFreeze({
        id: state.lastEventId + 1,
        createdAt: this.now,
        type: event.type,
        createdBy: this.actor.name,
        createdByUserId: this.actor.userId,
        environment: event.environment ?? null,
        project: event.project ?? null,
        featureName: event.featureName ?? null,
        data: (jsonCopy(event.data) ?? null) as EventRecord['data'],
        preData: (jsonCopy(event.preData) ?? null) as EventRecord['preData'],
        tags: jsonCopy([...(event.tags ?? [])]),
      })
      state.lastEventId = record.id
      added.push(record)
    }
    return added
  }
}

type RecordWatcher = (collection: Collection, key: string, before: unknown, after: unknown) => void

interface WorkItem {
  actor: Actor
  work: (tx: Tx) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export type CommitListener = (events: readonly EventRecord[], lines: readonly string[]) => void

export interface StoreFiles {
  /** The checkpoint of the state, through lowdb. */
  checkpoint: Adapter<StateDoc>
  journal: StateJournal
  events: EventLog
  /** Shown in load errors: the checkpoint's file path. */
  checkpointName?: string
}

/** A new checkpoint is written once the journal holds this many bytes. */
export const CHECKPOINT_AFTER_BYTES = 8 * 1024 * 1024

export class Store {
  private queue: WorkItem[] = []
  private committing = false
  private failure: Error | null = null
  private idle: Promise<void> = Promise.resolve()
  private idleResolve: (() => void) | null = null
  private readonly listeners: CommitListener[] = []
  private readonly timers: ((seconds: number) => void)[] = []
  private readonly watchers: RecordWatcher[] = []
  private readonly notify: RecordWatcher = (collection, key, before, after) => {
    for (const watcher of this.watchers) watcher(collection, key, before, after)
  }

  private constructor(
    private readonly stateDb: Low<StateDoc>,
    private readonly files: StoreFiles,
    private readonly checkpointAfterBytes: number,
  ) {}

  /** Loads the checkpoint, replays the journal, and cuts the event log back to what was acknowledged. */
  static async open(files: StoreFiles, options: { checkpointAfterBytes?: number } = {}): Promise<Store> {
    const checkpointName = files.checkpointName ?? 'state'
    const stateDb = new Low<StateDoc>(files.checkpoint, emptyState())
    const checkpoint = await files.checkpoint.read()
    if (checkpoint !== null) stateDb.data = checkpoint
    const state = stateDb.data
    checkState(state, checkpointName)
    const journal = await files.journal.read()
    if (checkpoint === null) {
      // No checkpoint yet. A new data directory gets one at once, so that a missing checkpoint next
      // to a journal or events always means a damaged directory rather than a first start.
      if (journal.length > 0 || !(await files.events.isEmpty())) {
        throw new StoreLoadError(checkpointName, 'is missing, but the journal or the event log holds data; restore it or move the directory away')
      }
      await stateDb.write()
    }
    state.commitSeq ??= 0
    // Records are frozen; the collections holding them are not, so a commit can swap records in.
    for (const key of COLLECTIONS) {
      const records = (state[key] = collection<unknown>(state[key]) as never) as Record<string, unknown>
      for (const record of Object.values(records)) deepFreeze(record)
    }
    let replayed: boolean
    try {
      replayed = replayJournal(state, journal, deepFreeze)
    } catch (error) {
      throw new StoreLoadError(files.journal.name, (error as Error).message)
    }
    if (!replayed) throw new StoreLoadError(files.journal.name, `does not follow on from commit ${state.commitSeq} of the checkpoint; commits are missing`)
    await files.events.trimTo(state.lastEventId)
    return new Store(stateDb, files, options.checkpointAfterBytes ?? CHECKPOINT_AFTER_BYTES)
  }

  /** The committed state. Its records are frozen: copy one before changing it, and change it only in `transact`. */
  get state(): Readonly<StateDoc> {
    return this.stateDb.data
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

  /** Calls `onEvent` for every committed event, oldest first. */
  readEvents(onEvent: (event: EventRecord) => void): Promise<void> {
    return this.files.events.read(this.lastEventId, onEvent)
  }

  /** Called after each durable commit with how long making it durable took, in seconds (metrics). */
  onCommitTimed(listener: (seconds: number) => void): void {
    this.timers.push(listener)
  }

  /**
   * Called after each durable commit with the events it added and their JSON lines (made once,
   * for the log file and for listeners alike), before its writes are answered.
   */
  onCommit(listener: CommitListener): void {
    this.listeners.push(listener)
  }

  /**
   * Calls `listener` for every record of `collection` now, then for each record a commit changes
   * (`before` undefined for a new record, `after` undefined for a deleted one). For derived indexes.
   */
  watch<C extends Collection>(collection: C, listener: (key: string, before: RecordOf<C> | undefined, after: RecordOf<C> | undefined) => void): void {
    for (const [key, record] of Object.entries(this.stateDb.data[collection])) listener(key, undefined, record as RecordOf<C>)
    this.watchers.push((changed, key, before, after) => {
      if (changed === collection) listener(key, before as RecordOf<C> | undefined, after as RecordOf<C> | undefined)
    })
  }

  transact<T>(actor: Actor, work: (tx: Tx) => T): Promise<T> {
    if (this.failure) return Promise.reject(new StoreFailedError('The store could not save an earlier write; restart the service'))
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ actor, work, resolve: resolve as (value: unknown) => void, reject })
      if (!this.committing) void this.commitLoop()
    })
  }

  /** Resolves once every write queued so far is durable (or has failed). */
  async flush(): Promise<void> {
    await this.idle
  }

  /** Waits for queued writes, then writes a checkpoint so the next start has no journal to replay. */
  async close(): Promise<void> {
    await this.flush()
    if (!this.failure && this.files.journal.size > 0) await this.checkpoint()
  }

  private async commitLoop() {
    this.committing = true
    this.idle = new Promise((resolve) => (this.idleResolve = resolve))
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      const done: { item: WorkItem; result: unknown }[] = []
      const added: EventRecord[] = []
      const changes: JournalEntry['changes'] = []
      // The state document is changed only here, one item at a time.
      const state = this.stateDb.data
      for (const item of batch) {
        const tx = new Tx(state, item.actor)
        let result: unknown
        try {
          result = item.work(tx)
        } catch (error) {
          item.reject(error)
          continue
        }
        added.push(...tx.applyTo(state, changes, this.notify))
        done.push({ item, result })
      }
      if (done.length === 0) continue
      state.commitSeq++
      const lines = added.map((event) => JSON.stringify(event))
      const started = performance.now()
      try {
        await this.files.events.append(added, lines)
        await this.files.journal.append({ seq: state.commitSeq, lastEventId: state.lastEventId, nextUserId: state.nextUserId, changes })
        if (this.files.journal.size >= this.checkpointAfterBytes) await this.checkpoint()
      } catch (error) {
        this.failure = error as Error
        console.error(JSON.stringify({ level: 'fatal', msg: 'commit failed; the store takes no more writes', error: String(error) }))
        const failed = new StoreFailedError('The write could not be saved; restart the service')
        for (const { item } of done) item.reject(failed)
        for (const item of this.queue) item.reject(failed)
        this.queue = []
        break
      }
      const seconds = (performance.now() - started) / 1000
      for (const timer of this.timers) timer(seconds)
      for (const listener of this.listeners) listener(added, lines)
      for (const { item, result } of done) item.resolve(result)
    }
    this.committing = false
    this.idleResolve?.()
  }

  /** The checkpoint holds every commit so far, so the journal can start afresh. */
  private async checkpoint() {
    await this.stateDb.write()
    await this.files.journal.reset()
  }
}

function checkState(state: unknown, name: string): asserts state is StateDoc {
  const doc = state as Partial<StateDoc> | null
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new StoreLoadError(name, 'is not a JSON object')
  if (doc.formatVersion !== 1) throw new StoreLoadError(name, `has formatVersion ${JSON.stringify(doc.formatVersion)}, expected 1`)
  if (!Number.isInteger(doc.lastEventId) || doc.lastEventId! < 0) throw new StoreLoadError(name, 'has no valid lastEventId')
  if (!Number.isInteger(doc.nextUserId)) throw new StoreLoadError(name, 'has no valid nextUserId')
  for (const key of ['projects', 'environments', 'flags', 'tokens'] as const) {
    const collection = doc[key]
    if (typeof collection !== 'object' || collection === null || Array.isArray(collection)) {
      throw new StoreLoadError(name, `"${key}" is not an object`)
    }
  }
}
