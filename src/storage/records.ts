/**
 * The shapes persisted in the state document and the event log. They are stored records, not API
 * responses: controllers map them to the response schemas of each feature folder.
 * Values held by the store are deep-frozen; a change is made on a copy and committed through a
 * transaction (see store.ts).
 *
 * Each record type is a TypeBox schema with its type derived from it, so that what start-up checks
 * (storage/record-check.ts) and what the code assumes cannot drift apart.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const Timestamp = Type.String()

export const FeatureNamingSchema = Type.Object({
  pattern: Type.String(),
  example: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
})
export type FeatureNaming = Static<typeof FeatureNamingSchema>

export const ProjectRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  createdAt: Timestamp,
  updatedAt: Nullable(Timestamp),
  /** Names of the environments connected to this project. */
  environments: Type.Array(Type.String()),
  featureNaming: Nullable(FeatureNamingSchema),
})
export type ProjectRecord = Static<typeof ProjectRecordSchema>

export const EnvironmentRecordSchema = Type.Object({
  name: Type.String(),
  type: Type.String(),
  sortOrder: Type.Number(),
  createdAt: Timestamp,
})
export type EnvironmentRecord = Static<typeof EnvironmentRecordSchema>

export const ConstraintRecordSchema = Type.Object({
  contextName: Type.String(),
  operator: Type.String(),
  caseInsensitive: Type.Boolean(),
  inverted: Type.Boolean(),
  values: Type.Array(Type.String()),
  value: Type.Optional(Type.String()),
})
export type ConstraintRecord = Static<typeof ConstraintRecordSchema>

export const PayloadRecordSchema = Type.Object({
  type: Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('string'), Type.Literal('number')]),
  value: Type.String(),
})
export type PayloadRecord = Static<typeof PayloadRecordSchema>

const WeightType = Type.Union([Type.Literal('variable'), Type.Literal('fix')])

export const StrategyVariantRecordSchema = Type.Object({
  name: Type.String(),
  weight: Type.Number(),
  weightType: WeightType,
  stickiness: Type.String(),
  payload: Type.Optional(PayloadRecordSchema),
})
export type StrategyVariantRecord = Static<typeof StrategyVariantRecordSchema>

export const StrategyRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  title: Nullable(Type.String()),
  disabled: Type.Boolean(),
  sortOrder: Type.Number(),
  segments: Type.Array(Type.Number()),
  constraints: Type.Array(ConstraintRecordSchema),
  variants: Type.Array(StrategyVariantRecordSchema),
  parameters: Type.Record(Type.String(), Type.String()),
})
export type StrategyRecord = Static<typeof StrategyRecordSchema>

export const VariantRecordSchema = Type.Object({
  name: Type.String(),
  weight: Type.Number(),
  weightType: WeightType,
  stickiness: Type.String(),
  payload: Type.Optional(PayloadRecordSchema),
  overrides: Type.Array(Type.Object({ contextName: Type.String(), values: Type.Array(Type.String()) })),
})
export type VariantRecord = Static<typeof VariantRecordSchema>

export const FlagEnvironmentRecordSchema = Type.Object({
  enabled: Type.Boolean(),
  strategies: Type.Array(StrategyRecordSchema),
  variants: Type.Array(VariantRecordSchema),
  lastSeenAt: Nullable(Timestamp),
})
export type FlagEnvironmentRecord = Static<typeof FlagEnvironmentRecordSchema>

export const TagRecordSchema = Type.Object({ type: Type.String(), value: Type.String() })
export type TagRecord = Static<typeof TagRecordSchema>

export const DependencyRecordSchema = Type.Object({
  feature: Type.String(),
  enabled: Type.Boolean(),
  variants: Type.Array(Type.String()),
})
export type DependencyRecord = Static<typeof DependencyRecordSchema>

export const LIFECYCLE_STAGES = ['initial', 'pre-live', 'live', 'completed', 'archived'] as const
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number]

export const FlagRecordSchema = Type.Object({
  name: Type.String(),
  project: Type.String(),
  type: Type.String(),
  description: Nullable(Type.String()),
  impressionData: Type.Boolean(),
  stale: Type.Boolean(),
  archived: Type.Boolean(),
  archivedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  createdBy: Type.Object({ id: Type.Number(), name: Type.String(), imageUrl: Type.String() }),
  /** Keyed by environment name; holds exactly the environments connected to the flag's project. */
  environments: Type.Record(Type.String(), FlagEnvironmentRecordSchema),
  tags: Type.Array(TagRecordSchema),
  /** Parents of this flag. Children are derived from the other flags' dependencies. */
  dependencies: Type.Array(DependencyRecordSchema),
  lifecycle: Type.Object({ stage: Type.Union(LIFECYCLE_STAGES.map((stage) => Type.Literal(stage))), enteredStageAt: Timestamp }),
  /** Set by `lifecycle/complete`, cleared by `lifecycle/uncomplete`. */
  completion: Nullable(
    Type.Object({ status: Type.Union([Type.Literal('kept'), Type.Literal('discarded')]), statusValue: Nullable(Type.String()) }),
  ),
})
export type FlagRecord = Static<typeof FlagRecordSchema>

export const ApiTokenRecordSchema = Type.Object({
  tokenName: Type.String(),
  type: Type.Union([Type.Literal('admin'), Type.Literal('client'), Type.Literal('frontend')]),
  role: Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')]),
  projects: Type.Array(Type.String()),
  environment: Type.String(),
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  secretHash: Type.String(),
  /** The part of the secret before the random part, e.g. `*:*`, safe to show. */
  prefix: Type.String(),
  userId: Type.Number(),
  createdAt: Timestamp,
  expiresAt: Nullable(Timestamp),
})
export type ApiTokenRecord = Static<typeof ApiTokenRecordSchema>
export type TokenType = ApiTokenRecord['type']
export type TokenRole = ApiTokenRecord['role']

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

export interface StateDoc {
  formatVersion: 1
  /** The id of the last event this state includes; events past it were never acknowledged. */
  lastEventId: number
  /** The number of the last commit this state includes (see storage/state-journal.ts). */
  commitSeq: number
  /** Next `createdByUserId` to hand to a new token. */
  nextUserId: number
  projects: Record<string, ProjectRecord>
  environments: Record<string, EnvironmentRecord>
  flags: Record<string, FlagRecord>
  tokens: Record<string, ApiTokenRecord>
}

export type Collection = 'projects' | 'environments' | 'flags' | 'tokens'
export type RecordOf<C extends Collection> = StateDoc[C][string]

export const COLLECTIONS: readonly Collection[] = ['projects', 'environments', 'flags', 'tokens']

/** The schema of each collection's records: every record loaded from disk is checked against it. */
export const RECORD_SCHEMAS = {
  projects: ProjectRecordSchema,
  environments: EnvironmentRecordSchema,
  flags: FlagRecordSchema,
  tokens: ApiTokenRecordSchema,
} satisfies Record<Collection, TSchema>

/**
 * A collection keyed by user-chosen names has no prototype, so that a flag named `__proto__` or
 * `constructor` is an ordinary key and never reaches Object.prototype.
 */
export function collection<T>(entries: Record<string, T> = {}): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries)
}

export function emptyState(): StateDoc {
  return {
    formatVersion: 1,
    lastEventId: 0,
    commitSeq: 0,
    nextUserId: 1,
    projects: collection(),
    environments: collection(),
    flags: collection(),
    tokens: collection(),
  }
}
