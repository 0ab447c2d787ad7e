/** What every controller starts from: the strict query reading, its own named models, and the `auth` macro. */
import './typebox-modules'
import { Elysia, type AnyElysia, type TSchema } from 'elysia'
import { strictQueries } from './query'
import { lenientBodies } from './lenient-bodies'
import { ErrorSchema } from './schemas'

/**
 * - `standardHostname: false`: Elysia otherwise assumes a hostname of at least four characters when
 *   it cuts the path out of the URL, so http://api/health (a short service name) missed its route.
 * - `normalize: false`: Elysia's normalisation drops unknown properties but also turns an array into
 *   an empty object before validating, silently changing what was sent. Unknown properties are
 *   dropped by http/lenient-bodies.ts instead, which leaves every value it keeps as it was sent.
 */
export const ELYSIA_CONFIG = { handler: { standardHostname: false }, normalize: false } as ConstructorParameters<
  typeof Elysia
>[0]

/**
 * A controller's base: `models` are the named schemas its routes refer to by name (each becomes a
 * component of the OpenAPI document), `error` included; `auth` is the authorization macro. Its
 * routes read query strings strictly (http/query.ts) and bodies as Unleash does (http/lenient-bodies.ts).
 */
export function controllerBase<const Auth extends AnyElysia, const Models extends Record<string, TSchema>>(
  auth: Auth,
  models: Models,
) {
  const named = { error: ErrorSchema, ...models }
  return strictQueries(lenientBodies(new Elysia(ELYSIA_CONFIG).model(named).use(auth), named), named)
}

/** A 200 answer without a body, as the seed asks for bulk toggles and validate. */
export function noContent(status = 200): Response {
  return new Response(null, { status })
}

/** A 200 answer whose JSON text is already made (a cached list; search results, as UTF-8 from the worker). */
export function jsonResponse(json: string | Uint8Array<ArrayBuffer>): Response {
  return new Response(json, { headers: { 'content-type': 'application/json' } })
}

/**
 * Bodies larger than this go out of `lateResponse` as a stream. Bun 1.4.5 sends a body of 15 KiB
 * or more uncorked when its response is finished after the turn of the event loop that read the
 * request; 1 KiB is left for the headers.
 */
export const LATE_WHOLE_BYTES = 14 * 1024
const encoder = new TextEncoder()

/**
 * A 200 answer finished after its request's turn of the event loop: one that waited for a worker's
 * reply, a commit or a timer. Bun sends such a response uncorked when its body is large: the
 * status line, then each header's name, `: `, value and line end, then the body, every piece in a
 * send() of its own and so a TCP segment of its own (23 for a search page with our headers). A
 * response ready in the request's turn goes out in one send() at any size, and so does a large one
 * whose body is a stream: its headers and one chunk leave together, and the chunked encoding's end
 * follows (no Content-Length, which chunked answers do not have). docs/performance.md has the cost.
 */
export function lateResponse(body: string | Uint8Array<ArrayBuffer>, contentType = 'application/json'): Response {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body
  const headers = { 'content-type': contentType }
  if (bytes.byteLength <= LATE_WHOLE_BYTES) return new Response(bytes, { headers })
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
  return new Response(stream, { headers })
}

/**
 * Hooks put headers in `set` before the handler runs (the request id, CORS). When a handler answers
 * with a Response of its own, Elysia would make a second one to add them: new Headers, and the body
 * read back as a stream (measured: 20 % of the server's time on an OFREP 304, a quarter of a 100 KB
 * bulk answer's overhead). Instead they are added to the handler's Response, whose own headers win
 * as in Elysia's merge, and `set` is left without headers so that Elysia sends the Response as it is.
 */
export const setHeadersIntoResponses = () =>
  new Elysia({ name: 'set-headers-into-responses' }).onAfterHandle({ as: 'global' }, ({ response, set }) => {
    if (!(response instanceof Response)) return
    const headers = response.headers
    const added = set.headers as Record<string, string | string[]>
    for (const key in added) {
      const value = added[key]
      if (key === 'set-cookie') for (const cookie of Array.isArray(value) ? value : [value]) headers.append(key, cookie)
      else if (!headers.has(key)) headers.set(key, value as string)
    }
    set.headers = {}
  })
