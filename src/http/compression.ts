/**
 * gzip for large JSON answers, when the client says it takes it (Accept-Encoding). Browsers and
 * Node's and Bun's fetch send `gzip` on every request and decompress without being asked; wrk and
 * curl send nothing and get the answer as it is. Level 1: OFREP's bulk answer of 1,000 flags
 * (99 KB) becomes 5.6 KB in about 40–60 µs (docs/ofrep.md, Speed), where writing and reading the
 * 99 KB cost the server and the client more.
 */

/** Below this an answer goes as it is: the saving would not pay for the compression. */
export const COMPRESS_FROM_BYTES = 1024

let lastHeader: string | null = null
let lastAccepts = false

/** Whether an Accept-Encoding header takes gzip (RFC 9110 §12.5.3: `gzip` or `*` with a non-zero q, `x-gzip` as gzip). */
export function acceptsGzip(header: string | null): boolean {
  if (header === null || header === '') return false
  // Clients send the same header on every request.
  if (header === lastHeader) return lastAccepts
  let named: boolean | undefined
  let any = false
  for (const part of header.split(',')) {
    const [coding, ...parameters] = part.split(';')
    const name = coding.trim().toLowerCase()
    let weight = 1
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=')
      if (key.trim().toLowerCase() === 'q') weight = Number(value?.trim())
    }
    const accepted = Number.isFinite(weight) && weight > 0
    if (name === 'gzip' || name === 'x-gzip') named = named === true || accepted
    else if (name === '*') any = accepted
  }
  lastHeader = header
  lastAccepts = named ?? any
  return lastAccepts
}

/**
 * The ETag to send with an answer that `jsonAnswer` makes (a 304's too): weak for a client that
 * takes gzip, whose answers are compressed bytes unlike the plain answer's (a weak If-None-Match
 * still matches, client.service etagMatches).
 */
export function etagFor(request: Request, etag: string): string {
  return acceptsGzip(request.headers.get('accept-encoding')) && !etag.startsWith('W/') ? `W/${etag}` : etag
}

/**
 * A JSON answer, gzipped when `request` takes it and it is large enough. It always says
 * `Vary: Accept-Encoding`, so that caches keep the two forms apart; an `etag` among `headers` is
 * sent as etagFor gives it.
 */
export function jsonAnswer(request: Request, bytes: Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}): Response {
  const answer: Record<string, string> = { ...headers, 'content-type': 'application/json', vary: 'Accept-Encoding' }
  if (!acceptsGzip(request.headers.get('accept-encoding'))) return new Response(bytes, { headers: answer })
  if (answer.etag !== undefined) answer.etag = etagFor(request, answer.etag)
  if (bytes.byteLength < COMPRESS_FROM_BYTES) return new Response(bytes, { headers: answer })
  answer['content-encoding'] = 'gzip'
  return new Response(Bun.gzipSync(bytes, { level: 1 }), { headers: answer })
}
