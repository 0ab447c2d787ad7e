/**
 * The compiled scopes of this process, one per token scope (projects and environment), shared by
 * the protocols that evaluate (the frontend API, OFREP). Each is compiled (scope.ts) on its first
 * request and kept until the store's watchers see a change to what it holds, in the same commit as
 * the change, so the next request after a write evaluates the new flags and a write elsewhere costs
 * the scope nothing. Requests only evaluate.
 */
import type { Store } from '../../storage/store'
import { ScopeCache } from '../flags/scope-cache'
import type { SdkScope } from '../tokens/auth'
import { evaluatedPart } from './flag'
import { compileScope, inProjects, type CompiledScope } from './scope'

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

export class CompiledScopes {
  private readonly scopes: ScopeCache<SdkScope, CompiledScope>

  constructor(store: Pick<Store, 'state' | 'watch'>) {
    this.scopes = new ScopeCache(store, {
      holds: (scope, flag) => inProjects(scope, flag.project),
      build: scope => compileScope(store.state, scope),
      served: evaluatedPart,
    })
  }

  /** How its compiled scopes were found: kept, or built. */
  get stats() {
    return this.scopes.stats
  }

  /** The compiled flags of `scope`. */
  get(scope: SdkScope): CompiledScope {
    return this.scopes.get(keyOf(scope), scope)
  }
}

/**
 * What a protocol makes once per compiled scope (its answers' text for each flag's outcomes), made
 * on first use and dropped with the compiled scope.
 */
export function perCompiledScope<T>(make: (scope: CompiledScope) => T): (scope: CompiledScope) => T {
  const made = new WeakMap<CompiledScope, T>()
  return scope => {
    let value = made.get(scope)
    if (value === undefined) made.set(scope, (value = make(scope)))
    return value
  }
}
