/** Request and response schemas of the change-request routes, in Unleash's shapes. */
import { t } from 'elysia'
import { Integer } from '../../http/schemas'
import { CHANGE_ACTIONS, CHANGE_REQUEST_STATES } from './change-requests.records'

export const ConfigInput = t.Object(
  {
    changeRequestsEnabled: t.Boolean({ description: 'Whether changes to the environment need a change request' }),
    requiredApprovals: t.Optional(
      Integer({ minimum: 1, maximum: 10, description: 'Approvals needed, by people other than the author (1–10)' }),
    ),
  },
  { examples: [{ changeRequestsEnabled: true, requiredApprovals: 1 }] },
)

const EnvironmentConfig = t.Object({
  environment: t.String({ description: 'Environment name' }),
  type: t.String({ description: 'Environment type' }),
  changeRequestEnabled: t.Boolean({ description: 'Whether changes there need a change request' }),
  requiredApprovals: Integer({ description: 'Approvals needed' }),
})

const ChangeInput = t.Object({
  feature: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: 'The flag it changes' })),
  action: t.UnionEnum(CHANGE_ACTIONS, { description: 'What the change does' }),
  payload: t.Unknown({ description: "The body the action's direct route takes (with the id its path would name)" }),
})

const EXAMPLE_CHANGE = { feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } }

export const CreateInput = t.Union([ChangeInput, t.Array(ChangeInput, { minItems: 1, maxItems: 100 })], {
  description: 'One change or a list of them, added to your draft for the environment',
  examples: [EXAMPLE_CHANGE],
})

export const StateInput = t.Object(
  {
    state: t.UnionEnum(CHANGE_REQUEST_STATES, { description: 'The state to move to' }),
    comment: t.Optional(t.String({ maxLength: 2000, description: 'Why (needed to reject)' })),
    scheduledAt: t.Optional(t.String({ format: 'date-time', description: 'When to apply it (state Scheduled)' })),
  },
  { examples: [{ state: 'In review' }] },
)

export const TitleInput = t.Object(
  { title: t.String({ minLength: 1, maxLength: 200, description: 'The title' }) },
  { examples: [{ title: 'Turn checkout on in production' }] },
)
export const CommentInput = t.Object(
  { text: t.String({ minLength: 1, maxLength: 2000, description: 'The comment' }) },
  { examples: [{ text: 'Looks good to me' }] },
)
export const ChangeEditInput = t.Object(
  { payload: t.Unknown({ description: "The change's new payload" }) },
  { examples: [{ payload: { enabled: false } }] },
)

const Person = t.Object({ id: t.Number(), username: t.String() })
const Stamp = t.Object({ createdBy: Person, createdAt: t.String({ format: 'date-time' }) })
const Change = t.Object({
  id: Integer(),
  action: t.String(),
  payload: t.Unknown(),
  createdBy: Person,
  createdAt: t.String({ format: 'date-time' }),
})

export const ChangeRequest = t.Object(
  {
    id: Integer({ description: 'Change request id' }),
    title: t.String(),
    project: t.String(),
    environment: t.String(),
    state: t.UnionEnum(CHANGE_REQUEST_STATES, { description: 'Its state' }),
    minApprovals: Integer({ description: 'Approvals needed' }),
    createdBy: Person,
    createdAt: t.String({ format: 'date-time' }),
    features: t.Array(
      t.Object({
        name: t.String(),
        changes: t.Array(Change),
        conflict: t.Optional(t.String({ description: 'What moved since the changes were made' })),
      }),
    ),
    segments: t.Array(
      t.Object({ id: Integer(), name: t.String(), changes: t.Array(Change), conflict: t.Optional(t.String()) }),
    ),
    approvals: t.Array(Stamp),
    rejections: t.Array(Stamp),
    comments: t.Array(t.Object({ id: Integer(), text: t.String(), ...Stamp.properties })),
    schedule: t.Optional(
      t.Object({
        scheduledAt: t.String({ format: 'date-time' }),
        status: t.String({ description: 'pending, or failed' }),
        failureReason: t.Optional(t.String()),
      }),
    ),
  },
  { description: 'A change request with its changes grouped by flag' },
)

export const changeRequestModels = {
  changeRequestEnvironmentConfigSchema: ConfigInput,
  changeRequestConfigSchema: t.Array(EnvironmentConfig),
  changeRequestCreateSchema: CreateInput,
  changeRequestStateSchema: StateInput,
  changeRequestTitleSchema: TitleInput,
  changeRequestAddCommentSchema: CommentInput,
  changeRequestEditChangeSchema: ChangeEditInput,
  changeRequestSchema: ChangeRequest,
  changeRequestsSchema: t.Array(ChangeRequest),
}
