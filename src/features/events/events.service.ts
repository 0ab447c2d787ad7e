import type { EventRecord } from '../../storage/records'
import type { Store } from '../../storage/store'
import type { Caller } from '../tokens/permissions'
import { EventTextIndex } from './event-index'
import { parseEventQuery } from './event-query'
import { eventPredicate, scanEvents, type EventPage } from './event-search'

/** Events handed to the index per step while it is built, between which requests are served. */
const INDEX_STEP = 5000

export type EventSource = Pick<Store, 'readEvents' | 'lastEventId' | 'onCommit'>

/**
 * The event log as searches need it: every event in memory, and a text index for `query`. The log
 * is read once at start; later events arrive from each commit before its writes are answered, so
 * a search made after a write's response sees that write. The text index is built in steps after
 * loading; until it covers every event, searches are answered exactly by a scan.
 */
export class EventsService {
  private readonly events: EventRecord[] = []
  private readonly index = new EventTextIndex()
  /** Events `[0, indexed)` are in the text index. */
  private indexed = 0
  private indexBuilt = false
  private loading: Promise<void> | null = null
  private loaded = false
  /** Committed events not yet added to `events`. */
  private pending: EventRecord[] = []

  constructor(private readonly store: EventSource) {
    store.onCommit((events) => {
      this.pending.push(...events)
      if (this.loaded) this.takePending()
    })
  }

  /** Adds committed events; the loader has read the log up to where it started, so older ones are skipped. */
  private takePending() {
    for (const event of this.pending) if (event.id === this.events.length + 1) this.events.push(event)
    this.pending = []
    if (this.indexBuilt) this.indexUpTo(this.events.length)
  }

  private indexUpTo(end: number) {
    if (end <= this.indexed) return
    this.index.add(this.events.slice(this.indexed, end))
    this.indexed = end
  }

  /** Reads the log; resolves when searches can be answered. Safe to call more than once. */
  load(): Promise<void> {
    this.loading ??= (async () => {
      const until = this.store.lastEventId
      await this.store.readEvents((event) => {
        if (event.id <= until) this.events.push(event)
      })
      this.loaded = true
      this.takePending()
      void this.buildIndex()
    })()
    return this.loading
  }

  get ready(): boolean {
    return this.loaded
  }

  /** Whether the text index covers every event (until then `query` is answered by a scan). */
  get indexReady(): boolean {
    return this.indexBuilt
  }

  private async buildIndex() {
    while (this.indexed < this.events.length) {
      this.indexUpTo(Math.min(this.indexed + INDEX_STEP, this.events.length))
      await new Promise((resolve) => setImmediate(resolve))
    }
    this.indexBuilt = true
  }

  /** Searches the log; a token limited to some projects sees only their events. */
  async search(params: URLSearchParams, caller: Caller): Promise<EventPage> {
    const query = parseEventQuery(params)
    await this.load()
    const visible = caller.projects.includes('*') ? null : caller.projects
    const events = this.events
    const candidates = query.query && this.indexReady ? this.index.candidates(query.query) : null
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
