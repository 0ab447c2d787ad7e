/**
 * The staged changes of one write (see store.ts), and the types it shares with the store: who
 * writes (`EventAuthor`), what an event to append holds (`StagedEvent`), and read access to
 * records. The store knows no more of actors or of event types than the shapes it writes; their
 * meaning lives in domain/events.ts.
 */
import type { JournalEntry } from './state-journal'
import type { Collection, EventRecord, RecordOf, StateDoc, TagRecord } from './records'

/** Who a commit's events are recorded as made by (`createdBy`, `createdByUserId`), and what they may change. */
export interface EventAuthor {
  /**
   * Read when the write's events are recorded, after its work: a write that learns its author as it
   * runs (a single sign-on making the user who signs in) may set them then.
   */
  name: string
  userId: number | null
  /**
   * Decides, as each change is staged, whether this author may make it; throws to refuse it (and
   * so the whole write). Access is so decided against the state the write is applied to, not the
   * state a request saw when it arrived (features/tokens/scope-guard.ts).
   */
  guard?: StageGuard
  /**
   * Decides, before the write's work runs, on the state it is applied to, whether this author may
   * write at all (its credential still valid, its role still granting what the write needs); throws
   * the error the write answers with to refuse it. `now` is the commit's time (ms). On a shared
   * database that state includes every commit any instance made before this one
   * (features/tokens/permissions.ts `actorOf`).
   */
  admit?(state: StateReader, now: number): void
}

/** What an author may change; each method throws the error the write answers with to refuse. */
export interface StageGuard {
  /** A record staged: `before` is the record the change replaces, `after` undefined for a deletion. */
  record(collection: Collection, key: string, before: unknown, after: unknown): void
  event(event: StagedEvent): void
}

/**
 * A rule every write is held to, whoever its author, handed to the store by the feature that owns
 * it (`Store.addRule`): it sees each record and event a write stages, with the write's own reads.
 */
export interface WriteRule {
  /** A record staged (`before` what it replaces, `after` undefined for a deletion); throws to refuse the write. */
  record(tx: Tx, collection: Collection, key: string, before: unknown, after: unknown): void
  /** An event staged; returns the event to record, which may say more in its `data`. */
  event(tx: Tx, event: StagedEvent): StagedEvent
}

/** An event as handed to `Tx.appendEvent`; fields left out are recorded as null (`tags`: []). */
export interface StagedEvent {
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

/**
 * `next` (a record about to replace `previous`; both JSON values, `previous` frozen) with each part
 * that is the same JSON as the same part of `previous` (key order included) swapped for that part:
 * `previous` itself when nothing changed. A write that changes one field keeps one copy of the
 * rest, so the versions of a record that are still held (the change feed's buffer) share it.
 * Only `next`, a copy of the transaction's own, is changed.
 */
export function sharedWith(next: unknown, previous: unknown): unknown {
  // Equal strings are swapped too: the one already held is kept, the copy's is dropped.
  if (next === previous) return previous
  if (next === null || previous === null) return next
  if (typeof next !== 'object' || typeof previous !== 'object' || Array.isArray(next) !== Array.isArray(previous))
    return next
  const into = next as Record<string, unknown>
  const from = previous as Record<string, unknown>
  const keys = Object.keys(into)
  const previousKeys = Object.keys(from)
  let same = keys.length === previousKeys.length
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    const before = Object.hasOwn(from, key) ? from[key] : undefined
    const part = sharedWith(into[key], before)
    into[key] = part
    if (part !== before || previousKeys[i] !== key) same = false
  }
  return same ? previous : next
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

export function committedReader(store: { state: Readonly<StateDoc> }): StateReader {
  return {
    get: (collection, key) => {
      const records = store.state[collection]
      return Object.hasOwn(records, key) ? (records[key] as never) : undefined
    },
    values: collection => Object.values(store.state[collection]) as never,
  }
}

/** The staged changes of one write. Reads through it see its own staged records. */
export class Tx implements StateReader {
  private readonly puts = new Map<Collection, Map<string, unknown>>()
  private readonly stagedEvents: StagedEvent[] = []
  private userIds = 0

  constructor(
    private readonly state: StateDoc,
    readonly actor: EventAuthor,
    /** The commit's time: every write of a batch, and each of its events, gets the same one. */
    readonly now: string = new Date().toISOString(),
    private readonly rules: readonly WriteRule[] = [],
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
    const before = this.get(collection, key)
    this.actor.guard?.record(collection, key, before, value)
    for (const rule of this.rules) rule.record(this, collection, key, before, value)
    this.stage(collection, key, jsonCopy(value))
  }

  delete(collection: Collection, key: string): void {
    const before = this.get(collection, key)
    this.actor.guard?.record(collection, key, before, undefined)
    for (const rule of this.rules) rule.record(this, collection, key, before, undefined)
    this.stage(collection, key, null)
  }

  appendEvent(event: StagedEvent): void {
    this.actor.guard?.event(event)
    let staged = event
    for (const rule of this.rules) staged = rule.event(this, staged)
    this.stagedEvents.push(staged)
  }

  /**
   * Refuses, as a staged change of it would be, a record the author may not touch: for a write
   * that looks its record up by a name alone, so that what it answers before it changes anything
   * (a tag already there, say) cannot tell a record the author may not see from one that does not exist.
   */
  guardRecord(collection: Collection, key: string, record: unknown): void {
    this.actor.guard?.record(collection, key, record, record)
  }

  /** The next number of the counter (`{lastId}`) kept in `collection` under `key`, taken by this write. */
  nextId(collection: CounterCollection, key: string): number {
    const id = ((this.get(collection, key) as { lastId: number } | undefined)?.lastId ?? 0) + 1
    this.put(collection, key, { lastId: id } as RecordOf<CounterCollection>)
    return id
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
   * Applies the staged changes to `state`, adds them to `changes` (for the journal) and what they
   * replaced to `replaced` (to undo them), and returns the new events. Called by the store only.
   */
  applyTo(
    state: StateDoc,
    changes: JournalEntry['changes'],
    notify: RecordWatcher,
    replaced: Replaced[],
  ): EventRecord[] {
    for (const [collection, staged] of this.puts) {
      const records = state[collection] as Record<string, unknown>
      for (const [key, value] of staged) {
        const before = records[key]
        replaced.push([collection, key, before])
        const stored = value === null ? undefined : deepFreeze(sharedWith(value, before))
        if (stored === undefined) delete records[key]
        else records[key] = stored
        changes.push([collection, key, value])
        notify(collection, key, before, stored)
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

/** The collections that hold id counters: one `{lastId}` record each. */
export type CounterCollection = { [C in Collection]: RecordOf<C> extends { lastId: number } ? C : never }[Collection]

export type RecordWatcher = (collection: Collection, key: string, before: unknown, after: unknown) => void

/** A record as it was before a batch changed it (undefined: there was none). */
export type Replaced = [Collection, string, unknown]
