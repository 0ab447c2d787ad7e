/**
 * Swagger UI served from this service (the swagger-ui-dist package), not from a CDN, so that it
 * works on a network with no way out. The page loads the polished OpenAPI document; its Authorize
 * button takes an API token for the `Authorization` header, and "Try it out" calls this service.
 */
import { Elysia } from 'elysia'
import { dirname, join } from 'node:path'
import { OPENAPI_PATH } from './openapi'

const ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png'] as const
const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', png: 'image/png' }

const assetDir = dirname(Bun.resolveSync('swagger-ui-dist/package.json', import.meta.dir))

function page(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="stylesheet" href="/swagger/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/swagger/assets/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/swagger/assets/swagger-ui-bundle.js"></script>
  <script src="/swagger/assets/swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: ${JSON.stringify(OPENAPI_PATH)},
      dom_id: '#swagger-ui',
      deepLinking: true,
      persistAuthorization: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: 'StandaloneLayout',
    })
  </script>
</body>
</html>
`
}

export function swaggerUi(title: string) {
  const html = page(title)
  const hidden = { detail: { hide: true } }
  return new Elysia({ name: 'swagger-ui' })
    .get('/swagger', () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } }), hidden)
    .get('/swagger/assets/:file', ({ params }) => {
      if (!(ASSETS as readonly string[]).includes(params.file)) return new Response('Not found', { status: 404 })
      const type = TYPES[params.file.split('.').pop()!]
      return new Response(Bun.file(join(assetDir, params.file)), { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } })
    }, hidden)
}
