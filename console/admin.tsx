/** The event log. API tokens: tokens.tsx; users: users.tsx. */
import { useState } from 'preact/hooks'
import { get, type EventItem } from './api'
import { ErrorLine, EventEntry, useLoad } from './ui'

const PAGE = 50

export function EventsPage() {
  const [form, setForm] = useState({ q: '', type: '', project: '', feature: '', from: '', to: '' })
  const [query, setQuery] = useState(form)
  const [offset, setOffset] = useState(0)
  const search = new URLSearchParams({ limit: String(PAGE), offset: String(offset) })
  if (query.q) search.set('query', query.q)
  for (const key of ['type', 'project', 'feature'] as const) if (query[key]) search.set(key, `IS:${query[key]}`)
  if (query.from) search.set('from', `IS:${query.from}`)
  if (query.to) search.set('to', `IS:${query.to}`)
  const { data, error } = useLoad(
    () => get<{ events: EventItem[]; total: number }>(`/api/admin/search/events?${search}`),
    [search.toString()],
  )
  const field = (key: keyof typeof form, label: string, type: 'text' | 'date' = 'text') => (
    <label>
      {label}
      <input
        type={type as 'text'}
        value={form[key]}
        onInput={e => setForm({ ...form, [key]: e.currentTarget.value })}
      />
    </label>
  )
  const total = data?.total ?? 0
  return (
    <main>
      <h1>Event log</h1>
      <form
        class="inline"
        aria-label="Search events"
        onSubmit={e => (e.preventDefault(), setOffset(0), setQuery(form))}
      >
        {field('q', 'Search text')}
        {field('type', 'Type')}
        {field('project', 'Project')}
        {field('feature', 'Flag')}
        {field('from', 'From', 'date')}
        {field('to', 'To', 'date')}
        <button type="submit">Search</button>
      </form>
      <ErrorLine error={error} />
      <p class="muted" aria-live="polite">
        {data
          ? `${total} events${total ? `, ${offset + 1}–${Math.min(offset + PAGE, total)} shown` : ''}`
          : 'Searching…'}
      </p>
      <ol class="events">
        {data?.events.map(event => (
          <EventEntry key={event.id} event={event} where />
        ))}
      </ol>
      <nav aria-label="Pages" class="inline">
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
