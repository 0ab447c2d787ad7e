/**
 * What the router cannot say by itself: which methods a known path takes (405 with `Allow` instead
 * of 404), and whether the path it routes is the one the client sent (docs/api.md, Names in paths): a path the
 * URL parser rewrote, or a write on a path ending in `/`, may not be what the client meant.
 */
import { Elysia } from 'elysia'
import { MethodNotAllowed, ValidationError } from '../errors'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Requests whose path, as the client sent it, had segments the URL parser resolved ("..", "%2E"…; see rawPathRoutes). */
const rewritten = new WeakSet<Request>()

/**
 * Over a socket, Bun's own router matches `routes` on the request target as sent, while
 * `request.url` is the resolved path: a route pattern per depth (`/:s0`, `/:s0/:s1`, … up to
 * RAW_PATH_DEPTH segments) hands `handle` every request with the segments the client sent, and
 * those whose segments are not those of `request.url` (a `.`/`..` segment in any spelling, a `\`
 * the parser reads as `/`) are marked for dotSegmentGuard to refuse: the app never acts on a path
 * the client did not spell. (Clients' own URL parsers resolve such segments before sending; only a
 * raw client sends them. A target deeper than RAW_PATH_DEPTH, no route's depth, goes unchecked.)
 * The `exact` paths (exactPaths: the app's paths without parameters) are static routes that skip
 * the comparison, as a target spelled exactly so has nothing to resolve.
 */
export const RAW_PATH_DEPTH = 24

export function rawPathRoutes(
  handle: (request: Request) => Response | Promise<Response>,
  exact: readonly string[] = [],
) {
  const check = (request: Request & { params?: Record<string, string> }) => {
    if (request.params && !sameSegments(request.params, pathOf(request.url))) rewritten.add(request)
    return handle(request)
  }
  const routes: Record<string, typeof check> = {}
  for (let depth = 1; depth <= RAW_PATH_DEPTH; depth++)
    routes[`/${Array.from({ length: depth }, (_, index) => `:s${index}`).join('/')}`] = check
  // Bun matches a static route only on a target spelled exactly as its path, before any pattern: such
  // a target has no segment to resolve, so it goes straight to `handle`, without the segments'
  // object and their comparison: about 3 µs less CPU per request (a bare server routed both ways,
  // 13.4 against 10.3 µs, medians of 16 alternating loads).
  for (const path of exact) routes[path] = handle
  return routes
}

/** The paths among `routes` that hold no parameter and only characters sent as they are: rawPathRoutes' exact paths. */
export function exactPaths(routes: readonly { path: string }[]): string[] {
  const paths = new Set<string>()
  for (const { path } of routes)
    if (/^\/(?:[A-Za-z0-9_.~-]+\/)*[A-Za-z0-9_.~-]*$/.test(path) && !/\/\.\.?(\/|$)/.test(path)) paths.add(path)
  return [...paths]
}

/**
 * Whether `sent` (the segments as the client sent them, decoded) are those of `path` (the resolved
 * path, still encoded). Resolving only ever drops "." and ".." segments or turns a backslash into "/", so
 * the joined segments differ from the decoded path exactly when the path was rewritten.
 */
function sameSegments(sent: Record<string, string>, path: string): boolean {
  let joined = ''
  for (const key in sent) joined += '/' + sent[key]
  if (!path.includes('%')) return joined === path
  try {
    return decodeURIComponent(path) === joined
  } catch {
    // Not valid percent-encoding: segment by segment, each left as it is where it cannot be decoded.
    const resolved = path.split('/').slice(1)
    const values = Object.values(sent)
    return (
      values.length === resolved.length && resolved.every((segment, index) => decodedSegment(segment) === values[index])
    )
  }
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/**
 * A `.` or `..` segment, even sent as %2E%2E, is resolved before any of our code sees the path (by
 * the client's URL parser, and by Bun's for a raw request), so a write addressed to a value ".."
 * arrives at the parent of the value's collection: `DELETE /api/admin/context/plan/legal-values/..`
 * arrives as `DELETE /api/admin/context/plan/`, which the router (lenient about a trailing slash)
 * would take for the context field itself. Such a resolved segment at the end always leaves a
 * trailing slash, and no route's path ends in one, so a write on such a path is refused before it
 * can reach a route. Reads keep the lenient match: they change nothing. (No value that can be
 * created is "." or "..", features/names.ts; docs/api.md, Names in paths.)
 */
export function dotSegmentGuard(basePath = '') {
  return new Elysia({ name: 'dot-segment-guard' }).onRequest(({ request }) => {
    if (rewritten.has(request)) {
      throw new ValidationError(
        `The path was sent with a "." or ".." segment (perhaps as %2E) or a "\\", which the URL parser resolves to ${pathOf(request.url)}: no route acts on a path other than the one sent. No stored name is "." or "..", so none is meant`,
      )
    }
    if (SAFE_METHODS.has(request.method)) return
    const path = pathOf(request.url)
    if (path.length > 1 && path.endsWith('/') && path !== `${basePath}/`) {
      throw new ValidationError(
        `No write is made on a path ending in "/" (${request.method} ${path}): a "." or ".." path segment, also when sent as %2E, is removed from the URL before the request arrives, so the path may name something else than was meant (no stored name is "." or ".."); send the path without the trailing "/"`,
      )
    }
  })
}

/** The path of a request URL, as sent (percent-encoding kept), without the query. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const end = url.indexOf('?', start)
  return end === -1 ? url.slice(start) : url.slice(start, end)
}

interface Route {
  method: string
  path: string
}

/**
 * The methods each route path takes, from the routes themselves (`routes` is read when first
 * needed, once every route is declared). Paths match as the router matches them: a `:param` is
 * one non-empty segment, a `*` the rest of the path, and a trailing slash is ignored.
 */
export class AllowedMethods {
  private table: { pattern: RegExp; methods: Set<string> }[] | undefined

  constructor(private readonly routes: () => readonly Route[]) {}

  /** The methods `path` takes, sorted, or undefined when no route has that path. */
  of(path: string): string[] | undefined {
    const found = new Set<string>()
    for (const { pattern, methods } of this.build())
      if (pattern.test(path)) for (const method of methods) found.add(method)
    if (found.size === 0) return undefined
    // Bun answers HEAD with the GET route's answer, without a body; OPTIONS is not a route here.
    if (found.has('GET')) found.add('HEAD')
    return [...found].sort()
  }

  /** The 405 for `method` on a known path, or undefined when `path` is unknown. */
  notAllowed(method: string, path: string): MethodNotAllowed | undefined {
    const allowed = this.of(path)
    if (!allowed || allowed.includes(method)) return undefined
    return new MethodNotAllowed(`${method} is not a method of ${path}; it takes ${allowed.join(', ')}`, allowed)
  }

  private build() {
    if (this.table) return this.table
    const byPath = new Map<string, Set<string>>()
    for (const route of this.routes()) {
      if (route.method === 'ALL' || route.method === 'WS') continue
      const key = route.path.replace(/\/+$/, '') || '/'
      let methods = byPath.get(key)
      if (!methods) byPath.set(key, (methods = new Set()))
      methods.add(route.method.toUpperCase())
    }
    this.table = [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), methods }))
    return this.table
  }
}

function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map(segment =>
      segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/')
  return new RegExp(`^${source}/?$`)
}
