/**
 * A project's flags: one row per flag, one switch per environment ("<flag> in <environment>"),
 * filter as you type, sort, select several and switch them in one bulk call, and create a flag
 * whose name is checked as it is typed. Only the rows in view are in the page, and only their pages
 * of 100 are asked of the service (searchFeatures filters and sorts there), so a project of 10,000
 * flags paints as fast as one of 50.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
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
        failure => live && setNameProblem(failure),
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
        <input
          value={name}
          required
          aria-invalid={nameProblem ? 'true' : 'false'}
          aria-describedby="name-problem"
          onInput={e => setName(e.currentTarget.value)}
        />
      </label>
      <ErrorLine error={nameProblem} id="name-problem" />
      <label>
        Type
        <select value={type} onChange={e => setType(e.currentTarget.value)}>
          {(types.data?.types ?? [{ id: 'release', name: 'Release' }]).map(entry => (
            <option value={entry.id} key={entry.id}>
              {entry.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Description
        <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={!!nameProblem || name === ''}>
        Create flag
      </button>
      <ErrorLine error={error} />
    </form>
  )
}

const PAGE = 100

interface Loaded {
  /** The filter and order these rows answer. */
  key: string
  pages: Map<number, Flag[]>
  total: number
}

const searchPath = (
  project: string,
  filter: string,
  sort: { key: SortKey; descending: boolean },
  page: number,
  limit = PAGE,
) =>
  `/api/admin/search/features?project=${enc(`IS:${project}`)}&query=${enc(filter.trim())}&sortBy=${sort.key}&sortOrder=${sort.descending ? 'desc' : 'asc'}&offset=${page * limit}&limit=${limit}`

