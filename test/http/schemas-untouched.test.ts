// Store-independent: it is about the routes' schemas, which every app of the process shares.
/**
 * Serving does not change the schemas the routes are made with. They are module constants that every
 * route and every app of the process share (the error body's schema is in nearly every route), and
 * the OpenAPI document is written from them. Elysia marks each response schema it compiles
 * `additionalProperties: false` in place, on the route's first request: the document built after some
 * requests said what a fresh service's did not (http/response-schemas.ts). Every route is requested
 * once (which makes Elysia compile it), and each route's schemas and the app's models read the same
 * afterwards.
 */
import { expect, test } from 'bun:test'
import { ADMIN_SECRET, bodyText, makeApi } from '../helpers'

const SCHEMA_HOOKS = ['body', 'headers', 'params', 'query', 'cookie', 'response'] as const

type Route = { method: string; path: string; hooks: Record<string, unknown> }

/** Each route's schemas and the app's named models as JSON: what a route could have written into. */
function schemasOf(app: unknown): Record<string, string> {
  const { routes, definitions } = app as { routes: Route[]; definitions: { type: Record<string, unknown> } }
  const written: Record<string, string> = { models: JSON.stringify(definitions.type) }
  for (const route of routes)
    for (const hook of SCHEMA_HOOKS)
      if (route.hooks[hook] !== undefined)
        written[`${route.method} ${route.path} ${hook}`] = JSON.stringify(route.hooks[hook])
  return written
}

test('requesting every route once leaves every schema and model as it was', async () => {
  const api = await makeApi()
  try {
    const before = schemasOf(api.app)
    expect(Object.keys(before).length).toBeGreaterThan(150)
    const routes = (api.app as unknown as { routes: Route[] }).routes
    for (const { method, path } of routes) {
      const url = `http://localhost${path.replace(/:[^/]+/g, 'x').replace(/\*$/, 'x')}`
      for (const token of [ADMIN_SECRET, null]) {
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (token) headers.authorization = token
        const body = method === 'GET' || method === 'HEAD' ? undefined : '{}'
        const response = await api.app.handle(new Request(url, { method, headers, body }))
        await bodyText(response)
      }
    }
    const after = schemasOf(api.app)
    const changed = Object.keys(before).filter(key => after[key] !== before[key])
    expect(changed).toEqual([])
  } finally {
    await api.close()
  }
})
