/**
 * The one error hierarchy of the service. Services throw these; `http/errors.ts` turns them into
 * responses in one place. Each class carries the HTTP status and the `name` the seed's error table
 * gives for it, so a handler never chooses a status itself.
 *
 * @example
 *   throw new NotFoundError(`Could not find flag "${name}" in project "${projectId}"`)
 */
export interface ErrorDetail {
  message: string
  path?: string
}

export abstract class AppError extends Error {
  abstract readonly status: number
  /** The error kind as clients see it in the `name` field. */
  abstract readonly errorName: string
  readonly details?: ErrorDetail[]

  constructor(message: string, details?: ErrorDetail[]) {
    super(message)
    this.details = details
  }

  /** Extra fields of the error body beyond id, name, message and details. */
  extra(): Record<string, unknown> {
    return {}
  }

  /** Response headers the error adds (Retry-After, Allow). */
  headers(): Record<string, string> {
    return {}
  }
}

export class ValidationError extends AppError {
  readonly status = 400
  readonly errorName = 'ValidationError'

  /** One problem, at `path` (a JSON pointer into the body, or `/<param>` for a parameter) when there is one. */
  static at(path: string | undefined, message: string): ValidationError {
    return new ValidationError(message, [path === undefined ? { message } : { message, path }])
  }
}

/**
 * An event search whose free text the search files cannot decide and whose checking would read
 * more events back from the log than a search may (features/events/search/search-work.ts).
 */
export class SearchTooBroad extends ValidationError {}

/** A request body that cannot be read at all: not JSON, not UTF-8, nested too deep (OFREP's PARSE_ERROR). */
export class UnreadableBodyError extends ValidationError {}

/** An evaluation context that cannot be evaluated; `code` is OFREP's errorCode for it. */
export class InvalidContextError extends ValidationError {
  constructor(
    message: string,
    readonly code: 'INVALID_CONTEXT' | 'TARGETING_KEY_MISSING',
  ) {
    super(message)
  }
}

export class AuthenticationRequired extends AppError {
  readonly status = 401
  readonly errorName = 'AuthenticationRequired'
}

export class NoAccessError extends AppError {
  readonly status = 403
  readonly errorName = 'NoAccessError'

  constructor(
    message: string,
    readonly permission: string,
  ) {
    super(message)
  }

  override extra() {
    return { permissions: [this.permission] }
  }
}

export class NotFoundError extends AppError {
  readonly status = 404
  readonly errorName = 'NotFoundError'
}

/** A known path, asked with a method it does not take; `allowed` are those it takes (the Allow header). */
export class MethodNotAllowed extends AppError {
  readonly status = 405
  readonly errorName = 'MethodNotAllowed'

  constructor(
    message: string,
    readonly allowed: readonly string[],
  ) {
    super(message)
  }

  override headers() {
    return { allow: this.allowed.join(', ') }
  }
}

export class NameExistsError extends AppError {
  readonly status = 409
  readonly errorName = 'NameExistsError'
}

/** A JSON-Patch `test` operation that did not hold: the client's view of the flag is stale. */
export class ConflictError extends AppError {
  readonly status = 409
  readonly errorName = 'ConflictError'
}

export class ContentTooLarge extends AppError {
  readonly status = 413
  readonly errorName = 'ContentTooLarge'
}

export class ContentTypeError extends AppError {
  readonly status = 415
  // Spelled as the seed's error table spells it.
  readonly errorName = 'ContentTypeerror'
}

/** A refusal that passes: `Retry-After` says in how many seconds to try again. */
abstract class RetryLater extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message)
  }

  override headers() {
    return { 'retry-after': String(this.retryAfterSeconds) }
  }
}

/** Too many failed sign-ins for a user or from an address. */
export class TooManyRequests extends RetryLater {
  readonly status = 429
  readonly errorName = 'TooManyRequestsError'
}

/**
 * The store could not make a write durable (a full disk, an I/O error, a database that is down or
 * does not answer in time); the write was undone and the next one tries again.
 */
export class StoreFailedError extends RetryLater {
  readonly status = 503
  readonly errorName = 'ServiceUnavailable'

  constructor(message: string, retryAfterSeconds = 1) {
    super(message, retryAfterSeconds)
  }
}

/**
 * The store's log did not answer within its bound (a database stopped, swapping or cut off answers
 * nothing at all; DATABASE_TIMEOUT_MS): the backend throws it for any call it gave up waiting for.
 * Writes queued behind such a call have waited that bound already, and are refused with it.
 */
export class StoreUnanswered extends StoreFailedError {}

/**
 * The database stopped answering after the write's COMMIT was sent: it may have been saved or not
 * (the store finds out from the database's log and follows it). Not a failure to retry blindly: a
 * client reads the resource back first.
 */
export class WriteOutcomeUnknown extends AppError {
  readonly status = 504
  readonly errorName = 'GatewayTimeout'
}

/** An event search stopped because its request was given up (the server's timeout) before it was answered. */
export class SearchStopped extends AppError {
  readonly status = 503
  readonly errorName = 'ServiceUnavailable'
}

/** The service is up but still loading; try again shortly. */
export class ServiceStarting extends AppError {
  readonly status = 503
  readonly errorName = 'ServiceUnavailable'
}

/** Too much is held already (streams past STREAMING_MAX_STREAMS), or the server is stopping. */
export class AtCapacity extends RetryLater {
  readonly status = 503
  readonly errorName = 'ServiceUnavailable'
}
