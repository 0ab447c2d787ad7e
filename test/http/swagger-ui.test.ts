/** Swagger UI is served from this service: the page and every script and style it loads. */
// Store-independent: Swagger UI's page and assets are files served from the package, not from the store.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { makeApi, type Api } from '../helpers'

let api: Api
beforeAll(async () => (api = await makeApi()))
afterAll(async () => api.close())

test('the /swagger page loads its scripts and styles from this service and the polished document, never from a CDN', async () => {
  const page = await api.get('/swagger', { token: null })
  expect(page.status).toBe(200)
  expect(page.headers.get('content-type')).toStartWith('text/html')
  const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map(match => match[1])
  expect(sources.length).toBeGreaterThanOrEqual(3)
  for (const source of sources) expect(source).toStartWith('/swagger/assets/')
  expect(page.text).not.toMatch(/https?:\/\//)
  // No inline script (the page's Content-Security-Policy allows none): Swagger UI starts from a file.
  expect(page.text).not.toMatch(/<script>/)
  const start = await api.app.handle(new Request('http://localhost/swagger/assets/swagger-initializer.js'))
  expect(start.headers.get('content-type')).toStartWith('text/javascript')
  expect(await start.text()).toContain('"/swagger/json"')
  for (const source of sources) {
    const asset = await api.app.handle(new Request(`http://localhost${source}`))
    expect({ source, status: asset.status }).toEqual({ source, status: 200 })
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100)
  }
})

test('assets are served with their content types, and only the known ones', async () => {
  const script = await api.app.handle(new Request('http://localhost/swagger/assets/swagger-ui-bundle.js'))
  expect(script.headers.get('content-type')).toStartWith('text/javascript')
  const style = await api.app.handle(new Request('http://localhost/swagger/assets/swagger-ui.css'))
  expect(style.headers.get('content-type')).toStartWith('text/css')
  for (const name of ['package.json', '..%2F..%2Fpackage.json', 'index.html']) {
    expect((await api.app.handle(new Request(`http://localhost/swagger/assets/${name}`))).status).toBe(404)
  }
})

test('the OpenAPI document declares the Authorization header scheme the Authorize button uses', async () => {
  const document = (
    await api.get<{ components: { securitySchemes: Record<string, unknown> } }>('/swagger/json', { token: null })
  ).body
  expect(document.components.securitySchemes.apiKey).toEqual(
    expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Authorization' }),
  )
})

test('the document describes the service with both of its stores', async () => {
  const { info } = (await api.get<{ info: { description: string } }>('/swagger/json', { token: null })).body
  expect(info.description).toContain('PostgreSQL')
  expect(info.description).not.toContain('JSON files')
})
