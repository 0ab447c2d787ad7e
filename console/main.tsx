/**
 * The console: a single page served at `/`, calling the public admin API with the session cookie.
 * Routes live in the location hash, so the server serves one page for all of them. Signed in, every
 * page is drawn inside the shell (console/shell.tsx): navigation, command palette, theme, toasts.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { BASE, call, get, ROLES, whenSignedOut, type User } from './api'
import { ErrorLine, go, useHash } from './ui'
import { Shell } from './shell'
import { FlagsPage } from './flags'
import { ArchivedFlags, FlagPage } from './flag'
import { EventsPage } from './events'
import { PlaygroundPage } from './playground'
import { ProjectOverview } from './overview'
import { TokensPage } from './tokens'
import { IntegrationsPage } from './integrations'
import { UsersPage } from './users'
import { ApplicationsPage } from './applications'
import { ContextPage, TagTypesPage } from './config'
import { SegmentsPage } from './segments'
import { StrategyTypesPage } from './strategy-types'
import { EnvironmentsPage, ProjectSettings, ProjectsPage } from './projects'
import { PasswordPage } from './password'
import { ChangeRequestPage, ChangeRequestsPage } from './change-requests'
import './theme'
import './style.css'
import './shell.css'

/** The ways to sign in the service offers (GET /auth/options). */
interface SignInOptions {
  passwordSignIn: boolean
  oidc: boolean
  singleSignOut: boolean
}

const signInOptions = () => get<SignInOptions>('/auth/options')

function SignIn({ onSignedIn, notice }: { onSignedIn: (user: User) => void; notice: string | null }) {
  const [options, setOptions] = useState<SignInOptions>({ passwordSignIn: true, oidc: false, singleSignOut: false })
  useEffect(() => {
    signInOptions().then(setOptions, () => {})
  }, [])
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
      {options.oidc && (
        <a class="btn btn-primary sign-in-sso" href={`${BASE}/auth/oidc/login`}>
          Sign in with SSO
        </a>
      )}
      {!options.passwordSignIn && !options.oidc && <p role="status">No way to sign in is switched on.</p>}
      <form onSubmit={submit} hidden={!options.passwordSignIn}>
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
        <button type="submit" class="btn btn-primary" disabled={busy}>
          Sign in
        </button>
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

/** The page for a route (the hash split at "/", decoded), for a user of `role`. */
function pageFor(parts: string[], role: string, onPasswordChanged: () => void) {
  const canWrite = role !== 'Viewer'
  const admin = role === 'Admin'
  const [, first, project, section, name] = parts
  if (first === 'projects' && project) {
    if (section === 'features' && name) return <FlagPage project={project} name={name} canWrite={canWrite} />
    if (section === 'archive') return <ArchivedFlags project={project} />
    if (section === 'overview') return <ProjectOverview project={project} />
    if (section === 'settings') return <ProjectSettings project={project} canWrite={canWrite} />
    return <FlagsPage project={project} canWrite={canWrite} />
  }
  switch (first) {
    case 'change-requests':
      return project && section ? <ChangeRequestPage project={project} id={section} /> : <ChangeRequestsPage />
    case 'flags':
      return <FlagsPage canWrite={canWrite} />
    case 'events':
      return <EventsPage />
    case 'password':
      return <PasswordPage onChanged={onPasswordChanged} />
    case 'segments':
      return <SegmentsPage canWrite={canWrite} />
    case 'context':
      return <ContextPage canWrite={canWrite} />
    case 'tag-types':
      return <TagTypesPage canWrite={canWrite} />
    case 'strategy-types':
      return <StrategyTypesPage canWrite={canWrite} />
    case 'environments':
      return <EnvironmentsPage canWrite={admin} />
    case 'applications':
      return <ApplicationsPage />
    case 'playground':
      return <PlaygroundPage shared={project} />
    case 'tokens':
      return <TokensPage canWrite={admin} />
    case 'users':
      return <UsersPage canWrite={admin} />
    case 'integrations':
      return <IntegrationsPage canWrite={admin} />
    default:
      return <ProjectsPage canWrite={canWrite} />
  }
}

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
    // Back from single sign-on: signed in, with the mark in the address, which is taken off it.
    const url = new URL(location.href)
    if (url.searchParams.has('signed-in')) {
      localStorage.setItem(SIGNED_IN, '1')
      url.searchParams.delete('signed-in')
      history.replaceState(null, '', url.href)
    }
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
  const signOut = async () => {
    await call('POST', '/logout').catch(() => {})
    setUser(null)
    // With single sign-out, on to the provider's sign-out, which comes back here.
    const options = await signInOptions().catch(() => null)
    if (options?.singleSignOut) location.href = `${BASE}/auth/oidc/logout`
  }
  const passwordChanged = () => (
    setNotice('Your password was changed, and every session ended: sign in with the new password.'), setUser(null)
  )
  return (
    <Shell user={user} role={role} hash={hash} onSignOut={signOut}>
      {pageFor(hash.split('/').map(decodeURIComponent), role, passwordChanged)}
    </Shell>
  )
}

render(<App />, document.getElementById('app')!)
