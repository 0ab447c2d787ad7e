/**
 * The OpenAPI document, made once from the app's routes when they are all declared. The paths
 * come from `@elysiajs/swagger`'s schema mapping (its `utils` entry point; we do not mount the
 * plugin, whose routes would serve the document unpolished); we then polish it: our bodies are
 * JSON only (the mapping lists form data and text because of our custom body parser), each error
 * status gets its own description, and each operation says which permission it needs (declared
 * by the `auth` macro as `x-permission`). TypeBox writes JSON Schema 2020 keywords that OpenAPI 3.0
 * lacks, which Swagger UI then shows as "string" and samples wrongly; they are rewritten into 3.0's
 * (openapi-30.ts), and each request body's example is put where "Try it out" takes it from.
 */
import { filterPaths, registerSchemaPath } from '@elysiajs/swagger/utils'
import type { TSchema } from '@sinclair/typebox'
import type { AnyElysia, HTTPMethod } from 'elysia'
import { DOCUMENTED_AS, ERROR_DESCRIPTIONS } from './schemas'
import { bodyExampleOf, toOpenApi30 } from './openapi-30'

export const OPENAPI_PATH = '/swagger/json'

type Json = Record<string, any>

function jsonOnly(content: Json | undefined): Json | undefined {
  if (!content) return content
  const json = content['application/json']
  return json ? { 'application/json': json } : content
}

export function polishOpenApi(source: Json): Json {
  // The components are the very schemas routes validate with: work on a copy.
  const document: Json = JSON.parse(JSON.stringify(source))
  for (const [name, schema] of Object.entries<Json>(document.components?.schemas ?? {})) {
    if (schema[DOCUMENTED_AS]) document.components.schemas[name] = structuredClone(schema[DOCUMENTED_AS])
  }
  for (const operations of Object.values<Json>(document.paths ?? {})) {
    for (const operation of Object.values<Json>(operations)) {
      if (operation.requestBody) {
        operation.requestBody.content = jsonOnly(operation.requestBody.content)
        const media = operation.requestBody.content?.['application/json']
        const example = media && bodyExampleOf(media.schema, document)
        if (example !== undefined) media.example = example
      }
      // The mark that keeps Elysia from coercing a repeatable query parameter (http/query.ts) is not for readers.
      for (const parameter of operation.parameters ?? []) delete parameter.schema?.elysiaMeta
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        response.content = jsonOnly(response.content)
        delete response.$id
        const errorText = ERROR_DESCRIPTIONS[Number(status)]
        if (errorText) response.description = errorText
        if (response.content && Object.keys(response.content).length === 0) delete response.content
      }
      const permission = operation['x-permission']
      if (permission) {
        const needs =
          permission === 'NONE'
            ? 'Needs any admin API token.'
            : `Needs an admin API token with the ${permission} permission.`
        operation.description = operation.description ? `${operation.description}\n\n${needs}` : needs
      }
      const tokenType = operation['x-token-type']
      if (tokenType) {
        const needs = `Needs a ${tokenType} API token; any other type of token is refused with 403.`
        operation.description = operation.description ? `${operation.description}\n\n${needs}` : needs
      }
    }
  }
  return toOpenApi30(document)
}

export interface OpenApiInfo {
  title: string
  version: string
  description: string
  /** The path prefix the service is served under (`BASE_URI_PATH`); the paths are listed without it. */
  basePath?: string
}

const METHODS: readonly string[] = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD', 'PATCH', 'TRACE']

/** The document of every route `app` has now (hidden ones left out), polished. */
export function openApiDocument(app: AnyElysia, info: OpenApiInfo): Json {
  // Elysia keeps the models registered with `.model()` behind a protected field; the swagger plugin reads them the same way.
  const models = (app['getGlobalDefinitions']() as { type: Record<string, TSchema> }).type
  const paths: Json = {}
  for (const route of app.routes) {
    if (route.hooks?.detail?.hide === true) continue
    const methods = route.method === 'ALL' ? METHODS : METHODS.includes(route.method) ? [route.method] : []
    for (const method of methods) {
      registerSchemaPath({
        schema: paths,
        hook: route.hooks,
        method: method as HTTPMethod,
        path: route.path,
        models,
        contentType: route.hooks?.type,
      })
    }
  }
  const { basePath, ...described } = info
  return polishOpenApi({
    openapi: '3.0.3',
    info: described,
    // "Try it out" sends to the servers' URL followed by the path: under a prefix, the prefix is that URL.
    ...(basePath ? { servers: [{ url: basePath }] } : {}),
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'An admin API token, e.g. `*:*.<64 hex digits>`; client and frontend tokens for the SDK APIs',
        },
      },
      schemas: { ...models },
    },
    paths: filterPaths(paths, { excludeStaticFile: true, exclude: [] }),
  })
}
