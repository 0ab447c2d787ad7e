/** Which scope owns each registered application or instance, for the registry's caps (app-registry.ts). */

/**
 * Which scope owns each key, and each scope's keys least recently seen first: eviction within a
 * scope, or from the scope holding the most.
 */
export class Owners {
  private readonly owner = new Map<string, string>()
  private readonly byScope = new Map<string, Set<string>>()

  /** Marks `key` seen: a new key becomes `scope`'s, a known one stays its owner's and becomes its most recent. */
  seen(key: string, scope: string): void {
    const owner = this.owner.get(key) ?? scope
    this.owner.set(key, owner)
    let keys = this.byScope.get(owner)
    if (!keys) this.byScope.set(owner, (keys = new Set()))
    keys.delete(key)
    keys.add(key)
  }

  forget(key: string): void {
    const owner = this.owner.get(key)
    if (owner === undefined) return
    this.owner.delete(key)
    const keys = this.byScope.get(owner)!
    keys.delete(key)
    if (keys.size === 0) this.byScope.delete(owner)
  }

  /** The key that makes room for a new one of `key`'s owner: the owner's least recently seen if it is at `perScope`, else, with `total` reached, the least recently seen of the largest scope. */
  victim(key: string, perScope: number, total: number, size: number): string | undefined {
    const owner = this.owner.get(key)
    if (owner === undefined) return undefined
    const own = this.byScope.get(owner)!
    if (own.size > perScope) return own.values().next().value
    if (size <= total) return undefined
    let largest = own
    for (const keys of this.byScope.values()) if (keys.size > largest.size) largest = keys
    return largest.values().next().value
  }
}
