/**
 * Sends the outbox's deliveries (addons.outbox.ts). Each integration's deliveries go one at a time
 * in event order; at most `concurrency` integrations send at once per instance, so a slow or dead
 * receiver holds up only its own integration and never a write. A delivery is sent only once the
 * commit that holds it is durable, and its outcome is recorded through the store like any write.
 *
 * Retries: network errors, timeouts, 5xx and 429 are tried again after 1, 2, 4… base periods (at
 * most 3,600 apart, Retry-After honoured up to that), until 86,400 base periods after the first
 * attempt (the base is 1 s: 1 h apart at most, for 24 h); other answers fail at once. Either way
 * the delivery is then a dead letter, kept until retried.
 *
 * On a shared database each integration is sent for by one instance at a time: the one holding
 * its lease (`addonStates`), taken and renewed through the store, whose commits are serialised
 * across instances; an instance sends only while its lease outlasts the request's deadline. After
 * a crash the deliveries left are sent again, with the same delivery id: on a data directory at the
 * restart, on a shared database once the lease runs out.
 */
import { randomUUID } from 'node:crypto'
import { SYSTEM_ACTOR } from '../../domain/events'
import type { EventRecord } from '../../storage/records'
import type { Store } from '../../storage/store'
import { requestFor } from './addons.formats'
import type { Outbox } from './addons.outbox'
import { attemptKey, deliveryKey, type AddonRecord, type AddonStateRecord, type DeliveryRecord } from './addons.records'
import { LOG_ENTRIES } from './addons.service'
import { send, type Sent } from './addons.send'
import { logAlways } from '../../log'

export interface DispatchOptions {
  /** `ADDONS_RETRY_BASE_MS`: the first retry's delay; the longest gap is 3,600 of these and the window 86,400. */
  retryBaseMs: number
  /** How long after the first attempt a delivery is retried (86,400 × the base: 24 h); tests shorten it. */
  retryForMs?: number
  /** A request's deadline (10 s). */
  timeoutMs: number
  allowPrivate: boolean
  /** `UNLEASH_URL`: the service's public URL, for links to the console. */
  publicUrl: string | null
  /** Integrations sent for at once by this instance. */
  concurrency: number
  /** How long a lease lasts (ms); renewed with every delivery recorded. */
  leaseMs: number
}

export const DEFAULT_DISPATCH: DispatchOptions = {
  retryBaseMs: 1000,
  timeoutMs: 10_000,
  allowPrivate: true,
  publicUrl: null,
  concurrency: 8,
  leaseMs: 30_000,
}

/** Events kept in memory for the deliveries about to be made; the others are read back from the log. */
const CACHED_EVENTS = 10_000
/** Events read from the log at once when the next ones are not cached. */
const READ_AHEAD = 1000

class LeaseHeld extends Error {}

export class Dispatcher {
  readonly owner = randomUUID()
  private readonly running = new Set<number>()
  private readonly cache = new Map<number, EventRecord>()
  private durableEventId: number
  private timer: ReturnType<typeof setTimeout> | null = null
  private timerAt = Number.POSITIVE_INFINITY
  private closed = false
  private readonly inFlight = new Set<Promise<void>>()

  constructor(
    private readonly store: Store,
    private readonly outbox: Outbox,
    private readonly options: DispatchOptions,
  ) {
    this.durableEventId = store.lastEventId
    store.onCommit(added => {
      if (added.length === 0) return
      this.durableEventId = Math.max(this.durableEventId, added[added.length - 1].id)
      if (Object.keys(store.state.addons).length === 0) return
      for (const event of added) this.remember(event)
      this.wakeAt(Date.now())
    })
    this.wakeAt(Date.now())
  }

