/**
 * A project's flags (or, without a project, the flags of every project: "Flags" in the navigation):
 * one row per flag, one switch per environment ("<flag> in <environment>"), filter as you type,
 * sort, select several and switch them in one bulk call, and create a flag. Only the rows in view
 * are in the page, and only their pages of 100 are asked of the service (searchFeatures filters and
 * sorts there), so a project of 10,000 flags paints as fast as one of 50. A switch moves at once and
 * moves back, with the server's message in a toast, when refused. Changes made elsewhere arrive
 * through the live stream (console/live.ts) and the rows held are read again.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { Archive, Flag as FlagIcon, LayoutDashboard, Plus, SearchX, Settings } from 'lucide'
import { call, enc, get, type Flag } from './api'
import { Button } from './components/button'
import { EmptyState } from './components/empty-state'
import { Picker } from './components/field'
import { Icon } from './components/icon'
import { toast } from './components/toast'
import { CreateFlag } from './flag-create'
import { FlagRow, ROW_HEIGHT } from './flag-row'
import { useLiveRefresh } from './live'
import { announceProductionSwitch, ErrorLine, go } from './ui'

const OVERSCAN = 8
const PAGE = 100
type SortKey = 'name' | 'type' | 'createdAt' | 'lastSeenAt'

interface Loaded {
  /** The filter and order these rows answer. */
  key: string
  pages: Map<number, Flag[]>
  total: number
}

const searchPath = (
  project: string | undefined,
  filter: string,
  sort: { key: SortKey; descending: boolean },
  page: number,
  limit = PAGE,
) =>
  `/api/admin/search/features?${project ? `project=${enc(`IS:${project}`)}&` : ''}query=${enc(filter.trim())}&sortBy=${sort.key}&sortOrder=${sort.descending ? 'desc' : 'asc'}&offset=${page * limit}&limit=${limit}`

