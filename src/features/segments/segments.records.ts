/** The segments collection (named, reusable lists of constraints) and the counter their ids come from. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'
import { ConstraintRecordSchema } from '../flags/flags.records'

export const SegmentRecordSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  /** Null for a global segment, usable by every project's strategies. */
  project: Nullable(Type.String()),
  constraints: Type.Array(ConstraintRecordSchema),
  createdAt: Timestamp,
  createdBy: Type.String(),
})
export type SegmentRecord = Static<typeof SegmentRecordSchema>

/**
 * The last id handed out. Kept apart from the segments so that, as with Unleash's serial ids, an id
 * is never reused after a delete: a strategy or an SDK cache still naming an old id must not find
 * a different segment under it.
 */
export const SegmentSequenceRecordSchema = Type.Object({ lastId: Type.Integer() })
export type SegmentSequenceRecord = Static<typeof SegmentSequenceRecordSchema>
export const SEGMENT_SEQUENCE_KEY = 'segments'

// Keyed by the id as a decimal string. Both start empty in a data directory made before segments.
export const segmentsCollection = defineCollection('segments', SegmentRecordSchema, { addedLater: true })
export const segmentSequenceCollection = defineCollection('segmentSequence', SegmentSequenceRecordSchema, {
  addedLater: true,
})

declare module '../../storage/records' {
  interface CollectionRecords {
    segments: SegmentRecord
    segmentSequence: SegmentSequenceRecord
  }
}
