/**
 * The frontend API's answers (sdk-api-contract §2). Each token scope (projects and environment) is
 * compiled once (evaluation.ts) and kept until the store's watchers see a change to what it holds,
 * in the same commit as the change, so the next request after a write evaluates the new flags and
 * a write elsewhere costs the scope nothing. Requests only evaluate.
 */
import type { Store } from '../../storage/store'
import { clientFeatureView } from '../client/client.view'
import type { FlagRecord } from '../flags/flags.records'
import type { SdkScope } from '../tokens/auth'
import { compileScope, inProjects, type CompiledScope, type EvalContext } from './evaluation'

/** Scopes kept at most (one per distinct token scope in use); the least recently used go. */
export const MAX_KEPT_SCOPES = 64

export interface FrontendAnswer {
  json: string
  etag: string
}

const keyOf = (scope: SdkScope) => JSON.stringify([scope.environment, [...scope.projects].sort()])

export class FrontendService {
  private readonly kept = new Map<string, { scope: SdkScope; compiled: CompiledScope }>()

  constructor(private readonly store: Pick<Store, 'state' | 'watch'>) {
    store.watch('flags', (_key, before, after) => this.flagChanged(before, after))
    // Any segment change recompiles every scope: segments change rarely, and a scope's strategies may use any of them.
    store.watch('segments', () => this.kept.clear())
  }

  private flagChanged(before: FlagRecord | undefined, after: FlagRecord | undefined): void {
    if (this.kept.size === 0) return
    // Whether what the flag serves in an environment changed (a lastSeenAt or a tag does not), its parents included; once per environment.
    const unchanged = new Map<string, boolean>()
    const sameIn = (environment: string) => {
      let same = unchanged.get(environment)
      if (same === undefined) {
        same =
          before !== undefined &&
          after !== undefined &&
          before.project === after.project &&
          JSON.stringify(clientFeatureView(before, environment)) === JSON.stringify(clientFeatureView(after, environment))
        unchanged.set(environment, same)
      }
      return same
    }
    for (const [key, { scope }] of this.kept) {
      const touches = (flag: FlagRecord | undefined) => flag !== undefined && inProjects(scope, flag.project)
      if ((touches(before) || touches(after)) && !sameIn(scope.environment)) this.kept.delete(key)
    }
  }

  private compiled(scope: SdkScope): CompiledScope {
    const key = keyOf(scope)
    const kept = this.kept.get(key)
    if (kept) {
      this.kept.delete(key)
      this.kept.set(key, kept)
      return kept.compiled
    }
    const compiled = compileScope(this.store.state, scope)
    this.kept.set(key, { scope, compiled })
    if (this.kept.size > MAX_KEPT_SCOPES) this.kept.delete(this.kept.keys().next().value!)
    return compiled
  }

  /** The enabled flags of `scope` for `context`, as JSON text, with an ETag made from that text. */
  evaluate(scope: SdkScope, context: EvalContext): FrontendAnswer {
    const json = this.compiled(scope).evaluate(context)
    // From the content: the same answer has the same ETag, so If-None-Match can only ever save resending it.
    return { json, etag: `"${Bun.hash(json).toString(36)}"` }
  }
}
