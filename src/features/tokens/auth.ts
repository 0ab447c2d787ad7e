/**
 * Authorization is declared on each route as `{ auth: 'PERMISSION' }` (contract §3). The check runs
 * in the transform stage, after the body is read (413, bad JSON) and before content type (415) and
 * schema validation (400), which is the order the contract asks for.
 *
 * The project scope of a token limited to some projects is checked here first, for reads as well as
 * writes, so that no route has to remember it: a write to a project outside the token's projects is
 * 403 (contract §3, for a project that does not exist as for one that does); a read (`NONE`) of
 * another project answers as if the project, or the flag, did not exist. This is the fast path that
 * gives the contract's order of errors; what holds under concurrency is the check each write makes
 * inside its transaction, against the state it is applied to (`actorOf` in permissions.ts): its
 * credential and the role's permission before its work, the project scope of every staged change
 * (scope-guard.ts). The caller a route gets carries the permission the route declared, for that.
 *
 * SDK routes declare the token type they take instead (`{ tokenType: 'client' }`): any other type
 * is 403 (sdk-api-contract §5), and the route gets the token's projects and environment as
 * `sdkScope`, which decides what it serves. Admin routes refuse SDK tokens, whatever their role.
 */
import { Elysia } from 'elysia'
import { AppError, NoAccessError } from '../../errors'
import { noteTokenName } from '../../http/request-log'
import { flagNotFound, projectNotFound } from '../not-found'
import { withArticle } from '../names'
import {
  callerName,
  callerSeesProject,
  roleHasPermission,
  type Caller,
  type Identity,
  type Permission,
} from './permissions'
import type { TokensService } from './tokens.service'
import type { TokenType } from './tokens.records'

/**
 * What a route declares: a permission, or for a read that lists what a project holds, the
 * permission and the answer for a project the token may not see, the same as for an unknown
 * project ("a read of another project lists nothing", contract §3). Reads without `outOfScope`
 * answer 404 for another project's resources.
 */
export type RouteAuth =
  | Permission
  | { permission: Permission; outOfScope: OutOfScopeAnswer }
  /** A write whose project is the body's `project` (the import): checked against the token's projects like a path's. */
  | { permission: Permission; projectInBody: true }
  | { tokenType: SdkTokenType | readonly SdkTokenType[]; apiKeyHeader?: true }

/**
 * The SDK APIs' token types: a route declaring one (or several) takes tokens of that type only
 * (sdk-api-contract §5). `apiKeyHeader`: the token may also come as `X-API-Key` (OFREP's header),
 * read when there is no Authorization header.
 */
export type SdkTokenType = Exclude<TokenType, 'admin'>

/** What an SDK route knows of its token: its scope is the token's projects and its one environment. */
export interface SdkScope {
  projects: readonly string[]
  environment: string
}

type Params = Record<string, string | undefined>

/** Who sent a request, as the routes see it: an API token, or a signed-in user's session (features/users/request-auth.ts). */
export interface Authenticated {
  caller: Identity
  type: TokenType
  environment: string
}

/**
 * Finds the caller of a request, or throws 401 (no or bad credentials) or 403 (a cross-site write
 * with a session). `apiKeyHeader`: the route also takes the token as `X-API-Key` (OFREP's header).
 */
export type Authenticate = (request: Request, options?: { apiKeyHeader?: boolean }) => Authenticated

/** Token authentication alone: the `Authorization` header (or `X-API-Key` where the route takes it). */
export function byToken(tokens: Pick<TokensService, 'authenticate'>): Authenticate {
  return (request, options) =>
    tokens.authenticate(
      request.headers.get('authorization') ?? (options?.apiKeyHeader ? request.headers.get('x-api-key') : null),
    )
}

/**
 * The answer to a read of a project the token may not see. It gets the path's parameters and the
 * caller, so that a route whose answer for a name that does not exist still depends on them (the
 * deprecated per-flag event list) can give exactly that answer.
 */
export type OutOfScopeAnswer = (params: Params, caller: Caller) => unknown

/** The `auth` macro every controller uses (see http/plugins.ts controllerBase). */
export type Authorization = ReturnType<typeof authorization>

