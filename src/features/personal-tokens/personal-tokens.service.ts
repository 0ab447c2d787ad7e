/**
 * Personal access tokens: secrets `user:<hex>` that act as their owner, a person or a service
 * account. The token holds no role: every request, and every write again on the state it is
 * applied to, reads the owner's role then, so a token stops at once when it is deleted or expires,
 * and when its owner is deleted, disabled or demoted below what a request needs. A person's token
 * is the person as callers go (kind `user`, their user id and name); only its credential differs.
 */
import { randomBytes } from 'node:crypto'
import { AuthenticationRequired, NoAccessError, NotFoundError, ValidationError } from '../../errors'
import { events } from '../../domain/events'
import type { StateReader, Store, Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import type { Authenticated } from '../tokens/auth'
import { actorOf, callerName, type Caller, type Credential, type Identity } from '../tokens/permissions'
import { SecretHasher } from '../tokens/secret-hash'
import type { TokenRole } from '../tokens/tokens.records'
import { callerOf } from '../users/users.service'
import type { PersonalTokenRecord } from './personal-tokens.records'

/** The start of every personal token's secret, as in Unleash: how a request's header is told from an API token. */
export const PERSONAL_PREFIX = 'user:'

export interface PersonalTokenView {
  id: number
  description: string
  expiresAt: string | null
  createdAt: string
  /** When the token was last used on this instance since it started; null if not. */
  seenAt: string | null
  userId: number
}

/** The identity a token's owner gives its callers: a person as signed in, a service account as an API caller. */
function identityOf(state: StateReader, userId: number, credential: Credential): Identity | undefined {
  const user = state.get('users', String(userId))
  if (user) return user.disabled ? undefined : callerOf(user, credential)
  const account = state.get('serviceAccounts', String(userId))
  if (!account) return undefined
  return { tokenName: account.username, kind: 'token', userId, role: account.rootRole, projects: ['*'], credential }
}

/** The owner's role now, or 401 when the token or its owner has gone. */
function currentRole(state: StateReader, id: number, hash: string, now: number): TokenRole {
  const token = state.get('personalTokens', String(id))
  if (!token || !SecretHasher.same(token.secretHash, hash))
    throw new AuthenticationRequired('The personal access token is not valid: it is unknown or was deleted')
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= now)
    throw new AuthenticationRequired(`The personal access token expired at ${token.expiresAt}`)
  const user = state.get('users', String(token.userId))
  if (user?.disabled) throw new AuthenticationRequired('The owner of this personal access token was disabled')
  const role = user?.rootRole ?? state.get('serviceAccounts', String(token.userId))?.rootRole
  if (role === undefined) throw new AuthenticationRequired('The owner of this personal access token no longer exists')
  return role
}

/** A personal token as a caller's credential: its id and the hash it was found by. */
class PersonalTokenCredential implements Credential {
  constructor(
    private readonly id: number,
    private readonly hash: string,
  ) {}

  check(state: StateReader, now: number): TokenRole {
    return currentRole(state, this.id, this.hash, now)
  }
}

export interface CreatePersonalTokenInput {
  description: string
  expiresAt?: string
}

export class PersonalTokensService {
  private readonly hasher: SecretHasher
  /** Token ids by secret hash, kept from the store's record changes. */
  private readonly byHash = new Map<string, number>()
  /** Last use per token id, in memory: recording each use would make every request a write. */
  private readonly seen = new Map<number, string>()

  constructor(private readonly store: Pick<Store, 'reader' | 'transact' | 'watch' | 'secretKey'>) {
    this.hasher = new SecretHasher(store.secretKey)
    store.watch('personalTokens', (_key, before, after) => {
      if (before) this.byHash.delete(before.secretHash)
      if (after) this.byHash.set(after.secretHash, after.id)
      if (before && !after) this.seen.delete(before.id)
    })
  }

  /** Whether an Authorization header holds a personal token rather than an API token. */
  holds(header: string): boolean {
    return header
      .trim()
      .replace(/^bearer\s+/i, '')
      .startsWith(PERSONAL_PREFIX)
  }

