/**
 * The outbox: a delivery for each event each integration wants, staged by the store's event
 * deriver (storage/batch.ts) in the same commit as the event, so that an acknowledged write has its
 * deliveries on disk (or in the database) with it, and a write that fails has neither. Here too the
 * index of each integration's deliveries in event order, kept by watching the collection.
 */
import { randomUUID } from 'node:crypto'
import type { EventRecord } from '../../storage/records'
import type { Store, Tx } from '../../storage/store'
import { deliveryKey, type AddonRecord, type DeliveryRecord } from './addons.records'

/** Deliveries one integration may have waiting (dead letters included); past it new ones are counted as dropped. */
export const MAX_WAITING = 100_000

/** Whether `addon` wants `event`: its type, then its project and environment (an event without one passes that filter). */
export function wants(addon: AddonRecord, event: Pick<EventRecord, 'type' | 'project' | 'environment'>): boolean {
  if (!addon.enabled || !addon.events.includes(event.type)) return false
  const anyOf = (list: string[], value: string | null, passWithout: boolean) =>
    list.length === 0 || list.includes('*') || (value === null ? passWithout : list.includes(value))
  return anyOf(addon.projects, event.project, false) && anyOf(addon.environments, event.environment, true)
}

/** Where `key` is, or would go, in the sorted `list`. */
function placeOf(list: string[], key: string): number {
  let low = 0
  let high = list.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (list[mid] < key) low = mid + 1
    else high = mid
  }
  return low
}

function insertSorted(list: string[], key: string) {
  const at = placeOf(list, key)
  if (list[at] !== key) list.splice(at, 0, key)
}

function removeSorted(list: string[], key: string) {
  const at = placeOf(list, key)
  if (list[at] === key) list.splice(at, 1)
}

export class Outbox {
  /** Per integration, the keys of its deliveries to make and of its dead letters, each in event order. */
  private readonly pending = new Map<number, string[]>()
  private readonly dead = new Map<number, string[]>()

  constructor(private readonly store: Pick<Store, 'state' | 'watch' | 'deriveFromEvents'>) {
    store.watch('addonDeliveries', (key, before, after) => {
      if (before) removeSorted(this.listOf(before.dead ? this.dead : this.pending, before.addonId), key)
      if (after) insertSorted(this.listOf(after.dead ? this.dead : this.pending, after.addonId), key)
    })
    store.deriveFromEvents((tx, added) => this.stage(tx, added))
  }

  private listOf(map: Map<number, string[]>, addonId: number): string[] {
    let list = map.get(addonId)
    if (!list) map.set(addonId, (list = []))
    return list
  }

  /** The integration's next delivery to make, or undefined. */
  head(addonId: number): DeliveryRecord | undefined {
    const key = this.pending.get(addonId)?.[0]
    return key === undefined ? undefined : this.store.state.addonDeliveries[key]
  }

  /** Integrations with deliveries to make. */
  busy(): number[] {
    return [...this.pending].filter(([, keys]) => keys.length > 0).map(([id]) => id)
  }

  waitingCount(addonId: number): number {
    return (this.pending.get(addonId)?.length ?? 0) + (this.dead.get(addonId)?.length ?? 0)
  }

  /** The first `limit` dead letters, then the first deliveries to make. */
  waiting(addonId: number, limit: number): DeliveryRecord[] {
    const keys = [
      ...(this.dead.get(addonId) ?? []).slice(0, limit),
      ...(this.pending.get(addonId) ?? []).slice(0, limit),
    ]
    return keys.map(key => this.store.state.addonDeliveries[key]).filter(Boolean)
  }

  /** Stages a delivery of each event to each integration that wants it. */
  private stage(tx: Tx, added: readonly EventRecord[]) {
    const addons = tx.values('addons').filter(addon => addon.enabled)
    if (addons.length === 0) return
    const now = Date.parse(tx.now)
    for (const event of added) {
      for (const addon of addons) {
        if (!wants(addon, event)) continue
        if (this.waitingCount(addon.id) >= MAX_WAITING) {
          const state = tx.get('addonStates', String(addon.id))
          const base = state ?? { owner: '', until: 0, logSeq: 0, dropped: 0 }
          tx.put('addonStates', String(addon.id), { ...base, dropped: base.dropped + 1 })
          continue
        }
        tx.put('addonDeliveries', deliveryKey(addon.id, event.id), {
          id: randomUUID(),
          addonId: addon.id,
          eventId: event.id,
          attempts: 0,
          nextAt: now,
          firstAttemptAt: null,
          dead: false,
          lastError: null,
        })
      }
    }
  }
}
