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

const keyOf = (scope: SdkScope) => JSON.stringify([scope.environment, [...scope.projects].sort()])

export class FrontendService {
  private readonly scopes: ScopeCache<SdkScope, CompiledScope>

  constructor(store: Pick<Store, 'state' | 'watch'>) {
    this.scopes = new ScopeCache(store, { holds: (scope, flag) => inProjects(scope, flag.project), build: (scope) => compileScope(store.state, scope) })
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
