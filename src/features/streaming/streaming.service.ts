/**
 * The client API's Server-Sent Events stream and delta polling, as `unleash-client` reads them
 * (experimentalMode streaming, and polling with format delta).
 *
 * A stream starts with an `unleash-connected` event: a hydration, or, when the client names a
 * revision (`Last-Event-ID`) whose changes the feed still holds, only the changes since. Then each
 * commit that changes what the stream's scope serves becomes one `unleash-updated` event whose SSE
 * id is the revision. Streams of the same scope share one made message per commit, so a write costs
 * one delta per scope plus one enqueue per stream, whatever the number of streams.
 *
 * Heartbeats (SSE comments) are written to every stream by one timer, spread over the interval: the SDK gives up on a stream
 * silent for 60 s, and proxies cut idle connections. A stream ends when its token is deleted,
 * changed or expires, at its expiry (the SDK reconnects, gets 401 and stops, as a poller would);
 * when the client reads too slowly to keep up (its connection is reset, and it reconnects and
 * resumes from its last event id); and, with a `fetch-mode: polling` event first, when the server,
 * its token or its address holds too many streams or the server is stopping, so the SDK polls
 * instead of retrying a server that will not take it.
 */
import { AtCapacity } from '../../errors'
import type { Store } from '../../storage/store'
import { scopeOf, type Scope } from '../client/client.service'
import type { SdkScope } from '../tokens/auth'
import { tokenExpired, type ApiTokenRecord as TokenRecord } from '../tokens/tokens.records'
import type { ChangeFeed, Revision } from './change-feed'
import { eventsFor, eventsSince, hydration } from './delta'
import {
  HeldStream,
  type Audience,
  type Group,
  type LiveGroup,
  type NoticeFormat,
  type ScopeGroup,
} from './held-stream'
import { COMMENT, SSE_HEADERS } from '../../http/sse'
import { GO_POLLING, message, revisionOf } from './sse'
import { DEFAULT_STREAMING, type StreamingOptions } from './streaming.options'

/** Why a stream's connection was reset, as Bun writes it to stderr. */
const CUT_OFF =
  'flagstore: a stream was cut off, its client being STREAMING_MAX_UNSENT_BYTES behind; it resumes from its last event id'

/** setTimeout's longest delay; a later expiry is caught by the heartbeat's check once per interval. */
const LONGEST_TIMER_MS = 2 ** 31 - 1
/** Hydrations kept, by scope, between two changes: a burst of (re)connections makes each once. */
const MAX_KEPT_HYDRATIONS = 64
/** How often the heartbeat timer ticks: each tick writes to the streams of one slot (spreadHeartbeats). */
const HEARTBEAT_TICK_MS = 100

/** The client specification a notice stream's scope is read as: segments by id (the scope's key only; notices name no flag). */
const NOTICE_SPEC = '5.2.0'

export interface DeltaAnswer {
  status: 200 | 304
  etag: string
  body?: string
}

export class StreamingService {
  private readonly groups = new Map<string, Group>()
  private readonly byToken = new Map<string, Set<HeldStream>>()
  /** Streams of frontend tokens by client address. */
  private readonly byAddress = new Map<string, number>()
  /** A timer per token with an expiry and streams, which ends them at that expiry. */
  private readonly expiries = new Map<string, ReturnType<typeof setTimeout>>()
  private readonly options: Required<StreamingOptions>
  private readonly hydrations = new Map<string, { revision: number; bytes: Uint8Array }>()
  private count = 0
  private heartbeat: ReturnType<typeof setInterval> | null = null
  /**
   * Heartbeats are spread evenly over the interval: each stream is in one of `slots`, and a tick every
   * HEARTBEAT_TICK_MS writes to the next slot's streams, so that each hears one per interval. At
   * 10,000 streams and 15 s that is about 70 writes (half a millisecond) every 100 ms; a whole round
   * at once (80 ms), or in slices of 500 (4 ms each), held up the requests that came meanwhile
   * (/health p99 about twice that without streams: docs/realtime.md).
   */
  private readonly slots: Set<HeldStream>[]
  private nextSlot = 0
  private tick = 0
  private stopping = false
  /**
   * Set by the server (server.ts): exempts a stream's request from the server's idle timeout (Bun's
   * is 10 s, shorter than a heartbeat interval), which would otherwise cut every quiet stream.
   */
  holdOpen: (request: Request) => void = () => {}

