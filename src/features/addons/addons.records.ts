/**
 * The collections of integrations (Unleash's addons): their settings, the outbox of deliveries
 * written in the same commit as the events they carry, each integration's sending state (who sends
 * for it now, on a shared database) and its delivery log.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

export const AddonRecordSchema = Type.Object({
  id: Type.Integer(),
  provider: Type.String(),
  enabled: Type.Boolean(),
  description: Type.String(),
  /** Every parameter as given, sensitive ones included: they are never answered back. */
  parameters: Type.Record(Type.String(), Type.String()),
  events: Type.Array(Type.String()),
  projects: Type.Array(Type.String()),
  environments: Type.Array(Type.String()),
  createdAt: Timestamp,
})
export type AddonRecord = Static<typeof AddonRecordSchema>

/** The last id handed out, so that an id is never reused after a delete (a log naming it stays its own). */
export const AddonSequenceRecordSchema = Type.Object({ lastId: Type.Integer() })
export type AddonSequenceRecord = Static<typeof AddonSequenceRecordSchema>
export const ADDON_SEQUENCE_KEY = 'addons'

/**
 * One delivery of one event to one integration, keyed `<addon id>:<event id, 12 digits>` so that
 * an integration's deliveries sort in the order of their events. Removed once delivered.
 */
export const DeliveryRecordSchema = Type.Object({
  /** Sent as X-Flagstore-Delivery, the same on every attempt. */
  id: Type.String(),
  addonId: Type.Integer(),
  eventId: Type.Integer(),
  attempts: Type.Integer(),
  /** When the next attempt may be made (ms since the epoch). */
  nextAt: Type.Number(),
  /** When the first attempt was made (ms), from which the retries' window runs; null before it. */
  firstAttemptAt: Nullable(Type.Number()),
  /** Dead letters wait for a retry (the route, the console) and hold up nothing behind them. */
  dead: Type.Boolean(),
  lastError: Nullable(Type.String()),
})
export type DeliveryRecord = Static<typeof DeliveryRecordSchema>

/** An integration's sending state, keyed by its id: the lease of the instance sending for it, the log's counter. */
export const AddonStateRecordSchema = Type.Object({
  owner: Type.String(),
  /** The lease runs out at this time (ms); until then no other instance sends for the integration. */
  until: Type.Number(),
  /** The number of the last entry of the delivery log. */
  logSeq: Type.Integer(),
  /** Deliveries not recorded because the integration already had its bound of waiting ones. */
  dropped: Type.Integer(),
})
export type AddonStateRecord = Static<typeof AddonStateRecordSchema>

/** One attempt in an integration's delivery log, keyed `<addon id>:<log number, 12 digits>`. */
export const AttemptRecordSchema = Type.Object({
  addonId: Type.Integer(),
  seq: Type.Integer(),
  deliveryId: Type.String(),
  eventId: Type.Integer(),
  at: Timestamp,
  attempt: Type.Integer(),
  statusCode: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
  /** delivered, retrying (another attempt is planned), dead (dead-lettered), dropped. */
  outcome: Type.String(),
})
export type AttemptRecord = Static<typeof AttemptRecordSchema>

export const addonsCollection = defineCollection('addons', AddonRecordSchema, { addedLater: true })
export const addonSequenceCollection = defineCollection('addonSequence', AddonSequenceRecordSchema, {
  addedLater: true,
})
export const deliveriesCollection = defineCollection('addonDeliveries', DeliveryRecordSchema, { addedLater: true })
export const addonStatesCollection = defineCollection('addonStates', AddonStateRecordSchema, { addedLater: true })
export const attemptsCollection = defineCollection('addonAttempts', AttemptRecordSchema, { addedLater: true })

export const ADDON_COLLECTIONS = [
  addonsCollection,
  addonSequenceCollection,
  deliveriesCollection,
  addonStatesCollection,
  attemptsCollection,
]

/** A key whose text order is the number's order. */
export const padded = (n: number) => String(n).padStart(12, '0')
export const deliveryKey = (addonId: number, eventId: number) => `${addonId}:${padded(eventId)}`
export const attemptKey = (addonId: number, seq: number) => `${addonId}:${padded(seq)}`

declare module '../../storage/records' {
  interface CollectionRecords {
    addons: AddonRecord
    addonSequence: AddonSequenceRecord
    addonDeliveries: DeliveryRecord
    addonStates: AddonStateRecord
    addonAttempts: AttemptRecord
  }
}
