/**
 * Request bodies are read as Unleash reads them: a property the route's body schema does not list,
 * at any depth, is accepted and dropped before the body is validated, so that scripts and tools
 * written for Unleash (which send more than its schemas list) work, and nothing unlisted reaches a
 * service, the store or an event. Everything the schema lists is still checked strictly (types,
 * values, lengths; no coercion of strings to numbers), arrays are left as they are, and a property
 * named `__proto__`, `constructor` or `prototype` anywhere in a body is refused (400) whether listed
 * or not, so no body can reach Object.prototype once stored or merged; only the keys of a record
 * marked KEYS_ARE_NAMES are names rather than properties, left to the service that reads them.
 *
 * A schema keeps unknown properties only where it says so: `additionalProperties: true` (bodies
 * the SDKs fill freely), a schema for additional properties, or a record (`patternProperties`).
 * JSON-Patch operations are records, so their extra members reach the service, which refuses them.
 *
 * The problem is raised in beforeHandle, so authentication (401/403) and the content type (415)
 * answer first, as for every other 400 (see http/query.ts for the same order with query strings).
 */
import type { Elysia, TSchema } from 'elysia'
import { ValidationError } from '../errors'

export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])

interface Schema {
  type?: string | string[]
  $ref?: string
  properties?: Record<string, Schema>
  patternProperties?: Record<string, Schema>
  additionalProperties?: boolean | Schema
  items?: Schema | Schema[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
}

type Resolve = (name: string) => Schema | undefined

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Marks a record whose keys are names of things the service stores (the flags and variants of an
 * SDK metrics report), not properties: a flag may be called `constructor` or `__proto__`, so such
 * keys are names there, and the service reading the record checks own keys only and never assigns
 * them onto an object with a prototype. Nothing under such a record is refused for its keys here.
 */
export const KEYS_ARE_NAMES = 'x-keys-are-names'

/**
 * Removes, in place, every prototype key in `value` (but under a record of names), so that none
 * reaches validation (whose error would then depend on where it stood) or a service; returns the
 * JSON pointer of the first, or null. `schema` is where `value` stands in the body's schema, null
 * where the schema says nothing (an unknown property, still searched).
 */
export function removePrototypeKeys(value: unknown, schema: Schema | null, resolve: Resolve, path = ''): string | null {
  const shape = schema === null ? NO_SHAPE : shapeOf(schema, resolve)
  if (shape.names) return null
  let first: string | null = null
  if (Array.isArray(value)) {
    const items = shape.items
    value.forEach((item, index) => {
      const found = removePrototypeKeys(item, items, resolve, `${path}/${index}`)
      first ??= found
    })
  } else if (isRecord(value)) {
    for (const key of Object.keys(value)) {
      if (PROTOTYPE_KEYS.has(key)) {
        first ??= `${path}/${key}`
        delete value[key]
        continue
      }
      const keeper = shape.listed.get(key) ?? keeperOf(shape, key)
      const found = removePrototypeKeys(value[key], keeper === true ? null : keeper, resolve, `${path}/${key}`)
      first ??= found
    }
  }
  return first
}

function deref(schema: Schema, resolve: Resolve): Schema {
  let current = schema
  for (let hops = 0; current.$ref !== undefined && hops < 20; hops++) {
    const target = resolve(current.$ref.replace(/^#\/components\/schemas\//, ''))
    if (!target) return current
    current = target
  }
  return current
}

/**
 * Alternatives per schema, per set of models: schemas never change once the app is built, and
 * working them out again for every node of every body took 4 % of the samples of a profile of
 * OFREP 304s in process.
 */
const alternativesKept = new WeakMap<Resolve, WeakMap<Schema, readonly Schema[]>>()

/** The alternatives a value may match: the members of anyOf/oneOf, each dereferenced. */
function alternatives(schema: Schema, resolve: Resolve): readonly Schema[] {
  let kept = alternativesKept.get(resolve)
  if (kept === undefined) alternativesKept.set(resolve, (kept = new WeakMap()))
  let found = kept.get(schema)
  if (found === undefined) kept.set(schema, (found = alternativesOf(schema, resolve)))
  return found
}

function alternativesOf(schema: Schema, resolve: Resolve): Schema[] {
  const resolved = deref(schema, resolve)
  const members = resolved.anyOf ?? resolved.oneOf
  if (members) return members.flatMap(member => alternatives(member, resolve))
  if (resolved.allOf) {
    // Every member applies: the properties of all of them are known.
    const merged: Schema = { type: 'object', properties: {} }
    for (const member of resolved.allOf.flatMap(m => alternatives(m, resolve))) {
      Object.assign(merged.properties!, member.properties)
      if (member.additionalProperties !== undefined) merged.additionalProperties = member.additionalProperties
      if (member.patternProperties)
        merged.patternProperties = { ...merged.patternProperties, ...member.patternProperties }
    }
    return [merged]
  }
  return [resolved]
}

const describesObject = (schema: Schema) =>
  schema.type === 'object' || schema.properties !== undefined || schema.patternProperties !== undefined
const describesArray = (schema: Schema) =>
  schema.type === 'array' && schema.items !== undefined && !Array.isArray(schema.items)

/**
 * What the walks of a body need of the schema at a node, worked out once per schema from its
 * alternatives: the first alternative's items where it describes an array, whether any describes
 * an object, the schema of each listed property (the first alternative listing it), and where an
 * unlisted property is kept, in the alternatives' order (each one's patterns, then its
 * additionalProperties). Per node and key this was an array filter, a find with a closure and an
 * Object.entries of the patterns: a tenth of an SDK metrics report's time in a profile.
 */
interface Shape {
  items: Schema | null
  objects: boolean
  /** Whether the node is a record of names (KEYS_ARE_NAMES): nothing under it is refused for its keys. */
  names: boolean
  listed: ReadonlyMap<string, Schema>
  keepers: readonly { pattern: RegExp | null; keep: Schema | true }[]
}

const NO_SHAPE: Shape = { items: null, objects: false, names: false, listed: new Map(), keepers: [] }
const shapesKept = new WeakMap<Resolve, WeakMap<Schema, Shape>>()

function shapeOf(schema: Schema, resolve: Resolve): Shape {
  let kept = shapesKept.get(resolve)
  if (kept === undefined) shapesKept.set(resolve, (kept = new WeakMap()))
  let shape = kept.get(schema)
  if (shape === undefined) kept.set(schema, (shape = shapeFrom(alternatives(schema, resolve))))
  return shape
}

function shapeFrom(candidates: readonly Schema[]): Shape {
  const objects = candidates.filter(describesObject)
  const listed = new Map<string, Schema>()
  for (const object of objects)
    for (const [key, inner] of Object.entries(object.properties ?? {})) if (!listed.has(key)) listed.set(key, inner)
  const keepers: Shape['keepers'][number][] = []
  for (const object of objects) {
    for (const [pattern, inner] of Object.entries(object.patternProperties ?? {}))
      keepers.push({ pattern: new RegExp(pattern), keep: inner })
    const additional = object.additionalProperties
    // The first alternative that keeps every property ends the search.
    if (additional === true || typeof additional === 'object') {
      keepers.push({ pattern: null, keep: additional })
      break
    }
  }
  return {
    items: (candidates.find(describesArray)?.items as Schema | undefined) ?? null,
    objects: objects.length > 0,
    names: candidates.some(candidate => (candidate as Record<string, unknown>)[KEYS_ARE_NAMES] === true),
    listed,
    keepers,
  }
}

/** Where the schema keeps a property it does not list: its own schema, or true to keep it unchecked. */
function keeperOf(shape: Shape, key: string): Schema | true | null {
  for (const { pattern, keep } of shape.keepers) if (pattern === null || pattern.test(key)) return keep
  return null
}

/**
 * Removes, in place, every property of `value` that `schema` does not list and does not keep.
 * Values of the wrong type are left for validation to refuse.
 */
export function dropUnknownProperties(schema: Schema, value: unknown, resolve: Resolve): void {
  const shape = shapeOf(schema, resolve)
  if (Array.isArray(value)) {
    if (shape.items) for (const item of value) dropUnknownProperties(shape.items, item, resolve)
    return
  }
  if (!isRecord(value) || !shape.objects) return
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const listed = shape.listed.get(key)
    if (listed) {
      dropUnknownProperties(listed, value[key], resolve)
      continue
    }
    const keeper = keeperOf(shape, key)
    if (keeper === null) delete value[key]
    else if (keeper !== true) dropUnknownProperties(keeper, value[key], resolve)
  }
}

interface RouteLike {
  method: string
  path: string
  hooks: { body?: unknown }
}

/**
 * Applies the rules above to each route of `app` that declares a body (added to a controller before
 * its routes, so it applies to all of them). `models` are the named schemas routes may refer to.
 */
export function lenientBodies<App extends Elysia<any, any, any, any, any, any, any>>(
  app: App,
  models: Record<string, TSchema>,
): App {
  const schemas = new Map<string, Schema | null>()
  const problems = new WeakMap<Request, ValidationError>()
  const resolve: Resolve = name => (models as Record<string, Schema>)[name]
  const bodySchemaFor = (method: string, path: string): Schema | null => {
    const key = `${method} ${path}`
    let schema = schemas.get(key)
    if (schema === undefined) {
      const route = (app.routes as RouteLike[]).find(r => r.path === path && r.method === method)
      const declared = route?.hooks.body
      schema = typeof declared === 'string' ? (resolve(declared) ?? null) : ((declared as Schema | undefined) ?? null)
      schemas.set(key, schema)
    }
    return schema
  }
  return app
    .onTransform(context => {
      const body: unknown = context.body
      if (typeof body !== 'object' || body === null) return
      const schema = bodySchemaFor(context.request.method, context.route)
      if (schema === null) return
      const prototypeKey = removePrototypeKeys(body, schema, resolve)
      if (prototypeKey !== null) {
        const name = prototypeKey.slice(prototypeKey.lastIndexOf('/') + 1)
        problems.set(context.request, ValidationError.at(prototypeKey, `"${name}" is not allowed as a property name`))
      }
      dropUnknownProperties(schema, body, resolve)
    })
    .onBeforeHandle(({ request }) => {
      const problem = problems.get(request)
      if (problem) throw problem
    }) as App
}
