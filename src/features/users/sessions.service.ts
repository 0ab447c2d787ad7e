/**
 * Sign-in with a username (or email) and password, and the sessions it opens. A session is a
 * random secret in an HttpOnly, SameSite=Strict cookie; the store keeps only its SHA-256, so that a
 * session survives a restart, a copy of state.json signs nobody in, and deleting a user or changing
 * their password ends their sessions in the same commit. Opening and closing a session record no
 * event (the audit log is about changes to the service).
 */
import { createHash, randomBytes } from 'node:crypto'
import { AuthenticationRequired, NoAccessError, TooManyRequests, ValidationError } from '../../errors'
import { SYSTEM_ACTOR } from '../../domain/events'
import type { StateReader, Store } from '../../storage/store'
import { callerName, type Caller, type Credential, type Identity } from '../tokens/permissions'
import { LoginThrottle, personKey, type ThrottleLimits } from './login-throttle'
import { PASSWORD_MAX_LENGTH, verifyPassword } from './passwords'
import type { RootRole, SessionRecord, UserRecord } from './users.records'
import { callerOf, displayName, viewOf, type UsersService, type UserView } from './users.service'

/** Unleash's cookie name, so that a proxy set up for Unleash needs no change. */
export const SESSION_COOKIE = 'unleash-session'
/** Sessions kept per user: a new sign-in past this ends the oldest. */
const SESSIONS_PER_USER = 20

export interface SessionOptions {
  /** How long a session lasts from sign-in (`SESSION_TTL_HOURS`, 48 by default as in Unleash). */
  ttlMs: number
  /** `SECURE_COOKIES`: always mark the cookie Secure (it is anyway when the request came over HTTPS). */
  secureCookies: boolean
  throttle?: Partial<ThrottleLimits>
}

/** The refusal of a password sign-in while it is switched off (single sign-on only). */
export const PASSWORD_OFF =
  'Password sign-in is switched off: sign in with single sign-on (an admin can switch it back on, or start the service with PASSWORD_SIGN_IN=on)'

export const DEFAULT_SESSION_OPTIONS: SessionOptions = { ttlMs: 48 * 3600_000, secureCookies: false }

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex')

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return null
}

/** The user of the session `id` in `state` at `now` (ms); 401 when the session or its user has gone. */
function sessionUser(state: StateReader, id: string, now: number): UserRecord {
  const session = state.get('sessions', id)
  if (!session)
    throw new AuthenticationRequired(
      'The session has ended (signed out, expired, or the password changed); sign in again',
    )
  if (Date.parse(session.expiresAt) <= now)
    throw new AuthenticationRequired(`The session expired at ${session.expiresAt}; sign in again`)
  const user = state.get('users', String(session.userId))
  if (!user) throw new AuthenticationRequired('The user of this session no longer exists')
  if (user.disabled) throw new AuthenticationRequired('The user of this session was disabled')
  return user
}

/** A session as a caller's credential: its id (the SHA-256 of the cookie's secret). */
class SessionCredential implements Credential {
  constructor(private readonly id: string) {}

  check(state: StateReader, now: number): RootRole {
    return sessionUser(state, this.id, now).rootRole
  }
}

export interface SignedIn {
  user: UserView
  /** The Set-Cookie header value. */
  cookie: string
}

export class SessionsService {
  private readonly throttle: LoginThrottle

  constructor(
    private readonly store: Pick<Store, 'reader' | 'transact'>,
    private readonly users: Pick<UsersService, 'findByLogin' | 'record' | 'changePassword'>,
    private readonly options: SessionOptions = DEFAULT_SESSION_OPTIONS,
    throttle?: LoginThrottle,
    /** Whether password sign-in is switched off now (single sign-on's settings say). */
    private readonly passwordSignInOff: () => boolean = () => false,
  ) {
    this.throttle = throttle ?? new LoginThrottle(options.throttle)
  }

  /**
   * One argon2id verification per attempt, for a known user or not; the same 401 for an unknown
   * user and a wrong password. Held back attempts answer 429 without verifying anything.
   */
  async signIn(login: string, password: string, address: string | null, request: Request): Promise<SignedIn> {
    if (this.passwordSignInOff()) throw new NoAccessError(PASSWORD_OFF, 'NONE')
    const user: UserRecord | undefined = this.users.findByLogin(login)
    // A password longer than any can be is no guess at this person's: counted against the address only.
    const guess = password.length <= PASSWORD_MAX_LENGTH
    const attempt = await this.throttle.begin(guess ? personKey(user?.id, login) : null, address)
    if (attempt.wait !== null)
      throw new TooManyRequests(`Too many failed sign-ins; try again in ${attempt.wait} seconds`, attempt.wait)
    let ok = false
    try {
      ok = guess && (await verifyPassword(password, user?.passwordHash ?? null))
    } finally {
      await this.throttle.settle(attempt, ok)
    }
    if (!ok || !user) throw new AuthenticationRequired('Wrong username or password')
    if (user.disabled) throw new AuthenticationRequired('This user was disabled by an admin')
    return this.open(user, request)
  }

