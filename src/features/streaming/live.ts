/**
 * The console's live channel (GET /api/admin/live): a Server-Sent Events stream that tells an open
 * console what changed, so that it shows a change made elsewhere without a reload. It is held by
 * the streaming service like the SDKs' streams (the same caps, heartbeats and unsent-bytes bound)
 * and says only what changed, never the new state: the console reads that through the API.
 *
 * - `event: changed`, `id: <event id>`, `data: {"type","project","featureName","environment"}`
 *   (null where the event has none): one per event of each durable commit, this instance's or
 *   another's on the same database (the store's commit listeners hear both), that the caller may
 *   see, as the event search decides (events.service.ts visibilityOf): a token limited to some
 *   projects hears of those projects' events only, a role that may not list tokens or users hears
 *   nothing of them.
 * - `event: metrics`, `data: {"featureName","project"}`: the flag's usage or lifecycle changed from
 *   SDK metrics (a flush committed its rows or when it was seen), at most once per flag per
 *   METRICS_EVERY_MS.
 * - comments as heartbeats.
 *
 * Every stream starts with where it stands: `event: ready`, `id: <last event id>`. A stream opened
 * with a `Last-Event-ID` (the browser's EventSource sends it when it reconnects by itself; a
 * console that opens a new one names it as `?lastEventId=`) is first sent the `changed` messages
 * it missed, then `ready`; or, when the id is more than `replayEvents` events back (or older than
 * what this instance has heard since it started), `event: reload` instead: anything may have
 * changed, read everything again. The replay comes from the last events this instance heard
 * (its own commits and, on PostgreSQL, the other instances'), kept as a short summary each.
 *
 * A stream ends when its caller's credential no longer holds as it did (checked once per heartbeat
 * interval: a session signed out or expired, a token deleted, changed or expired, a role changed);
 * the console reconnects, and is refused (401) if it must sign in again.
 */
import { frame, frameText } from '../../http/sse'
import type { EventRecord } from '../../storage/records'
import type { Store } from '../../storage/store'
import { visibilityOf } from '../events/events.service'
import type { Caller } from '../tokens/permissions'
import type { Audience } from './held-stream'
import type { StreamingService } from './streaming.service'

/** How often the usage of one flag is announced at most. */
export const METRICS_EVERY_MS = 3000
/** How many events back a stream that reconnects is sent what it missed; further back, `reload`. */
export const REPLAY_EVENTS = 1000

/** What a `changed` message says of an event (and whom it may reach: `type`, `project`). */
interface Change {
  id: number
  type: string
  project: string | null
  featureName: string | null
  environment: string | null
}

const changedMessage = (change: Change) => {
  const { id, ...data } = change
  return frameText({ event: 'changed', id, data: JSON.stringify(data) })
}

/** The event id a reconnecting stream names: its Last-Event-ID header, else its `lastEventId` query parameter. */
function lastEventIdOf(request: Request): number | null {
  const given = request.headers.get('last-event-id') ?? new URL(request.url).searchParams.get('lastEventId')
  return given !== null && /^\d{1,15}$/.test(given.trim()) ? Number(given) : null
}

/** Whether `audience` may hear of `event`. */
function hears(audience: Audience, event: Pick<Change, 'type' | 'project'>): boolean {
  if (audience.hiddenTypes.includes(event.type)) return false
  return audience.projects === null || (event.project !== null && audience.projects.includes(event.project))
}

const encoder = new TextEncoder()

export class LiveChannel {
  /** Flags whose usage or lifecycle changed since the last announcement. */
  private usageChanged = new Set<string>()
  private cooling: ReturnType<typeof setTimeout> | null = null
  /** The last events heard, oldest first: every event after `coveredFrom`, up to `heard`. */
  private recent: Change[] = []
  private coveredFrom: number
  private heard: number

