/**
 * Single sign-on's collections: the settings (OpenID Connect, and whether password sign-in is
 * switched off), under one key each, and the identities the provider vouched for, by issuer and
 * subject, each naming the user it signs in as.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, defineCollection } from '../../storage/records'

const Role = Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')])

export const OidcSettingsSchema = Type.Object({
  enabled: Type.Boolean(),
  discoverUrl: Type.String(),
  clientId: Type.String(),
  /** The client secret: the service must send it, so it is kept as given (state.json is readable by the service's user only). */
  secret: Type.String(),
  autoCreate: Type.Boolean(),
  /** Comma-separated; empty: any domain. */
  emailDomains: Type.String(),
  defaultRootRole: Role,
  enableSingleSignOut: Type.Boolean(),
  enableGroupSyncing: Type.Boolean(),
  groupJsonPath: Type.String(),
  addGroupsScope: Type.Boolean(),
  idTokenSigningAlgorithm: Type.String(),
  acrValues: Type.String(),
  extraScopes: Type.String(),
  rootRoleMapping: Type.Array(Type.Object({ group: Type.String(), rootRole: Role })),
})
export type OidcSettings = Static<typeof OidcSettingsSchema>

export const SsoSettingsRecordSchema = Type.Object({
  oidc: Nullable(OidcSettingsSchema),
  passwordSignInDisabled: Type.Boolean(),
})
export type SsoSettingsRecord = Static<typeof SsoSettingsRecordSchema>

export const SsoIdentityRecordSchema = Type.Object({
  /** `<issuer> <subject>`, also the record's key. */
  id: Type.String(),
  userId: Type.Integer(),
  createdAt: Timestamp,
})
export type SsoIdentityRecord = Static<typeof SsoIdentityRecordSchema>

export const ssoSettingsCollection = defineCollection('ssoSettings', SsoSettingsRecordSchema, { addedLater: true })
export const ssoIdentitiesCollection = defineCollection('ssoIdentities', SsoIdentityRecordSchema, { addedLater: true })

declare module '../../storage/records' {
  interface CollectionRecords {
    ssoSettings: SsoSettingsRecord
    ssoIdentities: SsoIdentityRecord
  }
}
