/**
 * The side-by-side pictures in docs/console.md ("Compared with Unleash's console"):
 * `bun test/system/compare-unleash.ts /tmp/unleash82` starts a private PostgreSQL cluster, Unleash
 * 8.2 from that directory (installed as docs/benchmarks.md says) and this service on a temp data
 * directory, seeds the same project into both through the admin API both speak, and saves two pairs
 * of pictures: a flag's production strategy (docs/compare-flag-*.png) and the playground's answer
 * to "why is pricing-page off for user 42 in production" (docs/compare-why-*.png). It stops all it
 * started. Not part of `npm test`: it needs Unleash.
 */
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { unleashServer } from '../../bench/postgres'
import { adminCall } from '../helpers/processes'
import { startPostgres } from '../postgres-cluster'
import { launchChromium } from './chromium'
import { signIn, startConsoleServer } from './console-browser'

const DOCS = join(import.meta.dir, '../../docs')
const SECRET = '*:*.compare-admin-secret-0123456789abcdef'
const PASSWORD = 'Compare-admin-pass-1'
const VIEW = { width: 1180, height: 720 }

/** The same project in both: a context field with legal values, a segment, flags, strategies with constraints and variants. */
async function seed(base: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await adminCall(base, SECRET, method, path, body)
    if (answer.status >= 300) throw new Error(`${base} ${method} ${path}: ${answer.status} ${answer.text}`)
    return answer.body
  }
  await call('POST', '/api/admin/context', {
    name: 'region',
    description: 'Where the user is',
    legalValues: ['eu', 'us', 'apac'].map(value => ({ value })),
  })
  const segment = await call('POST', '/api/admin/segments', {
    name: 'beta-testers',
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['7', '42', '99'] }],
  })
  const names = ['new-checkout', 'dark-mode', 'search-v2', 'pricing-page', 'promo-banner', 'wishlist']
  for (const name of names)
    await call('POST', '/api/admin/projects/default/features', { name, description: `The ${name.replace(/-/g, ' ')}` })
  const strategy = (name: string, body: unknown) =>
    call('POST', `/api/admin/projects/default/features/${name}/environments/production/strategies`, body)
  const rollout = (name: string, percent: number) => ({
    rollout: String(percent),
    stickiness: 'default',
    groupId: name,
  })
  await strategy('new-checkout', {
    name: 'flexibleRollout',
    parameters: rollout('new-checkout', 50),
    constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
  })
  await strategy('dark-mode', {
    name: 'flexibleRollout',
    parameters: rollout('dark-mode', 100),
    segments: [segment.id],
  })
  await strategy('search-v2', {
    name: 'flexibleRollout',
    parameters: rollout('search-v2', 100),
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2', '3'] }],
  })
  await strategy('pricing-page', {
    name: 'flexibleRollout',
    parameters: { ...rollout('pricing-page', 20), stickiness: 'userId' },
    constraints: [{ contextName: 'region', operator: 'IN', values: ['us', 'eu'] }],
    variants: ['control', 'discount'].map(name => ({
      name,
      weight: 500,
      weightType: 'variable',
      stickiness: 'default',
    })),
  })
  for (const name of ['new-checkout', 'dark-mode', 'search-v2', 'pricing-page'])
    await call('POST', `/api/admin/projects/default/features/${name}/environments/production/on`)
}

const save = (page: Page, name: string) => page.screenshot({ path: join(DOCS, `${name}.png`) })

async function unleashPictures(page: Page, base: string) {
  await page.goto(`${base}/login`)
  await page.getByLabel('Email').fill('admin')
  await page.getByLabel('Password', { exact: true }).fill('unleash4all')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(/personal/, { timeout: 60_000 })
  await page.goto(`${base}/projects/default/features/pricing-page`)
  await page.getByText('production', { exact: true }).first().click({ timeout: 60_000 })
  await page
    .getByRole('button', { name: 'Ok, got it!' })
    .click({ timeout: 5_000 })
    .catch(() => {})
  await page.getByText('Gradual rollout').first().waitFor()
  await page.waitForTimeout(1_000)
  await page.mouse.move(VIEW.width / 2, VIEW.height / 2)
  await page.mouse.wheel(0, 480)
  await page.mouse.move(VIEW.width - 5, 5)
  await page.waitForTimeout(1_000)
  await save(page, 'compare-flag-unleash')

  await page.goto(`${base}/playground`)
  await page.getByRole('combobox', { name: 'Environments' }).click({ timeout: 60_000 })
  await page.getByRole('option', { name: 'production' }).click()
  await page.keyboard.press('Escape')
  await page.locator('#context-field').click()
  await page.getByRole('option', { name: 'userId', exact: true }).click()
  await page.getByPlaceholder('Value').fill('42')
  await page.getByRole('button', { name: 'Add' }).click()
  await page.getByRole('button', { name: 'Try configuration' }).click()
  const row = page.locator('tr').filter({ hasText: 'pricing-page' })
  await row.waitFor()
  // The row's information button, then the one in its popover: the explanation.
  await row.locator('button').last().click()
  await page.locator('.MuiPopover-root button').last().click()
  await page.getByText('Constraint not met').first().waitFor()
  await page.waitForTimeout(500)
  await save(page, 'compare-why-unleash')
}

async function ourPictures(page: Page, base: string) {
  await signIn(page, base, 'admin', PASSWORD)
  await page.goto(`${base}/#/projects/default/features/pricing-page`)
  await page.getByRole('region', { name: 'Environment production' }).evaluate(element => element.scrollIntoView())
  await page.evaluate(() => scrollBy(0, -70))
  await save(page, 'compare-flag-ours')

  await page.goto(`${base}/#/playground`)
  await page.getByLabel('production').check()
  await page.getByLabel('development').uncheck()
  await page.getByLabel('userId').fill('42')
  await page.getByRole('button', { name: 'Evaluate' }).click()
  await page.getByLabel('Filter results').fill('pricing')
  await page.getByRole('button', { name: 'Explain pricing-page in production' }).click()
  await page
    .getByText(/bucket/)
    .first()
    .waitFor()
  await page.getByRole('heading', { name: 'Results' }).scrollIntoViewIfNeeded()
  await page.evaluate(() => scrollBy(0, 300))
  await save(page, 'compare-why-ours')
}

const unleashDir = process.argv[2]
if (!unleashDir) throw new Error('usage: bun test/system/compare-unleash.ts <directory holding unleash-server 8.2>')
const cluster = await startPostgres()
const stops: (() => Promise<unknown>)[] = [() => cluster.stop()]
try {
  await cluster.createDatabase('unleash')
  const unleash = await unleashServer(unleashDir, cluster.port, 'unleash', SECRET)
  stops.unshift(unleash.stop)
  const ours = await startConsoleServer(SECRET, PASSWORD)
  stops.unshift(ours.stop)
  await seed(unleash.base)
  await seed(ours.base)
  const browser = await launchChromium()
  stops.unshift(() => browser.close())
  const page = async () => (await browser.newContext({ viewport: VIEW, colorScheme: 'light' })).newPage()
  await unleashPictures(await page(), unleash.base)
  await ourPictures(await page(), ours.base)
} finally {
  for (const stop of stops) await stop()
}
