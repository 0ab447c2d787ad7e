/** The environments collection, as stored in state.json. */
import { Type, type Static } from '@sinclair/typebox'
import { Timestamp, defineCollection } from '../../storage/records'

export const EnvironmentRecordSchema = Type.Object({
  name: Type.String(),
  type: Type.String(),
  sortOrder: Type.Number(),
  createdAt: Timestamp,
})
export type EnvironmentRecord = Static<typeof EnvironmentRecordSchema>

export const environmentsCollection = defineCollection('environments', EnvironmentRecordSchema)

declare module '../../storage/records' {
  interface CollectionRecords {
    environments: EnvironmentRecord
  }
}
