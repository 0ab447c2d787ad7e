/**
 * The one way state changes. A write is a synchronous `work` function run inside `transact`:
 * it reads the current state, stages record changes and events on a `Tx`, and either returns
 * (everything it staged is applied) or throws (nothing is). Work runs one item at a time, in
 * arrival order, so writes are serialised without locks.
 *
 * Group commit: work items that arrive while a commit is on disk wait; the next batch runs all of
 * them, then makes their combined changes durable with one append to the event log and one
 * replacement of the state document. Every item of a batch is answered only after that.
 * Events go to disk first; the state document records the last event id it includes, so after a
 * crash between the two, the extra events are recognised as unacknowledged and discarded at start.
 *
 * Between a batch's apply and its fsync, readers can already see its changes (like Redis with
 * `appendfsync always`). If the disk write fails the store stops taking writes: the process must
 * restart from what is on disk.
 */
import { Low } from 'lowdb'
import { StoreFailedError } from '../errors'
import { StoreLoadError, type EventLogAdapter } from './adapters'
import type { Adapter } from 'lowdb'
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

  private stage(collection: Collection, key: string, value: unknown) {
    let staged = this.puts.get(collection)
    if (!staged) this.puts.set(collection, (staged = new Map()))
    staged.set(key, value)
  }

  /** Applies the staged changes to `state` and returns the new events. Called by the store only. */
  applyTo(state: StateDoc, events: EventRecord[]): EventRecord[] {
    for (const [collection, staged] of this.puts) {
      const records = state[collection] as Record<string, unknown>
      for (const [key, value] of staged) {
        if (value === null) delete records[key]
        else records[key] = deepFreeze(value)
      }
    }
    state.nextUserId += this.userIds
    const added: EventRecord[] = []
    for (const event of this.stagedEvents) {
      const record: EventRecord = deepFreeze({
        id: events.length + 1,
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
      events.push(record)
      added.push(record)
    }
    state.lastEventId = events.length
    return added
  }
}

interface WorkItem {
  actor: Actor
  work: (tx: Tx) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export interface StoreAdapters {
  state: Adapter<StateDoc>
  events: EventLogAdapter
  /** Names shown in load errors; file paths for the on-disk store. */
  stateName?: string
  eventsName?: string
}

export class Store {
  private queue: WorkItem[] = []
  private committing = false
  private failure: Error | null = null
  private idle: Promise<void> = Promise.resolve()
  private idleResolve: (() => void) | null = null
  private readonly listeners: ((events: readonly EventRecord[]) => void)[] = []

  private constructor(
    private readonly stateDb: Low<StateDoc>,
    private readonly eventDb: Low<EventRecord[]>,
  ) {}

  /** Loads both files, checks they agree, and drops events that were written but never acknowledged. */
  static async open(adapters: StoreAdapters): Promise<Store> {
    const stateName = adapters.stateName ?? 'state'
    const eventsName = adapters.eventsName ?? 'events'
    const stateDb = new Low<StateDoc>(adapters.state, emptyState())
    const eventDb = new Low<EventRecord[]>(adapters.events, [])
    await stateDb.read()
    await eventDb.read()
    checkState(stateDb.data, stateName)
    const events = eventDb.data
    const acknowledged = stateDb.data.lastEventId
    if (events.length < acknowledged) {
      throw new StoreLoadError(
        eventsName,
        `holds ${events.length} events but ${stateName} includes events up to ${acknowledged}; acknowledged events are missing`,
      )
    }
    if (events.length > acknowledged) {
      await adapters.events.discardFrom(acknowledged)
      events.length = acknowledged
    }
    // Records are frozen; the collections holding them are not, so a commit can swap records in.
    for (const key of COLLECTIONS) {
      const records = (stateDb.data[key] = collection<unknown>(stateDb.data[key]) as never) as Record<string, unknown>
      for (const record of Object.values(records)) deepFreeze(record)
    }
    for (const event of events) deepFreeze(event)
    return new Store(stateDb, eventDb)
  }

  /** The committed state. Its records are frozen: copy one before changing it, and change it only in `transact`. */
  get state(): Readonly<StateDoc> {
    return this.stateDb.data
  }

  /** Reads of the committed state; records are frozen. */
  readonly reader: StateReader = committedReader(this)

  /** The event log, oldest first; `events[i].id === i + 1`. */
  get events(): readonly EventRecord[] {
    return this.eventDb.data
  }

  /** Called after each durable commit with the events it added. */
  onCommit(listener: (events: readonly EventRecord[]) => void): void {
    this.listeners.push(listener)
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

  private async commitLoop() {
    this.committing = true
    this.idle = new Promise((resolve) => (this.idleResolve = resolve))
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      const done: { item: WorkItem; result: unknown }[] = []
      const added: EventRecord[] = []
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
        added.push(...tx.applyTo(state, this.eventDb.data))
        done.push({ item, result })
      }
      if (done.length === 0) continue
      try {
        await this.eventDb.write()
        await this.stateDb.write()
      } catch (error) {
        this.failure = error as Error
        console.error(JSON.stringify({ level: 'fatal', msg: 'commit failed; the store takes no more writes', error: String(error) }))
        const failed = new StoreFailedError('The write could not be saved; restart the service')
        for (const { item } of done) item.reject(failed)
        for (const item of this.queue) item.reject(failed)
        this.queue = []
        break
      }
      for (const listener of this.listeners) listener(added)
      for (const { item, result } of done) item.resolve(result)
    }
    this.committing = false
    this.idleResolve?.()
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
