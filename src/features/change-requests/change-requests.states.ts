/**
 * The states of a change request: Draft → In review (its author) → Approved (`minApprovals`
 * distinct people other than the author) → Applied (the author or an approver: every change in one
 * write, or none) or Scheduled (applied at its time, see change-requests.schedule.ts); Rejected
 * (with a comment, by someone other than the author) and Cancelled (by the author) from any open
 * state. Any edit of an approved or scheduled request voids its approvals and sends it back to
 * review.
 */
import { events, type ChangeRequestStep } from '../../domain/events'
import { ConflictError, NoAccessError, ValidationError } from '../../errors'
import type { Tx } from '../../storage/store'
import { applyChange, type ChangeWriters } from './change-requests.changes'
import {
  OPEN_STATES,
  settingKey,
  type ChangeRecord,
  type ChangeRequestRecord,
  type ChangeRequestState,
  type PersonRef,
} from './change-requests.records'
import { conflicts } from './change-requests.view'

function record(tx: Tx, request: ChangeRequestRecord, step: ChangeRequestStep, data: Record<string, unknown> = {}) {
  tx.put('changeRequests', String(request.id), request)
  tx.appendEvent(
    events.changeRequest(step, request.project, request.environment, { changeRequestId: request.id, ...data }),
  )
}

function requireOpen(request: ChangeRequestRecord): void {
  if (!OPEN_STATES.includes(request.state))
    throw new ConflictError(`Change request ${request.id} is ${request.state} and can no longer change`)
}

/**
 * Stores an edit of the request's changes: an approved or scheduled request loses its approvals
 * and goes back to review (a scheduled one is unscheduled), each with its event.
 */
export function editRequest(
  tx: Tx,
  request: ChangeRequestRecord,
  changes: ChangeRecord[],
  data: Record<string, unknown>,
): void {
  requireOpen(request)
  const voided = request.state === 'Approved' || request.state === 'Scheduled' || request.approvals.length > 0
  const edited: ChangeRequestRecord = {
    ...request,
    changes,
    ...(voided && request.state !== 'Draft' ? { state: 'In review' as const, approvals: [], schedule: null } : {}),
  }
  record(tx, edited, 'added', { ...data, approvalsVoided: voided && request.state !== 'Draft' })
  if (request.state === 'Scheduled')
    record(tx, edited, 'unscheduled', { reason: 'the request was edited after it was approved' })
}

const same = (a: PersonRef, b: PersonRef) => a.id === b.id

/** How far before now a schedule may still be set (and is then applied at once): clocks differ a little. */
const CLOCK_SLACK_MS = 5_000

/**
 * Holds the open requests of project × environment to the setting's `required` approvals as it is
 * now: one in review that has that many becomes Approved; an approved or scheduled one that no
 * longer has them goes back to In review (a scheduled one is unscheduled), keeping its approvals.
 * Each step is an event whose `reason` names the setting.
 */
export function requireApprovals(tx: Tx, project: string, environment: string, required: number): void {
  const reason = `requiredApprovals of ${project}/${environment} is now ${required}`
  for (const request of tx.values('changeRequests')) {
    if (request.project !== project || request.environment !== environment) continue
    if (!OPEN_STATES.includes(request.state) || request.minApprovals === required) continue
    const next = { ...request, minApprovals: required }
    const enough = request.approvals.length >= required
    if (request.state === 'In review' && enough)
      record(tx, { ...next, state: 'Approved' }, 'approved', {
        approvals: request.approvals.length,
        state: 'Approved',
        reason,
      })
    else if ((request.state === 'Approved' || request.state === 'Scheduled') && !enough) {
      const back = { ...next, state: 'In review' as const, schedule: null }
      record(tx, back, 'sent-to-review', { reason })
      if (request.state === 'Scheduled') record(tx, back, 'unscheduled', { reason })
    } else tx.put('changeRequests', String(request.id), next)
  }
}

export interface StateInput {
  state: ChangeRequestState
  comment?: string
  scheduledAt?: string
}

