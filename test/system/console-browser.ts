/**
 * What the console's browser tests share: a real server on a temp directory with a known admin
 * token and password, pages that record failed requests and page errors, axe-core in the page,
 * the checks run in both themes and at a phone's width, and waiting for the page to catch up.
 */
import { expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'
import { freePort, tempDir } from '../helpers'

const ROOT = join(import.meta.dir, '../..')
const AXE = join(ROOT, 'node_modules/axe-core/axe.min.js')

export interface ConsoleServer {
  base: string
  secret: string
  password: string
  stop(): Promise<void>
}

/** `src/main.ts` on a fresh data directory, ready when this resolves. */
export async function startConsoleServer(secret: string, password: string): Promise<ConsoleServer> {
  const dir = tempDir('console-browser-')
  const port = freePort()
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
    },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`${base}/ready`).then(
        r => r.ok,
        () => false,
      )
    )
      break
    await Bun.sleep(25)
  }
  return {
    base,
    secret,
    password,
    async stop() {
      server.kill('SIGTERM')
      await server.exited
      dir.remove()
    },
  }
}

/** A page that records page errors and every answer of 400 or more (`problems`). */
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

export async function signIn(page: Page, base: string, username: string, password: string) {
  await page.goto(`${base}/`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Projects' }).waitFor()
}

/** axe-core in the page: no serious or critical violation. */
export async function accessible(page: Page, where: string) {
  // Evaluated, not added as a script tag: the page's policy refuses inline scripts.
  await page.evaluate(readFileSync(AXE, 'utf8'))
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> }
      }
    ).axe.run()
    return result.violations
      .filter(v => v.impact === 'serious' || v.impact === 'critical')
      .map(v => `${v.id}: ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)
  })
  expect({ where, violations }).toEqual({ where, violations: [] })
}

/**
 * The page as it is now, in the light and the dark theme (the system's preference, which the
 * console follows), passes axe; at 390 px wide it does not scroll sideways.
 */
export async function everyWay(page: Page, where: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await accessible(page, `${where} (${colorScheme})`)
  }
  await page.emulateMedia({ colorScheme: null })
  const size = page.viewportSize()!
  await page.setViewportSize({ width: 390, height: 844 })
  // The widest elements that stick out, named so that a failure says where to look.
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

/** Waits until `read` gives `expected` (the page answers asynchronously), then asserts it. */
export async function eventually<T>(read: () => Promise<T>, expected: T, ms = 10_000) {
  let last: T = await read()
  for (const started = Date.now(); Date.now() - started < ms && !Bun.deepEquals(last, expected); ) {
    await Bun.sleep(50)
    last = await read()
  }
  expect(last).toEqual(expected)
}

export const showsText = (locator: Locator, text: string | RegExp) =>
  locator.filter({ hasText: text }).first().waitFor({ timeout: 10_000 })