  constructor(
    private readonly store: Pick<Store, 'state' | 'reader' | 'watch' | 'onCommit'>,
    private readonly streaming: Pick<StreamingService, 'openLive' | 'sendLive' | 'hasLive'>,
    private readonly metricsEveryMs = METRICS_EVERY_MS,
    private readonly replayEvents = REPLAY_EVENTS,
  ) {
    this.coveredFrom = this.heard = store.state.lastEventId
    // `watch` replays the records there are now; those are no change.
    let loading = true
    store.watch('flagUsage', (_key, before, after) => loading || this.usageChanged.add((after ?? before)!.featureName))
    store.watch('flagLastSeen', key => loading || this.usageChanged.add(key))
    loading = false
    store.onCommit(events => this.publish(events))
  }

  /** A stream for `caller`, who may hear of what the event search would show it. */
  open(caller: Caller, request: Request): Response {
    const { projects, hiddenTypes } = visibilityOf(caller)
    // A signed-in user's streams count together, under a key no token name can be (names hold no line break).
    const holder = caller.kind === 'token' ? caller.tokenName : `\nuser ${caller.userId}`
    const role = caller.role
    const alive = () => {
      try {
        return caller.credential.check(this.store.reader, Date.now()) === role
      } catch {
        return false
      }
    }
    const audience = { projects, hiddenTypes }
    return this.streaming.openLive(holder, audience, request, alive, this.start(audience, lastEventIdOf(request)))
  }

  /**
   * What a stream starts with: the `changed` messages after `known` that `audience` may hear, then
   * `ready`; `reload` when they are not all kept. Made in the same turn as the stream joins its
   * group, so that every later event reaches it live and none twice.
   */
  private start(audience: Audience, known: number | null): Uint8Array {
    const where = JSON.stringify({ lastEventId: this.heard })
    if (known !== null && known < this.heard && (known < this.coveredFrom || this.heard - known > this.replayEvents))
      return frame({ event: 'reload', id: this.heard, data: where })
    let text = ''
    // An id ahead of this instance (another instance's, not heard here yet) is resumed from here: what follows arrives live.
    if (known !== null)
      for (let i = this.recent.length - 1; i >= 0 && this.recent[i].id > known; i--)
        if (hears(audience, this.recent[i])) text = changedMessage(this.recent[i]) + text
    return new TextEncoder().encode(text + frameText({ event: 'ready', id: this.heard, data: where }))
  }

  private publish(events: readonly EventRecord[]): void {
    for (const event of events) {
      const change: Change = {
        id: event.id,
        type: event.type,
        project: event.project ?? null,
        featureName: event.featureName ?? null,
        environment: event.environment ?? null,
      }
      this.recent.push(change)
      this.heard = event.id
      if (this.streaming.hasLive)
        this.streaming.sendLive(audience => hears(audience, change), encoder.encode(changedMessage(change)))
    }
    // Kept to twice the bound, cut back to it: a cut every `replayEvents` events.
    if (this.recent.length > 2 * this.replayEvents) {
      const dropped = this.recent.splice(0, this.recent.length - this.replayEvents)
      this.coveredFrom = dropped[dropped.length - 1].id
    }
    if (!this.streaming.hasLive) {
      this.usageChanged.clear()
      return
    }
    if (this.usageChanged.size > 0 && this.cooling === null) this.announceUsage()
  }

  /** Announces the flags whose usage changed, then waits METRICS_EVERY_MS before the next announcement. */
  private announceUsage(): void {
    const flags = this.usageChanged
    this.usageChanged = new Set()
    if (flags.size === 0 || !this.streaming.hasLive) {
      this.cooling = null
      return
    }
    const state = this.store.state
    for (const name of flags) {
      const flag = Object.hasOwn(state.flags, name) ? state.flags[name] : undefined
      if (!flag) continue
      const bytes = frame({ event: 'metrics', data: JSON.stringify({ featureName: name, project: flag.project }) })
      this.streaming.sendLive(({ projects }) => projects === null || projects.includes(flag.project), bytes)
    }
    this.cooling = setTimeout(() => this.announceUsage(), this.metricsEveryMs)
    this.cooling.unref?.()
  }
}
