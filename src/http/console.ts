/**
 * The console for people, served at `/` (Swagger UI stays at /swagger): one HTML page and its
 * hashed assets (console/), kept in memory, gzipped once, and cached by browsers for good (a new
 * build has new names). Works offline: nothing is loaded from elsewhere. The console calls the
 * public admin API like any client, signed in with the session cookie.
 */
import { Elysia } from 'elysia'

interface Asset {
  body: Uint8Array<ArrayBuffer>
  gzipped: Uint8Array<ArrayBuffer>
  type: string
}

interface Built {
  html: string
  assets: Map<string, Asset>
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' }

async function build(basePath: string): Promise<Built> {
  const { CONSOLE_FILES } = await import('./console-assets')
  const assets = new Map<string, Asset>()
  for (const file of CONSOLE_FILES) {
    const body = new TextEncoder().encode(file.text) as Uint8Array<ArrayBuffer>
    const extension = file.name.slice(file.name.lastIndexOf('.'))
    assets.set(file.name, {
      body,
      gzipped: Bun.gzipSync(body) as Uint8Array<ArrayBuffer>,
      type: TYPES[extension] ?? file.type,
    })
  }
  const named = (extension: string) =>
    CONSOLE_FILES.filter(file => file.name.endsWith(extension)).map(file => `${basePath}/console/assets/${file.name}`)
  const html = `<!doctype html>
<html lang="en" data-base="${basePath}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="light dark">
  <link rel="icon" href="data:,">
  <title>flagstore console</title>
${named('.css')
  .map(href => `  <link rel="stylesheet" href="${href}">`)
  .join('\n')}
</head>
<body>
  <div id="app"></div>
${named('.js')
  .map(src => `  <script type="module" src="${src}"></script>`)
  .join('\n')}
</body>
</html>
`
  return { html, assets }
}

const acceptsGzip = (request: Request) => /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')

/** `basePath` is `BASE_URI_PATH`: the routes get it from the app's prefix, the page's links need it written out. */
export function consoleUi(basePath = '') {
  let built: Promise<Built> | null = null
  const load = () => (built ??= build(basePath))
  const hidden = { detail: { hide: true } }
  return new Elysia({ name: 'console' })
    .get(
      '/',
      async () =>
        new Response((await load()).html, {
          headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' },
        }),
      hidden,
    )
    .get(
      '/console/assets/:asset',
      async ({ params, request }) => {
        const { assets } = await load()
        const asset = assets.get(params.asset)
        if (!asset) return new Response('Not found', { status: 404 })
        const gzip = acceptsGzip(request)
        return new Response(gzip ? asset.gzipped : asset.body, {
          headers: {
            'content-type': asset.type,
            'cache-control': 'public, max-age=31536000, immutable',
            vary: 'accept-encoding',
            ...(gzip ? { 'content-encoding': 'gzip' } : {}),
          },
        })
      },
      hidden,
    )
}
