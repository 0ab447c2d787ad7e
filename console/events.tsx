/**
 * The event log: the event search (`GET /api/admin/search/events`) with its filters (type,
 * project, flag, who, time range) and free text, whose matches are highlighted; each event opens
 * with "Show changes" to a field-by-field diff of its before (preData) and after (data).
 */
import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { EVENT_TYPES } from '../src/domain/events'
import { get, type EventItem, type Project } from './api'
import { Search, SearchX } from 'lucide'
import { Button, EmptyState, ErrorLine, Picker, useLoad, when } from './ui'
import './pages.css'

const PAGE = 50

/** `text` with every occurrence of `needle` (any case) in a <mark>. */
export function Highlight({ text, needle }: { text: string; needle: string }) {
  if (!needle) return <>{text}</>
  const parts: ComponentChildren[] = []
  const lower = text.toLowerCase()
  const find = needle.toLowerCase()
  let from = 0
  for (let at = lower.indexOf(find); at !== -1; at = lower.indexOf(find, from)) {
    parts.push(text.slice(from, at), <mark key={at}>{text.slice(at, at + find.length)}</mark>)
    from = at + find.length
  }
  parts.push(text.slice(from))
  return <>{parts}</>
}

/** Every leaf of a JSON value by its path (`strategies[0].parameters.rollout`). */
export function flatten(value: unknown, path = '', into = new Map<string, unknown>()): Map<string, unknown> {
  if (Array.isArray(value) && value.length > 0) value.forEach((item, i) => flatten(item, `${path}[${i}]`, into))
  else if (value !== null && typeof value === 'object' && Object.keys(value).length > 0)
    for (const [key, item] of Object.entries(value)) flatten(item, path ? `${path}.${key}` : key, into)
  else if (value !== undefined && value !== null) into.set(path || '(value)', value)
  return into
}

const shown = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value))

export interface FieldChange {
  field: string
  before: unknown
  after: unknown
}

/** The fields that differ between before and after, in the order they appear. */
export function changesOf(before: unknown, after: unknown): FieldChange[] {
  const old = flatten(before)
  const next = flatten(after)
  const fields = [...new Set([...old.keys(), ...next.keys()])]
  // An empty list or object on one side is no change of its own when the other side fills it in.
  const filledIn = (field: string, other: Map<string, unknown>) =>
    [...other.keys()].some(key => key.startsWith(`${field}[`) || key.startsWith(`${field}.`))
  return fields
    .filter(field => !(old.has(field) && filledIn(field, next)) && !(next.has(field) && filledIn(field, old)))
    .filter(field => JSON.stringify(old.get(field)) !== JSON.stringify(next.get(field)))
    .map(field => ({ field, before: old.get(field), after: next.get(field) }))
}

