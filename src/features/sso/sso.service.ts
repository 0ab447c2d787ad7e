/**
 * OpenID Connect sign-in, the authorization code flow with PKCE and a nonce, through openid-client
 * (which checks the state, the issuer, the audience, the signature against the provider's published
 * keys, the expiry and the nonce): `start` sends the browser to the provider, `finish` takes it
 * back, finds or makes the user (sso.people.ts) and opens the same session as a password sign-in.
 *
 * What `finish` needs from `start` (state, nonce, PKCE verifier, where to go after) travels in a
 * short-lived cookie signed with the data directory's key, so any instance can finish a sign-in
 * another began; each state is taken once per instance, and the provider takes each code once.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import * as client from 'openid-client'
import type { Store } from '../../storage/store'
import { cookieValue, type SessionsService } from '../users/sessions.service'
import { personFor, SsoRefusal } from './sso.people'
import type { OidcSettings } from './sso.records'
import type { SsoSettings } from './sso.settings'
import { logAlways } from '../../log'

export const FLOW_COOKIE = 'flagstore-oidc'
/** How long a sign-in at the provider may take. */
const FLOW_MS = 10 * 60_000

interface Flow {
  state: string
  nonce: string
  verifier: string
  /** A path of the console to go back to. */
  back: string
  expires: number
}

/** What the browser is answered: a redirect, or a page (with cookies in both cases). */
export interface Answer {
  status: number
  location?: string
  cookies: string[]
  /** The page's message; with `location`, a page that goes on there. */
  message?: string
}

export class SsoService {
  private cached: { key: string; metadata: Promise<client.ServerMetadata> } | null = null
  /** States already finished on this instance, until their flow would have expired. */
  private readonly taken = new Map<string, number>()

  constructor(
    private readonly store: Pick<Store, 'transact' | 'secretKey'>,
    readonly settings: SsoSettings,
    private readonly sessions: Pick<SessionsService, 'open'>,
  ) {}

  /**
   * The provider's configuration. Its metadata is discovered once per settings (again after a
   * failure); the configuration is made anew for each sign-in, so that its signing keys are read
   * afresh: a provider that rotated its keys is followed at the next sign-in.
   */
  private async configuration(settings: OidcSettings): Promise<client.Configuration> {
    const key = JSON.stringify(settings)
    const insecure = new URL(settings.discoverUrl).protocol === 'http:'
    if (this.cached?.key !== key) {
      const metadata = client
        .discovery(
          new URL(settings.discoverUrl),
          settings.clientId,
          settings.secret || undefined,
          undefined,
          insecure ? { execute: [client.allowInsecureRequests] } : undefined,
        )
        .then(config => config.serverMetadata())
      metadata.catch(() => {
        if (this.cached?.metadata === metadata) this.cached = null
      })
      this.cached = { key, metadata }
    }
    const config = new client.Configuration(
      await this.cached.metadata,
      settings.clientId,
      { client_secret: settings.secret || undefined, id_token_signed_response_alg: settings.idTokenSigningAlgorithm },
      settings.secret ? undefined : client.None(),
    )
    if (insecure) client.allowInsecureRequests(config)
    // The ID token's signature too, against the provider's published keys: by default openid-client
    // trusts a token fetched from the token endpoint over TLS without it.
    client.enableNonRepudiationChecks(config)
    return config
  }

  /** The service's public base (`UNLEASH_URL`, else the request's origin and the base path). */
  private base(request: Request, basePath: string): string {
    return this.settings.environment.publicUrl ?? new URL(request.url).origin + basePath
  }

  redirectUri(request: Request, basePath: string): string {
    return `${this.base(request, basePath)}/auth/oidc/callback`
  }

