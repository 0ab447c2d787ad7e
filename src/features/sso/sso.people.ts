/**
 * Who a person the provider vouched for is here: matched by the provider's subject first (the
 * identity kept from an earlier sign-in), then by a verified email; else made, when `autoCreate`
 * is on and the email's domain is allowed. With group syncing the root role is derived again at
 * each sign-in, except that the last active admin (the user-admin route's rule) keeps the role.
 * A user disabled here, or deleted here after signing in through the provider, cannot come back
 * through it. Decided inside one write, on the state it is applied to; its events name the person
 * signing in as their author, and the provider in their data.
 */
import { events } from '../../domain/events'
import type { Tx } from '../../storage/store'
import type { RootRole, UserRecord } from '../users/users.records'
import { adminStillNeeded, displayName, viewOf } from '../users/users.service'
import type { OidcSettings } from './sso.records'

/** A sign-in the service refuses, with what the person is told. */
export class SsoRefusal extends Error {}

export interface Vouched {
  issuer: string
  subject: string
  /** All the claims: the ID token's, over the user info's. */
  claims: Record<string, unknown>
}

/** The value at a dotted path (`groups`, `realm_access.roles`) of the claims. */
function at(claims: Record<string, unknown>, path: string): unknown {
  let value: unknown = claims
  for (const part of path.split('.').filter(Boolean)) {
    if (value === null || typeof value !== 'object') return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

/** The groups claim as a list of strings (a single string is one group). */
export function groupsOf(claims: Record<string, unknown>, path: string): string[] {
  const value = at(claims, path)
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((group): group is string => typeof group === 'string') : []
}

/** The role the person's groups give: the first of their groups that is mapped, else the default. */
export function roleFromGroups(settings: OidcSettings, groups: readonly string[]): RootRole {
  for (const group of groups) {
    const mapped = settings.rootRoleMapping.find(entry => entry.group === group)
    if (mapped) return mapped.rootRole
  }
  return settings.defaultRootRole
}

function domainAllowed(email: string, domains: string): boolean {
  const allowed = domains
    .split(',')
    .map(domain => domain.trim().toLowerCase().replace(/^@/, ''))
    .filter(Boolean)
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
  return allowed.length === 0 || allowed.includes(domain)
}

export interface SignedIn {
  user: UserRecord
  /** Why the groups' role was not given (the last admin keeps the role), else null. */
  roleKept: string | null
}

/**
 * The user to sign in as, made or updated in `tx` (with their events); SsoRefusal when none may be.
 * `author` is the write's author: it is set to the user, who the events name as making them.
 */
export function personFor(
  tx: Tx,
  vouched: Vouched,
  settings: OidcSettings,
  author: { name: string; userId: number | null },
): SignedIn {
  const provider = { provider: 'oidc', issuer: vouched.issuer }
  const id = `${vouched.issuer} ${vouched.subject}`
  const { claims } = vouched
  // Entra ID sends no email_verified; its xms_edov says the tenant verified the email's domain.
  const verified = claims.email_verified === true || claims.xms_edov === true || claims.xms_edov === '1'
  const email = typeof claims.email === 'string' && verified ? claims.email.trim() : null
  const byEmail = (address: string) =>
    tx
      .values('users')
      .find(
        user =>
          user.email?.toLowerCase() === address.toLowerCase() || user.username?.toLowerCase() === address.toLowerCase(),
      )
  const identity = tx.get('ssoIdentities', id)
  let user = identity ? tx.get('users', String(identity.userId)) : undefined
  if (identity && !user) {
    // Deleted here: only an admin making the user again (with this email) lets them back.
    user = email ? byEmail(email) : undefined
    if (!user) throw new SsoRefusal('Your account was deleted in this service: ask an admin to add you again.')
  }
  if (!user && email) user = byEmail(email)
  const role = settings.enableGroupSyncing
    ? roleFromGroups(settings, groupsOf(claims, settings.groupJsonPath))
    : settings.defaultRootRole
  if (!user) {
    if (!settings.autoCreate)
      throw new SsoRefusal('You have no account in this service, and accounts are not made at sign-in: ask an admin.')
    if (email === null)
      throw new SsoRefusal('The identity provider sent no verified email address, which an account here needs.')
    if (!domainAllowed(email, settings.emailDomains))
      throw new SsoRefusal(`Accounts are made at sign-in only for the domains ${settings.emailDomains}.`)
    const name = typeof claims.name === 'string' ? claims.name : null
    user = {
      id: tx.allocateUserId(),
      username: null,
      email,
      name,
      rootRole: role,
      passwordHash: null,
      createdAt: tx.now,
    }
    tx.put('users', String(user.id), user)
    tx.appendEvent(events.userCreated({ ...viewOf(user), ...provider }))
  }
  if (user.disabled) throw new SsoRefusal('Your account is disabled in this service: ask an admin.')
  author.name = displayName(user)
  author.userId = user.id
  let roleKept: string | null = null
  if (settings.enableGroupSyncing && user.rootRole !== role) {
    if (user.rootRole === 'admin') roleKept = adminStillNeeded(tx, user)
    if (roleKept === null) {
      const after = { ...user, rootRole: role }
      tx.put('users', String(user.id), after)
      tx.appendEvent(events.userUpdated({ ...viewOf(after), ...provider }, viewOf(user)))
      user = after
    }
  }
  if (identity?.userId !== user.id) tx.put('ssoIdentities', id, { id, userId: user.id, createdAt: tx.now })
  return { user, roleKept }
}
