/**
 * Event search, seen from the HTTP thread: parsed queries are handed to the event-search worker,
 * which holds the log and its indexes (see search/search-engine.ts). The worker starts on the first
 * search or when `load()` is called (server.ts does at start-up), not before: an app that never
 * searches never starts it. Once started, each commit's events are posted to the worker before the
 * commit's writes are answered, and the worker handles messages in order, so a search made after a
 * write's response sees that write. The worker reads a log that is a file here itself; a log kept
 * elsewhere (one that has an identity, storage/log.ts) is searched from a local copy
 * (search/log-cache.ts) that this thread checks against the log at start and brings up to date
 * from it; a log in memory is handed over whole.
 */
import { SearchStopped, SearchTooBroad } from '../../errors'
import { StoreLoadError } from '../../storage/files'
import type { StoreLog } from '../../storage/log'
import type { Store } from '../../storage/store'
import { startWorker } from '../../workers/spawn'
import { roleHasPermission, type Caller, type Permission } from '../tokens/permissions'
import type { EventType } from '../../domain/events'
import type { EventQuery } from './event-query'
import { madeGarbage } from '../../workers/garbage'
import type { CheckPace, EventSearchReply, EventSearchRequest, RebuildPace } from './search/event-search.messages'
import { openCachedLog, type CachedLog } from './search/log-cache'
import type { EventVisibility, SearchPlan } from './search/search-engine'

/** Events per message when a database's log is handed to the worker. */
const DATABASE_PAGE = 5000
/** Waits between attempts to read a database's log for search while the database is away. */
const RETRY_MIN_MS = 250
const RETRY_MAX_MS = 5000
/** How long the server waits for a request (Bun's idle timeout): a search is stopped then (search/search-work.ts). */
export const SEARCH_SECONDS = 10
/** How long a search may take while segments are rebuilt and it reads the log, or waits for a database's log to be copied (server.ts holds its request open so long). */
export const SEARCH_WAIT_SECONDS = 120

export type EventSource = Pick<Store, 'readEventLines' | 'lastEventId' | 'onCommit'> & {
  log: Pick<StoreLog, 'eventsPath' | 'identity' | 'name'>
}

export interface EventPage {
  total: number
  /** The whole answer, `{"events":[…],"total":N}` (newest first), as UTF-8 JSON made by the worker. */
  body: Uint8Array<ArrayBuffer>
  plan: SearchPlan
}

export interface EventsOptions {
  /** Terms in more events than this are common (see search/term-index.ts). */
  commonAfter?: number
  /** Build the text index after loading (default true). Tests turn it off to check the scan alone. */
  buildIndex?: boolean
  /** Events per segment file of a data directory's log (search/segmented-search.ts); tests make it small. */
  segmentEvents?: number
  /** `SEARCH_CACHE_DIR`: where a database's log is copied for search and kept between starts (search/log-cache.ts); by default a temporary directory. */
  cacheDir?: string | null
  /** Pace of the rebuild of missing segments (default: 2000 events a step, no pause); tests slow it down. */
  rebuild?: RebuildPace
  /** Events one search may read back from the log to check them (search/search-work.ts); tests make it small. */
  readBackLimit?: number
  /** How long a search may run, when its request is not held open (default: the server's idle timeout); tests make it negative. */
  searchLimitMs?: number
  /** Pace of the background check of the segments' checksums (see search/segment-files.ts); tests slow it down. */
  check?: CheckPace
}

/**
 * Event types about records that a plain read permission does not list, with the permission that
 * does: the tokens (GET /api/admin/api-tokens needs ADMIN), whose events name each token, its
 * role, projects, environment and expiry; and the users (GET /api/admin/user-admin needs ADMIN),
 * whose events name each user, email and role; and the settings (single sign-on's need ADMIN to read).
 */
