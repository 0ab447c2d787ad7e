/** The tagTypes collection: the kinds of tag flags may carry, as stored in state.json. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

export const TagTypeRecordSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  icon: Nullable(Type.String()),
  color: Nullable(Type.String()),
  createdAt: Timestamp,
})
export type TagTypeRecord = Static<typeof TagTypeRecordSchema>

/** The type a tag gets when none is given; Unleash seeds it, and so do we (it may be deleted, as there). */
export const DEFAULT_TAG_TYPE = 'simple'

/**
 * Added with tag types. Data directories made before then hold tags of type `simple`
 * only, so they get the same seed as a new one; its time is that of the first start with it.
 */
export const tagTypesCollection = defineCollection('tagTypes', TagTypeRecordSchema, {
  addedLater: true,
  seed: () => ({
    [DEFAULT_TAG_TYPE]: {
      name: DEFAULT_TAG_TYPE,
      description: 'Used to simplify filtering of features',
      icon: '#',
      color: null,
      createdAt: new Date().toISOString(),
    },
  }),
})

declare module '../../storage/records' {
  interface CollectionRecords {
    tagTypes: TagTypeRecord
  }
}
