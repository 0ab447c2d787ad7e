/**
 * The OpenAPI document and Swagger UI. `@elysiajs/swagger` derives the document from the routes;
 * we then polish it once: our bodies are JSON only (the plugin lists form data and text because of
 * our custom body parser), each error status gets its own description, and each operation says
 * which permission it needs (declared by the `auth` macro as `x-permission`).
 */
import { swagger } from '@elysiajs/swagger'
import { Elysia } from 'elysia'
import { DOCUMENTED_AS, ERROR_DESCRIPTIONS } from './schemas'

const SOURCE_PATH = '/swagger/source.json'
const PLUGIN_PAGE_PATH = '/swagger/plugin'
export const OPENAPI_PATH = '/swagger/json'

type Json = Record<string, any>

function jsonOnly(content: Json | undefined): Json | undefined {
  if (!content) return content
  const json = content['application/json']
  return json ? { 'application/json': json } : content
}

export function polishOpenApi(document: Json): Json {
  for (const [name, schema] of Object.entries<Json>(document.components?.schemas ?? {})) {
    if (schema[DOCUMENTED_AS]) document.components.schemas[name] = structuredClone(schema[DOCUMENTED_AS])
  }
  for (const operations of Object.values<Json>(document.paths ?? {})) {
    for (const operation of Object.values<Json>(operations)) {
      if (operation.requestBody) operation.requestBody.content = jsonOnly(operation.requestBody.content)
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
        const needs = permission === 'NONE' ? 'Needs any admin API token.' : `Needs an admin API token with the ${permission} permission.`
        operation.description = operation.description ? `${operation.description}\n\n${needs}` : needs
      }
    }
  }
  return document
}

export function openApi(info: { title: string; version: string; description: string }, handle: (request: Request) => Promise<Response>) {
  let polished: Json | null = null
  return new Elysia({ name: 'openapi' })
    .use(
      swagger({
        // The plugin's own page loads Swagger UI from a CDN; ours (swagger-ui.ts) is served from here.
        path: PLUGIN_PAGE_PATH,
        specPath: SOURCE_PATH,
        provider: 'swagger-ui',
        exclude: ['/swagger', PLUGIN_PAGE_PATH, SOURCE_PATH, OPENAPI_PATH, '/swagger/assets/:file'],
        documentation: {
          info,
          components: {
            securitySchemes: {
              apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'An admin API token, e.g. *:*.<64 hex>' },
            },
          },
        },
      }),
    )
    .get(OPENAPI_PATH, async () => {
      // Routes are fixed once the app is built, so the document is made once.
      polished ??= polishOpenApi(await (await handle(new Request(`http://localhost${SOURCE_PATH}`))).json())
      return polished
    }, { detail: { hide: true } })
}
