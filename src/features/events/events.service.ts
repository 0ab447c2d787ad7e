import type { EventRecord } from '../../storage/records'
import type { Store } from '../../storage/store'
import type { Caller } from '../tokens/permissions'
import { EventTextIndex } from './event-index'
import { parseEventQuery } from './event-query'
import { eventPredicate, scanEvents, type EventPage } from './event-search'

export class EventsService {
  private readonly index = new EventTextIndex()

  constructor(private readonly store: Pick<Store, 'events' | 'onCommit'>) {
    this.index.add(store.events)
    store.onCommit((events) => this.index.add(events))
  }

  /** Searches the log; a token limited to some projects sees only their events. */
  search(params: URLSearchParams, caller: Caller): EventPage {
    const query = parseEventQuery(params)
    const visible = caller.projects.includes('*') ? null : caller.projects
    const events = this.store.events as EventRecord[]
    const candidates = query.query ? this.index.candidates(query.query) : null
    if (candidates === null) return scanEvents(events, query, visible)
    const matches = eventPredicate(query, visible)
    const page: EventRecord[] = []
    let total = 0
    for (const id of [...candidates].sort((a, b) => b - a)) {
      const event = events[id - 1]
      if (!event || !matches(event)) continue
      if (total >= query.offset && page.length < query.limit) page.push(event)
      total++
    }
    return { events: page, total }
  }
}
