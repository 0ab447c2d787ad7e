/**
 * The users and sessions collections. A user is a person who signs in to the console; a session
 * is one sign-in, kept in the store so that it survives a restart. Both came after the first data
 * directories, so a directory without them starts with none.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

export const UserRecordSchema = Type.Object({
  /** From the same counter as the tokens' user ids, so `createdByUserId` names one actor. */
  id: Type.Integer(),
  username: Nullable(Type.String()),
  email: Nullable(Type.String()),
  name: Nullable(Type.String()),
  rootRole: Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')]),
  /** Argon2id in PHC form (Bun.password); null: the user cannot sign in until a password is set. */
  passwordHash: Nullable(Type.String()),
  createdAt: Timestamp,
  /** Set by an admin: the user cannot sign in (by password or single sign-on) and no credential of theirs holds. */
  disabled: Type.Optional(Type.Boolean()),
})
export type UserRecord = Static<typeof UserRecordSchema>
export type RootRole = UserRecord['rootRole']

export const SessionRecordSchema = Type.Object({
  /** The SHA-256 of the cookie's secret, hex, which is also the record's key: the secret itself is never stored. */
  id: Type.String(),
  userId: Type.Integer(),
  createdAt: Timestamp,
  expiresAt: Timestamp,
})
export type SessionRecord = Static<typeof SessionRecordSchema>

export const usersCollection = defineCollection('users', UserRecordSchema, { addedLater: true })
export const sessionsCollection = defineCollection('sessions', SessionRecordSchema, { addedLater: true })

declare module '../../storage/records' {
  interface CollectionRecords {
    users: UserRecord
    sessions: SessionRecord
  }
}
