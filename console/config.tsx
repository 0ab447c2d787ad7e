/**
 * The configuration pages: segments, context fields, tag types and strategy types (list, create,
 * edit, delete), and applications. Each is a table with a form that creates or edits one entry;
 * errors show at the form or the row where the user acted. Viewers get the tables only.
 */
import { useState } from 'preact/hooks'
import { call, enc, get, type Constraint, type Segment, type StrategyType, type TagType } from './api'
import { ConstraintEditor } from './constraints'
import { ErrorLine, useAct, useLoad } from './ui'

const split = (text: string) =>
  text
    .split(',')
    .map(part => part.trim())
    .filter(Boolean)

/** A create-or-edit form in a dialog-like panel: `label` names it ("New segment", "Edit segment beta"). */
function Panel({
  label,
  onSubmit,
  onCancel,
  error,
  children,
}: {
  label: string
  onSubmit: () => void
  onCancel: () => void
  error: unknown
  children: preact.ComponentChildren
}) {
  return (
    <form class="panel" aria-label={label} onSubmit={event => (event.preventDefault(), onSubmit())}>
      <h2>{label}</h2>
      {children}
      <div>
        <button type="submit">Save</button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorLine error={error} />
    </form>
  )
}

// ---- Segments

function SegmentForm({ initial, onDone, onCancel }: { initial?: Segment; onDone: () => void; onCancel: () => void }) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const [project, setProject] = useState(initial?.project ?? '')
  const [constraints, setConstraints] = useState<Constraint[]>(initial?.constraints ?? [])
  const { error, act } = useAct(onDone)
  const body = { name, description, project: project || null, constraints }
  return (
    <Panel
      label={initial ? `Edit segment ${initial.name}` : 'New segment'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial ? call('PUT', `/api/admin/segments/${initial.id}`, body) : call('POST', '/api/admin/segments', body),
        )
      }
    >
      <label>
        Segment name <input value={name} required onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Project (empty: all projects) <input value={project} onInput={e => setProject(e.currentTarget.value)} />
      </label>
      {constraints.map((constraint, index) => (
        <ConstraintEditor
          key={index}
          index={index}
          value={constraint}
          onChange={next => setConstraints(constraints.map((entry, at) => (at === index ? next : entry)))}
          onRemove={() => setConstraints(constraints.filter((_, at) => at !== index))}
        />
      ))}
      <button
        type="button"
        onClick={() =>
          setConstraints([
            ...constraints,
            { contextName: 'userId', operator: 'IN', values: [], caseInsensitive: false, inverted: false },
          ])
        }
      >
        Add constraint
      </button>
    </Panel>
  )
}