const READ_PERMISSION: Partial<Record<EventType, Permission>> = {
  'api-token-created': 'ADMIN',
  'api-token-deleted': 'ADMIN',
  'user-created': 'ADMIN',
  'user-updated': 'ADMIN',
  'user-deleted': 'ADMIN',
  'pat-created': 'ADMIN',
  'pat-deleted': 'ADMIN',
  'service-account-created': 'ADMIN',
  'service-account-updated': 'ADMIN',
  'service-account-deleted': 'ADMIN',
  'setting-updated': 'ADMIN',
}

export function visibilityOf(caller: Caller): EventVisibility {
  const hiddenTypes = Object.entries(READ_PERMISSION)
    .filter(([, permission]) => !roleHasPermission(caller.role, permission))
    .map(([type]) => type)
  return { projects: caller.projects.includes('*') ? null : [...caller.projects], hiddenTypes }
}

export class EventsService {
  private worker: Worker | null = null
  private loading: Promise<void> | null = null
  private loaded = false
  /** The worker has mapped the segments: what is left to load is recent events (or a rebuild, which /ready does not wait for). */
  private opened = false
  private indexBuilt = false
  private rebuilding = false
  private nextId = 1
  /** The local copy of a database's log, which the worker searches as it does a data directory's. */
  private cache: CachedLog | null = null
  /** Of a database's log at start: events found in the local copy, and events read from the database. */
  private copied: { fromCopy: number; fromDatabase: number } | null = null
  private readonly waiting = new Map<number, { resolve: (page: EventPage) => void; reject: (error: Error) => void }>()
  /** Called once the worker has built the index, with how long it took and its heap then. */
  onIndexBuilt: (build: { buildMs: number; heapBytes: number; segmentBytes: number }) => void = () => {}
  /** Lets a request wait longer than the server's idle timeout (server.ts): a search that waits for a database's log to be copied, or reads the log during a rebuild, needs it. */
  holdOpen: (request: Request) => void = () => {}
  /** Called once the segments missing at start are built: how many events, and how long it took. */
  onRebuilt: (rebuild: { events: number; segments: number; ms: number }) => void = () => {}
  /** Told what the operator should know about the search files (a segment ignored and rebuilt). */
  onNotice: (message: string) => void = () => {}
  /**
   * Committed events that arrive while the worker is being told where its log starts; before the
   * worker starts none are kept, as it reads them with the log.
   */
  private pending: { id: number; line: string }[] = []
  private streaming = false
  private closed = false
  /**
   * The last event of the last commit made durable. The store's own `lastEventId` also counts a
   * commit still being written (or about to be undone): a worker started meanwhile reads the log
   * up to this id, and hears of that commit when it completes.
   */
  private committedId: number

  constructor(
    private readonly store: EventSource,
    private readonly options: EventsOptions = {},
  ) {
    this.committedId = store.lastEventId
    store.onCommit((events, lines) => {
      this.committedId = events.at(-1)?.id ?? this.committedId
      if (this.streaming) this.post({ type: 'append', lines: [...lines] })
      else if (this.loading) this.pending.push(...events.map((event, i) => ({ id: event.id, line: lines[i] })))
    })
  }

  /**
   * Whether the service is ready as far as the event log goes: once the worker has mapped its
   * segments (events since are read at once; a rebuild of missing segments goes on in the background,
   * searches reading the log where segments are missing), and also before anything asked for it (a search then starts the worker and waits for
   * it). `server.ts` calls `load()` as it starts listening, so `/ready` waits for the segments there.
   */
  get ready(): boolean {
    return this.opened || this.loaded || this.loading === null
  }

  /** Whether the worker has been started (by a search or `load()`). */
  get started(): boolean {
    return this.loading !== null
  }

  /** Whether segments missing at start are still being built from the log (searches read those events meanwhile). */
  get segmentsRebuilding(): boolean {
    return this.rebuilding
  }

  /** Whether the text index covers the log; searches are exact either way. */
  get indexReady(): boolean {
    return this.indexBuilt
  }

  /** Starts the worker and has it read the log; resolves when searches can be answered. */
  load(): Promise<void> {
    this.loading ??= this.start()
    return this.loading
  }

