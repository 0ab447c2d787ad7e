/**
 * What SDK metrics and registrations leave in the state document: hourly usage rows, when each flag
 * was last seen per environment, and the applications and instances that registered. They are
 * written in batches by the metrics service's flush (never one commit per request), with no events.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Timestamp, defineCollection } from '../../storage/records'

/** Evaluation counts of one flag, in one environment, by one application, in one hour. Keyed by usageKey(). */
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

/** Flag and environment names cannot hold `|` (they are URL-safe names); the appName, which can, comes last. */
export const usageKey = (row: Pick<UsageRowRecord, 'timestamp' | 'environment' | 'featureName' | 'appName'>) =>
  `${row.timestamp}|${row.environment}|${row.featureName}|${row.appName}`
/** Records written before instances were kept per environment are keyed without it; the registry re-keys them at load. */
export const instanceKey = (appName: string, instanceId: string, environment: string) =>
  JSON.stringify([appName, instanceId, environment])

// All four start empty in a data directory made before metrics were kept.
export const usageCollection = defineCollection('flagUsage', UsageRowRecordSchema, { addedLater: true })
export const lastSeenCollection = defineCollection('flagLastSeen', LastSeenRecordSchema, { addedLater: true })
export const applicationsCollection = defineCollection('clientApplications', ApplicationRecordSchema, {
  addedLater: true,
})
export const instancesCollection = defineCollection('clientInstances', InstanceRecordSchema, { addedLater: true })

declare module '../../storage/records' {
  interface CollectionRecords {
    flagUsage: UsageRowRecord
    flagLastSeen: LastSeenRecord
    clientApplications: ApplicationRecord
    clientInstances: InstanceRecord
  }
}
