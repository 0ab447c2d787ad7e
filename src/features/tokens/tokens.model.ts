import { t } from 'elysia'
import { NullableTimestamp, Timestamp } from '../../http/schemas'

const TokenFields = {
  tokenName: t.String({ description: 'Unique token name; recorded as createdBy of its events' }),
  type: t.String({ description: 'admin, client or frontend' }),
  role: t.String({ description: 'admin, editor or viewer (admin tokens)' }),
  projects: t.Array(t.String({ description: 'Project id or *' }), { description: 'Projects the token may touch' }),
  environment: t.String({ description: 'Environment (client and frontend tokens), * for admin tokens' }),
  createdAt: Timestamp('Creation time'),
  expiresAt: NullableTimestamp('Expiry time, if any'),
}

export const Token = t.Object(TokenFields, { description: 'An API token, without its secret' })

export const CreatedToken = t.Object(
  {
    ...TokenFields,
    secret: t.String({ description: 'The secret, shown only in this response; only its hash is stored' }),
  },
  { description: 'A new API token with its secret' },
)

export const TokenList = t.Object(
  { tokens: t.Array(Token, { description: 'All tokens' }) },
  { description: 'API tokens' },
)

export const CreateToken = t.Object(
  {
    tokenName: t.Optional(
      t.String({
        description:
          'Unique token name, with the flag name rules (1 to 100 characters, URL-safe, not "." or ".."); "system", names starting with ' +
          '"admin-bootstrap" (any case) and integers are reserved',
        minLength: 1,
        maxLength: 100,
        examples: ['ci-pipeline'],
      }),
    ),
    username: t.Optional(
      t.String({
        description:
          'Deprecated name of tokenName, as older Unleash scripts send it; give one of the two (both only if equal)',
        minLength: 1,
        maxLength: 100,
      }),
    ),
    type: t.String({ description: 'admin, client or frontend (any case)', maxLength: 20, examples: ['admin'] }),
    role: t.Optional(
      t.Union([t.Literal('admin'), t.Literal('editor'), t.Literal('viewer')], {
        description: 'Admin tokens: admin (default), editor (all but tokens) or viewer (read-only)',
      }),
    ),
    projects: t.Optional(
      t.Array(t.String({ maxLength: 100, description: 'Project id or *' }), {
        maxItems: 100,
        description: 'Projects the token may touch (default ["*"])',
      }),
    ),
    project: t.Optional(
      t.String({
        maxLength: 100,
        description:
          'Single-project shorthand for projects; give one of the two (both only if they name the same one project)',
      }),
    ),
    environment: t.Optional(
      t.String({
        maxLength: 100,
        description: 'Client and frontend tokens: one existing environment, not * (default development)',
      }),
    ),
    expiresAt: t.Optional(t.String({ format: 'date-time', description: 'When the token stops working' })),
  },
  {
    description: 'A token to create: tokenName (or its older name username) and type are required',
    examples: [{ tokenName: 'checkout-service', type: 'client', projects: ['default'], environment: 'development' }],
  },
)

/** The named schemas of the token routes, as routes refer to them and OpenAPI lists them. */
export const tokenModels = {
  apiTokenSchema: Token,
  apiTokensSchema: TokenList,
  createApiTokenSchema: CreateToken,
  createdApiTokenSchema: CreatedToken,
}
