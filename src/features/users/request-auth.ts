/**
 * The second way to produce a `Caller`: besides an API token in `Authorization`, a session cookie
 * of a signed-in user. A request with an `Authorization` header is a token request, whatever
 * cookies it carries, so token clients behave exactly as before.
 *
 * Cross-site request forgery: the cookie is SameSite=Strict, and a write (any method but GET, HEAD,
 * OPTIONS) authenticated by it must also come from the service's own origin: its `Origin` header
 * must be the origin the request was sent to (or, behind a reverse proxy, the one in
 * X-Forwarded-Host / X-Forwarded-Proto, which a cross-site page cannot set without a CORS preflight
 * the admin API never grants); without `Origin`, `Sec-Fetch-Site: same-origin` will do. Anything
 * else is 403 before the route runs.
 */
import { NoAccessError } from '../../errors'
import { byToken, type Authenticate, type Authenticated } from '../tokens/auth'
import type { TokensService } from '../tokens/tokens.service'
import type { SessionsService } from './sessions.service'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function firstOf(header: string | null): string | null {
  return header?.split(',')[0]?.trim() || null
}

/** Whether a request comes from a page of the service itself. */
export function fromOwnOrigin(request: Request): boolean {
  const origin = request.headers.get('origin')
  if (origin === null) return request.headers.get('sec-fetch-site') === 'same-origin'
  const url = new URL(request.url)
  if (origin === url.origin) return true
  const forwardedHost = firstOf(request.headers.get('x-forwarded-host'))
  if (forwardedHost === null) return false
  const forwardedProto = firstOf(request.headers.get('x-forwarded-proto')) ?? url.protocol.slice(0, -1)
  return origin === `${forwardedProto}://${forwardedHost}`
}

/**
 * A kind of bearer secret other than an API token (a personal access token): `holds` tells its
 * secrets from the others by their form, `authenticate` finds its caller or throws 401.
 */
export interface BearerSecrets {
  holds(header: string): boolean
  authenticate(header: string): Authenticated
}

export function requestAuthenticator(
  tokens: Pick<TokensService, 'authenticate'>,
  sessions: Pick<SessionsService, 'authenticate'>,
  others: readonly BearerSecrets[] = [],
): Authenticate {
  const token = byToken(tokens)
  return (request, options) => {
    const header = request.headers.get('authorization')
    if (header?.trim() && !options?.apiKeyHeader) {
      for (const kind of others) if (kind.holds(header)) return kind.authenticate(header)
    }
    // Routes that take X-API-Key are SDK routes: a session never signs in there.
    if (header?.trim() || options?.apiKeyHeader) return token(request, options)
    const caller = sessions.authenticate(request)
    // No session cookie either: the token check gives the usual 401.
    if (caller === null) return token(request)
    if (!SAFE_METHODS.has(request.method) && !fromOwnOrigin(request)) {
      throw new NoAccessError(
        `A ${request.method} with a session cookie must come from the console's own origin (the Origin header did not match): refused as a possible cross-site request`,
        'NONE',
      )
    }
    return { caller, type: 'admin', environment: '*' }
  }
}
