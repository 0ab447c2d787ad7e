/**
 * A flag's page: its metadata, tags and dependencies, and per environment its switch, strategies
 * (add, edit, remove, reorder, through the form in strategy.tsx) and variants; archive and revive;
 * and its history from the event log, before and after.
 */
import { useState } from 'preact/hooks'
import {
  call,
  enc,
  get,
  type TagType,
  type EventItem,
  type Flag,
  type FlagEnvironment,
  type Strategy,
  type Variant,
} from './api'
import { ErrorLine, EventEntry, go, useAct, useLoad, when } from './ui'
import { FlagUsage } from './config'
import { describeStrategy, StrategyForm } from './strategy'

function Variants({
  flag,
  environment,
  canWrite,
  reload,
}: {
  flag: Flag
  environment: FlagEnvironment
  canWrite: boolean
  reload: () => void
}) {
  const [variants, setVariants] = useState<Variant[]>(environment.variants ?? [])
  const [error, setError] = useState<unknown>(null)
  const save = async () => {
    try {
      await call('PUT', `/api/admin/projects/${enc(flag.project)}/features/${enc(flag.name)}/variants-batch`, {
        variants,
        environments: [environment.name],
      })
      setError(null)
      reload()
    } catch (failure) {
      setError(failure)
    }
  }
  const change = (index: number, next: Partial<Variant>) =>
    setVariants(variants.map((variant, at) => (at === index ? { ...variant, ...next } : variant)))
  return (
    <div class="variants">
      <h4>Variants in {environment.name}</h4>
      {variants.map((variant, index) => (
        <fieldset key={index}>
          <legend>Variant {index + 1}</legend>
          <label>
            Variant name{' '}
            <input
              value={variant.name}
              disabled={!canWrite}
              onInput={e => change(index, { name: e.currentTarget.value })}
            />
          </label>
          <label>
            Weight (of 1000)
            <input
              type="number"
              min="0"
              max="1000"
              value={variant.weight}
              disabled={!canWrite}
              onInput={e => change(index, { weight: Number(e.currentTarget.value), weightType: 'fix' })}
            />
          </label>
          <label>
            Payload
            <input
              value={variant.payload?.value ?? ''}
              disabled={!canWrite}
              onInput={e =>
                change(index, {
                  payload: e.currentTarget.value === '' ? undefined : { type: 'string', value: e.currentTarget.value },
                })
              }
            />
          </label>
          {canWrite && (
            <button type="button" onClick={() => setVariants(variants.filter((_, at) => at !== index))}>
              Remove variant {index + 1}
            </button>
          )}
        </fieldset>
      ))}
      {canWrite && (
        <>
          <button
            type="button"
            onClick={() =>
              setVariants([
                ...variants.map(v => ({ ...v, weightType: 'variable' })),
                { name: `variant-${variants.length + 1}`, weight: 0, weightType: 'variable', stickiness: 'default' },
              ])
            }
          >
            Add variant in {environment.name}
          </button>
          <button type="button" onClick={save}>
            Save variants in {environment.name}
          </button>
        </>
      )}
      <ErrorLine error={error} />
    </div>
  )
}

function EnvironmentPanel({
  flag,
  environment,
  canWrite,
  reload,
}: {
  flag: Flag
  environment: FlagEnvironment
  canWrite: boolean
  reload: () => void
}) {
  const [editing, setEditing] = useState<string | 'new' | null>(null)
  const base = `/api/admin/projects/${enc(flag.project)}/features/${enc(flag.name)}/environments/${enc(environment.name)}`
  const { error, act } = useAct(reload)
  const body = (strategy: Strategy) => ({
    name: strategy.name,
    parameters: strategy.parameters,
    constraints: strategy.constraints,
    segments: strategy.segments ?? [],
  })
  const strategies = environment.strategies ?? []
  /** Swaps a strategy with its neighbour: one set-sort-order call, so the order is never half-changed. */
  const move = (index: number, by: -1 | 1) => {
    const order = strategies.map(strategy => strategy.id!)
    ;[order[index], order[index + by]] = [order[index + by], order[index]]
    return act(() =>
      call(
        'POST',
        `${base}/strategies/set-sort-order`,
        order.map((id, sortOrder) => ({ id, sortOrder })),
      ),
    )
  }
  return (
    <section class="environment" aria-label={`Environment ${environment.name}`}>
      <h3>
        <label class="check">
          <input
            type="checkbox"
            role="switch"
            class="switch"
            aria-label={`${flag.name} in ${environment.name}`}
            checked={environment.enabled}
            aria-checked={environment.enabled}
            disabled={!canWrite}
            onChange={e => act(() => call('POST', `${base}/${e.currentTarget.checked ? 'on' : 'off'}`))}
          />
          {environment.name}
        </label>
      </h3>
      <ol class="strategies">
        {strategies.map((strategy, index) => (
          <li key={strategy.id}>
            {editing === strategy.id ? (
              <StrategyForm
                initial={strategy}
                flagName={flag.name}
                project={flag.project}
                onCancel={() => setEditing(null)}
                onSave={async next => (
                  await call('PUT', `${base}/strategies/${strategy.id}`, body(next)), setEditing(null), reload()
                )}
              />
            ) : (
              <>
                <strong>{strategy.name}</strong> <span class="muted">{describeStrategy(strategy)}</span>
                {canWrite && (
                  <button type="button" onClick={() => setEditing(strategy.id!)}>
                    Edit {strategy.name}
                  </button>
                )}
                {canWrite && (
                  <button type="button" onClick={() => act(() => call('DELETE', `${base}/strategies/${strategy.id}`))}>
                    Remove {strategy.name}
                  </button>
                )}
                {canWrite && index > 0 && (
                  <button type="button" onClick={() => move(index, -1)}>
                    Move strategy {index + 1} ({strategy.name}) up
                  </button>
                )}
                {canWrite && index < strategies.length - 1 && (
                  <button type="button" onClick={() => move(index, 1)}>
                    Move strategy {index + 1} ({strategy.name}) down
                  </button>
                )}
              </>
            )}
          </li>
        ))}
      </ol>
      {canWrite && editing !== 'new' && (
        <button type="button" onClick={() => setEditing('new')}>
          Add strategy in {environment.name}
        </button>
      )}
      {editing === 'new' && (
        <StrategyForm
          flagName={flag.name}
          project={flag.project}
          onCancel={() => setEditing(null)}
          onSave={async strategy => (
            await call('POST', `${base}/strategies`, body(strategy)), setEditing(null), reload()
          )}
        />
      )}
      <ErrorLine error={error} />
      <Variants
        key={JSON.stringify(environment.variants)}
        flag={flag}
        environment={environment}
        canWrite={canWrite}
        reload={reload}
      />
    </section>
  )
}

