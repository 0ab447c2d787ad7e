/** The strategyTypes collection: strategy types users define (the built-in ones are not stored), as in state.json. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

export const PARAMETER_TYPES = ['string', 'percentage', 'list', 'number', 'boolean'] as const

export const StrategyParameterRecordSchema = Type.Object({
  name: Type.String(),
  type: Type.Union(PARAMETER_TYPES.map(type => Type.Literal(type))),
  description: Type.String(),
  required: Type.Boolean(),
})
export type StrategyParameterRecord = Static<typeof StrategyParameterRecordSchema>

export const StrategyTypeRecordSchema = Type.Object({
  name: Type.String(),
  title: Nullable(Type.String()),
  description: Type.String(),
  parameters: Type.Array(StrategyParameterRecordSchema),
  deprecated: Type.Boolean(),
  createdAt: Timestamp,
})
export type StrategyTypeRecord = Static<typeof StrategyTypeRecordSchema>

/** Added with strategy definitions: older data directories have no such key and start with none. */
export const strategyTypesCollection = defineCollection('strategyTypes', StrategyTypeRecordSchema, { addedLater: true })

declare module '../../storage/records' {
  interface CollectionRecords {
    strategyTypes: StrategyTypeRecord
  }
}
