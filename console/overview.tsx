/**
 * A project's overview: its flags by lifecycle stage, the stale and potentially stale ones (older
 * than their type's expected lifetime), its recent changes from the event log, and the SDK
 * applications seen with its flags. Read from the public API: the project's flag list (one
 * request), the event search and the applications.
 */
import { enc, get, type EventItem, type Flag } from './api'
import { Flag as FlagIcon, Plug } from 'lucide'
import { EmptyState, ErrorLine, useLoad } from './ui'
import { EventEntry } from './events'
import './pages.css'

const STAGES: [string, string][] = [
  ['initial', 'Initial'],
  ['pre-live', 'Pre-live'],
  ['live', 'Live'],
  ['completed', 'Completed'],
]
const SHOWN = 20

interface Application {
  appName: string
  sdkVersion?: string
  usage: { project: string; environments: string[] }[]
}

function FlagLinks({ project, flags, none }: { project: string; flags: Flag[]; none: string }) {
  if (flags.length === 0) return <p class="muted">{none}</p>
  return (
    <ul class="flag-links">
      {flags.slice(0, SHOWN).map(flag => (
        <li key={flag.name}>
          <a href={`#/projects/${enc(project)}/features/${enc(flag.name)}`}>{flag.name}</a>
        </li>
      ))}
      {flags.length > SHOWN && <li class="muted">and {flags.length - SHOWN} more</li>}
    </ul>
  )
}

export function ProjectOverview({ project }: { project: string }) {
  const flags = useLoad(() => get<{ features: Flag[] }>(`/api/admin/projects/${enc(project)}/features`), [project])
  const events = useLoad(
    () => get<{ events: EventItem[] }>(`/api/admin/search/events?project=${enc(`IS:${project}`)}&limit=10`),
    [project],
  )
  const apps = useLoad(() => get<{ applications: Application[] }>('/api/admin/metrics/applications'), [])
  const all = flags.data?.features ?? []
  const stale = all.filter(flag => flag.stale)
  const potentially = all.filter(flag => !flag.stale && flag.potentiallyStale)
  const seen = (apps.data?.applications ?? []).filter(app =>
    app.usage.some(usage => usage.project === project || usage.project === '*'),
  )
  return (
    <main class="overview">
      <p>
        <a href={`#/projects/${enc(project)}`}>← Flags of {project}</a>
      </p>
      <h1>Overview of {project}</h1>
      <ErrorLine error={flags.error ?? events.error ?? apps.error} />
      <div class="overview-grid">
        <section aria-label="Flags by lifecycle stage" class="card">
          <h2>Flags by lifecycle stage</h2>
          {flags.data && all.length === 0 && (
            <EmptyState
              icon={FlagIcon}
              title="No flag yet"
              action={<a href={`#/projects/${enc(project)}`}>Create the first one</a>}
            />
          )}
          <dl class="stage-counts">
            {STAGES.map(([stage, name]) => (
              <div key={stage}>
                <dt>{name}</dt>
                <dd>{all.filter(flag => (flag.lifecycle?.stage ?? 'initial') === stage).length}</dd>
              </div>
            ))}
          </dl>
          {STAGES.map(([stage, name]) => {
            const inStage = all.filter(flag => (flag.lifecycle?.stage ?? 'initial') === stage)
            return inStage.length === 0 ? null : (
              <details key={stage}>
                <summary>
                  {name}: {inStage.length}
                </summary>
                <FlagLinks project={project} flags={inStage} none="" />
              </details>
            )
          })}
        </section>
        <section aria-label="Stale flags" class="card">
          <h2>Stale flags</h2>
          <FlagLinks project={project} flags={stale} none="No flag is marked stale." />
          <h3>Potentially stale</h3>
          <FlagLinks project={project} flags={potentially} none="No flag has outlived its type's expected lifetime." />
        </section>
        <section aria-label="Recent changes" class="card">
          <h2>Recent changes</h2>
          {events.data?.events.length === 0 && <p class="muted">No change recorded yet.</p>}
          <ol class="events">
            {events.data?.events.map(event => (
              <EventEntry key={event.id} event={event} where />
            ))}
          </ol>
          <a href="#/events">The whole event log</a>
        </section>
        <section aria-label="SDK applications" class="card">
          <h2>SDK applications</h2>
          {apps.data && seen.length === 0 && (
            <EmptyState icon={Plug} title="No SDK has used this project's flags yet">
              Give an application a client token for the project; it shows here once it registers or sends metrics.
            </EmptyState>
          )}
          <ul class="apps">
            {seen.map(app => (
              <li key={app.appName}>
                <strong>{app.appName}</strong> <span class="muted">{app.sdkVersion ?? ''}</span>{' '}
                {[...new Set(app.usage.flatMap(usage => usage.environments))].join(', ')}
              </li>
            ))}
          </ul>
        </section>
      </div>
    </main>
  )
}
