/** Request and response schemas of the change-request routes, in Unleash's shapes. */
import { t } from 'elysia'
import { Integer, literals } from '../../http/schemas'
import { CHANGE_ACTIONS, CHANGE_REQUEST_STATES } from './change-requests.records'

export const ConfigInput = t.Object(
  {
    changeRequestsEnabled: t.Boolean({ description: 'Whether changes to the environment need a change request' }),
    requiredApprovals: t.Optional(
      Integer({ minimum: 1, maximum: 10, description: 'Approvals needed, by people other than the author (1–10)' }),
    ),
  },
  {
    description: 'Whether an environment of a project needs change requests',
    examples: [{ changeRequestsEnabled: true, requiredApprovals: 1 }],
  },
)

const EnvironmentConfig = t.Object(
  {
    environment: t.String({ description: 'Environment name' }),
    type: t.String({ description: 'Environment type' }),
    changeRequestEnabled: t.Boolean({ description: 'Whether changes there need a change request' }),
    requiredApprovals: Integer({ description: 'Approvals needed' }),
  },
  { description: "An environment's change-request setting" },
)

const ChangeInput = t.Object(
  {
    feature: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: 'The flag it changes' })),
    action: literals(CHANGE_ACTIONS, 'What the change does'),
    payload: t.Unknown({ description: "The body the action's direct route takes (with the id its path would name)" }),
  },
  { description: 'One change' },
)

const EXAMPLE_CHANGE = { feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } }

export const CreateInput = t.Union([ChangeInput, t.Array(ChangeInput, { minItems: 1, maxItems: 100 })], {
  description: 'One change or a list of them, added to your draft for the environment',
  examples: [EXAMPLE_CHANGE],
})

export const StateInput = t.Object(
  {
    state: literals(CHANGE_REQUEST_STATES, 'The state to move to'),
    comment: t.Optional(t.String({ maxLength: 2000, description: 'Why (needed to reject)' })),
    scheduledAt: t.Optional(t.String({ format: 'date-time', description: 'When to apply it (state Scheduled)' })),
  },
  { description: 'The state to move a change request to', examples: [{ state: 'In review' }] },
)

export const TitleInput = t.Object(
  { title: t.String({ minLength: 1, maxLength: 200, description: 'The title' }) },
  { description: "A change request's title", examples: [{ title: 'Turn checkout on in production' }] },
)
export const CommentInput = t.Object(
  { text: t.String({ minLength: 1, maxLength: 2000, description: 'The comment' }) },
  { description: 'A comment', examples: [{ text: 'Looks good to me' }] },
)
export const ChangeEditInput = t.Object(
  { payload: t.Unknown({ description: "The change's new payload" }) },
  { description: "A change's new payload", examples: [{ payload: { enabled: false } }] },
)

const Person = t.Object(
  {
    id: t.Number({ description: "The person's user id (an API token's own id for a token)" }),
    username: t.String({ description: 'Their username, or the token name' }),
  },
  { description: 'Who did it' },
)
const at = (what: string) => t.String({ format: 'date-time', description: `When ${what}` })
const Stamp = t.Object(
  { createdBy: Person, createdAt: at('it was given') },
  { description: 'An approval or a rejection' },
)
const Change = t.Object(
  {
    id: Integer({ description: 'Change id, unique in the request' }),
    action: t.String({ description: 'What the change does (updateEnabled, addStrategy, …)' }),
    payload: t.Unknown({ description: "The body of the action's direct route" }),
    createdBy: Person,
    createdAt: at('it was added or last edited'),
  },
  { description: 'One change' },
)
const conflict = t.Optional(
  t.String({ description: 'Set when what the changes change moved since they were made: applying answers 409' }),
)

export const ChangeRequest = t.Object(
  {
    id: Integer({ description: 'Change request id' }),
    title: t.String({ description: 'Its title' }),
    project: t.String({ description: 'Project id' }),
    environment: t.String({ description: 'Environment name' }),
    state: literals(CHANGE_REQUEST_STATES, 'Its state'),
    minApprovals: Integer({ description: 'Approvals needed' }),
    createdBy: Person,
    createdAt: at('it was made'),
    features: t.Array(
      t.Object(
        {
          name: t.String({ description: 'Flag name' }),
          changes: t.Array(Change, { description: 'Its changes, in the order they apply' }),
          conflict,
        },
        { description: 'The changes to one flag' },
      ),
      { description: 'The changes, by flag' },
    ),
    segments: t.Array(
      t.Object(
        {
          id: Integer({ description: 'Segment id' }),
          name: t.String({ description: 'Segment name' }),
          changes: t.Array(Change, { description: 'Its changes' }),
          conflict,
        },
        { description: 'The changes to one segment' },
      ),
      { description: 'The changes to segments' },
    ),
    approvals: t.Array(Stamp, { description: 'Approvals, by distinct people other than the author' }),
    rejections: t.Array(Stamp, { description: 'Rejections' }),
    comments: t.Array(
      t.Object(
        {
          id: Integer({ description: 'Comment id' }),
          text: t.String({ description: 'The comment' }),
          createdBy: Person,
          createdAt: at('it was written'),
        },
        { description: 'A comment' },
      ),
      { description: 'Comments, oldest first' },
    ),
    schedule: t.Optional(
      t.Object(
        {
          scheduledAt: at('it is to be applied'),
          status: t.String({ description: 'pending, or failed' }),
          failureReason: t.Optional(t.String({ description: 'Why it could not be applied' })),
        },
        { description: 'When a scheduled request is applied' },
      ),
    ),
  },
  { description: 'A change request with its changes grouped by flag' },
)

export const changeRequestModels = {
  changeRequestEnvironmentConfigSchema: ConfigInput,
  changeRequestConfigSchema: t.Array(EnvironmentConfig, {
    description: 'Each environment of the project with its change-request setting',
  }),
  changeRequestCreateSchema: CreateInput,
  changeRequestStateSchema: StateInput,
  changeRequestTitleSchema: TitleInput,
  changeRequestAddCommentSchema: CommentInput,
  changeRequestEditChangeSchema: ChangeEditInput,
  changeRequestSchema: ChangeRequest,
  changeRequestsSchema: t.Array(ChangeRequest, { description: 'Change requests, oldest first' }),
}
