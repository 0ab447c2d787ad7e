/**
 * An OFREP evaluation context (`{ targetingKey, …fields }`) as the frontend API's: the targeting
 * key is the userId (it wins over a `userId` field), every other field is read exactly as the
 * frontend API reads its body's context (evaluation/context.ts), so the one evaluator sees the same
 * context from both protocols. A context it refuses is OFREP's INVALID_CONTEXT; a targeting key
 * given empty is TARGETING_KEY_MISSING. A context without a targeting key is evaluated as the
 * frontend API evaluates one without a userId (anonymous visitors: sessionId, else at random).
 */
import { InvalidContextError, ValidationError } from '../../errors'
import { contextFromBody } from '../evaluation/context'
import type { EvalContext } from '../evaluation/scope'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export function ofrepContext(given: unknown, callerAddress: string | null): EvalContext {
  if (given === undefined) given = {}
  if (!isObject(given)) throw new InvalidContextError('context must be an object', 'INVALID_CONTEXT')
  const { targetingKey, ...fields } = given
  if (targetingKey !== undefined) {
    if (targetingKey === null || (typeof targetingKey === 'string' && targetingKey.trim() === '')) {
      throw new InvalidContextError(
        'targetingKey is empty: give the user (or another key) the flags are evaluated for, or leave it out',
        'TARGETING_KEY_MISSING',
      )
    }
    if (typeof targetingKey !== 'string') throw new InvalidContextError('targetingKey must be text', 'INVALID_CONTEXT')
    fields.userId = targetingKey
  }
  try {
    return contextFromBody({ context: fields }, callerAddress)
  } catch (error) {
    if (error instanceof ValidationError) throw new InvalidContextError(error.message, 'INVALID_CONTEXT')
    throw error
  }
}

/** A field the frontend API reads as a value: text (not empty), a number or a boolean. */
const given = (value: unknown) =>
  (typeof value === 'string' && value !== '') || typeof value === 'number' || typeof value === 'boolean'

/**
 * What an evaluation for `context` depends on besides the flags: the context as sent, and the
 * caller's address when it can matter: the context names no remoteAddress (which then defaults to
 * it), and either the scope's flags name remoteAddress (`readsAddress`) or the context has neither
 * a user (targetingKey, userId) nor a sessionId, so that `default` stickiness falls to the address.
 * The address is read only then (`addressOf`: reading the socket's peer is a measurable part of a
 * 304). A sessionId left out is random for each evaluation, and is no part of it: an ETag stands
 * for the context as sent.
 */
export function contextKey(context: unknown, readsAddress: boolean, addressOf: () => string | null): string {
  const text = JSON.stringify(context ?? {})
  if (!isObject(context)) return `${text}\n${addressOf() ?? ''}`
  if (context.remoteAddress !== undefined && context.remoteAddress !== null) return text
  const identified = given(context.targetingKey) || given(context.userId) || given(context.sessionId)
  return readsAddress || !identified ? `${text}\n${addressOf() ?? ''}` : text
}