/** The field-by-field diff of `before` and `after` as a table named `label`; the event log's and the change requests'. */
export function FieldDiff({
  before,
  after,
  label,
  needle = '',
}: {
  before: unknown
  after: unknown
  label: string
  needle?: string
}) {
  const changes = changesOf(before, after)
  if (changes.length === 0) return <p class="muted">No field changed.</p>
  return (
    <div>
      <table class="diff-table" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {changes.map(change => (
            <tr
              key={change.field}
              class={change.before === undefined ? 'added' : change.after === undefined ? 'removed' : 'changed'}
            >
              <th scope="row">
                <code>{change.field}</code>
              </th>
              <td class="before">
                {change.before === undefined ? (
                  <span class="muted">—</span>
                ) : (
                  <Highlight text={shown(change.before)} needle={needle} />
                )}
              </td>
              <td class="after">
                {change.after === undefined ? (
                  <span class="muted">—</span>
                ) : (
                  <Highlight text={shown(change.after)} needle={needle} />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** Where the search text is in the event's after or before, with a little of what surrounds it. */
function matchOf(event: EventItem, needle: string): { field: string; text: string } | null {
  const find = needle.toLowerCase()
  for (const [side, value] of [
    ['data', event.data],
    ['preData', event.preData],
  ] as const) {
    for (const [field, leaf] of flatten(value)) {
      const text = shown(leaf)
      const at = text.toLowerCase().indexOf(find)
      if (at === -1) continue
      const start = Math.max(0, at - 30)
      const end = Math.min(text.length, at + find.length + 30)
      return {
        field: `${side}.${field}`,
        text: `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`,
      }
    }
  }
  return null
}

/** One event of the log; `where` adds the flag and project it is about, `needle` is highlighted. */
export function EventEntry({ event, where, needle = '' }: { event: EventItem; where: boolean; needle?: string }) {
  const [open, setOpen] = useState(false)
  const id = `event-${event.id}-changes`
  const match = needle ? matchOf(event, needle) : null
  return (
    <li class="event">
      <div class="event-line">
        <span class="muted">{when(event.createdAt)}</span> <strong class="event-type">{event.type}</strong> by{' '}
        <span class="actor">
          <Highlight text={event.createdBy} needle={needle} />
        </span>
        {where && event.featureName ? (
          <>
            {' · '}
            <Highlight text={event.featureName} needle={needle} />
          </>
        ) : null}
        {where && event.project ? ` in ${event.project}` : ''}
        {event.environment ? (where ? ` / ${event.environment}` : ` in ${event.environment}`) : ''}
        <Button size="sm" variant="ghost" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
          {open ? 'Hide changes' : 'Show changes'}
        </Button>
      </div>
      {match && (
        <p class="match">
          <code>{match.field}</code>: <Highlight text={match.text} needle={needle} />
        </p>
      )}
      {open && (
        <div id={id}>
          <FieldDiff before={event.preData} after={event.data} label={`Changes of event ${event.id}`} needle={needle} />
        </div>
      )}
    </li>
  )
}

const EMPTY = { q: '', type: '', project: '', feature: '', createdBy: '', from: '', to: '' }

export function EventsPage() {
  const [form, setForm] = useState(EMPTY)
  const [query, setQuery] = useState(EMPTY)
  const [offset, setOffset] = useState(0)
  const projects = useLoad(() => get<{ projects: Project[] }>('/api/admin/projects'), [])
  const search = new URLSearchParams({ limit: String(PAGE), offset: String(offset) })
  if (query.q) search.set('query', query.q)
  for (const key of ['type', 'project', 'feature', 'createdBy'] as const)
    if (query[key]) search.set(key, `IS:${query[key]}`)
  if (query.from) search.set('from', `IS:${query.from}`)
  if (query.to) search.set('to', `IS:${query.to}`)
  const { data, error } = useLoad(
    () => get<{ events: EventItem[]; total: number }>(`/api/admin/search/events?${search}`),
    [search.toString()],
  )
  const set = (key: keyof typeof EMPTY, value: string) => setForm({ ...form, [key]: value })
  const field = (key: keyof typeof EMPTY, label: string, type: 'text' | 'date' | 'search' = 'text') => (
    <label>
      {label}
      <input type={type as 'text'} value={form[key]} onInput={e => set(key, e.currentTarget.value)} />
    </label>
  )
  const picker = (key: 'type' | 'project', label: string, options: string[], any: string) => (
    <Picker label={label} value={form[key]} options={options} placeholder={any} onChange={value => set(key, value)} />
  )
  const total = data?.total ?? 0
  return (
    <main class="events-page">
      <h1>Event log</h1>
      <form
        class="filters"
        aria-label="Search events"
        onSubmit={e => (e.preventDefault(), setOffset(0), setQuery(form))}
      >
        {field('q', 'Search text', 'search')}
        {picker('type', 'Type', [...EVENT_TYPES], 'Any type')}
        {picker(
          'project',
          'Project',
          (projects.data?.projects ?? []).map(project => project.id),
          'Any project',
        )}
        {field('feature', 'Flag')}
        {field('createdBy', 'Who')}
        {field('from', 'From', 'date')}
        {field('to', 'To', 'date')}
        <div class="actions">
          <Button type="submit" variant="primary" icon={Search}>
            Search
          </Button>
          <Button onClick={() => (setForm(EMPTY), setOffset(0), setQuery(EMPTY))}>Clear filters</Button>
        </div>
      </form>
      <ErrorLine error={error} />
      <p class="muted" aria-live="polite">
        {data
          ? `${total} events${total ? `, ${offset + 1}–${Math.min(offset + PAGE, total)} shown` : ''}`
          : 'Searching…'}
      </p>
      {data && total === 0 && (
        <EmptyState icon={SearchX} title="No event matches">
          Clear a filter, widen the dates or search for a shorter text.
        </EmptyState>
      )}
      <ol class="events">
        {data?.events.map(event => (
          <EventEntry key={event.id} event={event} where needle={query.q} />
        ))}
      </ol>
      <nav aria-label="Pages" class="actions">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(0)}>
          Newest
        </button>
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Newer
        </button>
        <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
          Older
        </button>
        <button
          type="button"
          disabled={offset + PAGE >= total}
          onClick={() => setOffset(Math.max(0, Math.floor((total - 1) / PAGE) * PAGE))}
        >
          Oldest
        </button>
      </nav>
    </main>
  )
}
