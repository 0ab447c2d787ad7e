/**
 * Authorization is declared on each route as `{ auth: 'PERMISSION' }` (contract §3). The check runs
 * in the transform stage, after the body is read (413, bad JSON) and before content type (415) and
 * schema validation (400), which is the order the contract asks for.
 */
import { Elysia } from 'elysia'
import { NoAccessError } from '../errors'
import { callerSeesProject, roleHasPermission, type Caller, type Permission } from '../features/tokens/permissions'
import type { TokensService } from '../features/tokens/tokens.service'
import { noteTokenName } from './request-log'

export function authorization(tokens: Pick<TokensService, 'authenticate'>, projectOfFlag: (name: string) => string | undefined) {
  const callers = new WeakMap<Request, Caller>()

  /**
   * The project a write acts on: the path's project, else the project of the path's flag. Routes
   * with neither (environments, tokens, new projects) act on the whole service and need a token for
   * all projects. An unknown flag is left to the route to answer 404.
   */
  function projectOf(params: Record<string, string | undefined>): string | null | undefined {
    if (params.projectId !== undefined) return params.projectId
    if (params.featureName !== undefined) return projectOfFlag(params.featureName) ?? null
    return undefined
  }

  return new Elysia({ name: 'authorization' }).macro({
    auth(permission: Permission) {
      return {
        // Read by http/openapi.ts, which adds the permission to the operation's description.
        detail: { security: [{ apiKey: [] }], 'x-permission': permission } as { security: { apiKey: string[] }[] },
        transform({ request, params }) {
          const { caller, type } = tokens.authenticate(request.headers.get('authorization'))
          if (type !== 'admin') {
            throw new NoAccessError(`A ${type} token is for SDKs and cannot use the admin API`, permission)
          }
          if (!roleHasPermission(caller.role, permission)) {
            throw new NoAccessError(`The token "${caller.tokenName}" (role ${caller.role}) lacks the ${permission} permission`, permission)
          }
          if (permission !== 'NONE') {
            const project = projectOf((params ?? {}) as Record<string, string | undefined>)
            const allowed = project === null || (project === undefined ? caller.projects.includes('*') : callerSeesProject(caller, project))
            if (!allowed) {
              throw new NoAccessError(
                project === undefined
                  ? `The token "${caller.tokenName}" is limited to some projects and cannot make service-wide changes`
                  : `The token "${caller.tokenName}" has no access to project "${project}"`,
                permission,
              )
            }
          }
          callers.set(request, caller)
          noteTokenName(request, caller.tokenName)
        },
        resolve({ request }) {
          return { caller: callers.get(request)! }
        },
      }
    },
  })
}