export function SegmentsPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ segments: Segment[] }>('/api/admin/segments'), [])
  const [editing, setEditing] = useState<Segment | 'new' | null>(null)
  const { error: rowError, act } = useAct(reload)
  const done = () => (setEditing(null), reload())
  return (
    <main>
      <h1>Segments</h1>
      <ErrorLine error={error} />
      {canWrite && editing === null && (
        <button type="button" onClick={() => setEditing('new')}>
          New segment
        </button>
      )}
      {editing !== null && (
        <SegmentForm
          key={editing === 'new' ? 'new' : editing.id}
          initial={editing === 'new' ? undefined : editing}
          onDone={done}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorLine error={rowError} />
      <table aria-label="Segments">
        <thead>
          <tr>
            <th>Name</th>
            <th>Project</th>
            <th>Constraints</th>
            <th>Description</th>
            {canWrite && <th>Actions</th>}
          </tr>
        </thead>
        <tbody>
          {data?.segments.map(segment => (
            <tr key={segment.id}>
              <td>{segment.name}</td>
              <td>{segment.project ?? 'all'}</td>
              <td>
                {segment.constraints
                  .map(
                    c =>
                      `${c.contextName} ${c.inverted ? 'NOT ' : ''}${c.operator} ${c.value ?? (c.values ?? []).join(',')}`,
                  )
                  .join('; ')}
              </td>
              <td>{segment.description}</td>
              {canWrite && (
                <td>
                  <button type="button" onClick={() => setEditing(segment)}>
                    Edit {segment.name}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => act(() => call('DELETE', `/api/admin/segments/${segment.id}`))}
                  >
                    Delete {segment.name}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  )
}

// ---- Context fields

interface ContextField {
  name: string
  description: string | null
  stickiness: boolean
  legalValues: { value: string; description?: string }[]
}

function ContextForm({
  initial,
  onDone,
  onCancel,
}: {
  initial?: ContextField
  onDone: () => void
  onCancel: () => void
}) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const [legal, setLegal] = useState((initial?.legalValues ?? []).map(entry => entry.value).join(', '))
  const [stickiness, setStickiness] = useState(initial?.stickiness ?? false)
  const { error, act } = useAct(onDone)
  const fields = { description, stickiness, legalValues: split(legal).map(value => ({ value })) }
  return (
    <Panel
      label={initial ? `Edit context field ${initial.name}` : 'New context field'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial
            ? call('PUT', `/api/admin/context/${enc(initial.name)}`, fields)
            : call('POST', '/api/admin/context', { name, ...fields }),
        )
      }
    >
      <label>
        Context field name{' '}
        <input value={name} required disabled={!!initial} onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Legal values (comma-separated) <input value={legal} onInput={e => setLegal(e.currentTarget.value)} />
      </label>
      <label class="check">
        <input type="checkbox" checked={stickiness} onChange={e => setStickiness(e.currentTarget.checked)} /> Usable as
        stickiness
      </label>
    </Panel>
  )
}

export function ContextPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<ContextField[]>('/api/admin/context'), [])
  const [editing, setEditing] = useState<ContextField | 'new' | null>(null)
  const { error: rowError, act } = useAct(reload)
  return (
    <main>
      <h1>Context fields</h1>
      <ErrorLine error={error} />
      {canWrite && editing === null && (
        <button type="button" onClick={() => setEditing('new')}>
          New context field
        </button>
      )}
      {editing !== null && (
        <ContextForm
          key={editing === 'new' ? '' : editing.name}
          initial={editing === 'new' ? undefined : editing}
          onDone={() => (setEditing(null), reload())}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorLine error={rowError} />
      <table aria-label="Context fields">
        <thead>
          <tr>
            <th>Name</th>
            <th>Description</th>
            <th>Legal values</th>
            <th>Stickiness</th>
            {canWrite && <th>Actions</th>}
          </tr>
        </thead>
        <tbody>
          {data?.map(field => (
            <tr key={field.name}>
              <td>{field.name}</td>
              <td>{field.description}</td>
              <td>{field.legalValues.map(entry => entry.value).join(', ')}</td>
              <td>{field.stickiness ? 'yes' : ''}</td>
              {canWrite && (
                <td>
                  <button type="button" onClick={() => setEditing(field)}>
                    Edit {field.name}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => act(() => call('DELETE', `/api/admin/context/${enc(field.name)}`))}
                  >
                    Delete {field.name}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  )
}

// ---- Tag types

function TagTypeForm({ initial, onDone, onCancel }: { initial?: TagType; onDone: () => void; onCancel: () => void }) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const { error, act } = useAct(onDone)
  return (
    <Panel
      label={initial ? `Edit tag type ${initial.name}` : 'New tag type'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial
            ? call('PUT', `/api/admin/tag-types/${enc(initial.name)}`, { name: initial.name, description })
            : call('POST', '/api/admin/tag-types', { name, description }),
        )
      }
    >
      <label>
        Tag type name <input value={name} required disabled={!!initial} onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
    </Panel>
  )
}

export function TagTypesPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ tagTypes: TagType[] }>('/api/admin/tag-types'), [])
  const [editing, setEditing] = useState<TagType | 'new' | null>(null)
  const { error: rowError, act } = useAct(reload)
  return (
    <main>
      <h1>Tag types</h1>
      <ErrorLine error={error} />
      {canWrite && editing === null && (
        <button type="button" onClick={() => setEditing('new')}>
          New tag type
        </button>
      )}
      {editing !== null && (
        <TagTypeForm
          key={editing === 'new' ? '' : editing.name}
          initial={editing === 'new' ? undefined : editing}
          onDone={() => (setEditing(null), reload())}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorLine error={rowError} />
      <table aria-label="Tag types">
        <thead>
          <tr>
            <th>Name</th>
            <th>Description</th>
            {canWrite && <th>Actions</th>}
          </tr>
        </thead>
        <tbody>
          {data?.tagTypes.map(type => (
            <tr key={type.name}>
              <td>{type.name}</td>
              <td>{type.description}</td>
              {canWrite && (
                <td>
                  <button type="button" onClick={() => setEditing(type)}>
                    Edit {type.name}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => act(() => call('DELETE', `/api/admin/tag-types/${enc(type.name)}`))}
                  >
                    Delete {type.name}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  )
}

// ---- Strategy types

type Parameter = StrategyType['parameters'][number]
const PARAMETER_TYPES = ['string', 'percentage', 'list', 'number', 'boolean']

function StrategyTypeForm({
  initial,
  onDone,
  onCancel,
}: {
  initial?: StrategyType
  onDone: () => void
  onCancel: () => void
}) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const [parameters, setParameters] = useState<Parameter[]>(initial?.parameters ?? [])
  const { error, act } = useAct(onDone)
  const change = (index: number, next: Partial<Parameter>) =>
    setParameters(parameters.map((entry, at) => (at === index ? { ...entry, ...next } : entry)))
  const body = {
    name,
    description,
    parameters: parameters.map(entry => ({ ...entry, description: entry.description ?? '' })),
  }
  return (
    <Panel
      label={initial ? `Edit strategy type ${initial.name}` : 'New strategy type'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial
            ? call('PUT', `/api/admin/strategies/${enc(initial.name)}`, body)
            : call('POST', '/api/admin/strategies', body),
        )
      }
    >
      <label>
        Strategy type name{' '}
        <input value={name} required disabled={!!initial} onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
      {parameters.map((parameter, index) => (
        <fieldset key={index}>
          <legend>Parameter {index + 1}</legend>
          <label>
            Parameter name{' '}
            <input value={parameter.name} required onInput={e => change(index, { name: e.currentTarget.value })} />
          </label>
          <label>
            Parameter type
            <select value={parameter.type} onChange={e => change(index, { type: e.currentTarget.value })}>
              {PARAMETER_TYPES.map(type => (
                <option key={type}>{type}</option>
              ))}
            </select>
          </label>
          <label>
            Parameter description{' '}
            <input
              value={parameter.description ?? ''}
              onInput={e => change(index, { description: e.currentTarget.value })}
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={parameter.required}
              onChange={e => change(index, { required: e.currentTarget.checked })}
            />{' '}
            Required
          </label>
          <button type="button" onClick={() => setParameters(parameters.filter((_, at) => at !== index))}>
            Remove parameter {index + 1}
          </button>
        </fieldset>
      ))}
      <button
        type="button"
        onClick={() => setParameters([...parameters, { name: '', type: 'string', description: '', required: false }])}
      >
        Add parameter
      </button>
    </Panel>
  )
}

export function StrategyTypesPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ strategies: StrategyType[] }>('/api/admin/strategies'), [])
  const [editing, setEditing] = useState<StrategyType | 'new' | null>(null)
  const { error: rowError, act } = useAct(reload)
  return (
    <main>
      <h1>Strategy types</h1>
      <ErrorLine error={error} />
      {canWrite && editing === null && (
        <button type="button" onClick={() => setEditing('new')}>
          New strategy type
        </button>
      )}
      {editing !== null && (
        <StrategyTypeForm
          key={editing === 'new' ? '' : editing.name}
          initial={editing === 'new' ? undefined : editing}
          onDone={() => (setEditing(null), reload())}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorLine error={rowError} />
      <table aria-label="Strategy types">
        <thead>
          <tr>
            <th>Name</th>
            <th>Description</th>
            <th>Parameters</th>
            <th>State</th>
            {canWrite && <th>Actions</th>}
          </tr>
        </thead>
        <tbody>
          {data?.strategies.map(type => (
            <tr key={type.name}>
              <td>
                {type.displayName ?? type.name}
                {type.displayName && type.displayName !== type.name ? ` (${type.name})` : ''}
              </td>
              <td>{type.description}</td>
              <td>
                {type.parameters
                  .map(parameter => `${parameter.name}: ${parameter.type}${parameter.required ? ' (required)' : ''}`)
                  .join(', ')}
              </td>
              <td>{type.editable ? (type.deprecated ? 'deprecated' : 'active') : 'built in'}</td>
              {canWrite && (
                <td>
                  {type.editable && (
                    <button type="button" onClick={() => setEditing(type)}>
                      Edit {type.name}
                    </button>
                  )}
                  {type.editable &&
                    (type.deprecated ? (
                      <button
                        type="button"
                        onClick={() => act(() => call('POST', `/api/admin/strategies/${enc(type.name)}/reactivate`))}
                      >
                        Reactivate {type.name}
                      </button>
                    ) : (
                      <button
                        type="button"
                        class="danger"
                        onClick={() => act(() => call('POST', `/api/admin/strategies/${enc(type.name)}/deprecate`))}
                      >
                        Deprecate {type.name}
                      </button>
                    ))}
                  {type.editable && (
                    <button
                      type="button"
                      class="danger"
                      onClick={() => act(() => call('DELETE', `/api/admin/strategies/${enc(type.name)}`))}
                    >
                      Delete {type.name}
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  )
}

// ---- Applications

interface Application {
  appName: string
  sdkVersion?: string
  strategies: string[]
  usage: { project: string; environments: string[] }[]
}

export function ApplicationsPage() {
  const { data, error } = useLoad(() => get<{ applications: Application[] }>('/api/admin/metrics/applications'), [])
  return (
    <main>
      <h1>Applications</h1>
      <ErrorLine error={error} />
      {data && data.applications.length === 0 && <p class="muted">No application has registered yet.</p>}
      <table aria-label="Applications">
        <thead>
          <tr>
            <th>Application</th>
            <th>SDK</th>
            <th>Used with</th>
          </tr>
        </thead>
        <tbody>
          {data?.applications.map(app => (
            <tr key={app.appName}>
              <td>{app.appName}</td>
              <td>{app.sdkVersion ?? '—'}</td>
              <td>
                {app.usage
                  .map(
                    entry =>
                      `${entry.project === '*' ? 'all projects' : entry.project}: ${entry.environments.join(', ')}`,
                  )
                  .join('; ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  )
}

interface UsageRow {
  appName: string
  environment: string
  yes: number
  no: number
}

/** On a flag's page: the applications that used the flag (24 hours), and yes/no of the last hour. */
export function FlagUsage({ name }: { name: string }) {
  const { data, error } = useLoad(
    () =>
      get<{ lastHourUsage: UsageRow[]; seenApplications: string[] }>(`/api/admin/client-metrics/features/${enc(name)}`),
    [name],
  )
  const totals = new Map<string, UsageRow>()
  for (const row of data?.lastHourUsage ?? []) {
    const key = `${row.appName}\n${row.environment}`
    const sum = totals.get(key) ?? { appName: row.appName, environment: row.environment, yes: 0, no: 0 }
    totals.set(key, { ...sum, yes: sum.yes + row.yes, no: sum.no + row.no })
  }
  return (
    <section aria-label="Usage">
      <h2>Usage</h2>
      <ErrorLine error={error} />
      <p>Applications that used it in the last 24 hours: {data ? data.seenApplications.join(', ') || 'none' : '…'}</p>
      {totals.size > 0 && (
        <table aria-label="Evaluations in the last hour">
          <thead>
            <tr>
              <th>Application</th>
              <th>Environment</th>
              <th>Yes</th>
              <th>No</th>
            </tr>
          </thead>
          <tbody>
            {[...totals.values()].map(row => (
              <tr key={`${row.appName} ${row.environment}`}>
                <td>{row.appName}</td>
                <td>{row.environment}</td>
                <td>{row.yes}</td>
                <td>{row.no}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
