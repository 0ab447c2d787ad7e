/**
 * The playground: a context (a field per defined context field, labelled with its name, and free
 * properties), environments and projects; "Evaluate" asks `POST /api/admin/playground/advanced`
 * and shows every flag's answer, each with its explanation a click away (playground-explain.tsx).
 * A context can be kept in this browser (localStorage) and shared as a link: the context is in the
 * route (`#/playground/<context as JSON>`), so the link opens the page filled in.
 */
import { useState } from 'preact/hooks'
import { call, get, type Project } from './api'
import { Flag as FlagIcon, Play } from 'lucide'
import { Button, EmptyState, ErrorLine, Picker, useLoad } from './ui'
import { useContextFields } from './constraints'
import { Explanation, type PlaygroundResult } from './playground-explain'
import './pages.css'

/** Fields the context holds at its top level; every other field goes in `properties`. */
const STANDARD = ['appName', 'userId', 'sessionId', 'remoteAddress', 'currentTime']
const KEPT = 'flagstore-playground'

export interface PlaygroundInput {
  environments: string[]
  projects: '*' | string[]
  context: Record<string, string>
  properties: { name: string; value: string }[]
}

interface AdvancedAnswer {
  features: { name: string; projectId: string; environments: Record<string, PlaygroundResult[]> }[]
  warnings?: { invalidContextProperties?: string[] }
}

function initial(shared: string | undefined): PlaygroundInput {
  const empty: PlaygroundInput = { environments: [], projects: '*', context: {}, properties: [] }
  for (const text of [shared, localStorage.getItem(KEPT)]) {
    if (!text) continue
    try {
      return { ...empty, ...(JSON.parse(text) as Partial<PlaygroundInput>) }
    } catch {
      // A link cut short or an old entry: start from what comes next.
    }
  }
  return empty
}

/** The request's context: standard fields at the top, the rest and the free properties in `properties`. */
export function contextOf(input: PlaygroundInput): Record<string, unknown> {
  const context: Record<string, unknown> = {}
  const properties: Record<string, string> = {}
  for (const [name, value] of Object.entries(input.context)) {
    if (value === '') continue
    if (STANDARD.includes(name)) context[name] = value
    else properties[name] = value
  }
  for (const { name, value } of input.properties) if (name.trim()) properties[name.trim()] = value
  return { ...context, properties }
}

