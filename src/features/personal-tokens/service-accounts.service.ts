/**
 * Service accounts, in Unleash's shapes: accounts that are not people, for automation. An account
 * has a root role and personal tokens of its own (personal-tokens.service.ts), which act as the
 * account: its changes are recorded under its username and id. It cannot sign in.
 */
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import { events } from '../../domain/events'
import type { Store, Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import { actorOf, type Caller } from '../tokens/permissions'
import { ROOT_ROLES, roleId } from '../users/users.service'
import type { ServiceAccountRecord } from './personal-tokens.records'
import { deleteTokensOf } from './personal-tokens.service'

export interface ServiceAccountView {
  id: number
  username: string
  name: string | null
  rootRole: number
  createdAt: string
  isAPI: boolean
}

export function accountView(account: ServiceAccountRecord): ServiceAccountView {
  const { id, username, name, createdAt } = account
  return { id, username, name, rootRole: roleId(account.rootRole), createdAt, isAPI: true }
}

function roleOf(sent: string | number): ServiceAccountRecord['rootRole'] {
  const found = ROOT_ROLES.find(
    entry => entry.id === Number(sent) || entry.name.toLowerCase() === String(sent).toLowerCase(),
  )
  if (!found)
    throw ValidationError.at(
      '/rootRole',
      `rootRole must be Admin, Editor or Viewer (or Unleash's ids 1, 2, 3), got ${JSON.stringify(sent)}`,
    )
  return found.role
}

function usernameProblem(username: string): string | null {
  if (username.length === 0 || username.length > 100) return 'A username must be 1 to 100 characters long'
  if (/[\s\p{Cc}]/u.test(username) || !username.isWellFormed())
    return 'A username must not hold spaces or control characters'
  if (/^-?\d+$/.test(username)) return 'A username must not be a number, which event search would take for a user id'
  const lower = username.toLowerCase()
  if (lower === 'system' || lower.startsWith('admin-bootstrap'))
    return `The username "${username}" is reserved for the service's own changes`
  return null
}

export interface CreateServiceAccountInput {
  username: string
  name?: string
  rootRole: string | number
}

export interface UpdateServiceAccountInput {
  name?: string
  rootRole?: string | number
}

export class ServiceAccountsService {
  constructor(private readonly store: Pick<Store, 'reader' | 'transact'>) {}

  list(): ServiceAccountView[] {
    return this.store.reader
      .values('serviceAccounts')
      .sort((a, b) => a.id - b.id)
      .map(accountView)
  }

  /** 404 for an id that names no service account (a person's id too). */
  get(id: number): ServiceAccountView {
    const account = this.store.reader.get('serviceAccounts', String(id))
    if (!account) throw new NotFoundError(`No service account with id ${id}`)
    return accountView(account)
  }

  async create(input: CreateServiceAccountInput, caller: Caller): Promise<ServiceAccountView> {
    const username = input.username.trim()
    const problem = usernameProblem(username)
    if (problem) throw ValidationError.at('/username', problem)
    const rootRole = roleOf(input.rootRole)
    return this.store.transact(actorOf(caller), tx => {
      const lower = username.toLowerCase()
      const taken =
        tx.values('serviceAccounts').some(account => account.username.toLowerCase() === lower) ||
        tx.values('users').some(user => user.username?.toLowerCase() === lower || user.email?.toLowerCase() === lower)
      if (taken) throw new NameExistsError(`A user or service account is already named "${username}"`)
      checkLimit('serviceAccounts', tx.values('serviceAccounts').length + 1, '/username')
      const account: ServiceAccountRecord = {
        id: tx.allocateUserId(),
        username,
        name: input.name?.trim() || null,
        rootRole,
        createdAt: tx.now,
      }
      tx.put('serviceAccounts', String(account.id), account)
      tx.appendEvent(events.serviceAccountCreated(accountView(account)))
      return accountView(account)
    })
  }

  async update(id: number, input: UpdateServiceAccountInput, caller: Caller): Promise<ServiceAccountView> {
    const rootRole = input.rootRole === undefined ? undefined : roleOf(input.rootRole)
    return this.store.transact(actorOf(caller), tx => {
      const before = existing(tx, id)
      const after: ServiceAccountRecord = {
        ...before,
        name: input.name === undefined ? before.name : input.name.trim() || null,
        rootRole: rootRole ?? before.rootRole,
      }
      tx.put('serviceAccounts', String(id), after)
      tx.appendEvent(events.serviceAccountUpdated(accountView(after), accountView(before)))
      return accountView(after)
    })
  }

  /** Deletes the account and every token of it, in one commit. */
  async delete(id: number, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const account = existing(tx, id)
      tx.delete('serviceAccounts', String(id))
      deleteTokensOf(tx, id)
      tx.appendEvent(events.serviceAccountDeleted(accountView(account)))
    })
  }
}

function existing(tx: Tx, id: number): ServiceAccountRecord {
  const account = tx.get('serviceAccounts', String(id))
  if (!account) throw new NotFoundError(`No service account with id ${id}`)
  return account
}
