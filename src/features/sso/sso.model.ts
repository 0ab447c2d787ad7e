/** Request and response schemas of single sign-on's settings, with Unleash's field names. */
import { t } from 'elysia'

const roleName = t.String({ description: 'Admin, Editor or Viewer (any case)', maxLength: 20 })
const mapping = t.Array(
  t.Object(
    {
      group: t.String({ description: 'A group as the provider names it in the groups claim', maxLength: 1000 }),
      rootRole: roleName,
    },
    { description: 'A group and the root role it gives' },
  ),
  {
    description:
      "With group syncing: the first of the person's groups found here gives their root role, else defaultRootRole",
    maxItems: 100,
  },
)

const fields = {
  enabled: t.Boolean({ description: 'Whether people may sign in with the provider' }),
  discoverUrl: t.String({
    description: "The provider's issuer URL, or its /.well-known/openid-configuration",
    maxLength: 2000,
  }),
  clientId: t.String({ description: 'The client id registered at the provider', maxLength: 1000 }),
  autoCreate: t.Boolean({ description: 'Make a user at their first sign-in (when the email domain is allowed)' }),
  emailDomains: t.String({ description: 'Comma-separated domains people are made for; empty: any', maxLength: 2000 }),
  defaultRootRole: roleName,
  enableSingleSignOut: t.Boolean({ description: 'Signing out here also signs out at the provider' }),
  enableGroupSyncing: t.Boolean({ description: 'Derive the root role from the groups claim at each sign-in' }),
  groupJsonPath: t.String({
    description: 'Where the groups are in the claims, dotted: groups, realm_access.roles',
    maxLength: 200,
  }),
  addGroupsScope: t.Boolean({ description: 'Ask for the groups scope too' }),
  idTokenSigningAlgorithm: t.String({ description: 'The algorithm the ID token must be signed with', maxLength: 20 }),
  acrValues: t.String({ description: 'acr_values sent to the provider, if any', maxLength: 1000 }),
  extraScopes: t.String({ description: 'More scopes to ask for, separated by spaces or commas', maxLength: 1000 }),
}

const OidcSettingsView = t.Object(
  {
    ...fields,
    rootRoleMapping: mapping,
    hasSecret: t.Boolean({ description: 'Whether a client secret is set (the secret itself is never answered)' }),
    setByEnvironment: t.Boolean({
      description: 'Set by OIDC_* environment variables at start, which win over the API',
    }),
  },
  { description: 'The OpenID Connect settings, without the client secret' },
)

const OidcSettingsInput = t.Object(
  {
    ...Object.fromEntries(Object.entries(fields).map(([name, schema]) => [name, t.Optional(schema)])),
    secret: t.Optional(
      t.String({ description: 'The client secret; left out or empty keeps the one set before', maxLength: 2000 }),
    ),
    rootRoleMapping: t.Optional(mapping),
  },
  {
    description: 'What to change; what is left out stays',
    examples: [
      {
        enabled: false,
        discoverUrl: 'https://login.example.com/realms/staff',
        clientId: 'flagstore',
        secret: 'client-secret',
        autoCreate: true,
        emailDomains: 'example.com',
        defaultRootRole: 'Viewer',
        enableGroupSyncing: true,
        groupJsonPath: 'groups',
        rootRoleMapping: [{ group: 'flag-admins', rootRole: 'Admin' }],
      },
    ],
  },
)

const SimpleSettings = t.Object(
  { disabled: t.Boolean({ description: 'true: password sign-in is refused (single sign-on only)' }) },
  { description: 'Password sign-in', examples: [{ disabled: false }] },
)

const SignInOptions = t.Object(
  {
    passwordSignIn: t.Boolean({ description: 'Whether the password form is offered' }),
    oidc: t.Boolean({ description: 'Whether "Sign in with SSO" is offered' }),
    singleSignOut: t.Boolean({ description: 'Whether signing out goes on to the provider (GET /auth/oidc/logout)' }),
  },
  { description: 'The ways to sign in, for the sign-in page' },
)

export const ssoModels = {
  oidcSettingsSchema: OidcSettingsView,
  oidcSettingsInputSchema: OidcSettingsInput,
  simpleSettingsSchema: SimpleSettings,
  signInOptionsSchema: SignInOptions,
}
