/**
 * Changing production from the console, in a real browser (Chromium through playwright-core): a
 * switch in a production-type environment says so in a toast with Undo, on the flags list and on
 * the flag's page, and Undo turns it back (other environments change silently); the list shows each
 * flag's description beside its name; the flag's page
 * copies the flag's name for code; a strategy's variants show on its card and survive its edit.
 * Checked with axe-core in both themes and at 390 px wide.
 */
import { expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { withChromium } from './chromium'
import { everyWay, eventually, newPage, signIn, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-production-admin-secret-0123456789'
const PASSWORD = 'Console-production-pass-1'

const under = useConsoleBrowser(SECRET, PASSWORD, async () => {
  expect((await admin('POST', '/api/admin/projects', { id: 'shop', name: 'shop' })).status).toBe(201)
  for (const name of ['list-flag', 'page-flag', 'named-flag', 'variant-flag'])
    expect((await admin('POST', '/api/admin/projects/shop/features', { name })).status).toBe(201)
  const description = 'Route a share of payments to the second provider'
  expect(
    (await admin('POST', '/api/admin/projects/shop/features', { name: 'described-flag', description })).status,
  ).toBe(201)
})

const admin = under.call

/** Whether `flag` is on in `environment`, as the service holds it. */
async function enabledIn(flag: string, environment: string) {
  const answer = await admin('GET', `/api/admin/projects/shop/features/${flag}`)
  return answer.body.environments.find((entry: { name: string }) => entry.name === environment).enabled as boolean
}

/** The switch-change event types written for `flag`, oldest first. */
async function switchEvents(flag: string) {
  const answer = await admin('GET', `/api/admin/events/${flag}`)
  return (answer.body.events as { type: string; environment?: string }[])
    .filter(event => event.type.startsWith('feature-environment-'))
    .map(event => `${event.type} ${event.environment}`)
    .reverse()
}

const notice = (page: Page) => page.getByRole('region', { name: 'Notifications' }).getByRole('status')

withChromium.test(
  'on the flags list a row shows its description, a switch in production says so in a toast with Undo, and Undo turns it back; development changes silently',
  async () => {
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/shop`)
    const production = page.getByRole('switch', { name: 'list-flag in production' })
    // Each row says what its flag is for, as Unleash's list does: the description beside the name.
    const described = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'described-flag' }) })
    await described.getByText('Route a share of payments to the second provider').waitFor()
    await production.click()
    const toast = notice(page).filter({ hasText: 'list-flag turned on in production, a production environment.' })
    // Focus in a toast holds it: it stays through the checks that follow.
    await toast.getByRole('button', { name: 'Undo' }).focus()
    await eventually(() => enabledIn('list-flag', 'production'), true)
    await everyWay(page, 'flags list with the production toast')
    await toast.getByRole('button', { name: 'Undo' }).click()
    await eventually(() => production.isChecked(), false)
    await eventually(() => enabledIn('list-flag', 'production'), false)
    // The undo is a production change too, announced the same way.
    await notice(page).filter({ hasText: 'list-flag turned off in production' }).waitFor()

    await page.getByRole('switch', { name: 'list-flag in development' }).click()
    await eventually(() => enabledIn('list-flag', 'development'), true)
    expect(await notice(page).filter({ hasText: 'in development' }).count()).toBe(0)
    // The event log is searched by a worker: its answer may lag a write by a moment.
    await eventually(
      () => switchEvents('list-flag'),
      [
        'feature-environment-enabled production',
        'feature-environment-disabled production',
        'feature-environment-enabled development',
      ],
    )
    expect(problems.filter(problem => !problem.includes('/api/admin/live'))).toEqual([])
    await page.context().close()
  },
  90_000,
)

withChromium.test(
  "on a flag's page, at 390 px in the dark theme, a switch in production offers Undo, which turns it back; focus holds the toast past its time, and it goes once let go",
  async () => {
    const context = await under.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' })
    const page = await context.newPage()
    // The page's clock is the test's to move: a toast's time is checked without waiting it out.
    await page.clock.install()
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/shop/features/page-flag`)
    const production = page.getByRole('switch', { name: 'page-flag in production' })
    await production.click()
    const toast = notice(page).filter({ hasText: 'page-flag turned on in production' })
    await toast.getByRole('button', { name: 'Undo' }).focus()
    await eventually(() => enabledIn('page-flag', 'production'), true)
    // Focus in it holds a toast past its time (8 s with Undo).
    await page.clock.runFor(20_000)
    expect(await toast.isVisible()).toBe(true)
    await toast.getByRole('button', { name: 'Undo' }).click()
    await eventually(() => production.isChecked(), false)
    await eventually(() => enabledIn('page-flag', 'production'), false)
    await page.getByRole('switch', { name: 'page-flag in development' }).click()
    await eventually(() => enabledIn('page-flag', 'development'), true)
    expect(await notice(page).filter({ hasText: 'in development' }).count()).toBe(0)
    // With neither the pointer nor focus on the toasts, one goes after its time.
    await production.click()
    await page.mouse.move(0, 0)
    const again = notice(page).filter({ hasText: 'page-flag turned on in production' })
    await again.waitFor()
    await page.clock.runFor(10_000)
    await again.waitFor({ state: 'detached' })
    await context.close()
  },
  60_000,
)

withChromium.test(
  "a flag's page copies the flag's name, for code, and says so",
  async () => {
    const { page, problems } = await newPage(under.browser)
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: under.base })
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/shop/features/named-flag`)
    await page.getByRole('heading', { name: 'named-flag', level: 1 }).waitFor()
    await page.getByRole('button', { name: 'Copy the name named-flag' }).click()
    await notice(page).filter({ hasText: 'Copied named-flag.' }).waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('named-flag')
    await everyWay(page, 'flag page with the copy button')
    expect(problems.filter(problem => !problem.includes('/api/admin/live'))).toEqual([])
    await page.context().close()
  },
  60_000,
)

withChromium.test(
  "a strategy's variants show on its card, and editing the strategy keeps them, its title and its state",
  async () => {
    const path = '/api/admin/projects/shop/features/variant-flag/environments/production/strategies'
    const created = await admin('POST', path, {
      name: 'flexibleRollout',
      title: 'Half of the shop',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'variant-flag' },
      constraints: [],
      variants: ['control', 'discount'].map(name => ({
        name,
        weight: 500,
        weightType: 'variable',
        stickiness: 'default',
      })),
    })
    expect(created.status).toBe(200)
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/shop/features/variant-flag`)
    const production = page.getByRole('region', { name: 'Environment production' })
    const variants = production.getByRole('list', { name: 'Variants of this strategy' }).getByRole('listitem')
    await variants.first().waitFor()
    expect(await variants.allTextContents()).toEqual(['control 50 %', 'discount 50 %'])
    await everyWay(page, "a strategy's variants on its card")

    await production.getByRole('button', { name: 'Edit flexibleRollout' }).click()
    await production.getByRole('button', { name: 'Save strategy' }).click()
    await production.getByRole('button', { name: 'Edit flexibleRollout' }).waitFor()
    const stored = (await admin('GET', `${path}/${created.body.id}`)).body
    expect({
      title: stored.title,
      disabled: stored.disabled,
      variants: stored.variants.map((v: { name: string; weight: number }) => `${v.name} ${v.weight}`),
    }).toEqual({
      title: 'Half of the shop',
      disabled: false,
      variants: ['control 500', 'discount 500'],
    })
    expect(await switchEvents('variant-flag')).toEqual([])
    expect(problems.filter(problem => !problem.includes('/api/admin/live'))).toEqual([])
    await page.context().close()
  },
  60_000,
)
