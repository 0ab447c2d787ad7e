/**
 * The change-request collections: the setting of each project × environment, the requests with
 * their changes, approvals and comments, and the counter their ids come from.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

export const ChangeRequestSettingRecordSchema = Type.Object({
  project: Type.String(),
  environment: Type.String(),
  enabled: Type.Boolean(),
  requiredApprovals: Type.Integer(),
})
export type ChangeRequestSettingRecord = Static<typeof ChangeRequestSettingRecordSchema>

/** The key of a project × environment's setting: names are URL-friendly, so `/` never occurs in them. */
export const settingKey = (project: string, environment: string) => `${project}/${environment}`

export const PersonRefSchema = Type.Object({ id: Type.Number(), username: Type.String() })
export type PersonRef = Static<typeof PersonRefSchema>

export const CHANGE_ACTIONS = [
  'updateEnabled',
  'addStrategy',
  'updateStrategy',
  'deleteStrategy',
  'reorderStrategy',
  'patchVariant',
  'archiveFeature',
  'addDependency',
  'deleteDependency',
  'updateSegment',
] as const
export type ChangeAction = (typeof CHANGE_ACTIONS)[number]

export const ChangeRecordSchema = Type.Object({
  id: Type.Integer(),
  /** The flag it changes; null for `updateSegment`. */
  feature: Nullable(Type.String()),
  action: Type.Union(CHANGE_ACTIONS.map(action => Type.Literal(action))),
  payload: Type.Unknown(),
  createdBy: PersonRefSchema,
  createdAt: Timestamp,
  /** A digest of what the change changes, as it was when the change was added or last edited (conflicts). */
  version: Type.String(),
})
export type ChangeRecord = Static<typeof ChangeRecordSchema>

export const CHANGE_REQUEST_STATES = [
  'Draft',
  'In review',
  'Approved',
  'Scheduled',
  'Applied',
  'Rejected',
  'Cancelled',
] as const
export type ChangeRequestState = (typeof CHANGE_REQUEST_STATES)[number]
export const OPEN_STATES: readonly ChangeRequestState[] = ['Draft', 'In review', 'Approved', 'Scheduled']

const Stamp = Type.Object({ createdBy: PersonRefSchema, createdAt: Timestamp })

export const ChangeRequestRecordSchema = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  project: Type.String(),
  environment: Type.String(),
  state: Type.Union(CHANGE_REQUEST_STATES.map(state => Type.Literal(state))),
  minApprovals: Type.Integer(),
  createdBy: PersonRefSchema,
  createdAt: Timestamp,
  changes: Type.Array(ChangeRecordSchema),
  nextChangeId: Type.Integer(),
  approvals: Type.Array(Stamp),
  rejections: Type.Array(Stamp),
  comments: Type.Array(Type.Object({ id: Type.Integer(), text: Type.String(), ...Stamp.properties })),
  schedule: Nullable(
    Type.Object({
      scheduledAt: Timestamp,
      status: Type.Union([Type.Literal('pending'), Type.Literal('failed')]),
      failureReason: Nullable(Type.String()),
      /** Who scheduled it: the request is applied as if they applied it. */
      scheduledBy: PersonRefSchema,
    }),
  ),
})
export type ChangeRequestRecord = Static<typeof ChangeRequestRecordSchema>

export const ChangeRequestSequenceRecordSchema = Type.Object({ lastId: Type.Integer() })
export const CHANGE_REQUEST_SEQUENCE_KEY = 'changeRequests'

export const changeRequestSettingsCollection = defineCollection(
  'changeRequestSettings',
  ChangeRequestSettingRecordSchema,
  { addedLater: true },
)
export const changeRequestsCollection = defineCollection('changeRequests', ChangeRequestRecordSchema, {
  addedLater: true,
})
export const changeRequestSequenceCollection = defineCollection(
  'changeRequestSequence',
  ChangeRequestSequenceRecordSchema,
  { addedLater: true },
)

declare module '../../storage/records' {
  interface CollectionRecords {
    changeRequestSettings: ChangeRequestSettingRecord
    changeRequests: ChangeRequestRecord
    changeRequestSequence: Static<typeof ChangeRequestSequenceRecordSchema>
  }
}
