/**
 * Elysia writes `additionalProperties: false` into every object schema it compiles as a route's
 * response (unless the schema says otherwise), in place, on the route's first request. The schemas
 * are module constants the routes and the OpenAPI document share, the named models among them, so
 * the document built after some requests said what a fresh service's did not, and each model's
 * walked copy (typebox-modules.ts) could lag behind. `settleResponseSchemas` makes that write for
 * every route when the app is made: the document and the checks say from the start what they say
 * after any request (test/http/schemas-untouched.test.ts requests every route and compares).
 */
import { Kind, type TSchema } from '@sinclair/typebox'
import { forgetWalkedModels } from './typebox-modules'

type Routes = { hooks: { response?: unknown } }[]
type Definitions = { type: Record<string, TSchema> }

/** Marks `schema` (or the model it names) as Elysia would; whether it wrote to one of `named`, the models. */
function settle(schema: unknown, models: Record<string, TSchema>, named: ReadonlySet<unknown>): boolean {
  const target = typeof schema === 'string' ? models[schema] : schema
  if (typeof target !== 'object' || target === null) return false
  const object = target as { type?: unknown; additionalProperties?: unknown }
  if (object.type !== 'object' || 'additionalProperties' in object) return false
  object.additionalProperties = false
  return named.has(target)
}

/**
 * Once per process the models are written (later apps find them settled); a model's walked form
 * is then made again, from the model as it is now.
 */
export function settleResponseSchemas(app: unknown): void {
  const { routes, definitions } = app as { routes: Routes; definitions: Definitions }
  const named = new Set<unknown>(Object.values(definitions.type))
  let models = false
  for (const { hooks } of routes) {
    const response = hooks.response
    const schemas =
      typeof response !== 'object' || response === null || Kind in response ? [response] : Object.values(response)
    for (const schema of schemas) if (settle(schema, definitions.type, named)) models = true
  }
  if (models) forgetWalkedModels()
}
