/**
 * Change requests: the open ones (a page), one request (its changes against the flag as it is now,
 * approvals, comments, the conflict warning, and the steps its reader may take), and what a flag's
 * environment under change requests shows (the setting, the pending requests touching it).
 */
import { useState } from 'preact/hooks'
import { call, enc, get, type Flag } from './api'
import { Button, EmptyState, ErrorLine, TextField, useAct, useLoad } from './ui'
import { GitPullRequestArrow } from 'lucide'
import { changeView } from './change-diff'
import { FieldDiff } from './events'

interface Change {
  id: number
  action: string
  payload: unknown
}
export interface ChangeRequest {
  id: number
  title: string
  project: string
  environment: string
  state: string
  minApprovals: number
  createdBy: { username: string }
  features: { name: string; changes: Change[]; conflict?: string }[]
  approvals: { createdBy: { username: string } }[]
  comments: { id: number; text: string; createdBy: { username: string } }[]
  schedule?: { scheduledAt: string; status: string; failureReason?: string }
}

const OPEN = ['Draft', 'In review', 'Approved', 'Scheduled']
export const requestLink = (request: Pick<ChangeRequest, 'project' | 'id'>) =>
  `#/change-requests/${enc(request.project)}/${request.id}`

export function ChangeRequestsPage() {
  const list = useLoad(() => get<ChangeRequest[]>('/api/admin/search/change-requests'), [])
  const open = (list.data ?? []).filter(request => OPEN.includes(request.state))
  return (
    <section aria-labelledby="change-requests-title">
      <h1 id="change-requests-title">Change requests</h1>
      <ErrorLine error={list.error} />
      {list.data && open.length === 0 && <EmptyState icon={GitPullRequestArrow} title="No open change requests" />}
      <ul class="change-requests">
        {open.map(request => (
          <li key={request.id}>
            <a href={requestLink(request)}>
              #{request.id} {request.title}
            </a>{' '}
            <span class="muted">
              {request.project} · {request.environment} · {request.state} · by {request.createdBy.username}
            </span>
          </li>
        ))}
      </ul>
    </section>
  )
}

/** What a change does, as a field-by-field diff against the flag as it is now. */
function ChangeDiff({ change, flag, environment }: { change: Change; flag?: Flag; environment: string }) {
  const view = changeView(change.action, change.payload, flag, environment)
  return (
    <>
      <h3>{view.summary}</h3>
      <FieldDiff before={view.before} after={view.after} label={`${view.summary} (change ${change.id})`} />
    </>
  )
}

function FeatureChanges({ request, name, changes }: { request: ChangeRequest; name: string; changes: Change[] }) {
  const flag = useLoad(() => get<Flag>(`/api/admin/projects/${enc(request.project)}/features/${enc(name)}`), [name])
  return (
    <ul aria-label={`Changes to ${name}`}>
      {changes.map(change => (
        <li key={change.id}>
          <ChangeDiff change={change} flag={flag.data} environment={request.environment} />
        </li>
      ))}
    </ul>
  )
}

