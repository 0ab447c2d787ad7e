/** Permission names as Unleash spells them, and which token roles hold which. */
import type { EventAuthor } from '../../storage/tx'
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

/** Who is calling: the token or the signed-in user behind a request, as services need it. */
export interface Caller {
  /** A token's name, or the user's display name (what events record as createdBy). */
  tokenName: string
  /** An API token, or a person signed in with a session. */
  kind: 'token' | 'user'

  userId: number
  role: TokenRole
  /** Projects the token may touch; `['*']` for all. */
  projects: readonly string[]
}

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

/** Who the caller's changes are recorded as made by, with the project scope each staged change is checked against. */
export function actorOf(caller: Caller): EventAuthor {
  const guard = projectScopeGuard(caller.projects)
  return guard ? { name: caller.tokenName, userId: caller.userId, guard } : { name: caller.tokenName, userId: caller.userId }
}
