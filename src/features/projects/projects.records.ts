/** The projects collection: one record per project, as stored in state.json. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

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

export const projectsCollection = defineCollection('projects', ProjectRecordSchema)

declare module '../../storage/records' {
  interface CollectionRecords {
    projects: ProjectRecord
  }
}
