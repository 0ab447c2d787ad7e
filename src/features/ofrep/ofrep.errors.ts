/**
 * OFREP's error bodies (open-feature/protocol service/openapi.yaml) for the errors of the one
 * hierarchy (src/errors.ts), chosen by http/errors.ts for every request under /ofrep: 401 and 403
 * without a body; `{ key, errorCode, errorDetails }` for a single flag's request and
 * `{ errorCode, errorDetails }` for the bulk request; `{ errorDetails }` for a 500.
 */
import { type AppError, ContentTypeError, InvalidContextError, NotFoundError, ValidationError } from '../../errors'
import type { ErrorDialect } from '../../http/errors'
import { pathOf } from '../../http/routing'

export const OFREP_PREFIX = '/ofrep'
export const SINGLE_FLAG_PATH = '/ofrep/v1/evaluate/flags/'

export type OfrepErrorCode = 'FLAG_NOT_FOUND' | 'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL'

function codeOf(error: AppError): OfrepErrorCode {
  if (error instanceof NotFoundError) return 'FLAG_NOT_FOUND'
  if (error instanceof InvalidContextError) return error.code
  // A body that is not JSON, not an object, or not application/json: the request could not be read.
  if (error instanceof ValidationError || error instanceof ContentTypeError) return 'PARSE_ERROR'
  return 'GENERAL'
}

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

/** `basePath`: BASE_URI_PATH, which the paths the dialect sees begin with. */
export function ofrepErrors(basePath = ''): ErrorDialect {
  const prefix = basePath + OFREP_PREFIX + '/'
  const single = basePath + SINGLE_FLAG_PATH
  /** The flag a single flag's request names; undefined for the bulk request (and any other path). */
  const keyOf = (request: Request): string | undefined => {
    const path = pathOf(request.url)
    if (!path.startsWith(single) || path.length === single.length || path.indexOf('/', single.length) !== -1)
      return undefined
    try {
      return decodeURIComponent(path.slice(single.length))
    } catch {
      return path.slice(single.length)
    }
  }
  return {
    claims: request => pathOf(request.url).startsWith(prefix),
    render(error, request) {
      if (error.status === 401 || error.status === 403) return new Response(null, { status: error.status })
      const key = keyOf(request)
      // No route answered (another method, another path): not a flag that is missing.
      const code =
        error instanceof NotFoundError && (key === undefined || request.method !== 'POST') ? 'GENERAL' : codeOf(error)
      // The error's own headers (Allow on a 405, Retry-After) go with it, as in the admin API's shape.
      return json(
        { ...(key !== undefined ? { key } : {}), errorCode: code, errorDetails: error.message },
        error.status,
        error.headers(),
      )
    },
    internal: id => json({ errorDetails: `Something went wrong on our side; quote error id ${id}` }, 500),
  }
}