  private async start(): Promise<void> {
    if (this.closed) throw new Error('event search closed')
    const worker = startWorker('features/events/search/event-search.worker')
    this.worker = worker
    const lastId = this.committedId
    const { name, identity, eventsPath } = this.store.log
    // A log kept elsewhere is searched as a data directory's is, from a local copy kept up to date here.
    const cache =
      identity === null
        ? null
        : openCachedLog(this.options.cacheDir ?? null, { name, identity }, message => this.onNotice(message))
    this.cache = cache
    const path = cache?.path ?? eventsPath
    const loaded = new Promise<number>((resolve, reject) => {
      worker.onmessage = (message: MessageEvent<EventSearchReply>) => {
        const reply = message.data
        if (reply.type === 'loaded') {
          this.rebuilding = reply.rebuilding
          resolve(reply.events)
        } else if (reply.type === 'rebuilt') {
          this.rebuilding = false
          this.onRebuilt({ events: reply.events, segments: reply.segments, ms: reply.ms })
        } else if (reply.type === 'opened') this.opened = true
        else if (reply.type === 'load-failed')
          reject(new StoreLoadError(path ?? 'event log', reply.message.replace(`${path}: `, '')))
        else this.receive(reply)
      }
      worker.onerror = event => {
        // A dead worker answers nothing more: fail the searches waiting on it rather than leave them hanging.
        const error = new Error(`event-search worker failed: ${event.message}`)
        reject(error)
        for (const waiter of this.waiting.values()) waiter.reject(error)
        this.waiting.clear()
      }
    })
    const lines: string[] = []
    // A memory store: the log comes from this thread.
    if (path === null) await this.store.readEventLines(lastId, line => lines.push(line))
    const buildIndex = this.options.buildIndex ?? true
    // Like a data directory's segments: /ready does not wait for a database's log to be checked and
    // read; searches do (they await `load()`), and the worker takes messages in order.
    if (cache !== null) this.opened = true
    const copyEnd = cache === null ? lastId : await this.checkCopy(cache, lastId)
    this.post({
      type: 'open',
      path,
      lines,
      lastId: copyEnd,
      commonAfter: this.options.commonAfter,
      // A database's index is built once the events after the copy have come (below).
      buildIndex: buildIndex && cache === null,
      segmentDir: cache?.dir,
      segmentEvents: this.options.segmentEvents,
      readBackLimit: this.options.readBackLimit,
      cache: cache !== null,
      rebuild: this.options.rebuild,
      check: this.options.check,
    })
    if (cache !== null) {
      // What the copy holds once the worker has read it (less than its end if a part could not be read).
      const fromCopy = await loaded
      let page: string[] = []
      const onLine = (line: string) => {
        page.push(line)
        if (page.length === DATABASE_PAGE) {
          this.post({ type: 'append', lines: page })
          page = []
        }
      }
      await this.readRemoteLog(fromCopy, lastId, onLine)
      if (page.length > 0) this.post({ type: 'append', lines: page })
      this.copied = { fromCopy, fromDatabase: lastId - fromCopy }
      if (buildIndex) this.post({ type: 'build-index' })
    }
    // Commits made since `lastId` was taken: only their events are new to the worker.
    const pending = this.pending.filter(event => event.id > lastId).map(event => event.line)
    this.pending = []
    if (pending.length > 0) this.post({ type: 'append', lines: pending })
    this.streaming = true
    await loaded
    this.loaded = true
  }

  /**
   * How far the local copy of a database's log can be trusted: to its last event when the database
   * holds that very line under that id (events never change, ids run without a gap, so the events
   * before it are the database's too); otherwise the copy is emptied, saying why, and read again.
   */
  private async checkCopy(cache: CachedLog, lastId: number): Promise<number> {
    if (cache.lastId > lastId) {
      cache.clear(
        `it holds events up to ${cache.lastId}, but the database ends at event ${lastId} (restored from an older backup?)`,
      )
    } else if (cache.lastId > 0) {
      let line: string | null = null
      await this.readRemoteLog(cache.lastId - 1, cache.lastId, held => (line = held))
      if (line !== cache.lastLine) cache.clear(`its event ${cache.lastId} is not the database's event ${cache.lastId}`)
    }
    return cache.lastId
  }

