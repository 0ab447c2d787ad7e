/**
 * Swagger UI for real: the service runs, headless Chromium (Debian's `chromium`, installed by
 * .ci/run when missing) loads /swagger, the five seed operations are listed, a token is given to
 * Authorize, validateFeature is tried out and answers 200 (also under BASE_URI_PATH, from the
 * prefix itself, every request staying under it), and createFeature is tried out with the body
 * Swagger UI fills in from the documented example. The page is served with its Content-Security-Policy
 * and the browser reports no violation of it. Skipped, saying so, where there is no browser.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'
import { hasChromium, launchChromium, withChromium } from './chromium'
import { tempDir } from '../helpers/files'
import { freePort, untilReady } from '../helpers/processes'
import { ADMIN_SECRET as SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const dir = tempDir('browser-')
const port = freePort()
let server: ReturnType<typeof Bun.spawn> | undefined
let browser: Browser | undefined

const PREFIX = '/flags'
const prefixedDir = tempDir('browser-prefixed-')
const prefixedPort = freePort()
let prefixed: ReturnType<typeof Bun.spawn> | undefined

function startServer(serverPort: number, dataDir: string, basePath = '') {
  return Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(serverPort),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      INIT_ADMIN_API_TOKENS: SECRET,
      LOG_LEVEL: 'warn',
      BASE_URI_PATH: basePath,
    },
    stdout: 'ignore',
    stderr: 'inherit',
  })
}

beforeAll(async () => {
  if (!hasChromium) return
  server = startServer(port, dir.path)
  prefixed = startServer(prefixedPort, prefixedDir.path, PREFIX)
  await untilReady(`http://127.0.0.1:${port}`)
  await untilReady(`http://127.0.0.1:${prefixedPort}${PREFIX}`)
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  server?.kill('SIGTERM')
  prefixed?.kill('SIGTERM')
  await server?.exited
  await prefixed?.exited
  dir.remove()
  prefixedDir.remove()
})

/** A new page whose Content-Security-Policy violations (as the browser reports them) and policy-less documents are listed. */
async function watchedPage(): Promise<{ page: Page; violations: string[]; withoutPolicy: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } })
  const violations: string[] = []
  const withoutPolicy: string[] = []
  page.on('console', message => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
  })
  page.on('response', async response => {
    if (response.request().resourceType() !== 'document') return
    if (!(await response.headerValue('content-security-policy'))?.includes("frame-ancestors 'none'"))
      withoutPolicy.push(response.url())
  })
  return { page, violations, withoutPolicy }
}

/**
 * Swagger UI draws only the operations near the viewport (a virtual list), and draws each again on
 * every change: a window tall enough to hold them all costs a whole list's drawing per click. The
 * page is read as a reader scrolling through would: from the top, half a screen at a time, each
 * stop once its frames have been drawn; `each` runs at every stop, and the scrolling stops where
 * `until` is drawn (then in view) or at the end.
 */
async function scrollThrough(page: Page, each: () => Promise<void>, until?: Locator) {
  await page.evaluate(() => window.scrollTo(0, 0))
  for (;;) {
    await page.evaluate(() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done))))
    await each()
    if (until && (await until.count()) > 0) return until.first().scrollIntoViewIfNeeded()
    const moved = await page.evaluate(() => {
      const before = window.scrollY
      window.scrollBy(0, window.innerHeight / 2)
      return window.scrollY !== before
    })
    if (!moved) break
  }
  if (until) throw new Error(`not drawn anywhere on the page: ${until}`)
}

/** The paths of every operation Swagger UI lists, scrolled through. */
async function listedPaths(page: Page) {
  const paths = new Set<string>()
  await scrollThrough(page, async () => {
    for (const text of await page.locator('.opblock-summary-path').allTextContents())
      paths.add(text.replace(/\u200b/g, ''))
  })
  return [...paths]
}

/** Scrolls until `operation` is drawn, and to it. */
const reach = (page: Page, operation: Locator) => scrollThrough(page, async () => {}, operation)

