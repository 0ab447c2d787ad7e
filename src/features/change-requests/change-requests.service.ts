/**
 * Change requests: the setting of each project × environment, drafts (one per person ×
 * environment), their changes (each checked by the direct route's own write, run on the current
 * state and thrown away), edits, comments, and reads. The states and applying are in
 * change-requests.states.ts.
 */
import { events } from '../../domain/events'
import { NoAccessError, NotFoundError, ValidationError } from '../../errors'
import type { StateDoc } from '../../storage/records'
import { Tx, type StateReader, type Store } from '../../storage/store'
import { projectNotFound } from '../not-found'
import { flagInProject } from '../flags/flag-rules'
import { actorOf, type Caller } from '../tokens/permissions'
import { applyChange, checkPayload, under, versionOf, type ChangeWriters } from './change-requests.changes'
import {
  CHANGE_REQUEST_SEQUENCE_KEY,
  OPEN_STATES,
  settingKey,
  type ChangeAction,
  type ChangeRecord,
  type ChangeRequestRecord,
  type PersonRef,
} from './change-requests.records'
import { changeState, editRequest, requireApprovals, type StateInput } from './change-requests.states'
import { applyingAs } from './change-requests.rule'
import { requestView, type ChangeRequestView } from './change-requests.view'

export interface ChangeInput {
  feature?: string | null
  action: ChangeAction
  payload: unknown
}

export const personOf = (caller: Caller): PersonRef => ({ id: caller.userId, username: caller.tokenName })

export function requireProjectEnvironment(reader: StateReader, project: string, environment: string): void {
  const record = reader.get('projects', project)
  if (!record) throw projectNotFound(project)
  if (!record.environments.includes(environment))
    throw new NotFoundError(`Environment "${environment}" is not connected to project "${project}"`)
}

export function requestIn(reader: StateReader, project: string, id: number | string): ChangeRequestRecord {
  if (!reader.get('projects', project)) throw projectNotFound(project)
  const request = reader.get('changeRequests', String(Number(id)))
  if (!request || request.project !== project)
    throw new NotFoundError(`Could not find change request ${id} in project "${project}"`)
  return request
}

export function requireAuthor(request: ChangeRequestRecord, caller: Caller, what: string): void {
  if (request.createdBy.id !== caller.userId)
    throw new NoAccessError(`Only the author of change request ${request.id} may ${what}`, 'UPDATE_FEATURE_ENVIRONMENT')
}

export class ChangeRequestsService {
  constructor(
    private readonly store: Pick<Store, 'reader' | 'transact' | 'state'>,
    private readonly writers: ChangeWriters,
  ) {}

  /** getChangeRequestConfig: every environment of the project with its setting. */
  config(project: string) {
    const reader = this.store.reader
    const record = reader.get('projects', project)
    if (!record) throw projectNotFound(project)
    return record.environments.map(environment => {
      const setting = reader.get('changeRequestSettings', settingKey(project, environment))
      return {
        environment,
        type: reader.get('environments', environment)?.type ?? 'unknown',
        changeRequestEnabled: setting?.enabled ?? false,
        requiredApprovals: setting?.requiredApprovals ?? 1,
      }
    })
  }

