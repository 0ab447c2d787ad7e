/**
 * Scheduled change requests: each is applied at its time, as if its author applied it, once. One
 * timer waits for the earliest; it is set again after every commit (this instance's and, on
 * PostgreSQL, every other instance's), and at start, so that a request whose time passed while the
 * service was down is applied at once, its event giving the delay. The write itself checks, on the
 * state it is applied to, that the request is still scheduled: of several instances only the first
 * to commit applies it, and the others find it applied. A request that cannot apply (a conflict, a
 * flag deleted) becomes `failed` with its reason and an event, nothing of it applied.
 */
import { events } from '../../domain/events'
import { AppError } from '../../errors'
import type { EventAuthor, Store } from '../../storage/store'
import type { ChangeWriters } from './change-requests.changes'
import type { ChangeRequestRecord } from './change-requests.records'
import { applyingAs } from './change-requests.rule'
import { apply } from './change-requests.states'

/** The longest a timer waits before looking again (a clock that jumps, a timer's 32-bit bound). */
const MAX_WAIT_MS = 60_000
/** How soon a schedule whose write could not be saved (the store failing) is tried again. */
const RETRY_MS = 1000

const due = (request: ChangeRequestRecord) =>
  request.state === 'Scheduled' && request.schedule?.status === 'pending'
    ? Date.parse(request.schedule.scheduledAt)
    : null

export class ChangeRequestScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private running = false
  private closed = false

  constructor(
    private readonly store: Pick<Store, 'reader' | 'transact' | 'onCommit' | 'beforeClose'>,
    private readonly writers: ChangeWriters,
  ) {
    store.onCommit(() => this.arm())
    store.beforeClose(async () => this.close())
    this.arm()
  }

  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  /** Sets the timer for the earliest pending schedule. */
  private arm(delayMs?: number): void {
    if (this.closed || this.running) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    let earliest = Number.POSITIVE_INFINITY
    for (const request of this.store.reader.values('changeRequests'))
      earliest = Math.min(earliest, due(request) ?? earliest)
    if (earliest === Number.POSITIVE_INFINITY) return
    const wait = delayMs ?? Math.min(Math.max(0, earliest - Date.now()), MAX_WAIT_MS)
    this.timer = setTimeout(() => void this.run(), wait)
    this.timer.unref?.()
  }

  /** Applies every schedule that is due, one write each. */
  private async run(): Promise<void> {
    this.timer = null
    this.running = true
    let retry = false
    try {
      const now = Date.now()
      const ready = this.store.reader.values('changeRequests').filter(r => (due(r) ?? Number.POSITIVE_INFINITY) <= now)
      for (const request of ready.sort((a, b) => due(a)! - due(b)! || a.id - b.id)) {
        if (this.closed) return
        retry = (await this.applyOne(request)) || retry
      }
    } finally {
      this.running = false
    }
    this.arm(retry ? RETRY_MS : undefined)
  }

  /** Applies one request as its author; false once it is settled (applied, failed, or no longer due), true to try again. */
  private async applyOne(request: ChangeRequestRecord): Promise<boolean> {
    const author: EventAuthor = applyingAs(
      { name: request.createdBy.username, userId: request.createdBy.id },
      request.id,
    )
    const stillDue = (current: ChangeRequestRecord | undefined) =>
      current !== undefined && current.schedule !== null && due(current) === due(request)
    try {
      await this.store.transact(author, tx => {
        const current = tx.get('changeRequests', String(request.id))
        if (!stillDue(current)) return
        const scheduledAt = current!.schedule!.scheduledAt
        apply(tx, current!, this.writers, { scheduledAt, delayMs: Date.parse(tx.now) - Date.parse(scheduledAt) })
      })
      return false
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) return true
      try {
        await this.store.transact(author, tx => {
          const current = tx.get('changeRequests', String(request.id))
          if (!stillDue(current)) return
          const failed = {
            ...current!,
            schedule: { ...current!.schedule!, status: 'failed' as const, failureReason: error.message },
          }
          tx.put('changeRequests', String(request.id), failed)
          tx.appendEvent(
            events.changeRequest('schedule-failed', request.project, request.environment, {
              changeRequestId: request.id,
              reason: error.message,
            }),
          )
        })
        return false
      } catch {
        return true
      }
    }
  }
}
