/**
 * Flag types (Unleash's /api/admin/feature-types): the five kinds of flag and how long a flag of
 * each is expected to live. A flag older than its type's lifetime is potentially stale; that is
 * worked out when a flag is shown (see staleAfter), so it holds without a job marking flags.
 */
import type { Static } from '@sinclair/typebox'
import { events } from '../../domain/events'
import { NotFoundError } from '../../errors'
import type { StateReader, Store } from '../../storage/store'
import { actorOf, type Caller } from '../tokens/permissions'
import type { FlagType } from './feature-types.model'
import { BUILT_IN_FLAG_TYPES, type FlagTypeRecord } from './feature-types.records'

export type FlagTypeView = Static<typeof FlagType>

const DAY_MS = 24 * 60 * 60 * 1000
const ORDER = new Map(BUILT_IN_FLAG_TYPES.map((type, index) => [type.id, index]))

/**
 * The time (ms since the epoch) after which a flag created at `createdAt` of type `type` is
 * potentially stale, or null when its type has no lifetime (or is unknown).
 */
export function staleAfter(reader: Pick<StateReader, 'get'>, type: string, createdAt: string): number | null {
  const lifetimeDays = reader.get('flagTypes', type)?.lifetimeDays ?? null
  if (lifetimeDays === null) return null
  return Date.parse(createdAt) + lifetimeDays * DAY_MS
}

function viewOf(record: FlagTypeRecord): FlagTypeView {
  return { id: record.id, name: record.name, description: record.description, lifetimeDays: record.lifetimeDays }
}

export class FlagTypesService {
  constructor(private readonly store: Pick<Store, 'state' | 'transact'>) {}

  list(): FlagTypeView[] {
    return Object.values(this.store.state.flagTypes)
      .sort((a, b) => (ORDER.get(a.id) ?? ORDER.size) - (ORDER.get(b.id) ?? ORDER.size) || a.id.localeCompare(b.id))
      .map(viewOf)
  }

  /** As Unleash: the id is matched in lower case, and 0 means no lifetime, stored as null. */
  async setLifetime(id: string, lifetimeDays: number | null, caller: Caller): Promise<FlagTypeView> {
    const key = id.toLowerCase()
    return this.store.transact(actorOf(caller), tx => {
      const before = tx.get('flagTypes', key)
      if (!before)
        throw new NotFoundError(
          `There is no flag type "${id}"; the types are ${BUILT_IN_FLAG_TYPES.map(type => type.id).join(', ')}`,
        )
      const lifetime = lifetimeDays === 0 ? null : lifetimeDays
      if (before.lifetimeDays === lifetime) return viewOf(before)
      const record = { ...before, lifetimeDays: lifetime }
      tx.put('flagTypes', key, record)
      tx.appendEvent(events.flagTypeUpdated(viewOf(record), viewOf(before)))
      return viewOf(record)
    })
  }
}
