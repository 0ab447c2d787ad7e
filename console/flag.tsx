/**
 * A flag's page: its metadata and lifecycle stage, and per environment its switch, strategies,
 * variants and usage (flag-environment.tsx); its tags, dependencies and history (flag-extras.tsx);
 * archive and revive; a button copies its name, for code.
 */
import { useState } from 'preact/hooks'
import { call, enc, get, type Flag, type Segment } from './api'
import { Copy } from 'lucide'
import { Button, ErrorLine, go, toast, useLoad, when } from './ui'
import { FlagUsage } from './config'
import { EnvironmentPanel } from './flag-environment'
import { Dependencies, History, Tags } from './flag-extras'
import { useUsage } from './usage'
import './pages.css'

const STAGES = [
  ['initial', 'Initial', 'defined, no metrics yet'],
  ['pre-live', 'Pre-live', 'seen by an SDK outside production'],
  ['live', 'Live', 'on and seen in production'],
  ['completed', 'Completed', 'marked done, ready to clean up'],
  ['archived', 'Archived', 'out of every SDK answer'],
] as const

interface StageEntry {
  stage: string
  enteredStageAt: string
  status?: 'kept' | 'discarded'
}

/**
 * The stages as a row of steps, the flag's current one marked, each reached one with when it was
 * entered (GET …/lifecycle); `stage` and `since` (from the flag) reload it when they change.
 */
export function Lifecycle({
  project,
  name,
  stage,
  since,
}: {
  project: string
  name: string
  stage: string
  since: string | null
}) {
  const { data: entries, error } = useLoad(
    () => get<StageEntry[]>(`/api/admin/projects/${enc(project)}/features/${enc(name)}/lifecycle`),
    [project, name, stage, since],
  )
  const at = STAGES.findIndex(([id]) => id === stage)
  return (
    <section aria-label="Lifecycle" class="lifecycle">
      <h2>Lifecycle</h2>
      <p>
        Stage <strong>{STAGES[at]?.[1] ?? stage}</strong> since {when(since)}
      </p>
      <ErrorLine error={error} />
      <ol class="stages" aria-label="Stage history">
        {STAGES.map(([id, label, meaning], index) => {
          const entry = entries?.find(candidate => candidate.stage === id)
          return (
            <li
              key={id}
              class={index < at ? 'done' : index === at ? 'current' : 'ahead'}
              aria-current={index === at ? 'step' : undefined}
            >
              <span class="stage-name">{label}</span>
              <span class="stage-when">
                {entry ? (
                  <>
                    entered <time dateTime={entry.enteredStageAt}>{when(entry.enteredStageAt)}</time>
                    {entry.status && ` · ${entry.status}`}
                  </>
                ) : (
                  'not reached'
                )}
              </span>
              <span class="stage-meaning">{meaning}</span>
            </li>
          )
        })}
      </ol>
    </section>
  )
}

