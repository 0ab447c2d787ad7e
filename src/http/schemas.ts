/** Schemas shared by every feature: the error body and helpers for documenting routes. */
import { t } from 'elysia'
import type { TLiteral, TUnsafe } from '@sinclair/typebox'
import { Type, type IntegerOptions } from '@sinclair/typebox'

export const ErrorSchema = t.Object(
  {
    id: t.String({ description: 'Id of this error instance; 500 errors are logged under it', format: 'uuid' }),
    name: t.String({
      description: 'Kind of error, e.g. ValidationError or NotFoundError',
      examples: ['ValidationError'],
    }),
    message: t.String({ description: 'What went wrong, in words meant for a person' }),
    details: t.Optional(
      t.Array(
        t.Object(
          {
            message: t.String({ description: 'One problem with the request' }),
            path: t.Optional(t.String({ description: 'JSON pointer to the offending value, where there is one' })),
          },
          { description: 'One problem with the request' },
        ),
        { description: 'Each problem found, for validation errors' },
      ),
    ),
    permissions: t.Optional(t.Array(t.String(), { description: 'The permission that was missing (403 only)' })),
  },
  { description: 'Every error answers with this body, as application/json' },
)

/** What each error status means, for the OpenAPI document. */
export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request does not match the schema or breaks a rule of the operation',
  401: 'No API token or session, or an unknown, expired or deleted one; a wrong username or password',
  403: 'The token lacks the permission or the project this needs',
  404: 'The resource does not exist',
  409: 'The name is taken, or a JSON-Patch test did not hold',
  413: 'The request body is larger than the limit',
  415: 'The request body is not application/json',
  429: 'Too many failed sign-ins for the user or from the address; Retry-After says when to try again',
  503: 'The service is still starting, or cannot save writes now; Retry-After says when to try again',
  504: 'The database stopped answering while the write was being saved: it may or may not have been; read it back before trying again',
}

/** Documents error statuses of a route; the bodies are produced by the error handler. */
export function errors(...statuses: number[]): Record<number, 'error'> {
  const result: Record<number, 'error'> = {}
  for (const status of statuses) result[status] = 'error'
  return result
}

/** The statuses every authenticated route can answer, plus its own. */
export function authErrors(...statuses: number[]) {
  return errors(401, 403, ...statuses)
}

/** Errors of an authenticated route that takes a JSON body. */
export function bodyErrors(...statuses: number[]) {
  return errors(400, 401, 403, 413, 415, ...statuses)
}

/**
 * A schema may carry, under this key, the schema the OpenAPI document shows in its place: one that
 * says what clients should send where the validated one is looser so that the service can answer
 * in the contract's order (see flags/patch.model.ts jsonPatchBody).
 */
export const DOCUMENTED_AS = 'x-documented-as'

/**
 * A string schema with a `pattern` carries, under this key, what the pattern asks for in words
 * ("a hex colour such as #FFFFFF…"): validation messages say that instead of the regular
 * expression (http/validation-messages.ts; a test checks every pattern of the document has one).
 */
export const PATTERN_RULE = 'x-pattern-rule'

export const Timestamp = (description: string) => t.String({ format: 'date-time', description })
export const NullableTimestamp = (description: string) =>
  t.Union([t.String({ format: 'date-time' }), t.Null()], { description })

/**
 * An integer, and only a JSON number: Elysia's `t.Integer` also takes a string of digits ("500") and
 * converts it, which breaks the strict type checks of request bodies and shows the property as a
 * string in the OpenAPI document. Use this one in every schema (a test walks the document for the other).
 */
export const Integer = (options: IntegerOptions = {}) => Type.Integer(options)

/**
 * An enumeration as a union of literals. (`t.UnionEnum` would also do, but it gives the schema a
 * default, which Elysia fills in for a missing value: a required field could never be missing.)
 */
export const literals = <const T extends readonly string[]>(values: T, description: string) =>
  // Typed as its values: TypeBox types a union built from an array (not a tuple) as never.
  t.Union(values.map(value => t.Literal(value)) as TLiteral<T[number]>[], { description }) as unknown as TUnsafe<
    T[number]
  >
