/**
 * What the SDK-facing APIs keep per token scope (the client API's serialised answer, the compiled
 * flags the frontend API and OFREP evaluate), dropped in the same commit as a change to what the
 * scope serves and on no other write. Thousands of SDKs poll a few scopes, so the least recently
 * used go past a bound. Each user says what of a flag its values are made of (`served`).
 */
import type { Store } from '../../storage/store'
import type { FlagRecord } from './flags.records'

/** Scopes kept at most: the scopes are the clients' to choose. */
export const MAX_KEPT_SCOPES = 64

export interface ScopeRules<S, V> {
  /** Whether `flag` belongs to what `scope` serves (its projects, and any filter). */
  holds: (scope: S, flag: FlagRecord) => boolean
  /** What to keep for `scope`, made from the store's current state. */
  build: (scope: S) => V
  /**
   * What of `flag` (undefined: none) the values kept are made of in `environment`, as data: a
   * change to it drops the scopes that hold the flag (a lastSeenAt or a tag should not).
   */
  served: (flag: FlagRecord | undefined, environment: string) => unknown
  /**
   * Whether a change to a flag that stays in a scope matters beyond what `served` gives (which is
   * always compared): e.g. its tags, for what is kept to answer queries filtered by tag.
   */
  alsoChanged?: (before: FlagRecord, after: FlagRecord) => boolean
}

/** How `get` found its values since the start: kept, or built. */
export interface ScopeCacheStats {
  hits: number
  builds: number
}

export class ScopeCache<S extends { environment: string }, V> {
  /** By scope key, least recently used first. */
  private readonly kept = new Map<string, { scope: S; value: V }>()
  readonly stats: ScopeCacheStats = { hits: 0, builds: 0 }

  constructor(
    store: Pick<Store, 'watch'>,
    private readonly rules: ScopeRules<S, V>,
  ) {
    store.watch('flags', (_key, before, after) => this.flagChanged(before, after))
    // Segments change rarely, and a scope's strategies may use any of them: any change drops every scope.
    store.watch('segments', () => this.kept.clear())
  }

  /** The value kept for `scope` (made now if none is), which becomes the most recently used. */
  get(key: string, scope: S): V {
    const kept = this.kept.get(key)
    if (kept) {
      this.kept.delete(key)
      this.kept.set(key, kept)
      this.stats.hits++
      return kept.value
    }
    this.stats.builds++
    const value = this.rules.build(scope)
    this.kept.set(key, { scope, value })
    if (this.kept.size > MAX_KEPT_SCOPES) this.kept.delete(this.kept.keys().next().value!)
    return value
  }

  private flagChanged(before: FlagRecord | undefined, after: FlagRecord | undefined): void {
    if (this.kept.size === 0) return
    // Whether what the flag serves in an environment changed (a lastSeenAt or a tag does not), once
    // per environment. Dropping more than needed costs a rebuild, never a stale answer.
    const served = new Map<string, boolean>()
    const also = before && after && this.rules.alsoChanged ? this.rules.alsoChanged(before, after) : false
    const changedIn = (environment: string) => {
      let changed = served.get(environment)
      if (changed === undefined) {
        changed =
          JSON.stringify(this.rules.served(before, environment)) !==
          JSON.stringify(this.rules.served(after, environment))
        served.set(environment, changed)
      }
      return changed
    }
    for (const [key, { scope }] of this.kept) {
      const wasIn = before !== undefined && this.rules.holds(scope, before)
      const isIn = after !== undefined && this.rules.holds(scope, after)
      // Moving into or out of the scope (another project, a tag) changes it whatever the view.
      if ((wasIn || isIn) && (wasIn !== isIn || also || changedIn(scope.environment))) this.kept.delete(key)
    }
  }
}
