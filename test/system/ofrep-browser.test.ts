/**
 * `@openfeature/ofrep-web-provider` in headless Chromium (Debian's `chromium`), with the browser's
 * own fetch and EventSource, on a page of another origin than the service (CORS, as a web
 * application has it): the bulk answer's eventStreams is opened, and a flag switched through the
 * admin API reaches the page through the stream and one refetch, with polling off. Skipped, saying
 * so, where there is no browser.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { hasChromium, launchChromium, withChromium } from './chromium'
import { adminCall, freePort, startService, type RunningService } from '../helpers/processes'

const ADMIN = '*:*.ofrep-browser-admin-secret-0123456789'
let service: RunningService
let page: ReturnType<typeof Bun.serve> | undefined
let browser: Browser | undefined
let token: string

async function admin(method: string, path: string, body?: unknown) {
  const answer = await adminCall(service.base, ADMIN, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

beforeAll(async () => {
  if (!hasChromium) return
  service = await startService(ADMIN, 'flags-ofrep-browser-')
  await admin('POST', '/api/admin/projects/default/features', { name: 'dark-mode' })
  await admin('POST', '/api/admin/projects/default/features/dark-mode/environments/development/strategies', {
    name: 'default',
  })
  token = (
    await admin('POST', '/api/admin/api-tokens', {
      tokenName: 'browser',
      type: 'frontend',
      projects: ['default'],
      environment: 'development',
    })
  ).secret
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, 'pages/ofrep-web.ts')], target: 'browser' })
  if (!built.success) throw new Error(`bundling the page failed: ${built.logs.join('\n')}`)
  const script = await built.outputs[0].text()
  page = Bun.serve({
    port: freePort(),
    hostname: '127.0.0.1',
    fetch: request =>
      new URL(request.url).pathname === '/app.js'
        ? new Response(script, { headers: { 'content-type': 'text/javascript' } })
        : new Response('<!doctype html><title>shop</title><script type="module" src="/app.js"></script>', {
            headers: { 'content-type': 'text/html' },
          }),
  })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await page?.stop(true)
  await service?.stop()
})

withChromium.test(
  "the web provider in Chromium opens eventStreams with the browser's EventSource and picks a change up at once, polling off",
  async () => {
    const tab = await browser!.newPage()
    const requests: string[] = []
    tab.on('request', request => {
      if (request.url().startsWith(service.base))
        requests.push(`${request.method()} ${request.resourceType()} ${new URL(request.url()).pathname}`)
    })
    const errors: string[] = []
    tab.on('pageerror', error => errors.push(error.message))
    await tab.goto(`http://127.0.0.1:${page!.port}/`)
    await tab.waitForFunction(() => 'flags' in window)
    const streamOpen = tab.waitForResponse(
      response => response.url().startsWith(`${service.base}/ofrep/v1/events?channel=`) && response.status() === 200,
    )
    await tab.evaluate(([base, secret]) => (window as any).flags.start(base, secret), [service.base, token] as const)
    expect(await tab.evaluate(() => (window as any).flags.value('dark-mode'))).toBe(false)
    // The stream is open (the browser's own EventSource; CORS allows the page's origin) before the change is made.
    await streamOpen
    await admin('POST', '/api/admin/projects/default/features/dark-mode/environments/development/on')
    await tab.waitForFunction(() => (window as any).flags.changes.length > 0, undefined, { timeout: 10_000 })
    expect(await tab.evaluate(() => (window as any).flags.changes)).toEqual([['dark-mode']])
    expect(await tab.evaluate(() => (window as any).flags.value('dark-mode'))).toBe(true)
    // One bulk evaluation, the stream, and one refetch the stream asked for: no poll.
    expect(requests.filter(request => !request.startsWith('OPTIONS'))).toEqual([
      'POST fetch /ofrep/v1/evaluate/flags',
      'GET eventsource /ofrep/v1/events',
      'POST fetch /ofrep/v1/evaluate/flags',
    ])
    expect(errors).toEqual([])
    await tab.close()
  },
  60_000,
)
