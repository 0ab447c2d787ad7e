/** Permission names as Unleash spells them, which token roles hold which, and who is calling. */
import { NoAccessError } from '../../errors'
import type { EventAuthor, StateReader } from '../../storage/tx'
import { projectScopeGuard } from './scope-guard'
import type { TokenRole } from './tokens.records'

export const PERMISSIONS = [
  'NONE',
  'ADMIN',
  'CREATE_FEATURE',
  'UPDATE_FEATURE',
  'DELETE_FEATURE',
  'UPDATE_FEATURE_ENVIRONMENT',
  'CREATE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_STRATEGY',
  'DELETE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_VARIANTS',
  'CREATE_PROJECT',
  'UPDATE_PROJECT',
  'DELETE_PROJECT',
  'CREATE_ENVIRONMENT',
  'CREATE_SEGMENT',
  'UPDATE_SEGMENT',
  'DELETE_SEGMENT',
  'CREATE_STRATEGY',
  'UPDATE_STRATEGY',
  'DELETE_STRATEGY',
  'CREATE_TAG_TYPE',
  'UPDATE_TAG_TYPE',
  'DELETE_TAG_TYPE',
  'CREATE_CONTEXT_FIELD',
  'UPDATE_CONTEXT_FIELD',
  'DELETE_CONTEXT_FIELD',
] as const

/** `NONE`: any valid admin-type token may call the route (reads, search, name validation). */
export type Permission = (typeof PERMISSIONS)[number]

export function roleHasPermission(role: TokenRole, permission: Permission): boolean {
  switch (role) {
    case 'admin':
      return true
    case 'editor':
      return permission !== 'ADMIN'
    case 'viewer':
      return permission === 'NONE'
  }
}

/**
 * The credential a caller came with (a token's name and secret hash, a session's id), as made by
 * whatever authenticated it, which alone knows its records. Plain data with its check on the
 * prototype: a caller kept for a long request (a stream) holds no closure of its own.
 */
export interface Credential {
  /**
   * Reads the credential again in `state` at `now` (ms): throws AuthenticationRequired when it has
   * gone (deleted, expired, replaced, its user deleted), else returns the role it holds now.
   */
  check(state: StateReader, now: number): TokenRole
}

/** Who is calling: the token or the signed-in user behind a request, as services need it. */
export interface Caller {
  /** A token's name, or the user's display name (what events record as createdBy). */
  tokenName: string
  /** An API token, or a person signed in with a session. */
  kind: 'token' | 'user'

  userId: number
  /** The role when the request arrived; each write decides on the one `credential` finds then. */
  role: TokenRole
  /** Projects the token may touch; `['*']` for all. */
  projects: readonly string[]
  /** The credential the request came with, checked again by each of its writes (`actorOf`). */
  credential: Credential
  /** The permission the route demands (`NONE` on SDK routes), which each write checks the role still grants. */
  permission: Permission
}

/** A caller as authentication finds it, before the route says which permission it demands. */
export type Identity = Omit<Caller, 'permission'>

/**
 * How refusals name the caller: `the token "ci"` or `the user "alice"`. Every message about who
 * may not do something goes through here, so that a person is never called a token.
 */
export function callerName(caller: Pick<Caller, 'tokenName' | 'kind'>, capital = false): string {
  const name = `${caller.kind === 'user' ? 'user' : 'token'} "${caller.tokenName}"`
  return `${capital ? 'The' : 'the'} ${name}`
}

export function callerSeesProject(caller: Caller, projectId: string): boolean {
  return caller.projects.includes('*') || caller.projects.includes(projectId)
}

/**
 * Whether a caller acts as a person: a signed-in user, or any credential that acts as its user (a
 * personal token authenticates as `kind: 'user'`), rather than an API token. The one place this is
 * decided: processes that hold people to review (change requests) ask `isPersonAuthor` of a write's author.
 */
export function isPerson(caller: Pick<Caller, 'kind'>): boolean {
  return caller.kind === 'user'
}

/** The authors `actorOf` made for people (see isPerson). */
const people = new WeakSet<EventAuthor>()

/** Whether a write's author was made by `actorOf` for a person (isPerson) rather than for an API token. */
export function isPersonAuthor(author: EventAuthor): boolean {
  return people.has(author)
}

/**
 * Who the caller's changes are recorded as made by, and what each of its writes checks on the
 * state it is applied to: before its work, that the credential is still valid and its role still
 * grants the route's permission (401 or 403, nothing applied); as each change is staged, the
 * token's project scope (scope-guard.ts). The check at the request's arrival (auth.ts) only answers
 * first; a credential revoked, or a role lowered, while the write waited for its turn is caught here.
 */
export function actorOf(caller: Caller): EventAuthor {
  const { permission } = caller
  const admit = (state: StateReader, now: number) => {
    const role = caller.credential.check(state, now)
    if (!roleHasPermission(role, permission)) {
      throw new NoAccessError(
        `${callerName(caller, true)} (now role ${role}) no longer has the ${permission} permission`,
        permission,
      )
    }
  }
  const guard = projectScopeGuard(caller.projects)
  const author: EventAuthor = guard
    ? { name: caller.tokenName, userId: caller.userId, admit, guard }
    : { name: caller.tokenName, userId: caller.userId, admit }
  if (isPerson(caller)) people.add(author)
  return author
}