  /** The owner behind a personal token's secret, as an admin caller; 401 when it does not hold. */
  authenticate(header: string, now = Date.now()): Authenticated {
    const hash = this.hasher.hash(header.trim().replace(/^bearer\s+/i, ''))
    const id = this.byHash.get(hash)
    if (id === undefined)
      throw new AuthenticationRequired('The personal access token is not valid: it is unknown or was deleted')
    const credential = new PersonalTokenCredential(id, hash)
    currentRole(this.store.reader, id, hash, now)
    const owner = this.store.reader.get('personalTokens', String(id))!.userId
    const caller = identityOf(this.store.reader, owner, credential)
    if (!caller) throw new AuthenticationRequired('The owner of this personal access token no longer exists')
    this.seen.set(id, new Date(now).toISOString())
    return { caller, type: 'admin', environment: '*' }
  }

  /** The tokens of `userId`, oldest first. */
  list(userId: number): PersonalTokenView[] {
    return this.store.reader
      .values('personalTokens')
      .filter(token => token.userId === userId)
      .sort((a, b) => a.id - b.id)
      .map(token => this.viewOf(token))
  }

  /** A token for `userId`, a person (`users`) or a service account (`serviceAccounts`), which must exist when it is written. */
  async create(
    userId: number,
    input: CreatePersonalTokenInput,
    caller: Caller,
    owners: 'users' | 'serviceAccounts' = 'users',
  ): Promise<PersonalTokenView & { secret: string }> {
    const description = input.description.trim()
    if (description === '') throw ValidationError.at('/description', 'A personal access token needs a description')
    let expiresAt: string | null = null
    if (input.expiresAt !== undefined) {
      const at = Date.parse(input.expiresAt)
      if (!(at > Date.now())) throw ValidationError.at('/expiresAt', 'must be a date and time in the future')
      expiresAt = new Date(at).toISOString()
    }
    const secret = `${PERSONAL_PREFIX}${randomBytes(32).toString('hex')}`
    const record = await this.store.transact(actorOf(caller), tx => {
      if (!tx.get(owners, String(userId)))
        throw new NotFoundError(`No ${owners === 'users' ? 'user' : 'service account'} with id ${userId}`)
      const count = tx.values('personalTokens').filter(token => token.userId === userId).length
      checkLimit('personalTokensPerOwner', count + 1, '/description')
      const token: PersonalTokenRecord = {
        id: tx.allocateUserId(),
        userId,
        description,
        secretHash: this.hasher.hash(secret),
        createdAt: tx.now,
        expiresAt,
      }
      tx.put('personalTokens', String(token.id), token)
      tx.appendEvent(events.patCreated(eventView(token)))
      return token
    })
    return { ...this.viewOf(record), secret }
  }

  /** Deletes token `id` of `userId`; another owner's token answers 404 as one that does not exist. */
  async delete(userId: number, id: number, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const token = tx.get('personalTokens', String(id))
      if (!token || token.userId !== userId) throw new NotFoundError(`No personal access token with id ${id}`)
      tx.delete('personalTokens', String(id))
      tx.appendEvent(events.patDeleted(eventView(token)))
    })
  }

  private viewOf(token: PersonalTokenRecord): PersonalTokenView {
    return { ...eventView(token), seenAt: this.seen.get(token.id) ?? null }
  }
}

function eventView(token: PersonalTokenRecord) {
  const { id, description, expiresAt, createdAt, userId } = token
  return { id, description, expiresAt, createdAt, userId }
}

/** The person calling, for the routes of their own tokens: an API token or a service account has none. */
export function personOf(caller: Caller): number {
  if (caller.kind !== 'user')
    throw new NoAccessError(
      `${callerName(caller, true)} is not a person: personal access tokens belong to users (a service account's are under /api/admin/service-account/:id/token)`,
      'NONE',
    )
  return caller.userId
}

/** Ends every token of an owner (a service account deleted). */
export function deleteTokensOf(tx: Tx, userId: number): void {
  for (const token of tx.values('personalTokens'))
    if (token.userId === userId) tx.delete('personalTokens', String(token.id))
}
