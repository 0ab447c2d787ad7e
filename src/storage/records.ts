/**
 * The shape of the state document and of the event log's records. The records of each collection
 * are defined by the feature that owns it (features/<feature>/<feature>.records.ts) and handed to the store when it
 * is opened; they are stored records, not API responses: controllers map them to response schemas.
 * Values held by the store are deep-frozen; a change is made on a copy and committed through a
 * transaction (see store.ts).
 *
 * Each record type is a TypeBox schema with its type derived from it, so that what start-up checks
 * (storage/record-check.ts) and what the code assumes cannot drift apart.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
export const Timestamp = Type.String()

export const TagRecordSchema = Type.Object({ type: Type.String(), value: Type.String() })
export type TagRecord = Static<typeof TagRecordSchema>

export const EventRecordSchema = Type.Object({
  id: Type.Integer(),
  createdAt: Timestamp,
  type: Type.String(),
  createdBy: Type.String(),
  createdByUserId: Nullable(Type.Number()),
  environment: Nullable(Type.String()),
  project: Nullable(Type.String()),
  featureName: Nullable(Type.String()),
  data: Nullable(Type.Record(Type.String(), Type.Unknown())),
  preData: Nullable(Type.Record(Type.String(), Type.Unknown())),
  tags: Type.Array(TagRecordSchema),
})
export type EventRecord = Static<typeof EventRecordSchema>

/**
 * Each feature adds its collection here by declaration merging (see features/<feature>/<feature>.records.ts):
 * `declare module '../../storage/records' { interface CollectionRecords { flags: FlagRecord } }`.
 * Storage so knows the record types without importing any feature.
 */
// biome-ignore lint/suspicious/noEmptyInterface: each collection's module extends it by declaration merging
export interface CollectionRecords {}

export type Collection = keyof CollectionRecords & string
export type RecordOf<C extends Collection> = CollectionRecords[C]

/** A collection of the state document: its key in state.json and the schema its records are checked against at start. */
export interface CollectionDefinition<N extends Collection = Collection, S extends TSchema = TSchema> {
  readonly name: N
  readonly schema: S
  /**
   * Set for a collection that data directories made before its feature existed do not hold: there
   * it starts empty. A collection without it must be in `state.json`: its absence is damage (a
   * hand-edited file), and loading on as if it were empty would lose its records at the next
   * checkpoint.
   */
  readonly addedLater?: boolean
  /**
   * The records a collection holds before anyone wrote to it: in a new data directory, and in one
   * made before the collection existed (so that an upgraded directory gets the built-ins a new one
   * has). Once the collection is in state.json, what is there is kept, deletions included.
   */
  readonly seed?: () => Record<string, RecordOf<N>>
}

/** `name` must be a key its feature added to `CollectionRecords`, whose record type `schema` gives. */
export function defineCollection<N extends Collection, S extends TSchema>(
  name: N,
  schema: S & (Static<S> extends RecordOf<N> ? unknown : never),
  options: { addedLater?: boolean; seed?: () => Record<string, RecordOf<N>> } = {},
): CollectionDefinition<N, S> {
  return { name, schema, ...options }
}

export type StateDoc = {
  formatVersion: 1
  /** The id of the last event this state includes; events past it were never acknowledged. */
  lastEventId: number
  /** The number of the last commit this state includes (see storage/state-journal.ts). */
  commitSeq: number
  /** Next `createdByUserId` to hand to a new token. */
  nextUserId: number
} & { [C in Collection]: Record<string, RecordOf<C>> }

/**
 * A collection keyed by user-chosen names has no prototype, so that a flag named `__proto__` or
 * `constructor` is an ordinary key and never reaches Object.prototype.
 */
export function collection<T>(entries: Record<string, T> = {}): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries)
}

/** The records of a collection as loaded: those stored, or its seed when state.json does not hold it. */
export function loadedCollection(definition: CollectionDefinition, stored: unknown): Record<string, unknown> {
  return collection<unknown>((stored as Record<string, unknown> | undefined) ?? definition.seed?.())
}

/** The state of a new data directory: the counters, then each collection, empty or seeded, in the order given. */
export function emptyState(collections: readonly CollectionDefinition[]): StateDoc {
  const state: Record<string, unknown> = { formatVersion: 1, lastEventId: 0, commitSeq: 0, nextUserId: 1 }
  for (const definition of collections) state[definition.name] = loadedCollection(definition, undefined)
  return state as StateDoc
}
