import type { EventRecord } from '../../storage/records'
import type { Store } from '../../storage/store'
import type { Caller } from '../tokens/permissions'
import { parseEventQuery } from './event-query'
import { scanEvents, type EventPage } from './event-search'

export class EventsService {
  constructor(private readonly store: Pick<Store, 'events'>) {}

  /** Searches the log; a token limited to some projects sees only their events. */
  search(params: URLSearchParams, caller: Caller): EventPage {
    const query = parseEventQuery(params)
    const visible = caller.projects.includes('*') ? null : caller.projects
    return scanEvents(this.store.events as EventRecord[], query, visible)
  }
}
