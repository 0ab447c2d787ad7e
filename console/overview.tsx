/**
 * A project's overview: its flags by lifecycle stage, the stale and potentially stale ones (older
 * than their type's expected lifetime), its recent changes from the event log, and the SDK
 * applications seen with its flags. Read from the public API without the project's flag list: its
 * status (counts with the first names), the event search and the applications.
 */
import { enc, get, type EventItem } from './api'
import { Flag as FlagIcon, Plug } from 'lucide'
import { EmptyState, ErrorLine, useLoad } from './ui'
import { EventEntry } from './events'
import './pages.css'

const STAGES = [
  ['initial', 'Initial'],
  ['preLive', 'Pre-live'],
  ['live', 'Live'],
  ['completed', 'Completed'],
] as const

interface Names {
  total: number
  flags: string[]
}
interface ProjectStatus {
  lifecycleSummary: Record<(typeof STAGES)[number][0], { currentFlags: number; flags: string[] }>
  staleFlags: Names
  potentiallyStaleFlags: Names
}

interface Application {
  appName: string
  sdkVersion?: string
  usage: { project: string; environments: string[] }[]
}

/** The first names of a group, each a link to its flag, and how many more there are. */
function FlagLinks({ project, names, total, none }: { project: string; names: string[]; total: number; none: string }) {
  if (total === 0) return <p class="muted">{none}</p>
  return (
    <ul class="flag-links">
      {names.map(name => (
        <li key={name}>
          <a href={`#/projects/${enc(project)}/features/${enc(name)}`}>{name}</a>
        </li>
      ))}
      {total > names.length && <li class="muted">and {total - names.length} more</li>}
    </ul>
  )
}

export function ProjectOverview({ project }: { project: string }) {
  const status = useLoad(() => get<ProjectStatus>(`/api/admin/projects/${enc(project)}/status`), [project])
  const events = useLoad(
    () => get<{ events: EventItem[] }>(`/api/admin/search/events?project=${enc(`IS:${project}`)}&limit=10`),
    [project],
  )
  const apps = useLoad(() => get<{ applications: Application[] }>('/api/admin/metrics/applications'), [])
  const summary = status.data?.lifecycleSummary
  const total = summary ? STAGES.reduce((sum, [stage]) => sum + summary[stage].currentFlags, 0) : null
  const seen = (apps.data?.applications ?? []).filter(app =>
    app.usage.some(usage => usage.project === project || usage.project === '*'),
  )
  return (
    <main class="overview">
      <p>
        <a href={`#/projects/${enc(project)}`}>← Flags of {project}</a>
      </p>
      <h1>Overview of {project}</h1>
      <ErrorLine error={status.error ?? events.error ?? apps.error} />
      <div class="overview-grid">
        <section aria-label="Flags by lifecycle stage" class="card">
          <h2>Flags by lifecycle stage</h2>
          {total === 0 && (
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
                <dd>{summary?.[stage].currentFlags ?? ''}</dd>
              </div>
            ))}
          </dl>
          {STAGES.map(([stage, name]) => {
            const inStage = summary?.[stage]
            return !inStage || inStage.currentFlags === 0 ? null : (
              <details key={stage}>
                <summary>
                  {name}: {inStage.currentFlags}
                </summary>
                <FlagLinks project={project} names={inStage.flags} total={inStage.currentFlags} none="" />
              </details>
            )
          })}
        </section>
        <section aria-label="Stale flags" class="card">
          <h2>Stale flags</h2>
          <FlagLinks
            project={project}
            names={status.data?.staleFlags.flags ?? []}
            total={status.data?.staleFlags.total ?? 0}
            none="No flag is marked stale."
          />
          <h3>Potentially stale</h3>
          <FlagLinks
            project={project}
            names={status.data?.potentiallyStaleFlags.flags ?? []}
            total={status.data?.potentiallyStaleFlags.total ?? 0}
            none="No flag has outlived its type's expected lifetime."
          />
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
