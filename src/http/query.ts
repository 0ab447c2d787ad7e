/**
 * Query strings are read here rather than by Elysia (contract §1, step 6), for every route that
 * declares a query schema. Elysia keeps the last of repeated values, leaves a broken escape such as
 * `%zz` as it is, and turns arrays in a query schema into a transform (ArrayQuery) that splits values
 * at commas and checks the pieces only after validation, throwing an error that would answer 500.
 * Here:
 * - values are percent-decoded strictly: a broken escape or bytes that are not UTF-8 → 400;
 * - a parameter given more than once → 400, unless its schema is `repeatable()`, which collects
 *   every value as given (commas included);
 * - the result replaces the parsed query before Elysia validates it against the declared schema.
 * The errors are raised after authentication (in beforeHandle), as the contract orders them.
 */
import { type Elysia, t, type TSchema } from 'elysia'
import type { ArrayOptions } from '@sinclair/typebox'
import { ValidationError } from '../errors'

/**
 * Elysia leaves a schema that carries its own `elysiaMeta` as declared instead of coercing it, so a
 * repeatable parameter stays a plain array that validation checks in full.
 */
const REPEATABLE = 'Repeatable'

/** A query parameter that may be given more than once (`tag=a&tag=b`): the array of its values. */
export function repeatable<T extends TSchema>(items: T, options: ArrayOptions = {}) {
  return t.Array(items, { ...options, elysiaMeta: REPEATABLE })
}

interface RouteLike {
  method: string
  path: string
  hooks: { query?: unknown; params?: unknown }
}

type Schema = {
  type?: string
  anyOf?: Schema[]
  elysiaMeta?: string
  items?: Schema
  properties?: Record<string, Schema>
}

/** Per route: the repeatable parameters, or null when the route declares no query schema. */
type QueryShape = { repeatable: Set<string> } | null

function isStringSchema(schema: Schema | undefined): boolean {
  if (!schema) return false
  if (schema.type === 'string') return true
  return Array.isArray(schema.anyOf) && schema.anyOf.every(isStringSchema)
}

/**
 * Elysia coerces numbers, booleans, objects and plain arrays in query and path schemas with
 * transforms whose errors escape its validation; our parameters are strings (or repeatable strings)
 * and the service parses them, so such a declaration is a mistake caught on the route's first request.
 */
function shapeOf(route: RouteLike, resolve: (name: string) => Schema | undefined): QueryShape {
  for (const part of ['params', 'query'] as const) {
    const declared = route.hooks[part]
    if (declared === undefined) continue
    const schema = typeof declared === 'string' ? resolve(declared) : (declared as Schema)
    for (const [name, property] of Object.entries(schema?.properties ?? {})) {
      const ok =
        isStringSchema(property) ||
        (part === 'query' && property.elysiaMeta === REPEATABLE && isStringSchema(property.items))
      if (!ok)
        throw new Error(
          `${route.method} ${route.path}: ${part} parameter ${name} must be declared as a string${part === 'query' ? ' or repeatable(string)' : ''}`,
        )
    }
  }
  const declared = route.hooks.query
  if (declared === undefined) return null
  const schema = typeof declared === 'string' ? resolve(declared) : (declared as Schema)
  const repeatables = Object.entries(schema?.properties ?? {}).filter(
    ([, property]) => property.elysiaMeta === REPEATABLE,
  )
  return { repeatable: new Set(repeatables.map(([name]) => name)) }
}

function decode(text: string): string | null {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return null
  }
}

/** The query string of `url` by the rules above; the first problem, if any, is returned beside it. */
export function readQuery(
  url: string,
  shape: { repeatable: Set<string> },
): { query: Record<string, string | string[]>; problem?: ValidationError } {
  const query: Record<string, string | string[]> = Object.create(null)
  const counts = new Map<string, number>()
  let problem: ValidationError | undefined
  const start = url.indexOf('?')
  if (start === -1) return { query }
  const end = url.indexOf('#', start)
  for (const pair of url.slice(start + 1, end === -1 ? undefined : end).split('&')) {
    if (pair === '') continue
    const equals = pair.indexOf('=')
    const rawKey = equals === -1 ? pair : pair.slice(0, equals)
    // A name that does not decode is kept as sent, and the schema refuses it as unknown by that name.
    const key = decode(rawKey) ?? rawKey
    let value = decode(equals === -1 ? '' : pair.slice(equals + 1))
    if (value === null) {
      problem ??= ValidationError.at(`/${key}`, `${key} is not valid percent-encoded UTF-8 text`)
      value = ''
    }
    const count = (counts.get(key) ?? 0) + 1
    counts.set(key, count)
    if (shape.repeatable.has(key)) {
      const values = query[key]
      if (Array.isArray(values)) values.push(value)
      else query[key] = [value]
    } else if (count === 1) {
      query[key] = value
    }
  }
  for (const [key, count] of counts) {
    if (count > 1 && !shape.repeatable.has(key))
      problem ??= ValidationError.at(`/${key}`, `${key} was given ${count} times; give it once`)
  }
  return { query, problem }
}

/**
 * Set through a computed key: Elysia reads each hook's source for the context's properties it uses,
 * and a hook of every route naming `.query` made it parse the query string of every route, those
 * without a query schema included (2 % of the server's CPU on the frontend API, which reads its
 * context from the URL itself). Routes with a query schema have it parsed for their validation anyway.
 */
const QUERY = 'query'

/**
 * Reads the query of each route of `app` (added to a controller before its routes, so it applies to
 * all of them; `app.routes` is complete by the time requests arrive). `models` are the named schemas
 * the routes may refer to.
 */
export function strictQueries<App extends Elysia<any, any, any, any, any, any, any>>(
  app: App,
  models: Record<string, TSchema>,
): App {
  const shapes = new Map<string, QueryShape>()
  const problems = new WeakMap<Request, ValidationError>()
  const resolve = (name: string) => (models as Record<string, Schema>)[name]
  const shapeFor = (method: string, path: string): QueryShape => {
    const key = `${method} ${path}`
    let shape = shapes.get(key)
    if (shape === undefined) {
      const route = (app.routes as RouteLike[]).find(
        r => r.path === path && (r.method === method || (method === 'HEAD' && r.method === 'GET')),
      )
      shape = route ? shapeOf(route, resolve) : null
      shapes.set(key, shape)
    }
    return shape
  }
  return app
    .onTransform(context => {
      const shape = shapeFor(context.request.method, context.route)
      if (shape === null) return
      const { query, problem } = readQuery(context.request.url, shape)
      ;(context as Record<string, unknown>)[QUERY] = query
      if (problem) problems.set(context.request, problem)
    })
    .onBeforeHandle(({ request }) => {
      const problem = problems.get(request)
      if (problem) throw problem
    }) as App
}
