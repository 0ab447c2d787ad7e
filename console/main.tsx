/**
 * The console: a single page served at `/`, calling the public admin API with the session cookie.
 * Routes live in the location hash, so the server serves one page for all of them.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { call, get, ROLES, whenSignedOut, type Project, type User } from './api'
import { ErrorLine, go, useHash, useLoad } from './ui'
import { FlagsPage } from './flags'
import { ArchivedFlags, FlagPage } from './flag'
import { TokensPage, UsersPage } from './admin'
import { EventsPage } from './events'
import { PlaygroundPage } from './playground'
import { ProjectOverview } from './overview'
import { ApplicationsPage, ContextPage, SegmentsPage, StrategyTypesPage, TagTypesPage } from './config'
import './style.css'

function SignIn({ onSignedIn, notice }: { onSignedIn: (user: User) => void; notice: string | null }) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    try {
      onSignedIn(await call<User>('POST', '/auth/simple/login', { username, password }))
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="sign-in">
      <h1>Sign in to flagstore</h1>
      {notice && <p role="status">{notice}</p>}
      <form onSubmit={submit}>
        <label>
          Username
          <input
            name="username"
            autocomplete="username"
            required
            value={username}
            onInput={e => setUsername(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={e => setPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorLine error={error} />
      </form>
    </main>
  )
}

function Projects({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ projects: Project[] }>('/api/admin/projects'), [])
  const [id, setId] = useState('')
  const [createError, setCreateError] = useState<unknown>(null)
  const create = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', '/api/admin/projects', { id, name: id })
      setId('')
      setCreateError(null)
      reload()
    } catch (failure) {
      setCreateError(failure)
    }
  }
  return (
    <main>
      <h1>Projects</h1>
      <ErrorLine error={error} />
      <ul class="cards">
        {data?.projects.map(project => (
          <li key={project.id}>
            <a href={`#/projects/${encodeURIComponent(project.id)}`}>{project.name}</a>
            <span class="muted">
              {' '}
              {project.id} · {project.featureCount} flags
            </span>
          </li>
        ))}
      </ul>
      {canWrite && (
        <form onSubmit={create} class="inline">
          <label>
            New project id
            <input value={id} required onInput={e => setId(e.currentTarget.value)} />
          </label>
          <button type="submit">Create project</button>
          <ErrorLine error={createError} />
        </form>
      )}
    </main>
  )
}

/** A signed-in user's own password. Every session ends with the change, so the user signs in again. */
function PasswordPage({ onChanged }: { onChanged: () => void }) {
  const [oldPassword, setOldPassword] = useState('')
  const [password, setPassword] = useState('')
  const [confirmPassword, setConfirmPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', '/api/admin/user/change-password', { oldPassword, password, confirmPassword })
      onChanged()
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <main class="sign-in">
      <h1>Change your password</h1>
      <form onSubmit={submit}>
        <label>
          Current password
          <input
            type="password"
            autocomplete="current-password"
            required
            value={oldPassword}
            onInput={e => setOldPassword(e.currentTarget.value)}
          />
        </label>
        <label>
          New password
          <input
            type="password"
            autocomplete="new-password"
            required
            aria-describedby="password-rule"
            value={password}
            onInput={e => setPassword(e.currentTarget.value)}
          />
        </label>
        <p id="password-rule" class="muted">
          10 to 128 characters, with a lower-case letter, an upper-case letter, a digit and another character.
        </p>
        <label>
          Confirm new password
          <input
            type="password"
            autocomplete="new-password"
            required
            value={confirmPassword}
            onInput={e => setConfirmPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Change password</button>
        <ErrorLine error={error} />
      </form>
    </main>
  )
}

/**
 * Whether this browser signed in and has not signed out since. The session cookie is HttpOnly, so
 * the page cannot see it; without this mark every first visit would ask who is signed in and get a
 * 401, a failed request in normal use. With it, only a session that ended elsewhere (expired, the
 * password changed, the user deleted) costs one 401, which shows the sign-in page.
 */
const SIGNED_IN = 'flagstore-signed-in'

function App() {
  const [user, setUserState] = useState<User | null | undefined>(undefined)
  const setUser = (next: User | null) => {
    if (next) localStorage.setItem(SIGNED_IN, '1')
    else localStorage.removeItem(SIGNED_IN)
    setUserState(next)
  }
  const [notice, setNotice] = useState<string | null>(null)
  const hash = useHash()
  useEffect(() => {
    whenSignedOut(() => setUser(null))
    if (localStorage.getItem(SIGNED_IN) === null) setUser(null)
    else
      get<{ user: User }>('/api/admin/user').then(
        me => setUser(me.user),
        () => setUser(null),
      )
  }, [])
  if (user === undefined) return <p aria-busy="true">Loading…</p>
  if (user === null)
    return <SignIn notice={notice} onSignedIn={signedIn => (setNotice(null), setUser(signedIn), go('/'))} />
  const role = ROLES[user.rootRole] ?? 'Viewer'
  const canWrite = role !== 'Viewer'
  const signOut = async () => {
    await call('POST', '/logout').catch(() => {})
    setUser(null)
  }
  const parts = hash.split('/').map(decodeURIComponent)
  let page
  if (parts[1] === 'projects' && parts[2] && parts[3] === 'features' && parts[4])
    page = <FlagPage project={parts[2]} name={parts[4]} canWrite={canWrite} />
  else if (parts[1] === 'projects' && parts[2] && parts[3] === 'archive') page = <ArchivedFlags project={parts[2]} />
  else if (parts[1] === 'projects' && parts[2] && parts[3] === 'overview') page = <ProjectOverview project={parts[2]} />
  else if (parts[1] === 'projects' && parts[2]) page = <FlagsPage project={parts[2]} canWrite={canWrite} />
  else if (parts[1] === 'events') page = <EventsPage />
  else if (parts[1] === 'playground') page = <PlaygroundPage shared={parts[2]} />
  else if (parts[1] === 'password')
    page = (
      <PasswordPage
        onChanged={() => (
          setNotice('Your password was changed, and every session ended: sign in with the new password.'), setUser(null)
        )}
      />
    )
  else if (parts[1] === 'segments') page = <SegmentsPage canWrite={canWrite} />
  else if (parts[1] === 'context') page = <ContextPage canWrite={canWrite} />
  else if (parts[1] === 'tag-types') page = <TagTypesPage canWrite={canWrite} />
  else if (parts[1] === 'strategy-types') page = <StrategyTypesPage canWrite={canWrite} />
  else if (parts[1] === 'applications') page = <ApplicationsPage />
  else if (parts[1] === 'tokens') page = <TokensPage canWrite={role === 'Admin'} />
  else if (parts[1] === 'users') page = <UsersPage canWrite={role === 'Admin'} />
  else page = <Projects canWrite={canWrite} />
  return (
    <>
      <header>
        <nav aria-label="Main">
          <a href="#/">Projects</a>
          <a href="#/events">Event log</a>
          <a href="#/playground">Playground</a>
          <a href="#/segments">Segments</a>
          <a href="#/context">Context fields</a>
          <a href="#/tag-types">Tag types</a>
          <a href="#/strategy-types">Strategy types</a>
          <a href="#/applications">Applications</a>
          {role === 'Admin' && <a href="#/tokens">API tokens</a>}
          {role === 'Admin' && <a href="#/users">Users</a>}
        </nav>
        <span class="who">
          Signed in as <strong>{user.username ?? user.email}</strong> ({role})
        </span>
        {!user.isAPI && <a href="#/password">Change password</a>}
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      {page}
    </>
  )
}

render(<App />, document.getElementById('app')!)
