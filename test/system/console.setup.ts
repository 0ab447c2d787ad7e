/**
 * What the console's browser tests share: the real server on a data directory of its own with an
 * admin signed in by password, one Chromium for the file, pages that record problems and the
 * Content-Security-Policy each document was served with, and signing in.
 */
import { afterAll, beforeAll } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { hasChromium, launchChromium } from './chromium'
import { startConsoleServer } from './console-browser'

export const SECRET = '*:*.console-test-admin-secret-0123456789'
export const PASSWORD = 'Console-admin-pass-1'
export const VIEWER_PASSWORD = 'Console-viewer-pass-1'

export let base = ''
let stop: (() => Promise<void>) | undefined
let browser: Browser | undefined

/** Content-Security-Policy violations the browser reported, and the console pages loaded with and without a policy, over the whole file. */
export const csp = { violations: [] as string[], withPolicy: 0, withoutPolicy: [] as string[] }

/** Starts the server and Chromium before the calling file's tests (where there is a Chromium), and stops both after them; `cleanUp` runs first. */
export function useConsoleServer(cleanUp: () => void = () => {}): void {
  beforeAll(async () => {
    if (!hasChromium) return
    csp.violations = []
    csp.withPolicy = 0
    csp.withoutPolicy = []
    const started = await startConsoleServer(SECRET, PASSWORD)
    base = started.base
    stop = started.stop
    browser = await launchChromium()
  }, 60_000)

  afterAll(async () => {
    cleanUp()
    await browser?.close()
    await stop?.()
  })
}

/** A page that records console errors and failed requests (the sign-in page's who-am-I 401 is expected). */
export async function newPage(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', error => problems.push(`page error: ${error.message}`))
  page.on('console', message => {
    if (/Content Security Policy/i.test(message.text())) csp.violations.push(message.text())
  })
  page.on('response', async response => {
    if (response.request().resourceType() !== 'document') return
    if ((await response.headerValue('content-security-policy'))?.includes("frame-ancestors 'none'")) csp.withPolicy++
    else csp.withoutPolicy.push(response.url())
  })
  // Every answer of 400 or more is a problem unless the test says it was the point, the console's
  // first "who is signed in?" included: a visit before signing in must not cost a failed request.
  page.on('response', response => {
    // The live stream (console/live.ts) may be absent on this server: refused, the console polls instead.
    if (response.status() === 404 && new URL(response.url()).pathname === '/api/admin/live') return
    if (response.status() >= 400) problems.push(`${response.status()} ${response.request().method()} ${response.url()}`)
  })
  return { page, problems }
}

export async function signIn(page: Page, username: string, password: string) {
  await page.goto(`${base}/`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Projects' }).waitFor()
}
