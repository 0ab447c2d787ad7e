/** The tokens collection: API tokens by name, as stored in state.json (hashes, never secrets). */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

export const ApiTokenRecordSchema = Type.Object({
  tokenName: Type.String(),
  type: Type.Union([Type.Literal('admin'), Type.Literal('client'), Type.Literal('frontend')]),
  role: Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')]),
  projects: Type.Array(Type.String()),
  environment: Type.String(),
  /** `hmac-sha256:<hex>` of the secret under the data directory's key (secret-hash.ts), or, in older data directories, its bare SHA-256 hex. The secret itself is never stored. */
  secretHash: Type.String(),
  /** The part of the secret before the random part, e.g. `*:*`, safe to show. */
  prefix: Type.String(),
  userId: Type.Number(),
  createdAt: Timestamp,
  expiresAt: Nullable(Timestamp),
})
export type ApiTokenRecord = Static<typeof ApiTokenRecordSchema>
/** Whether the token's expiry has come by `now` (ms); a token without one never expires. */
export function tokenExpired(token: Pick<ApiTokenRecord, 'expiresAt'>, now: number): boolean {
  return token.expiresAt !== null && Date.parse(token.expiresAt) <= now
}
export type TokenType = ApiTokenRecord['type']
export type TokenRole = ApiTokenRecord['role']

export const tokensCollection = defineCollection('tokens', ApiTokenRecordSchema)

declare module '../../storage/records' {
  interface CollectionRecords {
    tokens: ApiTokenRecord
  }
}