export function PlaygroundPage({ shared }: { shared?: string }) {
  const [input, setInput] = useState(() => initial(shared))
  const [answer, setAnswer] = useState<AdvancedAnswer | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')
  const [open, setOpen] = useState<Set<string>>(new Set())
  const [filter, setFilter] = useState('')
  const fields = useContextFields().filter(field => field.name !== 'environment')
  if (!fields.some(field => field.name === 'remoteAddress'))
    fields.push({ name: 'remoteAddress', stickiness: false, legalValues: [] })
  const environments = useLoad(() => get<{ environments: { name: string }[] }>('/api/admin/environments'), [])
  const projects = useLoad(() => get<{ projects: Project[] }>('/api/admin/projects'), [])
  const chosenEnvironments =
    input.environments.length > 0
      ? input.environments
      : (environments.data?.environments ?? []).slice(0, 1).map(e => e.name)
  const evaluate = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    try {
      setAnswer(
        await call<AdvancedAnswer>('POST', '/api/admin/playground/advanced', {
          environments: chosenEnvironments,
          projects: input.projects,
          context: contextOf(input),
        }),
      )
      setError(null)
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const link = `#/playground/${encodeURIComponent(JSON.stringify({ ...input, environments: chosenEnvironments }))}`
  const toggle = (key: string) => {
    const next = new Set(open)
    if (next.has(key)) next.delete(key)
    else next.add(key)
    setOpen(next)
  }
  const setField = (name: string, value: string) => setInput({ ...input, context: { ...input.context, [name]: value } })
  const setProperty = (index: number, next: Partial<{ name: string; value: string }>) =>
    setInput({ ...input, properties: input.properties.map((p, at) => (at === index ? { ...p, ...next } : p)) })
  const flags = (answer?.features ?? []).filter(flag => flag.name.toLowerCase().includes(filter.toLowerCase()))
  return (
    <main class="playground">
      <h1>Playground</h1>
      <p class="muted">
        Evaluate every flag for a context, as the SDKs would, and see why each is on or off. Nothing is changed.
      </p>
      <form onSubmit={evaluate} aria-label="Context to evaluate">
        <fieldset class="choice-group">
          <legend>Environments</legend>
          {environments.data?.environments.map(environment => (
            <label class="check" key={environment.name}>
              <input
                type="checkbox"
                checked={chosenEnvironments.includes(environment.name)}
                onChange={e =>
                  setInput({
                    ...input,
                    environments: e.currentTarget.checked
                      ? [...chosenEnvironments, environment.name]
                      : chosenEnvironments.filter(name => name !== environment.name),
                  })
                }
              />{' '}
              {environment.name}
            </label>
          ))}
        </fieldset>
        <fieldset class="choice-group">
          <legend>Projects</legend>
          <label class="check">
            <input
              type="checkbox"
              checked={input.projects === '*'}
              onChange={e => setInput({ ...input, projects: e.currentTarget.checked ? '*' : [] })}
            />{' '}
            All projects
          </label>
          {input.projects !== '*' &&
            projects.data?.projects.map(project => (
              <label class="check" key={project.id}>
                <input
                  type="checkbox"
                  checked={(input.projects as string[]).includes(project.id)}
                  onChange={e => {
                    const chosen = input.projects as string[]
                    setInput({
                      ...input,
                      projects: e.currentTarget.checked
                        ? [...chosen, project.id]
                        : chosen.filter(id => id !== project.id),
                    })
                  }}
                />{' '}
                {project.name}
              </label>
            ))}
        </fieldset>
        <fieldset class="context-fields">
          <legend>Context</legend>
          {fields.map(field => (
            <Picker
              key={field.name}
              free
              label={field.name}
              value={input.context[field.name] ?? ''}
              options={field.legalValues.map(entry => ({ value: entry.value, label: entry.description }))}
              placeholder={field.name === 'currentTime' ? '2026-01-31T12:00:00Z (default: now)' : undefined}
              onChange={value => setField(field.name, value)}
            />
          ))}
          {input.properties.map((property, index) => (
            <div class="property" key={index}>
              <label>
                Name of property {index + 1}
                <input value={property.name} onInput={e => setProperty(index, { name: e.currentTarget.value })} />
              </label>
              <label>
                Value of property {index + 1}
                <input value={property.value} onInput={e => setProperty(index, { value: e.currentTarget.value })} />
              </label>
              <button
                type="button"
                onClick={() => setInput({ ...input, properties: input.properties.filter((_, at) => at !== index) })}
              >
                Remove property {index + 1}
              </button>
            </div>
          ))}
          <button
            type="button"
            onClick={() => setInput({ ...input, properties: [...input.properties, { name: '', value: '' }] })}
          >
            Add property
          </button>
        </fieldset>
        <div class="actions">
          <Button type="submit" variant="primary" icon={Play} disabled={busy || chosenEnvironments.length === 0}>
            Evaluate
          </Button>
          <button
            type="button"
            onClick={() => (
              localStorage.setItem(KEPT, JSON.stringify(input)), setNotice('Context kept in this browser.')
            )}
          >
            Keep context
          </button>
          <button
            type="button"
            onClick={() => {
              location.hash = link
              const url = location.href
              navigator.clipboard?.writeText(url).then(
                () => setNotice('Link copied: it opens this page with this context.'),
                () => setNotice(`Link: ${url}`),
              )
            }}
          >
            Copy link
          </button>
          <span role="status">{notice}</span>
        </div>
        <ErrorLine error={error} />
      </form>
      {answer && (
        <section aria-label="Results" class="results">
          <h2>Results</h2>
          {(answer.warnings?.invalidContextProperties ?? []).length > 0 && (
            <p class="field-problem">
              Not valid context properties, left out: {answer.warnings!.invalidContextProperties!.join(', ')}
            </p>
          )}
          <label>
            Filter results
            <input type="search" value={filter} onInput={e => setFilter(e.currentTarget.value)} />
          </label>
          <p class="muted">
            {flags.length} of {answer.features.length} flags
          </p>
          {answer.features.length === 0 && (
            <EmptyState icon={FlagIcon} title="No flag in the chosen projects">
              Choose more projects, or create a flag first.
            </EmptyState>
          )}
          <ul class="result-list">
            {flags.map(flag => (
              <li key={flag.name} class="result">
                <h3>
                  {flag.name} <span class="muted">in {flag.projectId}</span>
                </h3>
                {Object.entries(flag.environments).flatMap(([environment, results]) =>
                  results.map((result, index) => {
                    const key = `${flag.name}\n${environment}\n${index}`
                    const label = `${flag.name} in ${environment}${results.length > 1 ? ` (${index + 1})` : ''}`
                    return (
                      <div key={key} class="result-env">
                        <p>
                          <span class={`state ${result.isEnabled ? 'on' : 'off'}`}>
                            {result.isEnabled ? 'On' : 'Off'}
                          </span>{' '}
                          in {environment}
                          {result.variant && result.variant.name !== 'disabled'
                            ? ` · variant ${result.variant.name}`
                            : ''}{' '}
                          <Button size="sm" variant="ghost" aria-expanded={open.has(key)} onClick={() => toggle(key)}>
                            {open.has(key) ? 'Hide why' : 'Explain'} <span class="visually-hidden">{label}</span>
                          </Button>
                        </p>
                        {open.has(key) && <Explanation result={result} environment={environment} />}
                      </div>
                    )
                  }),
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
    </main>
  )
}