export function FlagsPage({ project, canWrite }: { project: string; canWrite: boolean }) {
  const [filter, setFilter] = useState('')
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: 'name', descending: false })
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [overall, setOverall] = useState<number | null>(null)
  const [environments, setEnvironments] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [tick, setTick] = useState(0)
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [actionError, setActionError] = useState<unknown>(null)
  const [bulkEnvironment, setBulkEnvironment] = useState('')
  const [scrollTop, setScrollTop] = useState(0)
  const [viewHeight, setViewHeight] = useState(600)
  const [creating, setCreating] = useState(false)
  const scroller = useRef<HTMLDivElement>(null)
  const inFlight = useRef(new Set<string>())
  const environment = bulkEnvironment || environments[0] || ''
  const key = `${project}\n${filter.trim()}\n${sort.key}\n${sort.descending}\n${tick}`
  const latest = useRef(key)
  latest.current = key

  // The table asks the service for the pages in view only (searchFeatures), filtered and sorted
  // there: 10,000 flags never cross the wire at once. A page answering an older filter is dropped.
  const fetchPage = (page: number, forKey: string) => {
    const id = `${forKey}\n${page}`
    if (inFlight.current.has(id)) return
    inFlight.current.add(id)
    get<{ features: Flag[]; total: number }>(searchPath(project, filter, sort, page)).then(
      answer => {
        inFlight.current.delete(id)
        if (latest.current !== forKey) return
        setError(null)
        if (answer.features.length > 0) setEnvironments(answer.features[0].environments.map(entry => entry.name))
        if (filter.trim() === '') setOverall(answer.total)
        setLoaded(current => {
          const pages = new Map(current?.key === forKey ? current.pages : [])
          pages.set(page, answer.features)
          return { key: forKey, pages, total: answer.total }
        })
      },
      failure => {
        inFlight.current.delete(id)
        if (latest.current === forKey) setError(failure)
      },
    )
  }

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN)
  const fresh = loaded?.key === key
  const total = loaded?.total ?? 0
  const last = Math.min(total, Math.ceil((scrollTop + viewHeight) / ROW_HEIGHT) + OVERSCAN)
  useEffect(() => {
    if (!fresh) return fetchPage(0, key)
    for (let page = Math.floor(first / PAGE); page * PAGE < last; page++)
      if (!loaded!.pages.has(page)) fetchPage(page, key)
  }, [key, fresh, first, last])

  useEffect(() => {
    const element = scroller.current
    if (!element) return
    const measure = () => setViewHeight(element.clientHeight)
    measure()
    addEventListener('resize', measure)
    return () => removeEventListener('resize', measure)
  }, [])

  /** Applies a change to the rows held, by name (the answer of a toggle, or an undo). */
  const update = (names: Set<string>, environmentName: string, enabled: boolean) =>
    setLoaded(
      current =>
        current && {
          ...current,
          pages: new Map(
            [...current.pages].map(([page, flags]) => [
              page,
              flags.map(flag =>
                names.has(flag.name)
                  ? {
                      ...flag,
                      environments: flag.environments.map(entry =>
                        entry.name === environmentName ? { ...entry, enabled } : entry,
                      ),
                    }
                  : flag,
              ),
            ]),
          ),
        },
    )

  const toggle = async (flag: Flag, environmentName: string, enabled: boolean) => {
    const names = new Set([flag.name])
    update(names, environmentName, enabled)
    try {
      await call(
        'POST',
        `/api/admin/projects/${enc(project)}/features/${enc(flag.name)}/environments/${enc(environmentName)}/${enabled ? 'on' : 'off'}`,
      )
      setActionError(null)
    } catch (failure) {
      // Nothing half-applied: the switch flips back to what the service holds.
      update(names, environmentName, !enabled)
      setActionError(failure)
    }
  }

  const bulk = async (enabled: boolean) => {
    const names = new Set(selected)
    update(names, environment, enabled)
    try {
      await call(
        'POST',
        `/api/admin/projects/${enc(project)}/bulk_features/environments/${enc(environment)}/${enabled ? 'on' : 'off'}`,
        { features: [...names] },
      )
      setActionError(null)
    } catch (failure) {
      // The bulk call changes all or nothing: the rows are read again as the service holds them.
      setTick(n => n + 1)
      setActionError(failure)
    }
  }

  /** Every flag the filter matches, loaded rows or not (for "select all shown"). */
  const allShownNames = async (): Promise<string[]> => {
    const names: string[] = []
    const limit = 1000
    for (let page = 0; page * limit < total; page++) {
      const answer = await get<{ features: Flag[] }>(searchPath(project, filter, sort, page, limit))
      names.push(...answer.features.map(flag => flag.name))
    }
    return names
  }

  const rowAt = (index: number): Flag | undefined => loaded?.pages.get(Math.floor(index / PAGE))?.[index % PAGE]
  const rows = Array.from({ length: Math.max(0, last - first) }, (_, offset) => ({
    index: first + offset,
    flag: rowAt(first + offset),
  }))
  const allSelected = total > 0 && selected.size >= total
  const header = (key: SortKey, label: string) => (
    <th aria-sort={sort.key === key ? (sort.descending ? 'descending' : 'ascending') : 'none'}>
      <button
        type="button"
        class="sort"
        onClick={() => setSort({ key, descending: sort.key === key ? !sort.descending : false })}
      >
        {label}
      </button>
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
          <input type="search" value={filter} onInput={e => setFilter(e.currentTarget.value)} />
        </label>
        <a href={`#/projects/${enc(project)}/overview`}>Overview</a>
        <a href={`#/projects/${enc(project)}/archive`}>Archived flags</a>
        <span class="muted" aria-live="polite">
          {fresh ? `${total} of ${overall ?? total} flags` : 'Loading flags…'}
        </span>
        {canWrite && (
          <>
            <label>
              Environment
              <select value={environment} onChange={e => setBulkEnvironment(e.currentTarget.value)}>
                {environments.map(name => (
                  <option key={name}>{name}</option>
                ))}
              </select>
            </label>
            <button type="button" disabled={selected.size === 0} onClick={() => bulk(true)}>
              Turn on selected
            </button>
            <button type="button" disabled={selected.size === 0} onClick={() => bulk(false)}>
              Turn off selected
            </button>
            <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>
              New flag
            </button>
          </>
        )}
      </div>
      {creating && canWrite && (
        <CreateFlag project={project} onCreated={name => go(`/projects/${enc(project)}/features/${enc(name)}`)} />
      )}
      <ErrorLine error={actionError} />
      <div class="table-scroll" ref={scroller} onScroll={e => setScrollTop(e.currentTarget.scrollTop)}>
        <table aria-label={`Flags of ${project}`} aria-rowcount={total + 1}>
          <thead>
            <tr>
              <th>
                <input
                  type="checkbox"
                  aria-label="Select all shown flags"
                  checked={allSelected}
                  disabled={!canWrite}
                  onChange={() =>
                    allSelected
                      ? setSelected(new Set())
                      : allShownNames().then(names => setSelected(new Set(names)), setActionError)
                  }
                />
              </th>
              {header('name', 'Name')}
              {header('type', 'Type')}
              <th>Stale</th>
              {header('lastSeenAt', 'Last seen')}
              {header('createdAt', 'Created')}
              {environments.map(name => (
                <th key={name}>{name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {first > 0 && (
              // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row for the rows not drawn, with nothing to focus
              <tr aria-hidden="true" style={{ height: `${first * ROW_HEIGHT}px` }}>
                <td colSpan={columns} />
              </tr>
            )}
            {rows.map(({ index, flag }) =>
              !flag ? (
                <tr key={`row-${index}`} aria-rowindex={index + 2} style={{ height: `${ROW_HEIGHT}px` }}>
                  <td colSpan={columns} class="muted">
                    Loading…
                  </td>
                </tr>
              ) : (
                <tr key={flag.name} aria-rowindex={index + 2} style={{ height: `${ROW_HEIGHT}px` }}>
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
                  <td>
                    <a href={`#/projects/${enc(project)}/features/${enc(flag.name)}`}>{flag.name}</a>
                  </td>
                  <td>{flag.type}</td>
                  <td>{flag.stale ? 'stale' : ''}</td>
                  <td>{when(flag.lastSeenAt)}</td>
                  <td>{when(flag.createdAt)}</td>
                  {flag.environments.map(entry => (
                    <td key={entry.name}>
                      <input
                        type="checkbox"
                        role="switch"
                        class="switch"
                        aria-label={`${flag.name} in ${entry.name}`}
                        checked={entry.enabled}
                        aria-checked={entry.enabled}
                        disabled={!canWrite}
                        onChange={e => toggle(flag, entry.name, e.currentTarget.checked)}
                      />
                    </td>
                  ))}
                </tr>
              ),
            )}
            {last < total && (
              // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row for the rows not drawn, with nothing to focus
              <tr aria-hidden="true" style={{ height: `${(total - last) * ROW_HEIGHT}px` }}>
                <td colSpan={columns} />
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </main>
  )
}