  async start(request: Request, basePath: string): Promise<Answer> {
    const settings = this.settings.oidc()
    if (!settings.enabled) return { status: 404, cookies: [], message: 'Single sign-on is not switched on.' }
    let config: client.Configuration
    try {
      config = await this.configuration(settings)
    } catch (error) {
      return { status: 502, cookies: [], message: `The identity provider could not be reached: ${describe(error)}` }
    }
    const wanted = new URL(request.url).searchParams.get('redirect') ?? ''
    // Only a path of this service: never somewhere else after signing in.
    const back = /^\/(?![/\\])/.test(wanted) ? wanted : `${basePath}/`
    const flow: Flow = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      back,
      expires: Date.now() + FLOW_MS,
    }
    const scopes = ['openid', 'email', 'profile']
    if (settings.addGroupsScope) scopes.push('groups')
    scopes.push(...settings.extraScopes.split(/[\s,]+/).filter(Boolean))
    const parameters: Record<string, string> = {
      redirect_uri: this.redirectUri(request, basePath),
      scope: [...new Set(scopes)].join(' '),
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
    }
    if (settings.acrValues.trim()) parameters.acr_values = settings.acrValues.trim()
    const location = client.buildAuthorizationUrl(config, parameters).href
    return { status: 302, location, cookies: [this.flowCookie(this.seal(flow), request, basePath, FLOW_MS / 1000)] }
  }

  async finish(request: Request, basePath: string): Promise<Answer> {
    const clear = this.flowCookie('', request, basePath, 0)
    const refuse = (status: number, message: string): Answer => ({ status, cookies: [clear], message })
    const settings = this.settings.oidc()
    if (!settings.enabled) return refuse(404, 'Single sign-on is not switched on.')
    const flow = this.unseal(cookieValue(request.headers.get('cookie'), FLOW_COOKIE))
    if (!flow) return refuse(400, 'This sign-in was not started here, or took too long: start again.')
    const url = new URL(request.url)
    if (url.searchParams.get('state') !== flow.state)
      return refuse(400, 'The sign-in answer does not match: start again.')
    if (this.taken.has(flow.state)) return refuse(400, 'This sign-in was already used: start again.')
    this.take(flow)
    const providerError = url.searchParams.get('error')
    if (providerError)
      return refuse(401, `The identity provider refused: ${url.searchParams.get('error_description') ?? providerError}`)
    let claims: Record<string, unknown>
    let issuer: string
    try {
      const config = await this.configuration(settings)
      issuer = config.serverMetadata().issuer
      const current = new URL(this.redirectUri(request, basePath))
      current.search = url.search
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      })
      const idClaims = tokens.claims()!
      let info: Record<string, unknown> = {}
      if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
        info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub).catch(() => ({}))
      }
      claims = { ...info, ...idClaims }
    } catch (error) {
      return refuse(401, `The identity provider's answer was refused: ${describe(error)}`)
    }
    const vouched = { issuer, subject: String(claims.sub), claims }
    try {
      // Named as the person once known (personFor sets it): nothing is recorded before that.
      const author = { name: 'system', userId: null as number | null }
      const { user, roleKept } = await this.store.transact(author, tx => personFor(tx, vouched, settings, author))
      const { cookie } = await this.sessions.open(user, request)
      let message = 'Signed in.'
      if (roleKept !== null) {
        message = `Signed in. Your groups no longer make you an admin, but you keep the role: ${roleKept}.`
        logAlways('warn', 'single sign-on kept the last admin an admin despite their groups', {
          userId: user.id,
          issuer,
          reason: roleKept,
        })
      }
      return { status: 200, location: marked(flow.back), cookies: [clear, cookie], message }
    } catch (error) {
      if (error instanceof SsoRefusal) return refuse(403, error.message)
      if (error instanceof Error && error.name === 'AuthenticationRequired') return refuse(403, error.message)
      throw error
    }
  }

  /**
   * Where to send a browser whose session just ended: the provider's end-session endpoint when
   * single sign-out is on (and the provider has one), else null.
   */
  async signOutUrl(request: Request, basePath: string): Promise<string | null> {
    const settings = this.settings.oidc()
    if (!settings.enabled || !settings.enableSingleSignOut) return null
    try {
      const config = await this.configuration(settings)
      if (!config.serverMetadata().end_session_endpoint) return null
      return client.buildEndSessionUrl(config, {
        client_id: settings.clientId,
        post_logout_redirect_uri: `${this.base(request, basePath)}/`,
      }).href
    } catch {
      return null
    }
  }

  private take(flow: Flow) {
    const now = Date.now()
    for (const [state, expires] of this.taken) if (expires <= now) this.taken.delete(state)
    this.taken.set(flow.state, flow.expires)
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.store.secretKey).update(`oidc-flow:${payload}`).digest()
  }

  private seal(flow: Flow): string {
    const payload = Buffer.from(JSON.stringify(flow)).toString('base64url')
    return `${payload}.${this.mac(payload).toString('base64url')}`
  }

  private unseal(value: string | null): Flow | null {
    if (!value) return null
    const [payload, mac] = value.split('.')
    if (!payload || !mac) return null
    const expected = this.mac(payload)
    const given = Buffer.from(mac, 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
    try {
      const flow = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Flow
      return flow.expires > Date.now() ? flow : null
    } catch {
      return null
    }
  }

  /** SameSite=Lax: the provider sends the browser back with a cross-site navigation, which Strict would leave without it. */
  private flowCookie(value: string, request: Request, basePath: string, maxAge: number): string {
    const https =
      new URL(request.url).protocol === 'https:' ||
      request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https' ||
      this.settings.environment.publicUrl?.startsWith('https:')
    return `${FLOW_COOKIE}=${value}; Path=${basePath}/auth/oidc; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${https ? '; Secure' : ''}`
  }
}

/** The path to go back to, marked `signed-in` for the console (which otherwise does not ask who is signed in). */
function marked(path: string): string {
  const url = new URL(path, 'http://service')
  url.searchParams.set('signed-in', 'sso')
  return url.pathname + url.search + url.hash
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as { cause?: unknown }).cause
  const detail = cause instanceof Error ? `: ${cause.message}` : ''
  return `${error.message}${detail}`
}