export function FlagPage({ project, name, canWrite }: { project: string; name: string; canWrite: boolean }) {
  const path = `/api/admin/projects/${enc(project)}/features/${enc(name)}`
  const { data: flag, error, reload } = useLoad(() => get<Flag>(path), [project, name])
  const [description, setDescription] = useState<string | null>(null)
  const [metaError, setMetaError] = useState<unknown>(null)
  const flagTypes = useLoad(() => get<{ types: { id: string; name: string }[] }>('/api/admin/feature-types'), [])
  const segments = useLoad(() => get<{ segments: Segment[] }>('/api/admin/segments'), [])
  const usage = useUsage(name)
  if (!flag)
    return (
      <main>
        <h1>{name}</h1>
        <ErrorLine error={error} />
      </main>
    )
  const patch = async (operations: unknown[]) => {
    try {
      await call('PATCH', path, operations)
      setMetaError(null)
      reload()
    } catch (failure) {
      setMetaError(failure)
    }
  }
  const revive = async () => {
    try {
      await call('POST', `/api/admin/projects/${enc(project)}/revive`, { features: [flag.name] })
      setMetaError(null)
      reload()
    } catch (failure) {
      setMetaError(failure)
    }
  }
  // An archived flag is read-only until revived: the API refuses changes to it.
  const editable = canWrite && !flag.archived
  const archive = async () => {
    try {
      await call('DELETE', path)
      go(`/projects/${enc(project)}`)
    } catch (failure) {
      setMetaError(failure)
    }
  }
  return (
    <main>
      <p>
        <a href={`#/projects/${enc(project)}`}>← Project {project}</a>
      </p>
      <div class="title-row">
        <h1>{flag.name}</h1>
        <Button
          variant="ghost"
          size="sm"
          icon={Copy}
          aria-label={`Copy the name ${flag.name}`}
          title="Copy the name, for code"
          onClick={() =>
            navigator.clipboard.writeText(flag.name).then(
              () => toast.success(`Copied ${flag.name}.`),
              () => toast.error('The browser did not allow copying.'),
            )
          }
        />
      </div>
      {flag.archived && (
        <p class="archived" role="status">
          Archived {when(flag.archivedAt)}.{' '}
          {canWrite && (
            <button type="button" onClick={revive}>
              Revive flag
            </button>
          )}
        </p>
      )}
      <section aria-label="Metadata" class="metadata">
        <label>
          Description
          <input
            value={description ?? flag.description ?? ''}
            disabled={!editable}
            onInput={e => setDescription(e.currentTarget.value)}
          />
        </label>
        {editable && description !== null && (
          <button
            type="button"
            onClick={() =>
              patch([{ op: 'replace', path: '/description', value: description }]).then(() => setDescription(null))
            }
          >
            Save description
          </button>
        )}
        <label>
          Flag type
          <select
            value={flag.type}
            disabled={!editable}
            onChange={e => patch([{ op: 'replace', path: '/type', value: e.currentTarget.value }])}
          >
            {(flagTypes.data?.types ?? [{ id: flag.type, name: flag.type }]).map(entry => (
              <option value={entry.id} key={entry.id}>
                {entry.name}
              </option>
            ))}
          </select>
        </label>
        <p>
          Created {when(flag.createdAt)} · Last seen {when(flag.lastSeenAt)}
        </p>
        <label class="check">
          <input
            type="checkbox"
            checked={flag.stale}
            disabled={!editable}
            onChange={e => patch([{ op: 'replace', path: '/stale', value: e.currentTarget.checked }])}
          />{' '}
          Stale
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={flag.impressionData}
            disabled={!editable}
            onChange={e => patch([{ op: 'replace', path: '/impressionData', value: e.currentTarget.checked }])}
          />{' '}
          Impression data
        </label>
        {editable && (
          <button type="button" class="danger" onClick={archive}>
            Archive flag
          </button>
        )}
        <ErrorLine error={metaError} />
      </section>
      {flag.lifecycle && (
        <Lifecycle project={project} name={name} stage={flag.lifecycle.stage} since={flag.lifecycle.enteredStageAt} />
      )}
      {flag.environments.map(environment => (
        <EnvironmentPanel
          key={environment.name}
          flag={flag}
          environment={environment}
          canWrite={editable}
          reload={reload}
          segments={segments.data?.segments ?? []}
          usage={usage}
        />
      ))}
      <Tags flag={flag} canWrite={editable} reload={reload} />
      <Dependencies flag={flag} canWrite={editable} reload={reload} />
      <FlagUsage name={flag.name} />
      <History name={flag.name} />
    </main>
  )
}

/** A project's archived flags, each opening to its page, where it can be revived. */
export function ArchivedFlags({ project }: { project: string }) {
  const { data, error } = useLoad(() => get<{ features: Flag[] }>('/api/admin/archive/features'), [project])
  const flags = (data?.features ?? []).filter(flag => flag.project === project)
  return (
    <main>
      <p>
        <a href={`#/projects/${enc(project)}`}>← Project {project}</a>
      </p>
      <h1>Archived flags of {project}</h1>
      <ErrorLine error={error} />
      {data && flags.length === 0 && <p class="muted">No archived flag</p>}
      <ul class="cards">
        {flags.map(flag => (
          <li key={flag.name}>
            <a href={`#/projects/${enc(project)}/features/${enc(flag.name)}`}>{flag.name}</a>
            <span class="muted"> archived {when(flag.archivedAt)}</span>
          </li>
        ))}
      </ul>
    </main>
  )
}