  async configure(
    project: string,
    environment: string,
    input: { changeRequestsEnabled: boolean; requiredApprovals?: number },
    caller: Caller,
  ): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      requireProjectEnvironment(tx, project, environment)
      const key = settingKey(project, environment)
      const before = tx.get('changeRequestSettings', key)
      const setting = {
        project,
        environment,
        enabled: input.changeRequestsEnabled,
        requiredApprovals: input.requiredApprovals ?? before?.requiredApprovals ?? 1,
      }
      if (before && JSON.stringify(before) === JSON.stringify(setting)) return
      tx.put('changeRequestSettings', key, setting)
      tx.appendEvent(events.changeRequestConfigured(project, environment, setting, before ?? null))
      // Open requests are held to the setting as it is now, not as it was when they went to review.
      requireApprovals(tx, project, environment, setting.requiredApprovals)
    })
  }

  get(project: string, id: string): ChangeRequestView {
    return requestView(this.store.reader, requestIn(this.store.reader, project, id))
  }

  private views(filter: (request: ChangeRequestRecord) => boolean): ChangeRequestView[] {
    const reader = this.store.reader
    return reader
      .values('changeRequests')
      .filter(filter)
      .sort((a, b) => a.id - b.id)
      .map(request => requestView(reader, request))
  }

  /** The open requests of a project. */
  open(project: string): ChangeRequestView[] {
    if (!this.store.reader.get('projects', project)) throw projectNotFound(project)
    return this.views(request => request.project === project && OPEN_STATES.includes(request.state))
  }

  /** The open requests of a project that touch a flag. */
  pending(project: string, feature: string): ChangeRequestView[] {
    flagInProject(this.store.reader, project, feature)
    return this.open(project).filter(view => view.features.some(f => f.name === feature))
  }

  /** searchChangeRequests: by state, by author (id or username), and open requests a person may approve. */
  search(filter: { state?: string; createdBy?: string; requiresApprovalBy?: string }, caller: Caller) {
    const named = (ref: PersonRef, who: string) => String(ref.id) === who || ref.username === who
    const visible = (project: string) => caller.projects.includes('*') || caller.projects.includes(project)
    return this.views(
      request =>
        visible(request.project) &&
        (filter.state === undefined || request.state === filter.state) &&
        (filter.createdBy === undefined || named(request.createdBy, filter.createdBy)) &&
        (filter.requiresApprovalBy === undefined ||
          (request.state === 'In review' &&
            !named(request.createdBy, filter.requiresApprovalBy) &&
            !request.approvals.some(a => named(a.createdBy, filter.requiresApprovalBy!)))),
    )
  }

  /**
   * Checks a change as its direct route would: its payload against the route's body schema, then
   * the route's own write run on the current state in a transaction that is never committed.
   */
  private check(tx: Tx, project: string, environment: string, change: ChangeInput, at: string): string {
    checkPayload(change.action, change.payload, `${at}/payload`)
    const feature = change.action === 'updateSegment' ? null : (change.feature ?? '')
    if (feature === '') throw ValidationError.at(`${at}/feature`, `A ${change.action} change names its flag in feature`)
    const target = { project, environment, feature, action: change.action, payload: change.payload }
    try {
      applyChange(new Tx(this.store.state as StateDoc, tx.actor, tx.now), this.writers, target)
    } catch (error) {
      throw under(error, `${at}/payload`)
    }
    return versionOf(tx, target)
  }

  /** Adds changes to the caller's draft for the environment, made if there is none; answers the request. */
  async add(project: string, environment: string, input: ChangeInput[], caller: Caller): Promise<ChangeRequestView> {
    if (input.length === 0) throw ValidationError.at(undefined, 'Send at least one change')
    const me = personOf(caller)
    const request = await this.store.transact(actorOf(caller), tx => {
      requireProjectEnvironment(tx, project, environment)
      let draft = tx
        .values('changeRequests')
        .find(
          r =>
            r.state === 'Draft' && r.project === project && r.environment === environment && r.createdBy.id === me.id,
        )
      if (!draft) {
        const id = tx.nextId('changeRequestSequence', CHANGE_REQUEST_SEQUENCE_KEY)
        draft = {
          id,
          title: `Change request #${id}`,
          project,
          environment,
          state: 'Draft',
          minApprovals: tx.get('changeRequestSettings', settingKey(project, environment))?.requiredApprovals ?? 1,
          createdBy: me,
          createdAt: tx.now,
          changes: [],
          nextChangeId: 1,
          approvals: [],
          rejections: [],
          comments: [],
          schedule: null,
        }
        tx.appendEvent(events.changeRequest('created', project, environment, { changeRequestId: id }))
      }
      const added: ChangeRecord[] = input.map((change, index) => {
        const at = input.length === 1 ? '' : `/${index}`
        const version = this.check(tx, project, environment, change, at)
        return {
          id: draft.nextChangeId + index,
          feature: change.action === 'updateSegment' ? null : change.feature!,
          action: change.action,
          payload: change.payload,
          createdBy: me,
          createdAt: tx.now,
          version,
        }
      })
      const updated = {
        ...draft,
        changes: [...draft.changes, ...added],
        nextChangeId: draft.nextChangeId + added.length,
      }
      tx.put('changeRequests', String(updated.id), updated)
      for (const change of added)
        tx.appendEvent(
          events.changeRequest('added', project, environment, {
            changeRequestId: updated.id,
            changeId: change.id,
            feature: change.feature,
            action: change.action,
          }),
        )
      return updated
    })
    return requestView(this.store.reader, request)
  }

  /** Replaces a change's payload (and refreshes its version); an approved or scheduled request goes back to review. */
  async editChange(project: string, id: string, changeId: number, payload: unknown, caller: Caller) {
    await this.store.transact(actorOf(caller), tx => {
      const request = requestIn(tx, project, id)
      requireAuthor(request, caller, 'edit its changes')
      const change = request.changes.find(c => c.id === changeId)
      if (!change) throw new NotFoundError(`Change request ${id} has no change ${changeId}`)
      const version = this.check(tx, project, request.environment, { ...change, payload }, '')
      const changes = request.changes.map(c => (c.id === changeId ? { ...c, payload, version, createdAt: tx.now } : c))
      editRequest(tx, request, changes, { changeId, edited: true })
    })
    return this.get(project, id)
  }

  async deleteChange(project: string, id: string, changeId: number, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const request = requestIn(tx, project, id)
      requireAuthor(request, caller, 'remove its changes')
      if (!request.changes.some(c => c.id === changeId))
        throw new NotFoundError(`Change request ${id} has no change ${changeId}`)
      editRequest(
        tx,
        request,
        request.changes.filter(c => c.id !== changeId),
        { changeId, removed: true },
      )
    })
  }

  /** Discards a draft for good. */
  async discard(project: string, id: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const request = requestIn(tx, project, id)
      requireAuthor(request, caller, 'discard it')
      if (request.state !== 'Draft')
        throw ValidationError.at(
          undefined,
          `Change request ${id} is ${request.state}: only a draft is discarded; cancel it instead`,
        )
      tx.delete('changeRequests', String(request.id))
      tx.appendEvent(events.changeRequest('discarded', project, request.environment, { changeRequestId: request.id }))
    })
  }

  async setTitle(project: string, id: string, title: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const request = requestIn(tx, project, id)
      requireAuthor(request, caller, 'change its title')
      if (!OPEN_STATES.includes(request.state))
        throw ValidationError.at(undefined, `Change request ${id} is ${request.state} and can no longer change`)
      if (request.title === title) return
      tx.put('changeRequests', String(request.id), { ...request, title })
      tx.appendEvent(
        events.changeRequest('title-updated', project, request.environment, { changeRequestId: request.id, title }),
      )
    })
  }

  async comment(project: string, id: string, text: string, caller: Caller): Promise<ChangeRequestView> {
    await this.store.transact(actorOf(caller), tx => {
      const request = requestIn(tx, project, id)
      const commentId = Math.max(0, ...request.comments.map(c => c.id)) + 1
      const comment = { id: commentId, text, createdBy: personOf(caller), createdAt: tx.now }
      tx.put('changeRequests', String(request.id), { ...request, comments: [...request.comments, comment] })
      tx.appendEvent(
        events.changeRequest('comment-added', project, request.environment, {
          changeRequestId: request.id,
          commentId,
          text,
        }),
      )
    })
    return this.get(project, id)
  }

  /** PUT …/state: a step of the request's life (change-requests.states.ts); applying is one write of all its changes. */
  async setState(project: string, id: string, input: StateInput, caller: Caller): Promise<ChangeRequestView> {
    await this.store.transact(applyingAs(actorOf(caller), Number(id)), tx =>
      changeState(tx, requestIn(tx, project, id), input, personOf(caller), this.writers),
    )
    return this.get(project, id)
  }
}
