/**
 * Schema violations in plain words: each TypeBox error becomes a detail with the JSON pointer of
 * the offending value and a sentence naming the rule it breaks (its limit, the values allowed, the
 * type expected and the one found). TypeBox's own texts ("Expected union value", "should be one
 * of: 'string', 'null'") never reach a client.
 */
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import type { ErrorDetail } from '../errors'
import { PATTERN_RULE } from './schemas'

type Schema = Record<string, any>

/** How a value is named in a message: its JSON kind, and the value itself when it is short. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`
  switch (typeof value) {
    case 'string':
      return value.length <= 40 ? `the string ${JSON.stringify(value)}` : `a string of ${[...value].length} characters`
    case 'number':
      return `the number ${value}`
    case 'boolean':
      return String(value)
    case 'object':
      return 'an object'
    default:
      return typeof value
  }
}

const FORMATS: Record<string, string> = {
  'date-time': 'a date and time in RFC 3339 form, e.g. 2026-01-31T12:00:00Z',
  date: 'a date in the form 2026-01-31',
  uuid: 'a UUID',
  uri: 'a URI',
  email: 'an email address',
}

/** What a schema accepts, as a noun phrase ("a string", "null", "one of "a", "b""). */
function expected(schema: Schema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (Array.isArray(schema.anyOf)) {
    const members = schema.anyOf as Schema[]
    if (members.every(member => member.const !== undefined))
      return `one of ${members.map(member => JSON.stringify(member.const)).join(', ')}`
    return [...new Set(members.map(expected))].join(' or ')
  }
  switch (schema.type) {
    case 'string':
      return schema.format && FORMATS[schema.format] ? FORMATS[schema.format] : 'a string'
    case 'integer':
      return 'a whole number'
    case 'number':
      return 'a number'
    case 'boolean':
      return 'true or false'
    case 'null':
      return 'null'
    case 'array':
      return 'an array'
    case 'object':
      return 'a JSON object'
    default:
      return 'a value of another kind'
  }
}

const characters = (count: number) => `${count} character${count === 1 ? '' : 's'}`
const items = (count: number) => `${count} item${count === 1 ? '' : 's'}`
const properties = (count: number) => `${count} propert${count === 1 ? 'y' : 'ies'}`

/** The errors that say the value is of the wrong kind altogether (as opposed to breaking a limit of the right kind). */
const KIND_ERRORS = new Set([
  ValueErrorType.Array,
  ValueErrorType.Boolean,
  ValueErrorType.Integer,
  ValueErrorType.Literal,
  ValueErrorType.Null,
  ValueErrorType.Number,
  ValueErrorType.Object,
  ValueErrorType.String,
  ValueErrorType.Union,
  ValueErrorType.Never,
])

/** The sentence for one error, without the path: "must be at most 2000 characters long, got 2001". */
export function ruleBroken(error: ValueError): string {
  const schema = error.schema as Schema
  const value = error.value
  const length = typeof value === 'string' ? [...value].length : 0
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required'
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not a property this accepts'
    case ValueErrorType.ObjectMaxProperties:
      return `must have at most ${properties(schema.maxProperties)}`
    case ValueErrorType.ObjectMinProperties:
      return `must have at least ${properties(schema.minProperties)}`
    case ValueErrorType.StringMaxLength:
      return `must be at most ${characters(schema.maxLength)} long, got ${length}`
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1
        ? 'must not be empty'
        : `must be at least ${characters(schema.minLength)} long, got ${length}`
    case ValueErrorType.StringPattern:
      return `must be ${schema[PATTERN_RULE] ?? `a string matching the pattern ${schema.pattern}`}, got ${describeValue(value)}`
    case ValueErrorType.StringFormat:
    case ValueErrorType.StringFormatUnknown:
      return `must be ${FORMATS[schema.format] ?? `in the format ${schema.format}`}, got ${describeValue(value)}`
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${schema.maximum}, got ${value}`
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${schema.minimum}, got ${value}`
    case ValueErrorType.NumberExclusiveMaximum:
    case ValueErrorType.IntegerExclusiveMaximum:
      return `must be less than ${schema.exclusiveMaximum}, got ${value}`
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return `must be greater than ${schema.exclusiveMinimum}, got ${value}`
    case ValueErrorType.NumberMultipleOf:
    case ValueErrorType.IntegerMultipleOf:
      return `must be a multiple of ${schema.multipleOf}, got ${value}`
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${items(schema.maxItems)}, got ${Array.isArray(value) ? value.length : '?'}`
    case ValueErrorType.ArrayMinItems:
      return schema.minItems === 1
        ? 'must not be empty'
        : `must have at least ${items(schema.minItems)}, got ${Array.isArray(value) ? value.length : '?'}`
    case ValueErrorType.ArrayUniqueItems:
      return 'must not hold the same item twice'
    case ValueErrorType.ArrayContains:
    case ValueErrorType.ArrayMinContains:
    case ValueErrorType.ArrayMaxContains:
      return `must hold ${expected(schema.contains ?? {})} (${schema.minContains ?? 1} to ${schema.maxContains ?? 'any number of'} times)`
    case ValueErrorType.TupleLength:
      return `must have exactly ${items(schema.maxItems ?? 0)}`
    case ValueErrorType.Never:
      return 'is not allowed here'
    case ValueErrorType.Union:
      return detailOf(error as ValueError).message
    default:
      if (KIND_ERRORS.has(error.type) || schema.type !== undefined || schema.const !== undefined)
        return `must be ${expected(schema)}, got ${describeValue(value)}`
      return `is not allowed here, got ${describeValue(value)}`
  }
}

/**
 * One error as a detail. A union names, when the value is of the kind of one member (a string
 * where a string or null is allowed), the rule that member broke, where it broke it (perhaps
 * inside the value); otherwise what the members accept.
 */
export function detailOf(error: ValueError): Required<ErrorDetail> {
  if (error.type !== ValueErrorType.Union) return { path: error.path, message: ruleBroken(error) }
  const schema = error.schema as Schema
  const members = (schema.anyOf ?? []) as Schema[]
  if (members.length > 0 && members.every(member => member.const !== undefined)) {
    return {
      path: error.path,
      message: `must be one of ${members.map(member => JSON.stringify(member.const)).join(', ')}, got ${describeValue(error.value)}`,
    }
  }
  for (const iterator of error.errors ?? []) {
    const first = iterator.First()
    // The member whose first complaint is not about the kind of value (or is deeper in it) fits the value's kind.
    if (first && (first.path !== error.path || !KIND_ERRORS.has(first.type))) return detailOf(first)
  }
  return { path: error.path, message: `must be ${expected(schema)}, got ${describeValue(error.value)}` }
}

/**
 * The details of a failed validation: one per offending place (the first rule broken there), in
 * the order found, at most `limit`.
 */
export function validationDetails(errors: Iterable<ValueError>, limit = 20): ErrorDetail[] {
  const details: ErrorDetail[] = []
  const seen = new Set<string>()
  for (const error of errors) {
    // TypeBox reports a missing property twice: missing, and not of its type.
    const detail = detailOf(error)
    if (seen.has(detail.path)) continue
    seen.add(detail.path)
    details.push(detail)
    if (details.length >= limit) break
  }
  return details
}

/** One detail in a sentence: "/description must be at most 2000 characters long, got 2001"; `whole` names the value at the root. */
export function sentence(detail: ErrorDetail, whole = 'the value'): string {
  return `${detail.path ? detail.path : whole} ${detail.message}`
}
