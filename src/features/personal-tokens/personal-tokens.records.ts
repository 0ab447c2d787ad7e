/**
 * Personal access tokens (a person's, or a service account's) and service accounts. A personal
 * token acts as its owner: it holds no role of its own, and stops with its owner.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

export const PersonalTokenRecordSchema = Type.Object({
  /** From the counter of user ids, so an id is never given twice. */
  id: Type.Integer(),
  /** The user or service account the token acts as. */
  userId: Type.Integer(),
  description: Type.String(),
  /** `hmac-sha256:<hex>` of the secret under the data directory's key (tokens/secret-hash.ts). */
  secretHash: Type.String(),
  createdAt: Timestamp,
  expiresAt: Nullable(Timestamp),
})
export type PersonalTokenRecord = Static<typeof PersonalTokenRecordSchema>

export const ServiceAccountRecordSchema = Type.Object({
  /** From the counter of user ids: the `createdByUserId` of what its tokens do. */
  id: Type.Integer(),
  username: Type.String(),
  name: Nullable(Type.String()),
  rootRole: Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')]),
  createdAt: Timestamp,
})
export type ServiceAccountRecord = Static<typeof ServiceAccountRecordSchema>

export const personalTokensCollection = defineCollection('personalTokens', PersonalTokenRecordSchema, {
  addedLater: true,
})
export const serviceAccountsCollection = defineCollection('serviceAccounts', ServiceAccountRecordSchema, {
  addedLater: true,
})

declare module '../../storage/records' {
  interface CollectionRecords {
    personalTokens: PersonalTokenRecord
    serviceAccounts: ServiceAccountRecord
  }
}