  /** Of a database's log at start, once read: the events found in the local copy and those read from the database. */
  get copyReport(): { fromCopy: number; fromDatabase: number } | null {
    return this.copied
  }

  private receive(reply: EventSearchReply) {
    if (reply.type === 'notice') return this.onNotice(reply.message)
    if (reply.type === 'index-ready') {
      this.indexBuilt = true
      this.onIndexBuilt({ buildMs: reply.buildMs, heapBytes: reply.heapBytes, segmentBytes: reply.segmentBytes })
      return
    }
    if (reply.type !== 'result' && reply.type !== 'failed') return
    const waiter = this.waiting.get(reply.id)
    if (!waiter) return
    this.waiting.delete(reply.id)
    if (reply.type === 'result') {
      // Each body is garbage once sent (workers/garbage.ts).
      madeGarbage(reply.body.byteLength)
      waiter.resolve({ total: reply.total, body: reply.body, plan: reply.plan })
    } else if (reply.exceeded === 'read-back')
      waiter.reject(new SearchTooBroad(reply.message, [{ message: reply.message, path: '/query' }]))
    else if (reply.exceeded === 'deadline') waiter.reject(new SearchStopped(reply.message))
    else waiter.reject(new Error(`event search failed: ${reply.message}`))
  }

  private post(message: EventSearchRequest) {
    // Closed while the log was being read: there is no one left to tell.
    this.worker?.postMessage(message)
  }

  /**
   * Searches the log for the events the caller may read otherwise: a token limited to some projects
   * sees only their events (none of the service-wide ones, which have no project), and a token
   * without the permission that lists a kind of record does not see that record's events. Applied
   * in the search itself, so that totals, pages and free text leave them out alike.
   */
  async search(query: EventQuery, caller: Caller, request?: Request): Promise<EventPage> {
    // A search that reads the log (segments still being rebuilt) may take longer than the server's idle timeout.
    const held = this.rebuilding || !this.loaded
    if (held && request) this.holdOpen(request)
    // The worker stops the search when the server gives up on the request (search/search-work.ts).
    const deadline =
      Date.now() + (held ? SEARCH_WAIT_SECONDS * 1000 : (this.options.searchLimitMs ?? SEARCH_SECONDS * 1000))
    await this.load()
    if (this.closed) throw new Error('event search closed')
    const visibility = visibilityOf(caller)
    const id = this.nextId++
    return new Promise<EventPage>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.post({ type: 'search', id, query, visibility, deadline })
    })
  }

  /**
   * Reads a database's log after `after` up to `lastId` for the worker. The service already answers
   * when this runs, so a database that goes away meanwhile must not stop it: the read is tried
   * again, with a growing wait and a notice per attempt, from the event after the last one handed
   * over, until the database is back or the service closes.
   */
  private async readRemoteLog(after: number, lastId: number, onLine: (line: string) => void): Promise<void> {
    let handed = after
    const next = (line: string) => {
      handed++
      onLine(line)
    }
    for (let wait = RETRY_MIN_MS; ; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
      try {
        // A database gives the lines as kept: no parsing and printing them again here.
        return await this.store.readEventLines(lastId, next, handed)
      } catch (error) {
        if (this.closed) throw error
        this.onNotice(
          `reading the event log for search failed after ${handed} of ${lastId} events (${error instanceof Error ? error.message : String(error)}); trying again in ${wait} ms`,
        )
        await Bun.sleep(wait)
      }
    }
  }

  close(): void {
    this.closed = true
    this.worker?.terminate()
    this.worker = null
    this.cache?.release()
    this.cache = null
    for (const waiter of this.waiting.values()) waiter.reject(new Error('event search closed'))
    this.waiting.clear()
  }
}
