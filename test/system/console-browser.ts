/**
 * What the console's browser tests share: a server of their own on a temp data dir, axe-core in the
 * page, and waiting for what the page shows (it answers asynchronously).
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'
import { tempDir } from '../helpers/files'
import { adminCall, freePort, untilReady } from '../helpers/processes'
import { hasChromium, launchChromium } from './chromium'

const ROOT = join(import.meta.dir, '../..')
const AXE = join(ROOT, 'node_modules/axe-core/axe.min.js')

/**
 * The service (src/main.ts) on a loopback port (a free one unless given) and a temp data dir, with an
 * admin token and password, and `env` besides.
 */
export async function startConsoleServer(
  secret: string,
  password: string,
  env: Record<string, string> = {},
  port = freePort(),
) {
  const dir = tempDir('console-browser-')
  const base = `http://127.0.0.1:${port}`
  const server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir.path,
      INIT_ADMIN_API_TOKENS: secret,
      UNLEASH_DEFAULT_ADMIN_PASSWORD: password,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  await untilReady(base, { process: server })
  return {
    base,
    async stop() {
      server.kill('SIGTERM')
      await server.exited
      dir.remove()
    },
  }
}

/** axe-core's source, read once for the file. */
let axeSource: string | undefined

/** axe-core's serious and critical violations in the page, as "rule: targets". */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated, not added as a script tag: the page's policy refuses inline scripts. Once per document:
  // compiling axe-core costs more than a run, and a document keeps it until the next load.
  if (!(await page.evaluate(() => typeof (window as { axe?: unknown }).axe === 'object')))
    await page.evaluate((axeSource ??= readFileSync(AXE, 'utf8')))
  return page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> }
      }
    ).axe.run()
    return result.violations
      .filter(v => v.impact === 'serious' || v.impact === 'critical')
      .map(v => `${v.id}: ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)
  })
}

/** axe-core in the page: no serious or critical violation. */
export async function accessible(page: Page, where: string) {
  const violations = await axeViolations(page)
  expect({ where, violations }).toEqual({ where, violations: [] })
}

/** Waits until `read` gives `expected`, then asserts it. */
export async function eventually<T>(read: () => Promise<T>, expected: T, ms = 10_000) {
  let last: T = await read()
  for (const started = Date.now(); Date.now() - started < ms && !Bun.deepEquals(last, expected); ) {
    await Bun.sleep(50)
    last = await read()
  }
  expect(last).toEqual(expected)
}

/** Signs in on the console's page and waits for the projects. */
export async function signIn(page: Page, base: string, username: string, password: string) {
  await page.goto(`${base}/`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Projects' }).waitFor()
}

export type ConsoleServer = Awaited<ReturnType<typeof startConsoleServer>>

/** One test file's server and Chromium, and calls to its API with the file's admin token. */
export interface ConsoleUnderTest {
  readonly base: string
  readonly browser: Browser
  /** The API's answer as it is. */
  call(method: string, path: string, body?: unknown): ReturnType<typeof adminCall>
  /** The API's body; an answer of 300 or more throws, naming the call. */
  admin(method: string, path: string, body?: unknown): Promise<Awaited<ReturnType<typeof adminCall>>['body']>
}

/**
 * Starts the server and Chromium before the calling file's tests (where there is a Chromium), then
 * `seed` with them; stops both after the tests.
 */
export function useConsoleBrowser(
  secret: string,
  password: string,
  seed: (under: ConsoleUnderTest) => Promise<void> = async () => {},
): ConsoleUnderTest {
  let server: ConsoleServer | undefined
  let browser: Browser | undefined
  const under: ConsoleUnderTest = {
    get base() {
      return server!.base
    },
    get browser() {
      return browser!
    },
    call: (method, path, body) => adminCall(server!.base, secret, method, path, body),
    async admin(method, path, body) {
      const answer = await adminCall(server!.base, secret, method, path, body)
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`)
      return answer.body
    },
  }
  beforeAll(async () => {
    if (!hasChromium) return
    server = await startConsoleServer(secret, password)
    browser = await launchChromium()
    await seed(under)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })
  return under
}

/** A page of its own (a new browser context) that records page errors and every answer of 400 or more. */
export async function newPage(browser: Browser): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', error => problems.push(`page error: ${error.message}`))
  page.on('response', response => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.request().method()} ${response.url()}`)
  })
  return { page, problems }
}

/**
 * Waits for two frames of the page. What follows a new width or colour scheme in script (a
 * ResizeObserver redrawing the usage chart, the theme following the system) runs in the frames
 * after the change: the page is measured once two have passed, as a person would see it.
 */
export const twoFrames = (page: Page) =>
  page.evaluate(() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done))))

/**
 * The page as it is now passes axe in the light and the dark theme (the system's preference,
 * which the console follows without a remembered choice), and at 390 px wide nothing sticks out
 * sideways (the elements that do are named).
 */
export async function everyWay(page: Page, where: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    // The console follows the system's change in script: checked once the page shows that theme.
    await eventually(() => page.evaluate(() => document.documentElement.dataset.theme), colorScheme)
    await accessible(page, `${where} (${colorScheme})`)
  }
  await page.emulateMedia({ colorScheme: null })
  const size = page.viewportSize()!
  await page.setViewportSize({ width: 390, height: 844 })
  await twoFrames(page)
  await eventually(
    () =>
      page.evaluate(
        () =>
          document.documentElement.dataset.theme ===
          (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'),
      ),
    true,
  )
  const overflow = await page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter(element => element.getBoundingClientRect().right > window.innerWidth + 0.5)
      .filter(
        element =>
          !element.parentElement || element.parentElement.getBoundingClientRect().right <= window.innerWidth + 0.5,
      )
      .map(element => `${element.tagName.toLowerCase()}.${element.className} ${element.textContent?.slice(0, 40)}`),
  )
  expect({ where, overflow }).toEqual({ where, overflow: [] })
  await accessible(page, `${where} (390 px)`)
  await page.setViewportSize(size)
}

/** Waits until the first of `locator` holding `text` is shown. */
export const showsText = (locator: Locator, text: string | RegExp) =>
  locator.filter({ hasText: text }).first().waitFor({ timeout: 10_000 })
