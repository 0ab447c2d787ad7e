/** A change request as the API shows it (Unleash's shape), with each flag's conflict as of now. */
import type { StateReader } from '../../storage/store'
import { versionOf } from './change-requests.changes'
import { OPEN_STATES, type ChangeRecord, type ChangeRequestRecord } from './change-requests.records'

export function changeView(change: ChangeRecord) {
  return {
    id: change.id,
    action: change.action,
    payload: change.payload,
    createdBy: change.createdBy,
    createdAt: change.createdAt,
  }
}

/** The changes whose version moved since they were added (none once the request is closed). */
export function conflicts(reader: StateReader, request: ChangeRequestRecord): ChangeRecord[] {
  if (!OPEN_STATES.includes(request.state)) return []
  const { project, environment } = request
  return request.changes.filter(change => versionOf(reader, { project, environment, ...change }) !== change.version)
}

const conflictText = (changes: ChangeRecord[]) =>
  `Changed since this request was made (${changes.map(c => c.action).join(', ')}); the author can refresh the change`

export function requestView(reader: StateReader, request: ChangeRequestRecord) {
  const conflicting = conflicts(reader, request)
  const features = new Map<string, ChangeRecord[]>()
  const segments = new Map<number, ChangeRecord[]>()
  for (const change of request.changes) {
    if (change.feature === null) {
      const id = (change.payload as { id: number }).id
      segments.set(id, [...(segments.get(id) ?? []), change])
    } else features.set(change.feature, [...(features.get(change.feature) ?? []), change])
  }
  const conflictOf = (changes: ChangeRecord[]) => {
    const moved = changes.filter(change => conflicting.includes(change))
    return moved.length > 0 ? { conflict: conflictText(moved) } : {}
  }
  return {
    id: request.id,
    title: request.title,
    project: request.project,
    environment: request.environment,
    state: request.state,
    minApprovals: request.minApprovals,
    createdBy: request.createdBy,
    createdAt: request.createdAt,
    features: [...features].map(([name, changes]) => ({
      name,
      changes: changes.map(changeView),
      ...conflictOf(changes),
    })),
    segments: [...segments].map(([id, changes]) => ({
      id,
      name: reader.get('segments', String(id))?.name ?? String(id),
      changes: changes.map(changeView),
      ...conflictOf(changes),
    })),
    approvals: request.approvals,
    rejections: request.rejections,
    comments: request.comments,
    ...(request.schedule
      ? {
          schedule: {
            scheduledAt: request.schedule.scheduledAt,
            status: request.schedule.status,
            ...(request.schedule.failureReason ? { failureReason: request.schedule.failureReason } : {}),
          },
        }
      : {}),
  }
}

export type ChangeRequestView = ReturnType<typeof requestView>
