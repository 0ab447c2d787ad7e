/** Request and response schemas of personal access tokens and service accounts, with Unleash's schema names. */
import { t } from 'elysia'
import { Integer, NullableTimestamp, PATTERN_RULE, Timestamp } from '../../http/schemas'
import { RootRole } from '../users/users.model'

const PersonalToken = t.Object(
  {
    id: Integer({ description: 'Token id' }),
    description: t.String({ description: 'What the token is for' }),
    expiresAt: NullableTimestamp('When the token stops working'),
    createdAt: Timestamp('When the token was made'),
    seenAt: NullableTimestamp('When the token was last used on this instance since it started, or null'),
    userId: Integer({ description: 'The user or service account the token acts as' }),
  },
  { description: 'A personal access token, without its secret' },
)

const CreatedPersonalToken = t.Composite(
  [
    PersonalToken,
    t.Object({ secret: t.String({ description: 'The secret, shown this once: only its hash is kept' }) }),
  ],
  { description: 'A new personal access token and its secret' },
)

const PersonalTokenList = t.Object(
  { pats: t.Array(PersonalToken, { description: 'The tokens, oldest first' }) },
  { description: 'Personal access tokens' },
)

const CreatePersonalToken = t.Object(
  {
    description: t.String({ description: 'What the token is for', minLength: 1, maxLength: 200 }),
    expiresAt: t.String({ description: 'When the token stops working: a date and time in the future', maxLength: 100 }),
  },
  {
    description: 'A personal access token to make',
    examples: [{ description: 'deploy script', expiresAt: '2099-01-01T00:00:00.000Z' }],
  },
)

const roleField = t.Union([t.String({ maxLength: 20 }), Integer()], {
  description: "Admin, Editor or Viewer (any case), or Unleash's ids 1, 2, 3",
})

const ServiceAccount = t.Object(
  {
    id: Integer({ description: 'Service account id; the createdByUserId of what its tokens change' }),
    username: t.String({ description: 'Username: the createdBy of what its tokens change' }),
    name: t.Union([t.String(), t.Null()], { description: 'Name, if given' }),
    rootRole: Integer({ description: "Root role, by Unleash's ids: 1 Admin, 2 Editor, 3 Viewer" }),
    createdAt: Timestamp('When the account was made'),
    isAPI: t.Boolean({ description: 'Always true: not a person' }),
  },
  { description: 'A service account' },
)

const ServiceAccountList = t.Object(
  {
    serviceAccounts: t.Array(ServiceAccount, { description: 'Every service account, by id' }),
    rootRoles: t.Array(RootRole, { description: 'The roles an account may have' }),
  },
  { description: 'Service accounts and the root roles' },
)

const CreateServiceAccount = t.Object(
  {
    username: t.String({
      description: '1 to 100 characters, no spaces, not a number; unique among users',
      maxLength: 1000,
    }),
    name: t.Optional(t.String({ description: 'Name', maxLength: 1000 })),
    rootRole: roleField,
  },
  { description: 'A service account to make', examples: [{ username: 'ci-bot', name: 'CI', rootRole: 'Editor' }] },
)

const UpdateServiceAccount = t.Object(
  {
    name: t.Optional(t.String({ description: 'New name; empty removes it', maxLength: 1000 })),
    rootRole: t.Optional(roleField),
  },
  { description: 'What to change; what is left out stays', examples: [{ name: 'CI', rootRole: 'Viewer' }] },
)

export const personalTokenModels = {
  patSchema: PersonalToken,
  createdPatSchema: CreatedPersonalToken,
  patsSchema: PersonalTokenList,
  createPatSchema: CreatePersonalToken,
  serviceAccountSchema: ServiceAccount,
  serviceAccountsSchema: ServiceAccountList,
  createServiceAccountSchema: CreateServiceAccount,
  updateServiceAccountSchema: UpdateServiceAccount,
}

const idParam = (description: string) =>
  t.String({ description, pattern: '^-?[0-9]{1,15}$', [PATTERN_RULE]: 'a whole number of up to 15 digits' })

export const tokenIdParams = t.Object({ id: idParam('Token id') })
export const accountIdParams = t.Object({ id: idParam('Service account id') })
export const accountTokenParams = t.Object({ id: idParam('Service account id'), tokenId: idParam('Token id') })