export function FlagsPage({ project, canWrite }: { project?: string; canWrite: boolean }) {
  const [filter, setFilter] = useState('')
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: 'name', descending: false })
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [overall, setOverall] = useState<number | null>(null)
  const [environments, setEnvironments] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [tick, setTick] = useState(0)
  const [selected, setSelected] = useState<Set<string>>(new Set())
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

  /** Reads the pages held again, in place (a change made elsewhere): no row blinks. */
  const refresh = () => {
    if (!loaded || loaded.key !== latest.current) return
    for (const page of loaded.pages.keys()) fetchPage(page, loaded.key)
  }
  useLiveRefresh({ project }, refresh)

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
        `/api/admin/projects/${enc(flag.project)}/features/${enc(flag.name)}/environments/${enc(environmentName)}/${enabled ? 'on' : 'off'}`,
      )
      const environment = flag.environments.find(entry => entry.name === environmentName)
      if (environment)
        announceProductionSwitch(flag.name, environment, enabled, () => toggle(flag, environmentName, !enabled))
    } catch (failure) {
      // Nothing half-applied: the switch flips back to what the service holds.
      update(names, environmentName, !enabled)
      toast.error(failure)
    }
  }

  const bulk = async (enabled: boolean) => {
    const names = new Set(selected)
    update(names, environment, enabled)
    try {
      await call(
        'POST',
        `/api/admin/projects/${enc(project!)}/bulk_features/environments/${enc(environment)}/${enabled ? 'on' : 'off'}`,
        { features: [...names] },
      )
      toast.success(`${names.size} flags turned ${enabled ? 'on' : 'off'} in ${environment}.`)
    } catch (failure) {
      // The bulk call changes all or nothing: the rows are read again as the service holds them.
      setTick(n => n + 1)
      toast.error(failure)
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
    <th
      class={key === 'name' ? undefined : 'hide-phone'}
      aria-sort={sort.key === key ? (sort.descending ? 'descending' : 'ascending') : 'none'}
    >
      <button
        type="button"
        class="sort"
        onClick={() => setSort({ key, descending: sort.key === key ? !sort.descending : false })}
      >
        {label}
      </button>
    </th>
  )
  const columns = project ? 6 + environments.length : 7
  const filtered = filter.trim() !== ''

  return (
    <main>
      <div class="page-head">
        <h1>{project ? `Project ${project}` : 'Flags'}</h1>
        {project && canWrite && (
          <Button variant="primary" icon={Plus} onClick={() => setCreating(true)} aria-expanded={creating}>
            New flag
          </Button>
        )}
      </div>
      <ErrorLine error={error} />
      <div class="toolbar">
        <label>
          Filter flags
          <input type="search" value={filter} onInput={e => setFilter(e.currentTarget.value)} />
        </label>
        {project && canWrite && (
          <>
            <Picker label="Environment" value={environment} options={environments} onChange={setBulkEnvironment} />
            <Button disabled={selected.size === 0} onClick={() => bulk(true)}>
              Turn on selected
            </Button>
            <Button disabled={selected.size === 0} onClick={() => bulk(false)}>
              Turn off selected
            </Button>
          </>
        )}
        <span class="muted flags-count" aria-live="polite">
          {fresh ? `${total} of ${overall ?? total} flags` : 'Loading flags…'}
        </span>
        {project && (
          <span class="toolbar-links">
            <a href={`#/projects/${enc(project)}/overview`}>
              <Icon icon={LayoutDashboard} size={14} /> Overview
            </a>
            <a href={`#/projects/${enc(project)}/archive`}>
              <Icon icon={Archive} size={14} /> Archived flags
            </a>
            <a href={`#/projects/${enc(project)}/settings`}>
              <Icon icon={Settings} size={14} /> Project settings
            </a>
          </span>
        )}
      </div>
      {project && canWrite && (
        <CreateFlag
          project={project}
          open={creating}
          onClose={() => setCreating(false)}
          onCreated={name => go(`/projects/${enc(project)}/features/${enc(name)}`)}
        />
      )}
      {fresh && total === 0 && (
        <EmptyState
          icon={filtered ? SearchX : FlagIcon}
          title={
            filtered ? `No flag matches “${filter.trim()}”` : project ? 'No flags in this project yet' : 'No flags yet'
          }
          action={
            filtered ? (
              <Button onClick={() => setFilter('')}>Clear the filter</Button>
            ) : (
              project &&
              canWrite && (
                <Button variant="primary" icon={Plus} onClick={() => setCreating(true)}>
                  Create the first flag
                </Button>
              )
            )
          }
        >
          {filtered
            ? 'Names and descriptions are searched; try fewer letters.'
            : project
              ? 'A flag turns a feature on or off per environment, for everyone or for the users its strategies pick.'
              : 'Open a project to create flags in it.'}
        </EmptyState>
      )}
      <div
        class="table-scroll"
        ref={scroller}
        hidden={fresh && total === 0}
        onScroll={e => setScrollTop(e.currentTarget.scrollTop)}
      >
        <table aria-label={project ? `Flags of ${project}` : 'Flags of every project'} aria-rowcount={total + 1}>
          <thead>
            <tr>
              {project && (
                <th>
                  <input
                    type="checkbox"
                    aria-label="Select all shown flags"
                    checked={allSelected}
                    disabled={!canWrite}
                    onChange={() =>
                      allSelected
                        ? setSelected(new Set())
                        : allShownNames().then(names => setSelected(new Set(names)), toast.error)
                    }
                  />
                </th>
              )}
              {header('name', 'Name')}
              {!project && <th>Project</th>}
              {header('type', 'Type')}
              <th class="hide-phone">Stale</th>
              {header('lastSeenAt', 'Last seen')}
              {header('createdAt', 'Created')}
              {project ? (
                environments.map(name => (
                  <th key={name} class="env-col" title={name}>
                    {name}
                  </th>
                ))
              ) : (
                <th>Environments</th>
              )}
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
                <FlagRow
                  key={`${flag.project}/${flag.name}`}
                  flag={flag}
                  index={index}
                  project={project}
                  canWrite={canWrite}
                  selected={selected.has(flag.name)}
                  onSelect={() => {
                    const next = new Set(selected)
                    if (next.has(flag.name)) next.delete(flag.name)
                    else next.add(flag.name)
                    setSelected(next)
                  }}
                  toggle={toggle}
                />
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
