/**
 * API tokens (admins): create one for an SDK (client, frontend: one environment) or a script
 * (admin, with a role), scoped to all projects or some, with an optional expiry; its secret is
 * shown once. Deleting a token asks for its name to be typed: whatever uses it stops working.
 */
import { useState } from 'preact/hooks'
import { KeyRound, Plus, Trash2 } from 'lucide'
import { call, enc, get, type Project, type Token } from './api'
import { Button } from './components/button'
import { confirmFirst } from './components/dialog'
import { EmptyState } from './components/empty-state'
import { Picker, TextField } from './components/field'
import { toast } from './components/toast'
import { ErrorLine, useLoad, when, TableWrap } from './ui'

const TYPES = [
  { value: 'client', label: 'client (server-side SDK)' },
  { value: 'frontend', label: 'frontend (browser and mobile SDK)' },
  { value: 'admin', label: 'admin (scripts and the admin API)' },
]
const ROLES = [
  { value: 'admin', label: 'admin: everything' },
  { value: 'editor', label: 'editor: all but tokens and users' },
  { value: 'viewer', label: 'viewer: read only' },
]

interface Form {
  tokenName: string
  type: string
  role: string
  environment: string
  allProjects: boolean
  projects: string[]
  expires: string
}

const EMPTY: Form = {
  tokenName: '',
  type: 'client',
  role: 'admin',
  environment: 'development',
  allProjects: true,
  projects: [],
  expires: '',
}

/** The last moment of the chosen day, in the browser's time zone. */
const endOfDay = (date: string) => new Date(`${date}T23:59:59`).toISOString()

function CreateToken({ onCreated }: { onCreated: (secret: string) => void }) {
  const [form, setForm] = useState<Form>(EMPTY)
  const [error, setError] = useState<unknown>(null)
  const choices = useLoad(
    () =>
      Promise.all([
        get<{ projects: Project[] }>('/api/admin/projects'),
        get<{ environments: { name: string; type: string }[] }>('/api/admin/environments'),
      ]),
    [],
  )
  const [projects, environments] = choices.data ?? [undefined, undefined]
  const set = (change: Partial<Form>) => setForm({ ...form, ...change })
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      const created = await call<{ secret: string }>('POST', '/api/admin/api-tokens', {
        tokenName: form.tokenName,
        type: form.type,
        ...(form.type === 'admin' ? { role: form.role } : { environment: form.environment }),
        projects: form.allProjects ? ['*'] : form.projects,
        ...(form.expires ? { expiresAt: endOfDay(form.expires) } : {}),
      })
      setError(null)
      setForm(EMPTY)
      onCreated(created.secret)
    } catch (failure) {
      setError(failure)
    }
  }
  const today = new Date().toISOString().slice(0, 10)
  return (
    <form class="card" aria-label="Create a token" onSubmit={submit}>
      <h2>New token</h2>
      <div class="toolbar">
        <TextField label="Token name" value={form.tokenName} required onValue={tokenName => set({ tokenName })} />
        <Picker label="Token type" value={form.type} options={TYPES} onChange={type => set({ type })} />
        {form.type === 'admin' ? (
          <Picker label="Token role" value={form.role} options={ROLES} onChange={role => set({ role })} />
        ) : (
          <Picker
            label="Token environment"
            value={form.environment}
            options={(environments?.environments ?? []).map(entry => ({
              value: entry.name,
              label: entry.name === entry.type ? entry.name : `${entry.name} (${entry.type})`,
            }))}
            onChange={environment => set({ environment })}
          />
        )}
        <TextField
          label="Expires on"
          type="date"
          min={today}
          hint="Empty: never"
          value={form.expires}
          onValue={expires => set({ expires })}
        />
      </div>
      <fieldset>
        <legend>Token projects</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={form.allProjects}
            onChange={event => set({ allProjects: event.currentTarget.checked })}
          />
          All projects, present and future
        </label>
        {!form.allProjects &&
          projects?.projects.map(project => (
            <label class="check" key={project.id}>
              <input
                type="checkbox"
                checked={form.projects.includes(project.id)}
                onChange={event =>
                  set({
                    projects: event.currentTarget.checked
                      ? [...form.projects, project.id]
                      : form.projects.filter(id => id !== project.id),
                  })
                }
              />
              {project.name}
            </label>
          ))}
      </fieldset>
      <Button type="submit" variant="primary" icon={Plus}>
        Create token
      </Button>
      <ErrorLine error={error ?? choices.error} />
    </form>
  )
}

function Secret({ secret, onDone }: { secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false)
  return (
    <div class="secret card" role="status">
      <p>The token's secret, shown only now: copy it to where it is used.</p>
      <output aria-label="Token secret">
        <code>{secret}</code>
      </output>
      <Button
        onClick={() =>
          navigator.clipboard?.writeText(secret).then(
            () => setCopied(true),
            () => toast.error('The browser did not allow copying: select the secret and copy it.'),
          )
        }
      >
        {copied ? 'Copied' : 'Copy secret'}
      </Button>
      <Button variant="primary" onClick={onDone}>
        Done
      </Button>
    </div>
  )
}

export function TokensPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ tokens: Token[] }>('/api/admin/api-tokens'), [])
  const [secret, setSecret] = useState<string | null>(null)
  const remove = async (token: Token) => {
    const yes = await confirmFirst({
      title: `Delete token ${token.tokenName}?`,
      message: 'Every SDK or script using it is refused from now on. This cannot be undone.',
      confirmLabel: 'Delete token',
      typeToConfirm: token.tokenName,
    })
    if (!yes) return
    try {
      await call('DELETE', `/api/admin/api-tokens/${enc(token.tokenName)}`)
      toast.success(`Token ${token.tokenName} deleted.`)
      reload()
    } catch (failure) {
      toast.error(failure)
    }
  }
  return (
    <main>
      <div class="page-head">
        <h1>API tokens</h1>
      </div>
      <ErrorLine error={error} />
      {canWrite && <CreateToken onCreated={created => (setSecret(created), reload())} />}
      {secret && <Secret secret={secret} onDone={() => setSecret(null)} />}
      {data && data.tokens.length === 0 ? (
        <EmptyState icon={KeyRound} title="No API tokens">
          SDKs and scripts need one: create a client token for a server-side SDK, a frontend token for a browser.
        </EmptyState>
      ) : (
        <TableWrap label="API tokens">
          <table aria-label="API tokens">
            <thead>
              <tr>
                <th>Name</th>
                <th>Type</th>
                <th class="hide-phone">Role</th>
                <th>Projects</th>
                <th>Environment</th>
                <th class="hide-phone">Created</th>
                <th class="hide-phone">Expires</th>
                {canWrite && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {data?.tokens.map(token => (
                <tr key={token.tokenName}>
                  <td>{token.tokenName}</td>
                  <td>{token.type}</td>
                  <td class="hide-phone">{token.role}</td>
                  <td>{token.projects.includes('*') ? 'all' : token.projects.join(', ')}</td>
                  <td>{token.environment === '*' ? 'all' : token.environment}</td>
                  <td class="hide-phone">{when(token.createdAt)}</td>
                  <td class="hide-phone">{token.expiresAt ? when(token.expiresAt) : 'never'}</td>
                  {canWrite && (
                    <td>
                      <Button
                        size="sm"
                        variant="danger"
                        icon={Trash2}
                        aria-label={`Delete ${token.tokenName}`}
                        onClick={() => remove(token)}
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </main>
  )
}
