/**
 * An evaluation context as the frontend API reads it (sdk-api-contract §2), from the query string
 * (`?userId=…&properties[key]=…&<field>=…`) or from a body's `context`; OFREP reads its context
 * through the same (ofrep.context.ts), so that both protocols hand the evaluator the same context
 * for the same fields. As in Unleash, the SDK's
 * own fields stay at the root, any other field goes into `properties` (where `properties` itself
 * wins), `remoteAddress` defaults to the caller's address and `sessionId` to a random value.
 */
import { ValidationError } from '../../errors'
import { readQuery } from '../../http/query'
import type { EvalContext } from './constraints'

const ROOT = ['userId', 'sessionId', 'remoteAddress', 'appName', 'environment', 'currentTime'] as const
const ROOT_FIELDS = new Set<string>(ROOT)
const PROPERTY = /^properties\[(.*)\]$/

/** What the SDK makes of a value: text (String(value), as its resolveContextValue does); null is no value. */
function text(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value)
}

interface RawContext {
  root: Record<string, unknown>
  properties: Record<string, unknown>
}

function build(raw: RawContext, callerAddress: string | null): EvalContext {
  const properties: Record<string, string> = Object.create(null)
  const context: EvalContext = { properties }
  for (const [key, value] of Object.entries(raw.root)) {
    const asText = text(value)
    if (asText === undefined) continue
    if (ROOT_FIELDS.has(key)) context[key as (typeof ROOT)[number]] = asText
    else properties[key] = asText
  }
  for (const [key, value] of Object.entries(raw.properties)) {
    const asText = text(value)
    if (asText === undefined) delete properties[key]
    else properties[key] = asText
  }
  context.remoteAddress ??= callerAddress ?? undefined
  context.sessionId ??= String(Math.random())
  return context
}

/** Percent-decoding as readQuery's (`+` a space); null when it does not decode. */
function decoded(text: string): string | null {
  if (!text.includes('%') && !text.includes('+')) return text
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return null
  }
}

const LINE_BREAK = /[\n\r\u2028\u2029]/

/**
 * The context of a query string read in one pass, the same as contextFromQuery's reading through
 * readQuery; null for what that reading refuses or reads otherwise (a field given twice, text that
 * does not decode, a property name with a line break), left to it.
 */
function quickContext(url: string, callerAddress: string | null): EvalContext | null {
  const properties: Record<string, string> = Object.create(null)
  const context: EvalContext = { properties }
  const start = url.indexOf('?')
  if (start !== -1) {
    const end = url.indexOf('#', start)
    const seen: Record<string, true> = Object.create(null)
    let named: string[] | undefined
    for (const pair of url.slice(start + 1, end === -1 ? undefined : end).split('&')) {
      if (pair === '') continue
      const equals = pair.indexOf('=')
      const key = decoded(equals === -1 ? pair : pair.slice(0, equals))
      const value = decoded(equals === -1 ? '' : pair.slice(equals + 1))
      if (key === null || value === null || seen[key]) return null
      seen[key] = true
      if (key.startsWith('properties[') && key.endsWith(']')) {
        if (LINE_BREAK.test(key))
          return null
          // After the others: `properties[name]` wins over `name`.
        ;(named ??= []).push(key.slice(11, -1), value)
      } else if (ROOT_FIELDS.has(key)) context[key as (typeof ROOT)[number]] = value
      else properties[key] = value
    }
    if (named) for (let k = 0; k < named.length; k += 2) properties[named[k]] = named[k + 1]
  }
  context.remoteAddress ??= callerAddress ?? undefined
  context.sessionId ??= String(Math.random())
  return context
}

/** From the query string of `url`: a field given twice, or text that is not valid percent-encoding, is a 400. */
export function contextFromQuery(url: string, callerAddress: string | null): EvalContext {
  const quick = quickContext(url, callerAddress)
  if (quick) return quick
  const { query, problem } = readQuery(url, { repeatable: new Set() })
  if (problem) throw problem
  const root: Record<string, unknown> = Object.create(null)
  const properties: Record<string, unknown> = Object.create(null)
  for (const [key, value] of Object.entries(query)) {
    const property = PROPERTY.exec(key)
    if (property) properties[property[1]] = value
    else root[key] = value
  }
  return build({ root, properties }, callerAddress)
}

/** From a POST body's `context` (an object; its `properties`, if any, an object too). */
export function contextFromBody(body: { context?: unknown }, callerAddress: string | null): EvalContext {
  const given = body.context ?? {}
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw ValidationError.at('/context', 'context must be an object')
  const { properties = {}, ...root } = given as Record<string, unknown>
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties))
    throw ValidationError.at('/context/properties', 'properties must be an object')
  for (const [key, value] of [...Object.entries(root), ...Object.entries(properties as object)]) {
    if (value !== null && typeof value === 'object')
      throw ValidationError.at(
        `/context/${Object.hasOwn(root, key) ? '' : 'properties/'}${key}`,
        `${key} must be text, a number or a boolean`,
      )
  }
  return build({ root, properties: properties as Record<string, unknown> }, callerAddress)
}