  constructor(
    private readonly store: Pick<Store, 'state' | 'watch'>,
    private readonly feed: ChangeFeed,
    options: StreamingOptions = DEFAULT_STREAMING,
  ) {
    this.options = { ...DEFAULT_STREAMING, ...options }
    this.slots = Array.from(
      { length: Math.max(1, Math.round(options.heartbeatMs / HEARTBEAT_TICK_MS)) },
      () => new Set<HeldStream>(),
    )
    feed.subscribe(revision => this.publish(revision))
    store.watch('tokens', (name, before, after) => {
      if (before !== undefined && !sameScope(before, after)) this.endToken(name)
    })
  }

  /** Streams held now. */
  get streams(): number {
    return this.count
  }

  /**
   * A new stream for `scope` (the caller's token `tokenName`, from `address`), resuming from the
   * revision the request's Last-Event-ID names if it can. Past a cap, or while stopping, the stream
   * says `fetch-mode: polling` and ends.
   */
  open(tokenName: string, scope: Scope, request: Request, address: string | null = null): Response {
    if (this.refusal(tokenName, address) !== null) return new Response(GO_POLLING, { headers: SSE_HEADERS })
    const lastEventId = request.headers.get('last-event-id')
    const first = this.firstMessage(scope, revisionOf(lastEventId))
    return this.hold(tokenName, address, this.groupOf('client', scope), first, request)
  }

  /**
   * A stream of notices in another protocol's `format` (OFREP's event stream) for the token
   * `tokenName`'s `scope`: `format.first` at once, then a notice for each commit that changes what
   * the scope serves. Past a cap, or while stopping, an AtCapacity error (503): an EventSource
   * gives up on an answer that is not 200, and the web provider then polls (or asks the bulk route
   * again), where a stream that ended would be reconnected to forever.
   */
  openNotices(
    tokenName: string,
    scope: SdkScope,
    request: Request,
    address: string | null,
    format: NoticeFormat,
  ): Response {
    const refusal = this.refusal(tokenName, address)
    if (refusal !== null) throw new AtCapacity(`${refusal}; poll instead`, 30)
    return this.hold(tokenName, address, this.groupOf(format, scopeOf(scope, {}, NOTICE_SPEC)), format.first, request)
  }

  /**
   * A stream of the console's live channel (live.ts), for a caller whose streams count under
   * `holder` (a token's name, or a key of the signed-in user no token name can be) and who may hear
   * of what `audience` covers, sent `first` at once; it ends once `alive` says no. Past a cap, or
   * while stopping, 503.
   */
  openLive(holder: string, audience: Audience, request: Request, alive: () => boolean, first: Uint8Array): Response {
    const refusal = this.refusal(holder, null)
    if (refusal !== null) throw new AtCapacity(`${refusal}; poll instead`, 30)
    const key = `live ${JSON.stringify([audience.projects, audience.hiddenTypes])}`
    return this.hold(holder, null, this.group({ key, kind: 'live', audience }), first, request, alive)
  }

  /** Sends `bytes` to the live channel's streams whose audience `hears` (just after this turn, as `publish` does). */
  sendLive(hears: (audience: Audience) => boolean, bytes: Uint8Array): void {
    const streams: HeldStream[] = []
    for (const group of this.groups.values())
      if (group.kind === 'live' && hears(group.audience)) streams.push(...group.streams)
    if (streams.length > 0) setImmediate(() => this.sendAll(streams, bytes))
  }

  /** Whether any live stream is open (its messages are then worth making). */
  get hasLive(): boolean {
    for (const group of this.groups.values()) if (group.kind === 'live') return true
    return false
  }

  private groupOf(kind: ScopeGroup['kind'], scope: Scope): Group {
    return this.group({ key: `${kind === 'client' ? kind : kind.name} ${scope.key}`, kind, scope })
  }

  /** The group kept under `made.key`, made so when there is none yet. */
  private group(made: Omit<ScopeGroup, 'streams'> | Omit<LiveGroup, 'streams'>): Group {
    let group = this.groups.get(made.key)
    if (!group) this.groups.set(made.key, (group = { ...made, streams: new Set() } as Group))
    return group
  }

  /** Sends `bytes` to `streams`, ending instead those whose token expired meanwhile. */
  private sendAll(streams: readonly HeldStream[], bytes: Uint8Array): void {
    const now = Date.now()
    for (const stream of streams) {
      if (stream.expiresAt <= now) this.end(stream)
      else this.send(stream, bytes)
    }
  }

