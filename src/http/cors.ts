/**
 * CORS for the APIs browsers call from other origins (the frontend API, sdk-api-contract §2, and
 * OFREP, which web providers call), by path prefix in one hook so that each route there gets it, its
 * errors included: an allowed origin (`FRONTEND_CORS_ORIGINS`, `*` by default) gets
 * Access-Control-Allow-Origin and may read the ETag; a preflight OPTIONS is answered 204 before routing and authentication (browsers
 * send it without the Authorization header). Another origin gets no CORS header, so its browser
 * keeps the answer from the page.
 */
import { Elysia } from 'elysia'

const ALLOWED_METHODS = 'GET, POST, OPTIONS'
// X-API-Key: another way to send the token (OFREP's).
const ALLOWED_HEADERS =
  'Authorization, X-API-Key, Content-Type, If-None-Match, Unleash-AppName, Unleash-SDK, Unleash-Connection-Id'
/** How long browsers may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = '86400'

/** Whether the path of `url` is one of `prefixes` or below one: read in place, without parsing or copying the URL. */
function underPrefix(url: string, prefixes: readonly string[]): boolean {
  // The path starts after the scheme's `//`, at the first `/`.
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return false
  for (const prefix of prefixes) {
    if (!url.startsWith(prefix, start)) continue
    const next = url[start + prefix.length]
    if (next === undefined || next === '/' || next === '?' || next === '#') return true
  }
  return false
}

/**
 * `origins`: the allowed origins (exact, e.g. https://shop.example.com), or ['*'] for any;
 * `basePath`: BASE_URI_PATH, which the paths this hook sees begin with; `prefixes`: the browser APIs' paths.
 */
export function browserCors(origins: readonly string[], basePath: string, prefixes: readonly string[]) {
  const under = prefixes.map(prefix => basePath + prefix)
  const any = origins.includes('*')
  const allowed = new Set(origins)
  // With any origin allowed, the headers are the same for every request: made once.
  const anyOrigin = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'ETag' }
  return new Elysia({ name: 'browser-cors' }).onRequest(({ request, set }) => {
    if (!underPrefix(request.url, under)) return
    if (any && request.method !== 'OPTIONS') {
      Object.assign(set.headers, anyOrigin)
      return
    }
    const origin = request.headers.get('origin')
    const headers: Record<string, string> = {}
    if (any) headers['access-control-allow-origin'] = '*'
    else {
      // The answer differs by origin, so caches must keep one per origin.
      headers.vary = 'Origin'
      if (origin !== null && allowed.has(origin)) headers['access-control-allow-origin'] = origin
    }
    if (headers['access-control-allow-origin'] !== undefined) headers['access-control-expose-headers'] = 'ETag'
    if (request.method === 'OPTIONS') {
      if (headers['access-control-allow-origin'] !== undefined) {
        headers['access-control-allow-methods'] = ALLOWED_METHODS
        headers['access-control-allow-headers'] = ALLOWED_HEADERS
        headers['access-control-max-age'] = PREFLIGHT_MAX_AGE
      }
      return new Response(null, { status: 204, headers })
    }
    Object.assign(set.headers, headers)
  })
}