/** The transitions of PUT …/state, inside `tx`; applying goes through `apply`. */
export function changeState(
  tx: Tx,
  request: ChangeRequestRecord,
  input: StateInput,
  me: PersonRef,
  writers: ChangeWriters,
): void {
  requireOpen(request)
  const author = same(request.createdBy, me)
  const refuse = (message: string) => new NoAccessError(message, 'UPDATE_FEATURE_ENVIRONMENT')
  const from = (...states: ChangeRequestState[]) => {
    if (!states.includes(request.state))
      throw new ConflictError(`Change request ${request.id} is ${request.state}, not ${states.join(' or ')}`)
  }
  const stamp = { createdBy: me, createdAt: tx.now }
  switch (input.state) {
    case 'In review': {
      from('Draft')
      if (!author) throw refuse(`Only the author of change request ${request.id} may send it to review`)
      if (request.changes.length === 0)
        throw ValidationError.at('/state', 'A change request without changes cannot be reviewed')
      const required = tx.get('changeRequestSettings', settingKey(request.project, request.environment))
      record(
        tx,
        { ...request, state: 'In review', minApprovals: required?.requiredApprovals ?? request.minApprovals },
        'sent-to-review',
      )
      return
    }
    case 'Approved': {
      from('In review')
      if (author) throw refuse(`The author of change request ${request.id} cannot approve it: someone else must`)
      if (request.approvals.some(a => same(a.createdBy, me)))
        throw new ConflictError(`${me.username} has already approved change request ${request.id}`)
      const approvals = [...request.approvals, stamp]
      const state = approvals.length >= request.minApprovals ? 'Approved' : 'In review'
      record(tx, { ...request, approvals, state }, 'approved', { approvals: approvals.length, state })
      return
    }
    case 'Rejected': {
      if (author) throw refuse(`The author of change request ${request.id} cannot reject it; cancel it instead`)
      if (!input.comment?.trim()) throw ValidationError.at('/comment', 'A rejection needs a comment saying why')
      const comment = { id: Math.max(0, ...request.comments.map(c => c.id)) + 1, text: input.comment, ...stamp }
      record(
        tx,
        {
          ...request,
          state: 'Rejected',
          rejections: [...request.rejections, stamp],
          comments: [...request.comments, comment],
          schedule: null,
        },
        'rejected',
        { comment: input.comment },
      )
      return
    }
    case 'Cancelled':
      if (!author) throw refuse(`Only the author of change request ${request.id} may cancel it`)
      record(tx, { ...request, state: 'Cancelled', schedule: null }, 'cancelled')
      return
    case 'Scheduled': {
      from('Approved')
      requireApplier(request, me)
      const at = Date.parse(input.scheduledAt ?? '')
      if (Number.isNaN(at)) throw ValidationError.at('/scheduledAt', 'Scheduling needs scheduledAt, a date-time')
      if (at < Date.parse(tx.now) - CLOCK_SLACK_MS)
        throw ValidationError.at(
          '/scheduledAt',
          `scheduledAt ${new Date(at).toISOString()} is in the past (it is now ${tx.now}): pick a time to come`,
        )
      const scheduledAt = new Date(at).toISOString()
      const schedule = { scheduledAt, status: 'pending' as const, failureReason: null, scheduledBy: me }
      record(tx, { ...request, state: 'Scheduled', schedule }, 'scheduled', { scheduledAt })
      return
    }
    case 'Applied':
      from('Approved')
      requireApplier(request, me)
      apply(tx, request, writers)
      return
    default:
      throw ValidationError.at('/state', `A change request cannot be put in state "${input.state}"`)
  }
}

function requireApplier(request: ChangeRequestRecord, me: PersonRef): void {
  if (!same(request.createdBy, me) && !request.approvals.some(a => same(a.createdBy, me)))
    throw new NoAccessError(
      `Only the author or an approver of change request ${request.id} may apply or schedule it`,
      'UPDATE_FEATURE_ENVIRONMENT',
    )
}

/**
 * Applies every change in order through its direct write, as the write's author (marked
 * applyingAs the request, so the write rule lets it through and each change's events name the request). A change
 * whose target moved since it was added is a conflict: 409 naming it, and nothing applied.
 */
export function apply(
  tx: Tx,
  request: ChangeRequestRecord,
  writers: ChangeWriters,
  extra: Record<string, unknown> = {},
): void {
  const moved = conflicts(tx, request)
  if (moved.length > 0) {
    const names = [...new Set(moved.map(c => c.feature ?? `segment ${(c.payload as { id: number }).id}`))]
    throw new ConflictError(
      `Change request ${request.id} conflicts with changes made since: ${names.map(n => `"${n}"`).join(', ')} changed; nothing was applied`,
    )
  }
  const { project, environment } = request
  for (const change of request.changes) applyChange(tx, writers, { project, environment, ...change })
  record(tx, { ...request, state: 'Applied', schedule: null }, 'applied', extra)
}
