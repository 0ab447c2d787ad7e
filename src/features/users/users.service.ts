/**
 * People who sign in: their records, the user-admin operations (each recording its event in the
 * same commit) and the first admin made at the first start. Passwords are hashed before the
 * transaction (hashing is slow and the store's work is synchronous) and never leave this module.
 */
import { ConflictError, NameExistsError, NotFoundError, ValidationError } from '../../errors'
import { events, SYSTEM_ACTOR } from '../../domain/events'
import type { Store, Tx } from '../../storage/store'
import { actorOf, type Caller, type Credential, type Identity } from '../tokens/permissions'
import { generatePassword, hashPassword, passwordProblem } from './passwords'
import type { RootRole, UserRecord } from './users.records'

/** Unleash's root roles and their ids, which its clients send and show. */
export const ROOT_ROLES = [
  {
    id: 1,
    name: 'Admin',
    role: 'admin',
    description: 'Users with the root admin role have superuser access to the service.',
  },
  {
    id: 2,
    name: 'Editor',
    role: 'editor',
    description: 'Users with the root editor role can change everything but users and API tokens.',
  },
  { id: 3, name: 'Viewer', role: 'viewer', description: 'Users with the root viewer role can only read.' },
] as const

export function roleId(role: RootRole): number {
  return ROOT_ROLES.find(entry => entry.role === role)!.id
}

/** A role as clients send it: Unleash's id (1, 2, 3) or its name in any case. */
function roleOf(sent: string | number, path: string): RootRole {
  const found = ROOT_ROLES.find(
    entry => entry.id === Number(sent) || entry.name.toLowerCase() === String(sent).toLowerCase(),
  )
  if (!found)
    throw ValidationError.at(
      path,
      `rootRole must be Admin, Editor or Viewer (or Unleash's ids 1, 2, 3), got ${JSON.stringify(sent)}`,
    )
  return found.role
}

export interface UserView {
  id: number
  username: string | null
  email: string | null
  name: string | null
  rootRole: number
  createdAt: string
  isAPI: boolean
  disabled?: boolean
}

export function viewOf(user: UserRecord): UserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    name: user.name,
    rootRole: roleId(user.rootRole),
    createdAt: user.createdAt,
    isAPI: false,
    ...(user.disabled ? { disabled: true } : {}),
  }
}

/** What the events and the audit log call a user. */
export function displayName(user: Pick<UserRecord, 'username' | 'email'>): string {
  return user.username ?? user.email ?? ''
}

