/**
 * Swagger UI served from this service (the swagger-ui-dist package), not from a CDN, so that it
 * works on a network with no way out. The page loads the polished OpenAPI document; its Authorize
 * button takes an API token for the `Authorization` header, and "Try it out" calls this service.
 */
import { Elysia } from 'elysia'
// Imported as files, so that `bun build --compile` embeds them in the executable.
import css from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import bundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import preset from 'swagger-ui-dist/swagger-ui-standalone-preset.js' with { type: 'file' }
import favicon32 from 'swagger-ui-dist/favicon-32x32.png' with { type: 'file' }
import favicon16 from 'swagger-ui-dist/favicon-16x16.png' with { type: 'file' }
import { OPENAPI_PATH } from './openapi'

const ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui.css': { path: css, type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { path: bundle, type: 'text/javascript; charset=utf-8' },
  'swagger-ui-standalone-preset.js': { path: preset, type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { path: favicon32, type: 'image/png' },
  'favicon-16x16.png': { path: favicon16, type: 'image/png' },
}

function page(title: string, basePath: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="stylesheet" href="${basePath}/swagger/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="${basePath}/swagger/assets/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${basePath}/swagger/assets/swagger-ui-bundle.js"></script>
  <script src="${basePath}/swagger/assets/swagger-ui-standalone-preset.js"></script>
  <script src="${basePath}/swagger/assets/${INITIALIZER}"></script>
</body>
</html>
`
}

/**
 * Swagger UI's start, a script of its own (the page's Content-Security-Policy allows no inline
 * script). validatorUrl null: no badge fetched from validator.swagger.io.
 */
const INITIALIZER = 'swagger-initializer.js'
const initializer = (basePath: string) => `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(basePath + OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
})
`

/** `basePath` is `BASE_URI_PATH`: the routes get it from the app's prefix, the page's links need it written out. */
export function swaggerUi(title: string, basePath = '') {
  const html = page(title, basePath)
  const start = initializer(basePath)
  const hidden = { detail: { hide: true } }
  return new Elysia({ name: 'swagger-ui' })
    .get('/swagger', () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } }), hidden)
    .get(
      '/swagger/assets/:file',
      ({ params }) => {
        if (params.file === INITIALIZER)
          return new Response(start, {
            headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' },
          })
        const asset = Object.hasOwn(ASSETS, params.file) ? ASSETS[params.file] : undefined
        if (!asset) return new Response('Not found', { status: 404 })
        return new Response(Bun.file(asset.path), {
          headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' },
        })
      },
      hidden,
    )
}
