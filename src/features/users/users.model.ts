/** Request and response schemas of users and sign-in, with Unleash's schema names. */
import { t } from 'elysia'
import { Integer, PATTERN_RULE } from '../../http/schemas'

const nullableString = (description: string) => t.Union([t.String(), t.Null()], { description })

export const User = t.Object(
  {
    id: Integer({ description: 'User id; the createdByUserId of the events the user causes' }),
    username: nullableString("Username, if any; the createdBy of the user's events"),
    email: nullableString("Email, if any; the createdBy of the user's events when there is no username"),
    name: nullableString('Full name, if given'),
    rootRole: Integer({ description: "Root role, by Unleash's ids: 1 Admin, 2 Editor, 3 Viewer" }),
    createdAt: t.String({ description: 'Creation time (empty for an API token)' }),
    isAPI: t.Boolean({ description: 'true when the caller is an API token rather than a person' }),
    disabled: t.Optional(
      t.Boolean({ description: 'Present and true when an admin disabled the user: no sign-in, no credential holds' }),
    ),
  },
  { description: 'A user, without any password' },
)

export const RootRole = t.Object(
  {
    id: Integer({ description: 'Role id, as rootRole' }),
    name: t.String({ description: 'Admin, Editor or Viewer' }),
    description: t.String({ description: 'What the role may do' }),
    type: t.String({ description: 'Always root' }),
  },
  { description: 'A root role' },
)

export const UserList = t.Object(
  {
    users: t.Array(User, { description: 'Every user, by id' }),
    rootRoles: t.Array(RootRole, { description: 'The roles a user may have' }),
  },
  { description: 'Users and the root roles' },
)

const roleField = t.Union([t.String({ maxLength: 20 }), Integer()], {
  description: "Admin, Editor or Viewer (any case), or Unleash's ids 1, 2, 3",
  examples: ['Editor'],
})
const passwordField = t.String({
  description:
    'At least 10 characters (at most 128) with a lower-case letter, an upper-case letter, a digit and another character',
  maxLength: 1024,
  examples: ['Correct-horse-7'],
})

export const CreateUser = t.Object(
  {
    username: t.Optional(
      t.String({
        description:
          'Username: 1 to 100 characters, no spaces, not a number; unique (any case) among usernames and emails',
        maxLength: 1000,
        examples: ['alice'],
      }),
    ),
    email: t.Optional(
      t.String({
        description: 'Email; a user needs a username or an email',
        maxLength: 1000,
        examples: ['alice@example.com'],
      }),
    ),
    name: t.Optional(t.String({ description: 'Full name', maxLength: 1000 })),
    rootRole: roleField,
    password: t.Optional(passwordField),
    sendEmail: t.Optional(t.Boolean({ description: 'Ignored: the service sends no email' })),
  },
  {
    description: 'A user to create; without a password the user cannot sign in until one is set',
    examples: [{ username: 'alice', rootRole: 'Editor', password: 'Correct-horse-7' }],
  },
)

export const UpdateUser = t.Object(
  {
    email: t.Optional(
      t.String({ description: 'New email; empty removes it (when the user has a username)', maxLength: 1000 }),
    ),
    name: t.Optional(t.String({ description: 'New full name; empty removes it', maxLength: 1000 })),
    rootRole: t.Optional(roleField),
    disabled: t.Optional(
      t.Boolean({
        description: "true ends the user's sessions and stops their personal tokens and sign-in; false lets them back",
      }),
    ),
  },
  { description: 'What to change; what is left out stays', examples: [{ name: 'Alice Liddell', rootRole: 'Viewer' }] },
)

export const ChangePassword = t.Object(
  { password: passwordField },
  { description: 'The new password; every session of the user ends', examples: [{ password: 'Battery-staple-8' }] },
)

export const ChangeOwnPassword = t.Object(
  {
    oldPassword: t.String({ description: 'The current password', maxLength: 1024 }),
    password: passwordField,
    confirmPassword: t.Optional(
      t.String({ description: 'The new password again; must equal password when given', maxLength: 1024 }),
    ),
  },
  {
    description: "A signed-in user's new password; every session of the user ends, this one too",
    examples: [{ oldPassword: 'Correct-horse-7', password: 'Battery-staple-8', confirmPassword: 'Battery-staple-8' }],
  },
)

export const Login = t.Object(
  {
    username: t.String({ description: 'Username or email', maxLength: 1000, examples: ['admin'] }),
    password: t.String({ description: 'Password', maxLength: 1024 }),
  },
  { description: 'Credentials for a session', examples: [{ username: 'alice', password: 'Correct-horse-7' }] },
)

export const Me = t.Object(
  { user: User },
  { description: 'The caller: the signed-in user, or the API token as an API user' },
)

export const userModels = {
  userSchema: User,
  usersSchema: UserList,
  createUserSchema: CreateUser,
  updateUserSchema: UpdateUser,
  passwordSchema: ChangePassword,
  changeOwnPasswordSchema: ChangeOwnPassword,
  loginSchema: Login,
  meSchema: Me,
}

export const userIdParams = t.Object({
  id: t.String({
    description: 'User id',
    pattern: '^-?[0-9]{1,15}$',
    [PATTERN_RULE]: 'a user id, a whole number of up to 15 digits',
  }),
})