  /** Stops sending; requests under way end within their deadline, and are recorded if the store is still open. */
  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
  }

  /** Resolves once the requests under way have been answered and recorded, or given up. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight])
  }

  private remember(event: EventRecord) {
    this.cache.set(event.id, event)
    if (this.cache.size > CACHED_EVENTS) this.cache.delete(this.cache.keys().next().value as number)
  }

  /** Looks at every integration with deliveries at `at` (ms), or sooner if already asked. */
  private wakeAt(at: number) {
    if (this.closed || at >= this.timerAt) return
    if (this.timer) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - Date.now()))
    this.timer.unref?.()
  }

  private tick() {
    this.timer = null
    this.timerAt = Number.POSITIVE_INFINITY
    if (this.closed) return
    for (const addonId of this.outbox.busy()) {
      if (this.running.size >= this.options.concurrency) break
      if (this.running.has(addonId)) continue
      this.running.add(addonId)
      const work = this.work(addonId).finally(() => {
        this.running.delete(addonId)
        this.inFlight.delete(work)
      })
      this.inFlight.add(work)
    }
    // Integrations left out by the bound, and leases that run out, are looked at again.
    this.wakeAt(Date.now() + Math.min(this.options.leaseMs / 2, 1000))
  }

  /** Sends the integration's deliveries in order until none is due, its lease is another's, or the service stops. */
  private async work(addonId: number): Promise<void> {
    try {
      while (!this.closed) {
        const delivery = this.outbox.head(addonId)
        const addon = this.store.state.addons[String(addonId)]
        if (!delivery || !addon?.enabled || delivery.eventId > this.durableEventId) return
        if (delivery.nextAt > Date.now()) return this.wakeAt(delivery.nextAt)
        if (!(await this.holdLease(addonId))) return
        const event = await this.eventOf(addonId, delivery.eventId)
        const sent: Sent = event
          ? await this.sendOne(addon, event, delivery)
          : {
              statusCode: null,
              error: 'the event is no longer in the log',
              durationMs: 0,
              retryAfter: null,
              retryable: false,
            }
        await this.record(addon, delivery, sent)
      }
    } catch (error) {
      if (this.closed) return
      logAlways('warn', 'integration delivery could not be recorded; trying again', {
        addon: addonId,
        error: (error as Error).message,
      })
      this.wakeAt(Date.now() + this.options.retryBaseMs)
    }
  }

  /** Sends for the integration (a test event included) once; never throws. */
  sendOne(addon: AddonRecord, event: EventRecord, delivery: Pick<DeliveryRecord, 'id'>): Promise<Sent> {
    let request: ReturnType<typeof requestFor>
    try {
      request = requestFor(addon, event, delivery.id, this.options.publicUrl, Date.now())
    } catch (error) {
      const message = `the body could not be made: ${(error as Error).message}`
      return Promise.resolve({ statusCode: null, error: message, durationMs: 0, retryAfter: null, retryable: false })
    }
    return send(request.url, request.headers, request.body, this.options)
  }

  /** Whether this instance holds the integration's lease for longer than a request takes, taking it if free. */
  private async holdLease(addonId: number): Promise<boolean> {
    const margin = this.options.timeoutMs + 1000
    const key = String(addonId)
    const held = this.store.state.addonStates[key]
    if (held?.owner === this.owner && held.until > Date.now() + margin) return true
    try {
      await this.store.transact(SYSTEM_ACTOR, tx => {
        const now = Date.parse(tx.now)
        const state = tx.get('addonStates', key)
        // Only a shared database has other instances: on a data directory (locked to one process) a
        // lease left by a process that was killed is this process's to take at once.
        const shared = this.store.log.identity !== null
        if (shared && state && state.owner !== this.owner && state.until > now) throw new LeaseHeld()
        if (!tx.get('addons', key)) throw new LeaseHeld()
        tx.put('addonStates', key, { ...(state ?? emptyState()), owner: this.owner, until: now + this.options.leaseMs })
      })
    } catch (error) {
      if (!(error instanceof LeaseHeld)) throw error
      const until = this.store.state.addonStates[key]?.until
      if (until) this.wakeAt(until + 1)
      return false
    }
    return true
  }

  private async eventOf(addonId: number, eventId: number): Promise<EventRecord | undefined> {
    const cached = this.cache.get(eventId)
    if (cached) return cached
    const last = Math.min(this.durableEventId, eventId + READ_AHEAD)
    const wanted = new Set(this.outbox.waiting(addonId, READ_AHEAD).map(delivery => delivery.eventId))
    wanted.add(eventId)
    await this.store.readEvents(
      event => {
        if (wanted.has(event.id)) this.remember(event)
      },
      eventId - 1,
      last,
    )
    return this.cache.get(eventId)
  }

  /** Records the attempt in the log, and the delivery as made, to be tried again, or dead. */
  private async record(addon: AddonRecord, delivery: DeliveryRecord, sent: Sent) {
    const base = this.options.retryBaseMs
    await this.store.transact(SYSTEM_ACTOR, tx => {
      const key = deliveryKey(addon.id, delivery.eventId)
      const current = tx.get('addonDeliveries', key)
      if (!current || current.id !== delivery.id || !tx.get('addons', String(addon.id))) return
      const now = Date.parse(tx.now)
      const attempts = current.attempts + 1
      const firstAttemptAt = current.firstAttemptAt ?? now
      const delay = Math.max(
        Math.min(base * 2 ** (attempts - 1), 3600 * base),
        Math.min((sent.retryAfter ?? 0) * 1000, 3600 * base),
      )
      const delivered = sent.error === null
      const dead =
        !delivered && (!sent.retryable || now + delay - firstAttemptAt > (this.options.retryForMs ?? 86_400 * base))
      const state = tx.get('addonStates', String(addon.id)) ?? emptyState()
      const seq = state.logSeq + 1
      tx.put('addonAttempts', attemptKey(addon.id, seq), {
        addonId: addon.id,
        seq,
        deliveryId: delivery.id,
        eventId: delivery.eventId,
        at: tx.now,
        attempt: attempts,
        statusCode: sent.statusCode,
        error: sent.error,
        durationMs: sent.durationMs,
        outcome: delivered ? 'delivered' : dead ? 'dead' : 'retrying',
      })
      if (tx.get('addonAttempts', attemptKey(addon.id, seq - LOG_ENTRIES)))
        tx.delete('addonAttempts', attemptKey(addon.id, seq - LOG_ENTRIES))
      const renewed = state.owner === this.owner ? now + this.options.leaseMs : state.until
      tx.put('addonStates', String(addon.id), { ...state, logSeq: seq, until: renewed })
      if (delivered) tx.delete('addonDeliveries', key)
      else
        tx.put('addonDeliveries', key, {
          ...current,
          attempts,
          firstAttemptAt,
          nextAt: now + delay,
          dead,
          lastError: sent.error,
        })
    })
  }
}

function emptyState(): AddonStateRecord {
  return { owner: '', until: 0, logSeq: 0, dropped: 0 }
}
