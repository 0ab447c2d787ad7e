/** API tokens and users. */
import { useState } from 'preact/hooks'
import { call, enc, get, ROLES, type Token, type User } from './api'
import { ErrorLine, useAct, useLoad, when } from './ui'

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