function Tags({ flag, canWrite, reload }: { flag: Flag; canWrite: boolean; reload: () => void }) {
  const types = useLoad(() => get<{ tagTypes: TagType[] }>('/api/admin/tag-types'), [])
  const [type, setType] = useState('')
  const [value, setValue] = useState('')
  const tagsPath = `/api/admin/features/${enc(flag.name)}/tags`
  const { error, act } = useAct(reload)
  const chosenType = type || types.data?.tagTypes[0]?.name || ''
  return (
    <section aria-label="Tags">
      <h2>Tags</h2>
      <ul class="tags">
        {(flag.tags ?? []).map(tag => (
          <li key={`${tag.type}:${tag.value}`}>
            <code>
              {tag.type}:{tag.value}
            </code>
            {canWrite && (
              <button
                type="button"
                onClick={() => act(() => call('DELETE', `${tagsPath}/${enc(tag.type)}/${enc(tag.value)}`))}
              >
                Remove tag {tag.type}:{tag.value}
              </button>
            )}
          </li>
        ))}
        {(flag.tags ?? []).length === 0 && <li class="muted">No tags</li>}
      </ul>
      {canWrite && (
        <form
          class="inline"
          aria-label="Add a tag"
          onSubmit={event => {
            event.preventDefault()
            act(() => call('POST', tagsPath, { type: chosenType, value })).then(() => setValue(''))
          }}
        >
          <label>
            Tag type
            <select value={chosenType} onChange={e => setType(e.currentTarget.value)}>
              {types.data?.tagTypes.map(entry => (
                <option key={entry.name}>{entry.name}</option>
              ))}
            </select>
          </label>
          <label>
            Tag value
            <input value={value} required onInput={e => setValue(e.currentTarget.value)} />
          </label>
          <button type="submit">Add tag</button>
        </form>
      )}
      <ErrorLine error={error} />
    </section>
  )
}

function Dependencies({ flag, canWrite, reload }: { flag: Flag; canWrite: boolean; reload: () => void }) {
  const [parent, setParent] = useState('')
  const [enabled, setEnabled] = useState(true)
  const base = `/api/admin/projects/${enc(flag.project)}/features/${enc(flag.name)}/dependencies`
  const { error, act } = useAct(reload)
  return (
    <section aria-label="Dependencies">
      <h2>Dependencies</h2>
      <ul>
        {(flag.dependencies ?? []).map(dependency => (
          <li key={dependency.feature}>
            Needs{' '}
            <a href={`#/projects/${enc(flag.project)}/features/${enc(dependency.feature)}`}>{dependency.feature}</a>{' '}
            {dependency.enabled ? 'enabled' : 'disabled'}
            {dependency.variants.length > 0 ? ` with variant ${dependency.variants.join(' or ')}` : ''}
            {canWrite && (
              <button type="button" onClick={() => act(() => call('DELETE', `${base}/${enc(dependency.feature)}`))}>
                Remove dependency on {dependency.feature}
              </button>
            )}
          </li>
        ))}
        {(flag.dependencies ?? []).length === 0 && <li class="muted">No parent flag</li>}
      </ul>
      {(flag.children ?? []).length > 0 && <p>Flags that depend on this one: {flag.children!.join(', ')}</p>}
      {canWrite && (
        <form
          class="inline"
          aria-label="Add a dependency"
          onSubmit={event => {
            event.preventDefault()
            act(() => call('POST', base, { feature: parent, enabled })).then(() => setParent(''))
          }}
        >
          <label>
            Parent flag
            <input value={parent} required onInput={e => setParent(e.currentTarget.value)} />
          </label>
          <label class="check">
            <input type="checkbox" checked={enabled} onChange={e => setEnabled(e.currentTarget.checked)} /> Parent
            enabled
          </label>
          <button type="submit">Add dependency</button>
        </form>
      )}
      <ErrorLine error={error} />
    </section>
  )
}

function History({ name }: { name: string }) {
  const { data, error } = useLoad(
    () => get<{ events: EventItem[] }>(`/api/admin/search/events?feature=IS:${enc(name)}&limit=50`),
    [name],
  )
  return (
    <section aria-label="History">
      <h2>History</h2>
      <ErrorLine error={error} />
      <ol class="events">
        {data?.events.map(event => (
          <EventEntry key={event.id} event={event} where={false} />
        ))}
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
      <h1>{flag.name}</h1>
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
      {flag.environments.map(environment => (
        <EnvironmentPanel
          key={environment.name}
          flag={flag}
          environment={environment}
          canWrite={editable}
          reload={reload}
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