  /** Why a new stream of the token `tokenName` from `address` cannot be held now; null if it can. */
  private refusal(tokenName: string, address: string | null): string | null {
    const { maxStreams, maxStreamsPerToken, maxStreamsPerAddress } = this.options
    if (this.stopping) return 'The server is stopping'
    if (this.count >= maxStreams) return `The server holds ${maxStreams} streams (STREAMING_MAX_STREAMS)`
    if ((this.byToken.get(tokenName)?.size ?? 0) >= maxStreamsPerToken)
      return `The token holds ${maxStreamsPerToken} streams (STREAMING_MAX_STREAMS_PER_TOKEN)`
    const perAddress = this.addressOf(tokenName, address)
    if (perAddress !== null && (this.byAddress.get(perAddress) ?? 0) >= maxStreamsPerAddress) {
      return `Your address holds ${maxStreamsPerAddress} streams of frontend tokens (STREAMING_MAX_STREAMS_PER_ADDRESS)`
    }
    return null
  }

  /** The address a stream counts against: a frontend token's only (anyone may have one; a client token is a secret already capped as a whole). */
  private addressOf(tokenName: string, address: string | null): string | null {
    return address !== null && this.store.state.tokens[tokenName]?.type === 'frontend' ? address : null
  }

  private hold(
    tokenName: string,
    address: string | null,
    group: Group,
    first: Uint8Array,
    request: Request,
    alive: (() => boolean) | null = null,
  ): Response {
    const slot = this.slots[this.nextSlot++ % this.slots.length]
    const expiry = this.store.state.tokens[tokenName]?.expiresAt
    const expiresAt = expiry ? Date.parse(expiry) : Infinity
    const perAddress = this.addressOf(tokenName, address)
    const stream = new HeldStream(this, first, tokenName, perAddress, expiresAt, group, slot, alive)
    const body = new ReadableStream(stream as unknown as UnderlyingDefaultSource<Uint8Array>)
    group.streams.add(stream)
    slot.add(stream)
    let ofToken = this.byToken.get(tokenName)
    if (!ofToken) this.byToken.set(tokenName, (ofToken = new Set()))
    ofToken.add(stream)
    if (perAddress !== null) this.byAddress.set(perAddress, (this.byAddress.get(perAddress) ?? 0) + 1)
    // Ended at the expiry itself, not at the next heartbeat's check.
    if (ofToken.size === 1 && expiresAt - Date.now() <= LONGEST_TIMER_MS) {
      const timer = setTimeout(() => this.endToken(tokenName), Math.max(0, expiresAt - Date.now()))
      timer.unref?.()
      this.expiries.set(tokenName, timer)
    }
    this.count++
    this.heartbeat ??= setInterval(() => this.beat(), this.options.heartbeatMs / this.slots.length)
    this.heartbeat.unref?.()
    this.holdOpen(request)
    return new Response(body, { headers: SSE_HEADERS })
  }

  /** The answer to a delta poll that names `ifNoneMatch` (the ETag of its last answer). */
  delta(scope: Scope, ifNoneMatch: string | null): DeltaAnswer {
    const known = revisionOf(ifNoneMatch)
    const revisions = known === null ? null : this.feed.since(known)
    if (revisions !== null) {
      const events = eventsSince(scope, revisions)
      // The client keeps its ETag on a 304: it goes on naming its revision until something in its scope changes.
      if (events.length === 0) return { status: 304, etag: `"${known}"` }
      return { status: 200, etag: `"${this.feed.revision}"`, body: JSON.stringify({ events }) }
    }
    const full = hydration(this.store.state, scope, this.feed.revision)
    return { status: 200, etag: `"${full.eventId}"`, body: JSON.stringify({ events: [full] }) }
  }

  /** Tells every stream to poll, ends them, and refuses new ones: the server is stopping. */
  close(): void {
    this.stopping = true
    for (const group of this.groups.values()) for (const stream of group.streams) this.end(stream, GO_POLLING)
    if (this.heartbeat) clearInterval(this.heartbeat)
    this.heartbeat = null
  }

  private firstMessage(scope: Scope, known: number | null): Uint8Array {
    const revisions = known === null ? null : this.feed.since(known)
    if (revisions !== null) return message('unleash-connected', this.feed.revision, eventsSince(scope, revisions))
    const kept = this.hydrations.get(scope.key)
    if (kept) return kept.bytes
    const full = hydration(this.store.state, scope, this.feed.revision)
    const bytes = message('unleash-connected', full.eventId, [full])
    this.hydrations.set(scope.key, { revision: full.eventId, bytes })
    if (this.hydrations.size > MAX_KEPT_HYDRATIONS) this.hydrations.delete(this.hydrations.keys().next().value!)
    return bytes
  }

