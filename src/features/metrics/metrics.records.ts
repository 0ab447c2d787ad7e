/**
 * What SDK metrics and registrations leave in the state document: hourly usage rows, when each flag
 * was last seen per environment, and the applications and instances that registered. They are
 * written in batches by the metrics service's flush (never one commit per request), with no events.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Timestamp, defineCollection } from '../../storage/records'
import { CELLS_PATTERN, decodeCells } from './usage-cells'

/**
 * Evaluation counts of one flag, in one environment, by one application, in one hour: what the
 * history answers, and how data directories written before the hourly records (below) kept it.
 * Such records are read once at start and rewritten as hourly records by the first flush.
 */
export const UsageRowRecordSchema = Type.Object({
  featureName: Type.String(),
  appName: Type.String(),
  environment: Type.String(),
  /** The start of the hour (UTC) the counts were received in. */
  timestamp: Timestamp,
  yes: Type.Integer({ minimum: 0 }),
  no: Type.Integer({ minimum: 0 }),
  variants: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  /**
   * The createdAt of the flag counted, as in LastSeenRecord: a flag deleted and made again under
   * the same name is another flag, and its counts start from nothing. Rows written before it was
   * kept have none (the usage table decides at load whom they belong to).
   */
  flagCreatedAt: Type.Optional(Timestamp),
})
export type UsageRowRecord = Static<typeof UsageRowRecordSchema>

/**
 * The counts of one flag in one hour, of every environment and application (usage-cells.ts).
 * Keyed by usageHourKey().
 */
export const UsageHourRecordSchema = Type.Object({
  featureName: Type.String(),
  /** The start of the hour (UTC) the counts were received in. */
  timestamp: Timestamp,
  /** The createdAt of the flag counted: a flag made again under the name starts from nothing. */
  flagCreatedAt: Timestamp,
  /** Per environment × application: `environment,appName,yes,no[,variant=count…]`, separated by `;`. */
  cells: Type.String({ pattern: CELLS_PATTERN }),
})
export type UsageHourRecord = Static<typeof UsageHourRecordSchema>

export const isHourRecord = (record: UsageHourRecord | UsageRowRecord): record is UsageHourRecord =>
  Object.hasOwn(record, 'cells')

/**
 * When metrics last reported the flag, per environment. Keyed by flag name; `flagCreatedAt` is the
 * flag's own createdAt, so that a flag deleted and made again under the same name starts unseen.
 */
export const LastSeenRecordSchema = Type.Object({
  flagCreatedAt: Timestamp,
  environments: Type.Record(Type.String(), Timestamp),
  /** When metrics first reported the flag, anywhere (lifecycle.ts: pre-live). Records written before it was kept have none. */
  preLiveAt: Type.Optional(Timestamp),
  /** When metrics first reported it from a production-type environment where it was on (lifecycle.ts: live). */
  liveAt: Type.Optional(Timestamp),
})
export type LastSeenRecord = Static<typeof LastSeenRecordSchema>

/** An application (appName) that registered or sent metrics. Keyed by appName. */
export const ApplicationRecordSchema = Type.Object({
  appName: Type.String(),
  createdAt: Timestamp,
  lastSeen: Timestamp,
  /** Strategy types the SDK said it knows, at its last registration. */
  strategies: Type.Array(Type.String()),
  sdkVersion: Type.Union([Type.String(), Type.Null()]),
  /** The projects of the tokens it used ('*' for all), each with the environments used there. */
  usage: Type.Record(Type.String(), Type.Array(Type.String())),
})
export type ApplicationRecord = Static<typeof ApplicationRecordSchema>

/**
 * One running instance of an application in one environment, as Unleash keys its client_instances
 * (an instance reporting with tokens of two environments is two instances). Keyed by instanceKey().
 */
export const InstanceRecordSchema = Type.Object({
  appName: Type.String(),
  instanceId: Type.String(),
  sdkVersion: Type.Union([Type.String(), Type.Null()]),
  environment: Type.String(),
  /**
   * The address of its last registration or report (see http/request-log.ts callerAddress), null
   * when unknown. Optional: records written before it was kept have none.
   */
  clientIp: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  createdAt: Timestamp,
  lastSeen: Timestamp,
})
export type InstanceRecord = Static<typeof InstanceRecordSchema>

/** Flag names cannot hold `|` (they are URL-safe names). */
export const usageHourKey = (timestamp: string, featureName: string) => `${timestamp}|${featureName}`
/** Records written before instances were kept per environment are keyed without it; the registry re-keys them at load. */
export const instanceKey = (appName: string, instanceId: string, environment: string) =>
  JSON.stringify([appName, instanceId, environment])

// All four start empty in a data directory made before metrics were kept.
export const usageCollection = defineCollection(
  'flagUsage',
  Type.Union([UsageHourRecordSchema, UsageRowRecordSchema]),
  { addedLater: true },
)
export const lastSeenCollection = defineCollection('flagLastSeen', LastSeenRecordSchema, { addedLater: true })
export const applicationsCollection = defineCollection('clientApplications', ApplicationRecordSchema, {
  addedLater: true,
})
export const instancesCollection = defineCollection('clientInstances', InstanceRecordSchema, { addedLater: true })

declare module '../../storage/records' {
  interface CollectionRecords {
    flagUsage: UsageHourRecord | UsageRowRecord
    flagLastSeen: LastSeenRecord
    clientApplications: ApplicationRecord
    clientInstances: InstanceRecord
  }
}

/** The stored counts as one row per flag × environment × application × hour, in either format (for tests and tools). */
export function usageRows(records: Readonly<Record<string, UsageHourRecord | UsageRowRecord>>): UsageRowRecord[] {
  return Object.values(records).flatMap(record =>
    isHourRecord(record)
      ? decodeCells(record.cells).map(cell => ({
          featureName: record.featureName,
          appName: cell.appName,
          environment: cell.environment,
          timestamp: record.timestamp,
          yes: cell.yes,
          no: cell.no,
          variants: cell.variants,
          flagCreatedAt: record.flagCreatedAt,
        }))
      : [record],
  )
}