/** This minute in the browser's time zone, as a datetime-local input writes it. */
const localNow = () => {
  const now = new Date()
  return new Date(now.getTime() - now.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

export function ChangeRequestPage({ project, id }: { project: string; id: string }) {
  const path = `/api/admin/projects/${enc(project)}/change-requests/${enc(id)}`
  const loaded = useLoad(() => get<ChangeRequest>(path), [path])
  const { error, act } = useAct(loaded.reload)
  const [comment, setComment] = useState('')
  const [when, setWhen] = useState('')
  const [whenError, setWhenError] = useState<string | null>(null)
  const request = loaded.data
  if (!request) return <ErrorLine error={loaded.error} />
  const step = (body: Record<string, unknown>) => act(() => call('PUT', `${path}/state`, body))
  const conflicts = request.features.filter(feature => feature.conflict)
  const schedule = () => {
    const at = new Date(when)
    if (!when || Number.isNaN(at.getTime())) return setWhenError('Pick the date and time to apply it at.')
    if (at.getTime() <= Date.now()) return setWhenError(`${at.toLocaleString()} has passed: pick a time to come.`)
    setWhenError(null)
    return step({ state: 'Scheduled', scheduledAt: at.toISOString() })
  }
  return (
    <section aria-labelledby="change-request-title">
      <h1 id="change-request-title">
        #{request.id} {request.title}
      </h1>
      <p>
        {request.state} · {request.project} · {request.environment} · by {request.createdBy.username} ·{' '}
        {request.approvals.length} of {request.minApprovals} approvals
        {request.schedule && ` · scheduled for ${request.schedule.scheduledAt} (${request.schedule.status})`}
      </p>
      {conflicts.length > 0 && (
        <p role="alert" class="error">
          Conflict: {conflicts.map(feature => `${feature.name}: ${feature.conflict}`).join('; ')}
        </p>
      )}
      {request.features.map(feature => (
        <section key={feature.name} aria-label={`Flag ${feature.name}`}>
          <h2>{feature.name}</h2>
          <FeatureChanges request={request} name={feature.name} changes={feature.changes} />
        </section>
      ))}
      <h2>Approvals</h2>
      <ul aria-label="Approvals">
        {request.approvals.map(approval => (
          <li key={approval.createdBy.username}>{approval.createdBy.username}</li>
        ))}
      </ul>
      <h2>Comments</h2>
      <ul aria-label="Comments">
        {request.comments.map(entry => (
          <li key={entry.id}>
            <strong>{entry.createdBy.username}</strong>: {entry.text}
          </li>
        ))}
      </ul>
      <label>
        Comment <textarea value={comment} onInput={e => setComment(e.currentTarget.value)} />
      </label>
      <div class="actions">
        <Button onClick={() => act(() => call('POST', `${path}/comments`, { text: comment }))}>Add comment</Button>
        {request.state === 'Draft' && <Button onClick={() => step({ state: 'In review' })}>Send to review</Button>}
        {request.state === 'In review' && <Button onClick={() => step({ state: 'Approved' })}>Approve</Button>}
        {OPEN.includes(request.state) && <Button onClick={() => step({ state: 'Rejected', comment })}>Reject</Button>}
        {request.state === 'Approved' && <Button onClick={() => step({ state: 'Applied' })}>Apply</Button>}
      </div>
      {request.state === 'Approved' && (
        <div class="actions">
          <TextField
            label="Apply at"
            type="datetime-local"
            value={when}
            onValue={setWhen}
            min={localNow()}
            error={whenError}
          />
          <Button onClick={schedule}>Schedule</Button>
        </div>
      )}
      <ErrorLine error={error} />
    </section>
  )
}

/** For a flag's environment: whether it is under change requests, and the open requests touching the flag there. */
export function useEnvironmentRequests(flag: Flag) {
  const base = `/api/admin/projects/${enc(flag.project)}/change-requests`
  const config = useLoad(() => get<{ environment: string; changeRequestEnabled: boolean }[]>(`${base}/config`), [base])
  const pending = useLoad(() => get<ChangeRequest[]>(`${base}/pending/${enc(flag.name)}`), [base, flag])
  return {
    under: (environment: string) =>
      config.data?.some(entry => entry.environment === environment && entry.changeRequestEnabled) ?? false,
    pending: (environment: string) => (pending.data ?? []).filter(request => request.environment === environment),
    reload: pending.reload,
  }
}

/** Adds a change to the caller's draft for the flag's environment. */
export const addToChangeRequest = (flag: Flag, environment: string, action: string, payload: unknown) =>
  call<ChangeRequest>(
    'POST',
    `/api/admin/projects/${enc(flag.project)}/environments/${enc(environment)}/change-requests`,
    { feature: flag.name, action, payload },
  )