  /**
   * Runs in the commit listener, before the commit's writes are answered: the messages are made
   * there (one per scope), but written to the streams just after, so that a write is answered in
   * the same time whether 10 or 10,000 streams are open. The streams are those open now: one
   * opened in between already holds this revision.
   */
  private publish(revision: Revision): void {
    this.hydrations.clear()
    const sends: [HeldStream[], Uint8Array][] = []
    for (const group of this.groups.values()) {
      if (group.kind === 'live') continue
      const events = eventsFor(group.scope, revision)
      if (events.length === 0) continue
      sends.push([
        [...group.streams],
        group.kind === 'client'
          ? message('unleash-updated', revision.revision, events)
          : group.kind.notice(revision.revision),
      ])
    }
    if (sends.length === 0) return
    // A token may expire between its timer's turns: what comes after its expiry is never sent.
    setImmediate(() => {
      for (const [streams, bytes] of sends) this.sendAll(streams, bytes)
    })
  }

  private send(stream: HeldStream, bytes: Uint8Array): void {
    if (stream.closed) return
    if (stream.sink === null) {
      stream.early?.push(bytes)
      return
    }
    // A client that far behind is cut off, its buffer dropped with the connection, rather than buffered for without end:
    // it reconnects with the last event id it read and gets what it missed (docs/realtime.md).
    if (stream.unsent > 0 && stream.unsent + bytes.length > this.options.maxUnsentBytes) {
      this.end(stream, undefined, true)
      return
    }
    try {
      stream.write(stream.sink, bytes)
      stream.sink.flush()
    } catch {
      this.forget(stream)
    }
  }

  /** One tick: once per interval the expired tokens' streams are ended; then the next slot's streams hear a heartbeat. */
  private beat(): void {
    const index = this.tick++ % this.slots.length
    if (index === 0) {
      const now = Date.now()
      for (const [name, streams] of [...this.byToken]) {
        // The live channel's streams check their own credential (a signed-in user holds no token).
        const first = streams.values().next().value
        if (first?.alive) {
          for (const stream of [...streams]) if (!stream.alive!()) this.end(stream)
          continue
        }
        const token = this.store.state.tokens[name]
        if (!token || tokenExpired(token, now)) this.endToken(name)
      }
    }
    // A copy: a write that fails removes its stream from the slot.
    for (const stream of [...this.slots[index]]) this.send(stream, COMMENT)
  }

  private endToken(name: string): void {
    for (const stream of this.byToken.get(name) ?? []) this.end(stream)
  }

  /** Ends the stream (after `last`, if given; resetting its connection if `abort`) and forgets it. */
  private end(stream: HeldStream, last?: Uint8Array, abort?: true): void {
    if (stream.closed) return
    if (last) this.send(stream, last)
    this.forget(stream)
    try {
      // A stream whose response has not started yet is closed by its `pull`, after what it was sent.
      if (abort) stream.sink?.close(CUT_OFF)
      else stream.sink?.close()
    } catch {
      // The client went away meanwhile.
    }
  }

  /** Forgets a stream that ended or whose client went away (its own `pull` and `cancel` call this). */
  forget(stream: HeldStream): void {
    if (stream.closed) return
    stream.closed = true
    this.count--
    stream.group.streams.delete(stream)
    stream.slot.delete(stream)
    if (stream.group.streams.size === 0) this.groups.delete(stream.group.key)
    const ofToken = this.byToken.get(stream.tokenName)
    ofToken?.delete(stream)
    if (ofToken?.size === 0) {
      this.byToken.delete(stream.tokenName)
      clearTimeout(this.expiries.get(stream.tokenName))
      this.expiries.delete(stream.tokenName)
    }
    if (stream.address !== null) {
      const left = this.byAddress.get(stream.address)! - 1
      if (left === 0) this.byAddress.delete(stream.address)
      else this.byAddress.set(stream.address, left)
    }
    if (this.count === 0 && this.heartbeat) {
      clearInterval(this.heartbeat)
      this.heartbeat = null
    }
  }
}

/** Whether a token still gives the streams opened with it what they were given: same secret, type and scope. */
export function sameScope(before: TokenRecord, after: TokenRecord | undefined): boolean {
  return (
    after !== undefined &&
    after.secretHash === before.secretHash &&
    after.type === before.type &&
    after.environment === before.environment &&
    JSON.stringify(after.projects) === JSON.stringify(before.projects)
  )
}
