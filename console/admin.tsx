/** The event log, API tokens and users. */
import { useState } from 'preact/hooks'
import { call, enc, get, ROLES, type EventItem, type Token, type User } from './api'
import { ErrorLine, EventEntry, useAct, useLoad, when } from './ui'

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

export function TokensPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ tokens: Token[] }>('/api/admin/api-tokens'), [])
  const [form, setForm] = useState({ tokenName: '', type: 'client', environment: 'development' })
  const [secret, setSecret] = useState<string | null>(null)
  const [copied, setCopied] = useState(false)
  const [actionError, setActionError] = useState<unknown>(null)
  const create = async (event: Event) => {
    event.preventDefault()
    try {
      const created = await call<{ secret: string }>('POST', '/api/admin/api-tokens', {
        ...form,
        projects: ['*'],
        ...(form.type === 'admin' ? { environment: undefined } : {}),
      })
      setSecret(created.secret)
      setCopied(false)
      setActionError(null)
      reload()
    } catch (failure) {
      setActionError(failure)
    }
  }
  const remove = async (name: string) => {
    try {
      await call('DELETE', `/api/admin/api-tokens/${enc(name)}`)
      reload()
    } catch (failure) {
      setActionError(failure)
    }
  }
  return (
    <main>
      <h1>API tokens</h1>
      <ErrorLine error={error} />
      {canWrite && (
        <form class="inline" aria-label="Create a token" onSubmit={create}>
          <label>
            Token name{' '}
            <input
              value={form.tokenName}
              required
              onInput={e => setForm({ ...form, tokenName: e.currentTarget.value })}
            />
          </label>
          <label>
            Token type
            <select value={form.type} onChange={e => setForm({ ...form, type: e.currentTarget.value })}>
              <option value="client">client</option>
              <option value="frontend">frontend</option>
              <option value="admin">admin</option>
            </select>
          </label>
          {form.type !== 'admin' && (
            <label>
              Token environment{' '}
              <input value={form.environment} onInput={e => setForm({ ...form, environment: e.currentTarget.value })} />
            </label>
          )}
          <button type="submit">Create token</button>
        </form>
      )}
      <ErrorLine error={actionError} />
      {secret && (
        <div class="secret" role="status">
          <p>The token's secret, shown only now:</p>
          <output aria-label="Token secret">
            <code>{secret}</code>
          </output>
          <button
            type="button"
            onClick={() =>
              navigator.clipboard?.writeText(secret).then(
                () => setCopied(true),
                () => {},
              )
            }
          >
            {copied ? 'Copied' : 'Copy secret'}
          </button>
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      )}
      <table aria-label="API tokens">
        <thead>
          <tr>
            <th>Name</th>
            <th>Type</th>
            <th>Role</th>
            <th>Projects</th>
            <th>Environment</th>
            <th>Created</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {data?.tokens.map(token => (
            <tr key={token.tokenName}>
              <td>{token.tokenName}</td>
              <td>{token.type}</td>
              <td>{token.role}</td>
              <td>{token.projects.join(', ')}</td>
              <td>{token.environment}</td>
              <td>{when(token.createdAt)}</td>
              <td>
                {canWrite && (
                  <button type="button" onClick={() => remove(token.tokenName)}>
                    Delete {token.tokenName}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  )
}

export function UsersPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ users: User[] }>('/api/admin/user-admin'), [])
  const [form, setForm] = useState({ username: '', rootRole: 'Viewer', password: '' })
  const { error: actionError, act } = useAct(reload)
  return (
    <main>
      <h1>Users</h1>
      <ErrorLine error={error} />
      {canWrite && (
        <form
          class="inline"
          aria-label="Create a user"
          onSubmit={e => (e.preventDefault(), act(() => call('POST', '/api/admin/user-admin', form)))}
        >
          <label>
            New username{' '}
            <input
              value={form.username}
              required
              onInput={e => setForm({ ...form, username: e.currentTarget.value })}
            />
          </label>
          <label>
            Root role
            <select value={form.rootRole} onChange={e => setForm({ ...form, rootRole: e.currentTarget.value })}>
              <option>Admin</option>
              <option>Editor</option>
              <option>Viewer</option>
            </select>
          </label>
          <label>
            New password{' '}
            <input
              type="password"
              autocomplete="new-password"
              value={form.password}
              onInput={e => setForm({ ...form, password: e.currentTarget.value })}
            />
          </label>
          <button type="submit">Create user</button>
        </form>
      )}
      <ErrorLine error={actionError} />
      <table aria-label="Users">
        <thead>
          <tr>
            <th>Username</th>
            <th>Email</th>
            <th>Role</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {data?.users.map(user => (
            <tr key={user.id}>
              <td>{user.username}</td>
              <td>{user.email}</td>
              <td>{ROLES[user.rootRole]}</td>
              <td>
                {canWrite && (
                  <button type="button" onClick={() => act(() => call('DELETE', `/api/admin/user-admin/${user.id}`))}>
                    Delete {user.username ?? user.email}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  )
}
