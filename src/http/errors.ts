/** The one place where errors become HTTP responses (contract §2). */
import { Elysia, ValidationError as ElysiaValidationError } from 'elysia'
import { TransformDecodeCheckError, TransformDecodeError } from '@sinclair/typebox/value'
import { AppError, ContentTypeError, NotFoundError, ValidationError } from '../errors'
import type { Logger } from '../log'
import { sentUnsupportedBody } from './body'
import { detailOf, sentence, validationDetails } from './validation-messages'
import type { ValueError } from '@sinclair/typebox/errors'
import { noteStatus, requestIdOf } from './request-log'
import type { AllowedMethods } from './routing'

export function errorResponse(error: AppError, id: string = crypto.randomUUID()): Response {
  const body = {
    id,
    name: error.errorName,
    message: error.message,
    ...(error.details && error.details.length > 0 ? { details: error.details } : {}),
    ...error.extra(),
  }
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { 'content-type': 'application/json', ...error.headers() },
  })
}

/**
 * An API with error bodies of its own (OFREP): for the requests it claims, it renders the same
 * errors (the one hierarchy, chosen here) in its own shape, statuses unchanged.
 */
export interface ErrorDialect {
  claims(request: Request): boolean
  render(error: AppError, request: Request): Response
  /** A 500's body, with the id the log has it under. */
  internal(id: string, request: Request): Response
}

const where: Record<string, string> = {
  body: 'request body',
  query: 'query string',
  params: 'path',
  headers: 'headers',
  cookie: 'cookies',
}

/** Maps anything thrown while answering a request to the error body; 5xx details go to the log only. */
export function toAppErrorResponse(
  code: unknown,
  error: unknown,
  request: Request,
  log: Logger,
  unknownRoute?: UnknownRoute,
  allowed?: AllowedMethods,
  dialects: readonly ErrorDialect[] = [],
): Response {
  const dialect = dialects.find(candidate => candidate.claims(request))
  const render = dialect
    ? (appError: AppError) => dialect.render(appError, request)
    : (appError: AppError) => errorResponse(appError)
  return toResponse(code, error, request, log, unknownRoute, allowed, render, dialect)
}

function toResponse(
  code: unknown,
  error: unknown,
  request: Request,
  log: Logger,
  unknownRoute: UnknownRoute | undefined,
  allowed: AllowedMethods | undefined,
  errorResponse: (error: AppError) => Response,
  dialect: ErrorDialect | undefined,
): Response {
  if (error instanceof AppError) return errorResponse(error)
  if (code === 'PARSE') {
    const cause = (error as { cause?: unknown }).cause
    if (cause instanceof AppError) return errorResponse(cause)
    return errorResponse(new ValidationError('The request body could not be read as JSON'))
  }
  if (error instanceof ElysiaValidationError) {
    if (error.type === 'response') return internalError(error, request, log, dialect)
    if (error.type === 'body' && sentUnsupportedBody(request)) {
      const type = request.headers.get('content-type')
      return errorResponse(
        new ContentTypeError(
          `Only application/json is accepted, the request ${type ? `sent ${type}` : 'sent no Content-Type'}`,
        ),
      )
    }
    const details = validationDetails(error.all as ValueError[])
    const [first, ...more] = details
    const what = where[error.type] ?? error.type
    const problem = !first
      ? `The ${what} does not match the schema`
      : first.path === ''
        ? `The ${what} ${first.message}`
        : `The ${what} does not match the schema: ${sentence(first)}`
    const message = `${problem}${more.length > 0 ? ` (and ${more.length} more, see details)` : ''}`
    return errorResponse(new ValidationError(message, details))
  }
  if (error instanceof TransformDecodeCheckError || error instanceof TransformDecodeError) {
    // A schema transform (Elysia's coercion of query and path values) failed after validation;
    // Elysia rethrows TypeBox's own error, which says neither what nor where. Our parameter schemas
    // avoid such transforms (http/query.ts), so this is the net under any that remain.
    const inner = error instanceof TransformDecodeCheckError ? error.error : undefined
    const detail = inner
      ? detailOf(inner)
      : { path: (error as TransformDecodeError).path, message: 'could not be read' }
    return errorResponse(
      new ValidationError(`A request parameter does not match the schema: ${sentence(detail, 'the parameter')}`, [
        detail,
      ]),
    )
  }
  if (code === 'NOT_FOUND') {
    const path = new URL(request.url).pathname
    return errorResponse(
      unknownRoute?.(request, path) ??
        allowed?.notAllowed(request.method, path) ??
        new NotFoundError(`No route for ${request.method} ${path}`),
    )
  }
  const status = (error as { status?: unknown }).status
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return errorResponse(new ValidationError((error as Error).message || 'Bad request'))
  }
  return internalError(error, request, log, dialect)
}

function internalError(error: unknown, request: Request, log: Logger, dialect: ErrorDialect | undefined): Response {
  const id = crypto.randomUUID()
  log.error('internal error', {
    errorId: id,
    requestId: requestIdOf(request) ?? null,
    method: request.method,
    path: new URL(request.url).pathname,
    error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
  })
  if (dialect) return dialect.internal(id, request)
  return new Response(
    JSON.stringify({ id, name: 'InternalError', message: `Something went wrong on our side; quote error id ${id}` }),
    {
      status: 500,
      headers: { 'content-type': 'application/json' },
    },
  )
}

/** What to answer instead of 404 for a path no route matched (http/auth.ts: 401 under /api without a token). */
export type UnknownRoute = (request: Request, path: string) => AppError | undefined

/**
 * `allowed`: the methods of the known paths, so that a known path asked with another method
 * answers 405. `dialects`: APIs that render errors in their own shape (OFREP).
 */
export function errorHandling(
  log: Logger,
  unknownRoute?: UnknownRoute,
  allowed?: AllowedMethods,
  dialects: readonly ErrorDialect[] = [],
) {
  return new Elysia({ name: 'error-handling' }).onError({ as: 'global' }, ({ code, error, request }) => {
    const response = toAppErrorResponse(code, error, request, log, unknownRoute, allowed, dialects)
    noteStatus(request, response.status)
    return response
  })
}