/** A signed-in user as the authorization sees a caller: all projects, with the user's role; `credential` is the session's. */
export function callerOf(user: UserRecord, credential: Credential): Identity {
  return {
    tokenName: displayName(user),
    kind: 'user',
    userId: user.id,
    role: user.rootRole,
    projects: ['*'],
    credential,
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const RESERVED = ['system', 'admin-bootstrap']

function usernameProblem(username: string): string | null {
  if (username.length === 0 || username.length > 100) return 'A username must be 1 to 100 characters long'
  if (/[\s\p{Cc}]/u.test(username) || !username.isWellFormed())
    return 'A username must not hold spaces or control characters'
  // A username is the `createdBy` of the user's events: the service's own names and integers (which
  // event search takes for user ids) would make the audit log ambiguous.
  const lower = username.toLowerCase()
  if (RESERVED.some(name => lower === name || lower.startsWith(`${name}-`)))
    return `The username "${username}" is reserved for the service's own changes`
  if (/^-?\d+$/.test(username)) return 'A username must not be a number, which event search would take for a user id'
  return null
}

export interface CreateUserInput {
  username?: string
  email?: string
  name?: string
  rootRole: string | number
  password?: string
}

export interface UpdateUserInput {
  email?: string
  name?: string
  rootRole?: string | number
  disabled?: boolean
}

function checkedPassword(password: string, path = '/password'): string {
  const problem = passwordProblem(password)
  if (problem) throw ValidationError.at(path, problem)
  return password
}

export class UsersService {
  /** User ids by lower-cased username and email, kept from the store's record changes, for sign-in. */
  private readonly byLogin = new Map<string, string>()

  constructor(private readonly store: Pick<Store, 'state' | 'reader' | 'transact' | 'watch'>) {
    store.watch('users', (key, before, after) => {
      for (const login of [before?.username, before?.email]) if (login) this.byLogin.delete(login.toLowerCase())
      for (const login of [after?.username, after?.email]) if (login) this.byLogin.set(login.toLowerCase(), key)
    })
  }

  /** The user signing in as `login` (username or email, any case). */
  findByLogin(login: string): UserRecord | undefined {
    const key = this.byLogin.get(login.toLowerCase())
    return key === undefined ? undefined : this.store.reader.get('users', key)
  }

  record(id: number): UserRecord | undefined {
    return this.store.reader.get('users', String(id))
  }

  list(): UserView[] {
    return this.store.reader
      .values('users')
      .map(viewOf)
      .sort((a, b) => a.id - b.id)
  }

  get(id: number): UserView {
    const user = this.record(id)
    if (!user) throw new NotFoundError(`No user with id ${id}`)
    return viewOf(user)
  }

  /** The caller as `GET /api/admin/user` shows it: the signed-in user, or the token as Unleash's API user. */
  whoIs(caller: Caller): UserView {
    const user = this.record(caller.userId)
    if (user && displayName(user) === caller.tokenName) return viewOf(user)
    return {
      id: caller.userId,
      username: caller.tokenName,
      email: null,
      name: caller.tokenName,
      rootRole: roleId(caller.role),
      createdAt: '',
      isAPI: true,
    }
  }

  async create(input: CreateUserInput, caller: Caller): Promise<UserView> {
    const username = input.username?.trim() || null
    const email = input.email?.trim() || null
    if (username === null && email === null)
      throw ValidationError.at('/username', 'A user needs a username or an email')
    if (username !== null) {
      const problem = usernameProblem(username)
      if (problem) throw ValidationError.at('/username', problem)
    }
    if (email !== null && !EMAIL.test(email)) throw ValidationError.at('/email', `"${email}" is not an email address`)
    const rootRole = roleOf(input.rootRole, '/rootRole')
    const passwordHash = input.password === undefined ? null : await hashPassword(checkedPassword(input.password))
    return this.store.transact(actorOf(caller), tx => {
      const user: UserRecord = {
        id: tx.allocateUserId(),
        username,
        email,
        name: input.name?.trim() || null,
        rootRole,
        passwordHash,
        createdAt: tx.now,
      }
      this.checkUnique(tx, user)
      tx.put('users', String(user.id), user)
      tx.appendEvent(events.userCreated(viewOf(user)))
      return viewOf(user)
    })
  }

  async update(id: number, input: UpdateUserInput, caller: Caller): Promise<UserView> {
    if (input.email !== undefined && input.email.trim() !== '' && !EMAIL.test(input.email.trim())) {
      throw ValidationError.at('/email', `"${input.email}" is not an email address`)
    }
    const rootRole = input.rootRole === undefined ? undefined : roleOf(input.rootRole, '/rootRole')
    return this.store.transact(actorOf(caller), tx => {
      const before = this.existing(tx, id)
      const after: UserRecord = {
        ...before,
        email: input.email === undefined ? before.email : input.email.trim() || null,
        name: input.name === undefined ? before.name : input.name.trim() || null,
        rootRole: rootRole ?? before.rootRole,
      }
      if (input.disabled === true) after.disabled = true
      else if (input.disabled === false) delete after.disabled
      if (after.username === null && after.email === null)
        throw ValidationError.at('/email', 'A user without a username needs an email')
      this.checkUnique(tx, after)
      const leavesAdmins =
        before.rootRole === 'admin' && (after.rootRole !== 'admin' || (after.disabled && !before.disabled))
      if (leavesAdmins) keepAnAdmin(tx, before)
      tx.put('users', String(id), after)
      if (after.disabled && !before.disabled) endSessions(tx, id)
      tx.appendEvent(events.userUpdated(viewOf(after), viewOf(before)))
      return viewOf(after)
    })
  }

  async delete(id: number, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const user = this.existing(tx, id)
      if (user.rootRole === 'admin') keepAnAdmin(tx, user)
      tx.delete('users', String(id))
      endSessions(tx, id)
      tx.appendEvent(events.userDeleted(viewOf(user)))
    })
  }

  /** Sets a new password; every session of the user ends with the old one. */
  async changePassword(id: number, password: string, caller: Caller): Promise<void> {
    const passwordHash = await hashPassword(checkedPassword(password))
    await this.store.transact(actorOf(caller), tx => this.setPassword(tx, this.existing(tx, id), passwordHash))
  }

  /**
   * `flagstore reset-password`, for a lost password: a new generated one for the user who signs in
   * as `login` (username or email, any case), returned to be shown once. Applied and recorded as
   * an admin's change is (sessions ended, `user-updated` with `passwordChanged`), by `system`.
   */
  async resetPassword(login: string): Promise<{ user: UserView; password: string }> {
    const found = this.findByLogin(login)
    if (!found) throw new NotFoundError(`No user signs in as "${login}" (give a username or an email)`)
    const password = generatePassword()
    const passwordHash = await hashPassword(password)
    const user = await this.store.transact(SYSTEM_ACTOR, tx =>
      this.setPassword(tx, this.existing(tx, found.id), passwordHash),
    )
    return { user: viewOf(user), password }
  }

  private setPassword(tx: Tx, user: UserRecord, passwordHash: string): UserRecord {
    tx.put('users', String(user.id), { ...user, passwordHash })
    endSessions(tx, user.id)
    tx.appendEvent(events.userUpdated({ ...viewOf(user), passwordChanged: true }, viewOf(user)))
    return user
  }

  /**
   * The first start's admin: with no user at all, makes `username` an admin with `password`, or a
   * generated one, which it returns to be printed once (null when it made none or was given one).
   */
  async bootstrap(username: string, password?: string): Promise<string | null> {
    if (this.store.reader.values('users').length > 0) return null
    const chosen = password ?? generatePassword()
    const passwordHash = await hashPassword(checkedPassword(chosen))
    const made = await this.store.transact(SYSTEM_ACTOR, tx => {
      // Another start path may have made one meanwhile: the check is repeated where it counts.
      if (tx.values('users').length > 0) return false
      const user: UserRecord = {
        id: tx.allocateUserId(),
        username,
        email: null,
        name: null,
        rootRole: 'admin',
        passwordHash,
        createdAt: tx.now,
      }
      tx.put('users', String(user.id), user)
      tx.appendEvent(events.userCreated(viewOf(user)))
      return true
    })
    return made && password === undefined ? chosen : null
  }

  private existing(tx: Tx, id: number): UserRecord {
    const user = tx.get('users', String(id))
    if (!user) throw new NotFoundError(`No user with id ${id}`)
    return user
  }

  private checkUnique(tx: Tx, user: UserRecord) {
    const logins = [user.username, user.email]
      .filter((login): login is string => login !== null)
      .map(login => login.toLowerCase())
    for (const other of tx.values('users')) {
      if (other.id === user.id) continue
      for (const login of [other.username, other.email]) {
        if (login !== null && logins.includes(login.toLowerCase()))
          throw new NameExistsError(`Another user already signs in as "${login}"`)
      }
    }
  }
}

