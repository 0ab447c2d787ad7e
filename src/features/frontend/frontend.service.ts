/**
 * The frontend API's answers (sdk-api-contract §2). Each token scope (projects and environment) is
 * compiled once (evaluation.ts) and kept until the store's watchers see a change to what it holds,
 * in the same commit as the change, so the next request after a write evaluates the new flags and
 * a write elsewhere costs the scope nothing. Requests only evaluate.
 */
import type { Store } from '../../storage/store'
import { ScopeCache } from '../client/scope-cache'
import type { SdkScope } from '../tokens/auth'
import { compileScope, inProjects, type CompiledScope, type EvalContext } from './evaluation'

export interface FrontendAnswer {
  json: string
  etag: string
}

/**
 * A scope's key, kept by its projects list (the token record's own array, the same object for every
 * request with the token until the token changes) and environment: made per request, the sorting
 * and the text were 2 to 3 % of an OFREP 304's CPU time.
 */
const keys = new WeakMap<readonly string[], Map<string, string>>()
function keyOf(scope: SdkScope): string {
  let byEnvironment = keys.get(scope.projects)
  if (byEnvironment === undefined) keys.set(scope.projects, (byEnvironment = new Map()))
  let key = byEnvironment.get(scope.environment)
  if (key === undefined)
    byEnvironment.set(scope.environment, (key = JSON.stringify([scope.environment, [...scope.projects].sort()])))
  return key
}

export class FrontendService {
  private readonly scopes: ScopeCache<SdkScope, CompiledScope>

  constructor(store: Pick<Store, 'state' | 'watch'>) {
    this.scopes = new ScopeCache(store, {
      holds: (scope, flag) => inProjects(scope, flag.project),
      build: scope => compileScope(store.state, scope),
    })
  }

  /** How its compiled scopes were found: kept, or built. */
  get stats() {
    return this.scopes.stats
  }

  /** The compiled flags of `scope` (OFREP reads them too: one evaluator for both protocols). */
  compiled(scope: SdkScope): CompiledScope {
    return this.scopes.get(keyOf(scope), scope)
  }

  /** The enabled flags of `scope` for `context`, as JSON text, with an ETag made from that text. */
  evaluate(scope: SdkScope, context: EvalContext): FrontendAnswer {
    const json = this.scopes.get(keyOf(scope), scope).evaluate(context)
    // From the content: the same answer has the same ETag, so If-None-Match can only ever save resending it.
    return { json, etag: `"${Bun.hash(json).toString(36)}"` }
  }
}
