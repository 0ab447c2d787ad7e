/** The contextFields collection: the fields of the Unleash context constraints and stickiness use, as stored in state.json. */
import { Type, type Static } from '@sinclair/typebox'
import { Timestamp, defineCollection } from '../../storage/records'

export const LegalValueRecordSchema = Type.Object({ value: Type.String(), description: Type.Optional(Type.String()) })
export type LegalValueRecord = Static<typeof LegalValueRecordSchema>

export const ContextFieldRecordSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  stickiness: Type.Boolean(),
  sortOrder: Type.Integer(),
  legalValues: Type.Array(LegalValueRecordSchema),
  createdAt: Timestamp,
})
export type ContextFieldRecord = Static<typeof ContextFieldRecordSchema>

/** Unleash's seeded fields (its migrations of 2020–2023), with their sort orders and stickiness. */
const BUILT_IN_FIELDS: readonly Omit<ContextFieldRecord, 'createdAt' | 'legalValues'>[] = [
  {
    name: 'environment',
    description: 'Allows you to constrain on application environment',
    sortOrder: 0,
    stickiness: false,
  },
  { name: 'userId', description: 'Allows you to constrain on userId', sortOrder: 1, stickiness: true },
  { name: 'appName', description: 'Allows you to constrain on application name', sortOrder: 2, stickiness: false },
  { name: 'currentTime', description: 'Allows you to constrain on date values', sortOrder: 3, stickiness: false },
  { name: 'sessionId', description: 'Allows you to constrain on sessionId', sortOrder: 4, stickiness: true },
]

/** Added with context fields: data directories made before then get the same seed as a new one. */
export const contextFieldsCollection = defineCollection('contextFields', ContextFieldRecordSchema, {
  addedLater: true,
  seed: () => {
    const createdAt = new Date().toISOString()
    return Object.fromEntries(BUILT_IN_FIELDS.map(field => [field.name, { ...field, legalValues: [], createdAt }]))
  },
})

declare module '../../storage/records' {
  interface CollectionRecords {
    contextFields: ContextFieldRecord
  }
}