  /**
   * Opens a session for `user`, who has proven who they are (a password, or the identity provider):
   * the same cookie whichever way they signed in. 401 when the user was deleted or disabled meanwhile.
   */
  async open(user: UserRecord, request: Request): Promise<SignedIn> {
    const secret = randomBytes(32).toString('base64url')
    const signedIn = user
    const expiresAt = new Date(Date.now() + this.options.ttlMs).toISOString()
    await this.store.transact({ name: displayName(signedIn), userId: signedIn.id }, tx => {
      // The user may have been deleted or disabled while the password was being verified.
      const now = tx.get('users', String(signedIn.id))
      if (!now) throw new AuthenticationRequired('Wrong username or password')
      if (now.disabled) throw new AuthenticationRequired('This user was disabled by an admin')
      const mine: SessionRecord[] = []
      for (const session of tx.values('sessions')) {
        if (Date.parse(session.expiresAt) <= Date.now()) tx.delete('sessions', session.id)
        else if (session.userId === signedIn.id) mine.push(session)
      }
      mine.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      for (const old of mine.slice(0, Math.max(0, mine.length - SESSIONS_PER_USER + 1))) tx.delete('sessions', old.id)
      const id = hashOf(secret)
      tx.put('sessions', id, { id, userId: signedIn.id, createdAt: tx.now, expiresAt })
    })
    return { user: viewOf(signedIn), cookie: this.cookie(secret, request, Math.floor(this.options.ttlMs / 1000)) }
  }

  /**
   * A signed-in user changes their own password, proving the current one: one argon2id
   * verification, counted with the sign-in failures of the same user (a stolen session cannot
   * guess the password any faster than the sign-in form). Every session of the user ends, this one
   * too, in the commit that changes the password.
   */
  async changeOwnPassword(
    caller: Caller,
    input: { oldPassword: string; password: string; confirmPassword?: string },
    address: string | null,
  ): Promise<void> {
    if (caller.kind !== 'user') {
      throw new NoAccessError(
        `${callerName(caller, true)} has no password to change: an admin changes a user's password with POST /api/admin/user-admin/:id/change-password`,
        'NONE',
      )
    }
    if (input.confirmPassword !== undefined && input.confirmPassword !== input.password)
      throw ValidationError.at('/confirmPassword', 'confirmPassword must equal password')
    const guess = input.oldPassword.length <= PASSWORD_MAX_LENGTH
    const attempt = await this.throttle.begin(guess ? personKey(caller.userId, caller.tokenName) : null, address)
    if (attempt.wait !== null)
      throw new TooManyRequests(`Too many wrong passwords; try again in ${attempt.wait} seconds`, attempt.wait)
    let ok = false
    try {
      const user = this.users.record(caller.userId)
      ok = guess && (await verifyPassword(input.oldPassword, user?.passwordHash ?? null))
    } finally {
      await this.throttle.settle(attempt, ok)
    }
    if (!ok) throw ValidationError.at('/oldPassword', 'The current password is wrong')
    await this.users.changePassword(caller.userId, input.password, caller)
  }

  /**
   * Ends the request's session, if any; returns the Set-Cookie value that clears the cookie. Decided
   * inside a write, on the state it is applied to: on PostgreSQL, after catching up with the other
   * instances, so that a sign-out sent to an instance that has not yet heard of the sign-in still
   * ends the session. A cookie of no session changes nothing, and so commits nothing.
   */
  async signOut(request: Request): Promise<string> {
    const secret = cookieValue(request.headers.get('cookie'), SESSION_COOKIE)
    if (secret) {
      const id = hashOf(secret)
      // Ending a session records no event, so no event names this author.
      await this.store.transact(SYSTEM_ACTOR, tx => {
        if (tx.get('sessions', id)) tx.delete('sessions', id)
      })
    }
    return this.cookie('', request, 0)
  }

  /**
   * The signed-in user behind the request's session cookie, or null when it has none. Each write of
   * the caller checks the session again, on the state the write is applied to.
   */
  authenticate(request: Request, now = Date.now()): Identity | null {
    const secret = cookieValue(request.headers.get('cookie'), SESSION_COOKIE)
    if (secret === null || secret === '') return null
    const id = hashOf(secret)
    return callerOf(sessionUser(this.store.reader, id, now), new SessionCredential(id))
  }

  private cookie(value: string, request: Request, maxAge: number): string {
    const url = new URL(request.url)
    const https =
      url.protocol === 'https:' || request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https'
    // The routes are `<BASE_URI_PATH>/auth/simple/login`, `…/auth/oidc/callback` and `…/logout`: the cookie goes with what is under the prefix.
    const path = url.pathname.replace(/\/(auth\/simple\/login|auth\/oidc\/callback|logout)$/, '') || '/'
    return `${SESSION_COOKIE}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${this.options.secureCookies || https ? '; Secure' : ''}`
  }
}
