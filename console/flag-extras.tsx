/** A flag's tags, its dependencies (parents and children) and its history from the event log. */
import { useState } from 'preact/hooks'
import { call, enc, get, type EventItem, type Flag, type TagType } from './api'
import { ErrorLine, useAct, useLoad } from './ui'
import { EventEntry } from './events'

export function Tags({ flag, canWrite, reload }: { flag: Flag; canWrite: boolean; reload: () => void }) {
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

export function Dependencies({ flag, canWrite, reload }: { flag: Flag; canWrite: boolean; reload: () => void }) {
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

export function History({ name }: { name: string }) {
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
