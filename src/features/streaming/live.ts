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
 * A stream ends when its caller's credential no longer holds as it did (checked once per heartbeat
 * interval: a session signed out or expired, a token deleted, changed or expired, a role changed);
 * the console reconnects, and is refused (401) if it must sign in again.
 */
import { frame } from '../../http/sse'
import type { EventRecord } from '../../storage/records'
import type { Store } from '../../storage/store'
import { visibilityOf } from '../events/events.service'
import type { Caller } from '../tokens/permissions'
import type { Audience } from './held-stream'
import type { StreamingService } from './streaming.service'

/** How often the usage of one flag is announced at most. */
export const METRICS_EVERY_MS = 3000

/** Whether `audience` may hear of `event`. */
function hears(audience: Audience, event: EventRecord): boolean {
  if (audience.hiddenTypes.includes(event.type)) return false
  return audience.projects === null || (event.project !== null && audience.projects.includes(event.project))
}

export class LiveChannel {
  /** Flags whose usage or lifecycle changed since the last announcement. */
  private usageChanged = new Set<string>()
  private cooling: ReturnType<typeof setTimeout> | null = null

  constructor(
    private readonly store: Pick<Store, 'state' | 'reader' | 'watch' | 'onCommit'>,
    private readonly streaming: Pick<StreamingService, 'openLive' | 'sendLive' | 'hasLive'>,
    private readonly metricsEveryMs = METRICS_EVERY_MS,
  ) {
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
    return this.streaming.openLive(holder, { projects, hiddenTypes }, request, alive)
  }

  private publish(events: readonly EventRecord[]): void {
    if (!this.streaming.hasLive) {
      this.usageChanged.clear()
      return
    }
    for (const event of events) {
      const data = {
        type: event.type,
        project: event.project,
        featureName: event.featureName,
        environment: event.environment,
      }
      const bytes = frame({ event: 'changed', id: event.id, data: JSON.stringify(data) })
      this.streaming.sendLive(audience => hears(audience, event), bytes)
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
