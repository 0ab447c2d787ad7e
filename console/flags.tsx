/**
 * A project's flags: one row per flag, one switch per environment ("<flag> in <environment>"),
 * filter as you type, sort, select several and switch them in one bulk call, and create a flag
 * whose name is checked as it is typed. Only the rows in view are in the page, so a project of
 * 10,000 flags paints as fast as one of 50.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { call, enc, get, type Flag } from './api'
import { ErrorLine, go, useLoad, when } from './ui'

const ROW_HEIGHT = 40
const OVERSCAN = 8

type SortKey = 'name' | 'type' | 'createdAt' | 'lastSeenAt'

function CreateFlag({ project, onCreated }: { project: string; onCreated: (name: string) => void }) {
  const [name, setName] = useState('')
  const [type, setType] = useState('release')
  const [description, setDescription] = useState('')
  const [nameProblem, setNameProblem] = useState<unknown>(null)
  const [error, setError] = useState<unknown>(null)
  const types = useLoad(() => get<{ types: { id: string; name: string }[] }>('/api/admin/feature-types'), [])
  useEffect(() => {
    if (name === '') return setNameProblem(null)
    // The validate operation answers as the name is typed; a stale answer is dropped.
    let live = true
    const timer = setTimeout(() => {
      call('POST', '/api/admin/features/validate', { name, projectId: project }).then(
        () => live && setNameProblem(null),
        (failure) => live && setNameProblem(failure),
      )
    }, 120)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [name])
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', `/api/admin/projects/${enc(project)}/features`, { name, type, description })
      onCreated(name)
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <form onSubmit={submit} class="create-flag" aria-label="Create a flag">
      <label>
        Flag name
        <input value={name} required aria-invalid={nameProblem ? 'true' : 'false'} aria-describedby="name-problem" onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <ErrorLine error={nameProblem} id="name-problem" />
      <label>
        Type
        <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
          {(types.data?.types ?? [{ id: 'release', name: 'Release' }]).map((entry) => (
            <option value={entry.id} key={entry.id}>{entry.name}</option>
          ))}
        </select>
      </label>
      <label>
        Description
        <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={!!nameProblem || name === ''}>Create flag</button>
      <ErrorLine error={error} />
    </form>
  )
}

export function FlagsPage({ project, canWrite }: { project: string; canWrite: boolean }) {
  const { data, error, set } = useLoad(() => get<{ features: Flag[] }>(`/api/admin/projects/${enc(project)}/features`), [project])
  const [filter, setFilter] = useState('')
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: 'name', descending: false })
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [actionError, setActionError] = useState<unknown>(null)
  const [bulkEnvironment, setBulkEnvironment] = useState('')
  const [scrollTop, setScrollTop] = useState(0)
  const [viewHeight, setViewHeight] = useState(600)
  const [creating, setCreating] = useState(false)
  const scroller = useRef<HTMLDivElement>(null)
  const flags = data?.features ?? []
  const environments = flags[0]?.environments.map((environment) => environment.name) ?? []
  const environment = bulkEnvironment || environments[0] || ''

  // Sorted once per list and order; each keystroke only filters the sorted list (plain string
  // comparison: Intl collation costs tens of milliseconds over 10,000 names).
  const sorted = useMemo(() => {
    const { key, descending } = sort
    const value = (flag: Flag) => String(flag[key] ?? '')
    const ordered = [...flags].sort((a, b) => (value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : 0))
    return descending ? ordered.reverse() : ordered
  }, [flags, sort])
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase()
    return needle === '' ? sorted : sorted.filter((flag) => flag.name.toLowerCase().includes(needle) || (flag.description ?? '').toLowerCase().includes(needle))
  }, [sorted, filter])

  useEffect(() => {
    const element = scroller.current
    if (!element) return
    const measure = () => setViewHeight(element.clientHeight)
    measure()
    addEventListener('resize', measure)
    return () => removeEventListener('resize', measure)
  }, [data])

  /** Applies a change to the flags shown, by name (the answer of a toggle, or an undo). */
  const update = (names: Set<string>, environmentName: string, enabled: boolean) =>
    set({
      features: flags.map((flag) =>
        names.has(flag.name)
          ? { ...flag, environments: flag.environments.map((entry) => (entry.name === environmentName ? { ...entry, enabled } : entry)) }
          : flag,
      ),
    })

  const toggle = async (flag: Flag, environmentName: string, enabled: boolean) => {
    const names = new Set([flag.name])
    update(names, environmentName, enabled)
    try {
      await call('POST', `/api/admin/projects/${enc(project)}/features/${enc(flag.name)}/environments/${enc(environmentName)}/${enabled ? 'on' : 'off'}`)
      setActionError(null)
    } catch (failure) {
      // Nothing half-applied: the switch flips back to what the service holds.
      update(names, environmentName, !enabled)
      setActionError(failure)
    }
  }

  const bulk = async (enabled: boolean) => {
    const names = new Set(selected)
    const before = new Map(flags.map((flag) => [flag.name, flag.environments.find((entry) => entry.name === environment)?.enabled ?? false]))
    update(names, environment, enabled)
    try {
      await call('POST', `/api/admin/projects/${enc(project)}/bulk_features/environments/${enc(environment)}/${enabled ? 'on' : 'off'}`, { features: [...names] })
      setActionError(null)
    } catch (failure) {
      set({ features: flags.map((flag) => (names.has(flag.name) ? { ...flag, environments: flag.environments.map((entry) => (entry.name === environment ? { ...entry, enabled: before.get(flag.name)! } : entry)) } : flag)) })
      setActionError(failure)
    }
  }

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN)
  const last = Math.min(shown.length, Math.ceil((scrollTop + viewHeight) / ROW_HEIGHT) + OVERSCAN)
  const rows = shown.slice(first, last)
  const allSelected = shown.length > 0 && shown.every((flag) => selected.has(flag.name))
  const header = (key: SortKey, label: string) => (
    <th aria-sort={sort.key === key ? (sort.descending ? 'descending' : 'ascending') : 'none'}>
      <button type="button" class="sort" onClick={() => setSort({ key, descending: sort.key === key ? !sort.descending : false })}>{label}</button>
    </th>
  )
  const columns = 6 + environments.length

  return (
    <main>
      <h1>Project {project}</h1>
      <ErrorLine error={error} />
      <div class="toolbar">
        <label>
          Filter flags
          <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        </label>
        <span class="muted" aria-live="polite">{data ? `${shown.length} of ${flags.length} flags` : 'Loading flags…'}</span>
        {canWrite && (
          <>
            <label>
              Environment
              <select value={environment} onChange={(e) => setBulkEnvironment(e.currentTarget.value)}>
                {environments.map((name) => <option key={name}>{name}</option>)}
              </select>
            </label>
            <button type="button" disabled={selected.size === 0} onClick={() => bulk(true)}>Turn on selected</button>
            <button type="button" disabled={selected.size === 0} onClick={() => bulk(false)}>Turn off selected</button>
            <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>New flag</button>
          </>
        )}
      </div>
      {creating && canWrite && <CreateFlag project={project} onCreated={(name) => go(`/projects/${enc(project)}/features/${enc(name)}`)} />}
      <ErrorLine error={actionError} />
      <div class="table-scroll" ref={scroller} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}>
        <table aria-label={`Flags of ${project}`} aria-rowcount={shown.length + 1}>
          <thead>
            <tr>
              <th>
                <input type="checkbox" aria-label="Select all shown flags" checked={allSelected} disabled={!canWrite} onChange={() => setSelected(allSelected ? new Set() : new Set(shown.map((flag) => flag.name)))} />
              </th>
              {header('name', 'Name')}
              {header('type', 'Type')}
              <th>Stale</th>
              {header('lastSeenAt', 'Last seen')}
              {header('createdAt', 'Created')}
              {environments.map((name) => <th key={name}>{name}</th>)}
            </tr>
          </thead>
          <tbody>
            {first > 0 && <tr aria-hidden="true" style={{ height: `${first * ROW_HEIGHT}px` }}><td colSpan={columns} /></tr>}
            {rows.map((flag, index) => (
              <tr key={flag.name} aria-rowindex={first + index + 2} style={{ height: `${ROW_HEIGHT}px` }}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${flag.name}`}
                    checked={selected.has(flag.name)}
                    disabled={!canWrite}
                    onChange={() => {
                      const next = new Set(selected)
                      if (next.has(flag.name)) next.delete(flag.name)
                      else next.add(flag.name)
                      setSelected(next)
                    }}
                  />
                </td>
                <td><a href={`#/projects/${enc(project)}/features/${enc(flag.name)}`}>{flag.name}</a></td>
                <td>{flag.type}</td>
                <td>{flag.stale ? 'stale' : ''}</td>
                <td>{when(flag.lastSeenAt)}</td>
                <td>{when(flag.createdAt)}</td>
                {flag.environments.map((entry) => (
                  <td key={entry.name}>
                    <input
                      type="checkbox"
                      role="switch"
                      class="switch"
                      aria-label={`${flag.name} in ${entry.name}`}
                      checked={entry.enabled}
                      disabled={!canWrite}
                      onChange={(e) => toggle(flag, entry.name, e.currentTarget.checked)}
                    />
                  </td>
                ))}
              </tr>
            ))}
            {last < shown.length && <tr aria-hidden="true" style={{ height: `${(shown.length - last) * ROW_HEIGHT}px` }}><td colSpan={columns} /></tr>}
          </tbody>
        </table>
      </div>
    </main>
  )
}