/**
 * Why `leaving` must stay an active admin, or null when it need not: the service must keep someone
 * who can manage users (an active admin) and, while one can sign in, one who can. Admins who
 * cannot sign in do not count for the last one who can. Single sign-on's group syncing keeps the
 * role for the same reasons (sso.people.ts).
 */
export function adminStillNeeded(tx: Pick<Tx, 'values'>, leaving: UserRecord): string | null {
  const others = tx
    .values('users')
    .filter(user => user.id !== leaving.id && user.rootRole === 'admin' && !user.disabled)
  if (others.length === 0) return 'This is the last admin user: make another user an admin first'
  if (canSignIn(leaving) && !others.some(canSignIn))
    return 'This is the last admin user who can sign in (the other admins have no password): give another admin a password, or make a user who has one an admin, first'
  return null
}

function keepAnAdmin(tx: Tx, leaving: UserRecord) {
  const reason = adminStillNeeded(tx, leaving)
  if (reason) throw new ConflictError(reason)
}

/**
 * Whether a user can surely sign in: with a password, and not disabled. Single sign-on is not
 * counted: the provider may be switched off or unreachable, and the last admin must not depend on it.
 */
function canSignIn(user: UserRecord): boolean {
  return user.passwordHash !== null && !user.disabled
}

/** Ends every session of a user (deleted, or whose password changed). */
export function endSessions(tx: Tx, userId: number): void {
  for (const session of tx.values('sessions')) if (session.userId === userId) tx.delete('sessions', session.id)
}
