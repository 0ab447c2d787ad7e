/** The flags collection: each flag with its environments, strategies, variants, tags and parents, as stored in state.json. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'
import { TagRecordSchema } from '../../storage/records'

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

export const DependencyRecordSchema = Type.Object({
  feature: Type.String(),
  enabled: Type.Boolean(),
  variants: Type.Array(Type.String()),
})
export type DependencyRecord = Static<typeof DependencyRecordSchema>

/** The kinds of flag a `type` may name (checked by the service, stored as a string). */
export const FLAG_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission'] as const

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
  lifecycle: Type.Object({
    stage: Type.Union(LIFECYCLE_STAGES.map(stage => Type.Literal(stage))),
    enteredStageAt: Timestamp,
    /**
     * When it first went pre-live and live by its own writes (enabled in an environment), kept
     * through later stages and cleared back at initial; SDK metrics add theirs (metrics/lifecycle.ts).
     * Flags written before they were kept have none.
     */
    preLiveAt: Type.Optional(Timestamp),
    liveAt: Type.Optional(Timestamp),
  }),
  /** Set by `lifecycle/complete`, cleared by `lifecycle/uncomplete`. */
  completion: Nullable(
    Type.Object({
      status: Type.Union([Type.Literal('kept'), Type.Literal('discarded')]),
      statusValue: Nullable(Type.String()),
    }),
  ),
})
export type FlagRecord = Static<typeof FlagRecordSchema>

/** The part of a flag that PATCH and PUT change, and that metadata events record. */
export type FlagMetadata = Pick<
  FlagRecord,
  'name' | 'description' | 'type' | 'project' | 'stale' | 'impressionData' | 'archived' | 'createdAt'
>

export const flagsCollection = defineCollection('flags', FlagRecordSchema)

declare module '../../storage/records' {
  interface CollectionRecords {
    flags: FlagRecord
  }
}
