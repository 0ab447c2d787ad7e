/**
 * Every answer says nosniff, and every route that answers HTML — found by asking every GET route of
 * the app, not from a list — carries the page headers: a Content-Security-Policy without framing,
 * X-Frame-Options and a Referrer-Policy. (That the console and Swagger UI still work under the policy,
 * with no violation reported, is checked in Chromium: test/system/console.test.ts, browser.test.ts.)
 */
// Store-independent: about the headers of every answer, added after the handler whichever store answered.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bodyText, makeApi, type Api } from '../helpers'

let api: Api
beforeAll(async () => (api = await makeApi()))
afterAll(async () => api.close())

const PAGE_HEADERS = ['content-security-policy', 'x-frame-options', 'referrer-policy']

/** A path of the route with each parameter filled in (an asset that exists where one is named). */
function concrete(path: string): string {
  return path
    .replace(/:file$/, 'swagger-ui.css')
    .replace(/:[A-Za-z]+/g, 'x')
    .replace(/\*$/, 'x')
}

test('every route that answers HTML carries the page headers, and every answer says nosniff', async () => {
  const routes = api.app.routes.filter(route => route.method === 'GET')
  expect(routes.length).toBeGreaterThan(40)
  const html: string[] = []
  const missing: string[] = []
  for (const route of routes) {
    const path = concrete(route.path)
    for (const token of [null, api.adminToken]) {
      const response = await api.app.handle(
        new Request(`http://localhost${path}`, { headers: token === null ? {} : { authorization: token } }),
      )
      // bodyText reads an event stream (the console's live channel) only to its first event.
      await bodyText(response)
      if (response.headers.get('x-content-type-options') !== 'nosniff')
        missing.push(`${path}: ${response.status} without nosniff`)
      if (!/^text\/html\b/.test(response.headers.get('content-type') ?? '')) continue
      html.push(path)
      for (const name of PAGE_HEADERS) if (!response.headers.get(name)) missing.push(`${path}: ${name} missing`)
      const policy = response.headers.get('content-security-policy') ?? ''
      expect(policy).toContain("frame-ancestors 'none'")
      expect(policy).not.toContain('unsafe')
      expect(response.headers.get('x-frame-options')).toBe('DENY')
    }
  }
  expect(missing).toEqual([])
  // The pages the service has today are among those found, so the walk cannot pass by finding none.
  expect(new Set(html)).toEqual(new Set(['/', '/swagger', '/auth/oidc/login', '/auth/oidc/callback']))
})

test('an unknown path, an error and a 404 asset say nosniff too', async () => {
  for (const [method, path] of [
    ['GET', '/no/such/page'],
    ['POST', '/api/admin/projects'],
    ['GET', '/console/assets/none.js'],
    ['DELETE', '/health'],
  ]) {
    const response = await api.app.handle(new Request(`http://localhost${path}`, { method }))
    expect({ path, status: response.status >= 400, sniff: response.headers.get('x-content-type-options') }).toEqual({
      path,
      status: true,
      sniff: 'nosniff',
    })
  }
})
