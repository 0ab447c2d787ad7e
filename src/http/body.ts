/**
 * Request bodies, before anything else looks at them (contract §1, steps 1, 2 and 5):
 * - larger than the limit → 413, from `Content-Length` before reading, or while reading a chunked
 *   body (Bun's own limit would reset the connection instead, so it is set out of the way in server.ts);
 * - JSON content type but not JSON, nested deeper than any of our schemas, or holding text that
 *   is not valid Unicode (a lone surrogate) → 400, before authentication;
 * - any other or no content type → the request is remembered and its body is null. Only routes that
 *   declare a body schema validate it; when that fails the error handler answers 415 for such a
 *   request, after authentication and before any 400 for the body.
 */
import { Elysia } from 'elysia'
import { ContentTooLarge, UnreadableBodyError } from '../errors'

const unsupported = new WeakSet<Request>()

/** Whether the request came with a body that is not declared as application/json. */
export function sentUnsupportedBody(request: Request): boolean {
  return unsupported.has(request)
}

const JSON_CONTENT_TYPE = /^application\/json\s*(;|$)/i

function tooLarge(limit: number) {
  return new ContentTooLarge(`The request body is larger than the limit of ${limit} bytes`)
}

async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  // No route reads a GET's body, and Bun hands a bodiless GET that has a Content-Type a body
  // stream that only ends when the client closes the connection.
  if (!request.body || request.method === 'GET' || request.method === 'HEAD') return new Uint8Array(0)
  // A body of a declared length within the limit is read in one native call: the stream reader's
  // promise per chunk was the largest single cost of a small POST (SDK metrics, `bench/run.ts metrics`).
  const declared = request.headers.get('content-length')
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) <= limit) {
    const bytes = new Uint8Array(await request.arrayBuffer())
    if (bytes.byteLength > limit) throw tooLarge(limit)
    return bytes
  }
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
}

// ignoreBOM keeps a byte order mark in the text, so that JSON.parse refuses it: RFC 8259 forbids
// senders to add one, and dropping it silently would accept a body the fuzz test counts as broken.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

const ordinaryText = () => '[object Object]'

/** Our deepest request (a strategy's constraint values) nests 4 levels; anything past this is abuse. */
export const MAX_BODY_DEPTH = 16

/**
 * Refuses bodies no schema can accept but that would be costly to reject later: deep nesting makes
 * schema errors expensive to describe, and lone surrogates cannot be stored or encoded as UTF-8.
 */
function checkParsedBody(body: unknown): void {
  const stack: [unknown, number][] = [[body, 0]]
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!
    if (typeof value === 'string') {
      if (!value.isWellFormed())
        throw new UnreadableBodyError('The request body holds text that is not valid Unicode (a lone surrogate)')
      continue
    }
    if (typeof value !== 'object' || value === null) continue
    if (depth >= MAX_BODY_DEPTH)
      throw new UnreadableBodyError(`The request body is nested more than ${MAX_BODY_DEPTH} levels deep`)
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, depth + 1])
    } else {
      // for…in rather than Object.entries (parsed JSON has no inherited keys): this walks every
      // key of every body, and SDK metrics reports hold hundreds.
      for (const key in value) {
        if (!key.isWellFormed())
          throw new UnreadableBodyError('The request body holds a property name that is not valid Unicode')
        // An own toString or valueOf (never a function in JSON) makes the object impossible to turn
        // into text: String(), a template literal or Elysia's schema error for it would throw. Such
        // names are data where keys are names (a flag called toString in an SDK metrics report), so
        // the object is kept and given the ordinary way to become text, which JSON, keys and copies
        // do not see (a symbol, not enumerable).
        if ((key === 'toString' || key === 'valueOf') && !Object.hasOwn(value, Symbol.toPrimitive)) {
          Object.defineProperty(value, Symbol.toPrimitive, { value: ordinaryText })
        }
        stack.push([(value as Record<string, unknown>)[key], depth + 1])
      }
    }
  }
}

export function bodyHandling(limit: number) {
  return new Elysia({ name: 'body-handling' })
    .onRequest(({ request }) => {
      const declared = request.headers.get('content-length')
      if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
    })
    .onParse({ as: 'global' }, async ({ request }) => {
      const bytes = await readLimited(request, limit)
      if (!JSON_CONTENT_TYPE.test(request.headers.get('content-type') ?? '')) {
        unsupported.add(request)
        return null
      }
      if (bytes.byteLength === 0) return null
      let text: string
      try {
        text = utf8.decode(bytes)
      } catch {
        throw new UnreadableBodyError('The request body is not valid UTF-8')
      }
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch (error) {
        throw new UnreadableBodyError(`The request body is not valid JSON: ${(error as Error).message}`)
      }
      checkParsedBody(body)
      return body
    })
}