export function authorization(authenticate: Authenticate, projectOfFlag: (name: string) => string | undefined) {
  const callers = new WeakMap<Request, Caller>()
  const sdkScopes = new WeakMap<Request, SdkScope>()
  /** Reads naming a project the caller may not see, answered in `beforeHandle`. */
  const outOfScope = new WeakMap<Request, Params>()

  /**
   * The project a request acts on: the path's project, else the project of the path's flag. Writes
   * with neither (environments, tokens, new projects) act on the whole service and need a token for
   * all projects. An unknown flag (null) is left to the route to answer 404.
   */
  function projectOf(params: Params): string | null | undefined {
    if (params.projectId !== undefined) return params.projectId
    if (params.featureName !== undefined) return projectOfFlag(params.featureName) ?? null
    return undefined
  }

  return new Elysia({ name: 'authorization' }).macro({
    auth(declared: RouteAuth) {
      const sdkTypes =
        typeof declared === 'object' && 'tokenType' in declared
          ? ([] as SdkTokenType[]).concat(declared.tokenType)
          : undefined
      const apiKeyHeader = typeof declared === 'object' && 'apiKeyHeader' in declared && declared.apiKeyHeader === true
      const { permission, outOfScope: emptyAnswer } =
        typeof declared === 'string'
          ? { permission: declared, outOfScope: undefined }
          : 'tokenType' in declared
            ? { permission: 'NONE' as const, outOfScope: undefined }
            : {
                permission: declared.permission,
                outOfScope: 'outOfScope' in declared ? declared.outOfScope : undefined,
              }
      const projectInBody = typeof declared === 'object' && 'projectInBody' in declared
      return {
        // Read by http/openapi.ts, which adds the permission (or the SDK token type) to the operation's description.
        detail: {
          security: [{ apiKey: [] }],
          ...(sdkTypes ? { 'x-token-type': sdkTypes.join(' or ') } : { 'x-permission': permission }),
        } as { security: { apiKey: string[] }[] },
        transform({ request, params, body }) {
          const authenticated = authenticate(request, { apiKeyHeader })
          const { type, environment } = authenticated
          const caller: Caller = { ...authenticated.caller, permission }
          if (sdkTypes !== undefined) {
            // An SDK route: the token's type is the whole permission, its projects and environment the scope.
            if (!(sdkTypes as string[]).includes(type))
              throw new NoAccessError(
                `This route is for ${sdkTypes.join(' or ')} tokens; ${callerName(caller)} is ${withArticle(type)} token`,
                'NONE',
              )
            callers.set(request, caller)
            sdkScopes.set(request, { projects: caller.projects, environment })
            noteTokenName(request, caller.tokenName)
            return
          }
          if (type !== 'admin') {
            throw new NoAccessError(
              `${withArticle(type, true)} token is for SDKs and cannot use the admin API`,
              permission,
            )
          }
          if (!roleHasPermission(caller.role, permission)) {
            throw new NoAccessError(
              `${callerName(caller, true)} (role ${caller.role}) lacks the ${permission} permission`,
              permission,
            )
          }
          const routeParams = (params ?? {}) as Params
          // A body whose project is not a string leaves the route service-wide: a token for all projects may go on to its 400.
          const bodyProject = projectInBody ? (body as { project?: unknown } | undefined)?.project : undefined
          const project = typeof bodyProject === 'string' ? bodyProject : projectOf(routeParams)
          if (permission !== 'NONE') {
            // A flag named without its project (tags, the archive) that the token may not see is left to
            // the write, which answers inside its transaction exactly as for a flag that does not exist
            // (tokens/scope-guard.ts): a 403 here would tell that the flag exists, and in which project.
            const fromRecord =
              typeof bodyProject !== 'string' &&
              routeParams.projectId === undefined &&
              routeParams.featureName !== undefined
            const allowed =
              project === null ||
              fromRecord ||
              (project === undefined ? caller.projects.includes('*') : callerSeesProject(caller, project))
            if (!allowed) {
              throw new NoAccessError(
                project === undefined
                  ? `${callerName(caller, true)} is limited to some projects and cannot make service-wide changes`
                  : `${callerName(caller, true)} has no access to project "${project}"`,
                permission,
              )
            }
          } else if (typeof project === 'string' && !callerSeesProject(caller, project)) {
            // Answered after validation, where the route's own 404 would come, so that a hidden
            // project and an unknown one cannot be told apart by the order of errors either.
            outOfScope.set(request, routeParams)
          }
          callers.set(request, caller)
          noteTokenName(request, caller.tokenName)
        },
        resolve({ request }) {
          // `sdkScope` is set on SDK routes only; admin routes never read it.
          return { caller: callers.get(request)!, sdkScope: sdkScopes.get(request)! }
        },
        beforeHandle({ request }) {
          const params = outOfScope.get(request)
          if (!params) return
          if (emptyAnswer) return emptyAnswer(params, callers.get(request)!)
          // The same answers as flag-rules.ts and the services give for what does not exist: the
          // path's project, else the flag (whose project is the hidden one).
          if (params.projectId !== undefined) throw projectNotFound(params.projectId)
          throw flagNotFound(params.featureName!)
        },
      }
    },
  })
}

/** Where each SDK token type may go; an admin token may go anywhere under /api. */
const SDK_API: Record<string, string> = { client: '/api/client', frontend: '/api/frontend' }

const under = (path: string, prefix: string) => path === prefix || path.startsWith(prefix + '/')

/**
 * The answer for a request no route matched, when it is not a plain 404: as in Unleash, every path
 * under `/api` is authenticated before routing, so without a valid token an unknown path answers
 * 401 like a known one (and does not tell a caller without a token which paths exist), and an SDK
 * token outside its own API answers 403 as on every admin route. Other paths are left to the 404.
 * `basePath` is `BASE_URI_PATH`: the paths a request names start with it.
 */
export function unknownApiPath(authenticate: Authenticate, basePath = '') {
  return (request: Request, path: string): AppError | undefined => {
    if (!under(path, `${basePath}/api`)) return undefined
    let authenticated
    try {
      authenticated = authenticate(request)
    } catch (error) {
      if (error instanceof AppError) return error
      throw error
    }
    const { caller, type } = authenticated
    noteTokenName(request, caller.tokenName)
    const own = SDK_API[type]
    if (own !== undefined && !under(path, basePath + own)) {
      return new NoAccessError(`${withArticle(type, true)} token is for SDKs and cannot use ${path}`, 'NONE')
    }
    return undefined
  }
}