/** Loads Swagger UI from `start` (under `basePath`), authorizes and runs validateFeature to a 200, every request staying under the prefix. */
async function tryValidate(start: string, origin: string, basePath: string) {
  const { page, violations, withoutPolicy } = await watchedPage()
  const outside: string[] = []
  page.on('request', request => {
    const url = request.url()
    if (url !== `${origin}${basePath}` && !url.startsWith(`${origin}${basePath}/`)) outside.push(url)
  })
  await page.goto(start)
  await page.waitForSelector('.opblock', { timeout: 30_000 })
  expect(page.url()).toBe(`${origin}${basePath}/swagger`)
  const expected = [
    '/api/admin/projects/{projectId}/features/{featureName}',
    '/api/admin/projects/{projectId}/features',
    '/api/admin/search/events',
    '/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off',
    '/api/admin/features/validate',
  ]
  const paths = await listedPaths(page)
  for (const path of expected) expect(paths).toContain(path)
  await page.evaluate(() => window.scrollTo(0, 0))

  await page.click('button.authorize')
  await page.fill('.modal-ux input[type=text]', SECRET)
  await page.click('.modal-ux button.authorize')
  await page.click('.modal-ux button.btn-done')

  const validate = page.locator('.opblock-post', {
    has: page.locator('.opblock-summary-path', { hasText: '/api/admin/features/validate' }),
  })
  await reach(page, validate)
  await validate.locator('.opblock-summary').click()
  await validate.locator('button.try-out__btn').click()
  await validate.locator('textarea.body-param__text').fill(JSON.stringify({ name: 'made-in-a-browser' }))
  await validate.locator('button.execute').click()
  const status = validate.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor({ timeout: 15_000 })
  expect((await status.textContent())?.trim()).toBe('200')
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT })
  expect(outside).toEqual([])
  expect({ violations, withoutPolicy }).toEqual({ violations: [], withoutPolicy: [] })
}

withChromium.test(
  'Swagger UI lists the five operations, authorizes with a token and runs validateFeature to a 200',
  async () => {
    await tryValidate(`http://127.0.0.1:${port}/swagger`, `http://127.0.0.1:${port}`, '')
  },
  90_000,
)

withChromium.test(
  'under BASE_URI_PATH, Swagger UI at the prefix\'s /swagger, whose assets, document and "Try it out" stay under it',
  async () => {
    await tryValidate(`http://127.0.0.1:${prefixedPort}${PREFIX}/swagger`, `http://127.0.0.1:${prefixedPort}`, PREFIX)
  },
  90_000,
)

withChromium.test(
  '"Try it out" on createFeature sends the default body Swagger UI shows, as is, and the flag is created (201)',
  async () => {
    const { page, violations, withoutPolicy } = await watchedPage()
    await page.goto(`http://127.0.0.1:${port}/swagger`)
    await page.waitForSelector('.opblock', { timeout: 30_000 })
    await page.click('button.authorize')
    // The token format is shown as code, not read as Markdown emphasis.
    expect(await page.locator('.modal-ux code', { hasText: '*:*.' }).count()).toBeGreaterThan(0)
    await page.fill('.modal-ux input[type=text]', SECRET)
    await page.click('.modal-ux button.authorize')
    await page.click('.modal-ux button.btn-done')

    const create = page.locator('.opblock-post', {
      has: page.locator('.opblock-summary-path', { hasText: /^\/api\/admin\/projects\/\{projectId\}\/features$/ }),
    })
    await reach(page, create)
    await create.locator('.opblock-summary').click()
    await create.locator('button.try-out__btn').click()
    const body = JSON.parse(await create.locator('textarea.body-param__text').inputValue())
    expect(typeof body.name).toBe('string')
    expect(body.type).toBe('release')
    await create.locator('input[placeholder="projectId"]').fill('default')
    await create.locator('button.execute').click()
    const status = create.locator('.live-responses-table .response .response-col_status').first()
    await status.waitFor({ timeout: 15_000 })
    expect((await status.textContent())?.trim()).toBe('201')
    const flag = await fetch(`http://127.0.0.1:${port}/api/admin/projects/default/features/${body.name}`, {
      headers: { authorization: SECRET },
    })
    expect(flag.status).toBe(200)
    expect(await flag.json()).toMatchObject({ name: body.name, tags: body.tags })
    expect({ violations, withoutPolicy }).toEqual({ violations: [], withoutPolicy: [] })
  },
  90_000,
)
