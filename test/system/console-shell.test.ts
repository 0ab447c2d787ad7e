/**
 * The console's shell and shared components in a real browser (Chromium through playwright-core,
 * one launch for the file): every page of the shell in both themes, on a desktop and at 390 px wide,
 * without a serious or critical axe violation and without sideways scrolling; the navigation behind
 * a menu on a phone; the theme following the system until chosen; the command palette by keyboard;
 * a refused switch moving back with the server's message; destructive actions confirmed first
 * (typing the name for tokens and projects), a role change undone, a password reset; and a change
 * made elsewhere shown without a reload.
 */
import { expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { withChromium } from './chromium'
import { accessible, eventually, signIn, twoFrames, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-shell-admin-secret-0123456789'
const PASSWORD = 'Shell-admin-pass-1'

const under = useConsoleBrowser(SECRET, PASSWORD, async () => {
  for (const id of ['shop', 'other'])
    expect((await admin('POST', '/api/admin/projects', { id, name: id })).status).toBe(201)
  for (const [project, name] of [
    ['shop', 'checkout-a'],
    ['shop', 'checkout-b'],
    ['other', 'palette-target'],
  ])
    expect((await admin('POST', `/api/admin/projects/${project}/features`, { name })).status).toBe(201)
})
const admin = under.call

/** A signed-in page `width` px wide with the system in `theme`; `problems` collects failed requests. */
async function open(width: number, theme: 'light' | 'dark', username = 'admin', password = PASSWORD) {
  const context = await under.browser.newContext({ viewport: { width, height: 844 }, colorScheme: theme })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', error => problems.push(`page error: ${error.message}`))
  page.on('response', response => {
    // The live stream may be absent on this server: refused, the console polls instead.
    if (response.status() === 404 && new URL(response.url()).pathname === '/api/admin/live') return
    if (response.status() >= 400) problems.push(`${response.status()} ${response.request().method()} ${response.url()}`)
  })
  await signIn(page, under.base, username, password)
  return { page, problems, close: () => context.close() }
}

const PAGES: [path: string, heading: string][] = [
  ['/', 'Projects'],
  ['/projects/shop', 'Project shop'],
  ['/flags', 'Flags'],
  ['/projects/shop/settings', 'Settings of shop'],
  ['/segments', 'Segments'],
  ['/applications', 'Applications'],
  ['/context', 'Context fields'],
  ['/tag-types', 'Tag types'],
  ['/strategy-types', 'Strategy types'],
  ['/environments', 'Environments'],
  ['/tokens', 'API tokens'],
  ['/users', 'Users'],
]

const sideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

withChromium.test(
  'every page of the shell, in the light and the dark theme, on a desktop and at 390 px wide, has no serious or critical axe violation and no sideways scrolling',
  async () => {
    // One sign-in and one visit per page; the four ways are the system's theme and the window's
    // width changed on the page, which the console follows (style sheets, and the theme in script).
    const { page, problems, close } = await open(1280, 'light')
    for (const [path, heading] of PAGES) {
      await page.goto(`${under.base}/#${path}`)
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      await page.waitForLoadState('networkidle')
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 844 })
        for (const theme of ['light', 'dark'] as const) {
          const where = `${path} (${theme}, ${width} px)`
          await page.emulateMedia({ colorScheme: theme })
          await twoFrames(page)
          await eventually(() => page.evaluate(() => document.documentElement.dataset.theme), theme)
          expect({ where, sideways: await sideways(page) }).toEqual({ where, sideways: 0 })
          await accessible(page, where)
        }
      }
    }
    expect(problems).toEqual([])
    await close()
  },
  180_000,
)

withChromium.test(
  "at 390 px the navigation is behind a menu button, and a flag's switches are in view and work",
  async () => {
    const { page, problems, close } = await open(390, 'light')
    const segments = page.getByRole('link', { name: 'Segments', exact: true })
    expect(await segments.isVisible()).toBe(false)
    const menu = page.getByRole('button', { name: 'Menu' })
    expect(await menu.getAttribute('aria-expanded')).toBe('false')
    await menu.click()
    await segments.click()
    await page.getByRole('heading', { name: 'Segments', level: 1 }).waitFor()
    // Following a link closes the menu again.
    await eventually(() => segments.isVisible(), false)

    await page.goto(`${under.base}/#/projects/shop`)
    const toggle = page.getByRole('switch', { name: 'checkout-a in production' })
    await toggle.waitFor()
    const box = (await toggle.boundingBox())!
    expect(box.x + box.width).toBeLessThanOrEqual(390)
    await toggle.click()
    await eventually(() => toggle.isChecked(), true)
    await eventually(async () => {
      const flag = (await admin('GET', '/api/admin/projects/shop/features/checkout-a')).body
      return flag.environments.find((entry: { name: string }) => entry.name === 'production').enabled
    }, true)
    expect(await sideways(page)).toBe(0)
    expect(problems).toEqual([])
    await close()
  },
  60_000,
)

withChromium.test(
  'the theme follows the system until one is chosen in the top bar; the choice is remembered',
  async () => {
    const { page, close } = await open(1280, 'dark')
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark')
    const dark = await background()
    await page.getByRole('button', { name: 'Switch to light theme' }).click()
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light')
    expect(await background()).not.toBe(dark)
    await page.reload()
    await page.getByRole('button', { name: 'Switch to dark theme' }).waitFor()
    expect(
      await page.evaluate(() => [document.documentElement.dataset.theme, localStorage['flagstore-theme']]),
    ).toEqual(['light', 'light'])
    await close()
  },
  60_000,
)

withChromium.test(
  'the command palette by keyboard: Ctrl-K opens it, typing finds a flag of another project, arrows move, Enter opens the flag, Escape closes; focus rings use --color-focus',
  async () => {
    const { page, problems, close } = await open(1280, 'light')
    const palette = page.getByRole('dialog', { name: 'Command palette' })
    await page.keyboard.press('Control+k')
    await palette.waitFor()
    const input = palette.getByRole('combobox', { name: 'Find a flag or page' })
    expect(await input.evaluate(element => element === document.activeElement)).toBe(true)
    await page.keyboard.type('palette-tar')
    const option = palette.getByRole('option', { name: /palette-target/ })
    await option.waitFor()
    await accessible(page, 'command palette')
    expect(await option.getAttribute('aria-selected')).toBe('true')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('ArrowUp')
    expect(await option.getAttribute('aria-selected')).toBe('true')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'palette-target', level: 1 }).waitFor()
    expect(new URL(page.url()).hash).toBe('#/projects/other/features/palette-target')
    expect(await palette.isVisible()).toBe(false)

    // Pages too; and Escape closes without going anywhere.
    await page.keyboard.press('Control+k')
    await palette.waitFor()
    await page.keyboard.type('tag ty')
    await palette.getByRole('option', { name: /Tag types/ }).waitFor()
    await page.keyboard.press('Escape')
    await eventually(() => palette.isVisible(), false)
    expect(new URL(page.url()).hash).toBe('#/projects/other/features/palette-target')
    await page.keyboard.press('Control+k')
    await palette.waitFor()
    await page.keyboard.type('tag ty')
    await palette.getByRole('option', { name: /Tag types/ }).waitFor()
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Tag types', level: 1 }).waitFor()

    // The first Tab offers to skip the navigation, to the page's content.
    await page.keyboard.press('Tab')
    const skip = page.getByRole('button', { name: 'Skip to content' })
    expect(await skip.evaluate(element => element === document.activeElement)).toBe(true)
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('MAIN')

    // Tab reaches the theme toggle, drawn with the focus ring's colour.
    const toggle = page.getByRole('button', { name: 'Switch to dark theme' })
    for (let i = 0; i < 40 && !(await toggle.evaluate(element => element === document.activeElement)); i++)
      await page.keyboard.press('Tab')
    const [ring, focus] = await toggle.evaluate(element => {
      const probe = document.createElement('span')
      probe.style.color = 'var(--color-focus)'
      document.body.append(probe)
      const colour = getComputedStyle(probe).color
      probe.remove()
      return [getComputedStyle(element).outlineColor, colour]
    })
    expect(ring).toBe(focus)
    expect(problems).toEqual([])
    await close()
  },
  60_000,
)

withChromium.test(
  "a switch the service refuses moves back, and a toast gives the service's own message",
  async () => {
    const rolf = await admin('POST', '/api/admin/user-admin', {
      username: 'rolf',
      rootRole: 'Admin',
      password: 'Rolf-pass-word-1',
    })
    expect(rolf.status).toBe(201)
    expect((await admin('POST', '/api/admin/projects/shop/features', { name: 'refused-here' })).status).toBe(201)
    const { page, close } = await open(1280, 'light', 'rolf', 'Rolf-pass-word-1')
    await page.goto(`${under.base}/#/projects/shop`)
    const toggle = page.getByRole('switch', { name: 'refused-here in development' })
    await toggle.waitFor()
    // Rolf is made a viewer after the list was drawn: the service refuses the switch (403) and the row
    // stays, so the switch must move back by itself.
    expect((await admin('PUT', `/api/admin/user-admin/${rolf.body.id}`, { rootRole: 'Viewer' })).status).toBe(200)
    const refusal = { body: { message: 'lacks the UPDATE_FEATURE_ENVIRONMENT permission' } }
    await toggle.click()
    const alert = page.getByRole('region', { name: 'Notifications' }).getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toContain(refusal.body.message)
    await eventually(() => toggle.isChecked(), false)
    await close()
  },
  60_000,
)

withChromium.test(
  "destructive actions ask first (a token's name and a project's id typed); a scoped, expiring token; a role changed and undone; a password reset; environments added to a project",
  async () => {
    expect(
      (
        await admin('POST', '/api/admin/user-admin', {
          username: 'rita',
          rootRole: 'Viewer',
          password: 'Rita-pass-word-1',
        })
      ).status,
    ).toBe(201)
    expect((await admin('POST', '/api/admin/projects', { id: 'doomed', name: 'doomed' })).status).toBe(201)
    const { page, problems, close } = await open(1280, 'light')
    const dialog = page.getByRole('dialog')

    // A client token for one project and production, expiring.
    await page.goto(`${under.base}/#/tokens`)
    await page.getByLabel('Token name').fill('shop-prod')
    await page.getByLabel('Token environment').selectOption('production')
    await page.getByLabel('All projects, present and future').uncheck()
    await page.getByLabel('shop', { exact: true }).check()
    await page.getByLabel('Expires on').fill('2099-12-31')
    await page.getByRole('button', { name: 'Create token' }).click()
    expect((await page.getByLabel('Token secret').textContent())!.trim()).toMatch(/^shop:production\.[0-9a-f]{64}$/)
    const token = (await admin('GET', '/api/admin/api-tokens')).body.tokens.find(
      (entry: { tokenName: string }) => entry.tokenName === 'shop-prod',
    )
    expect(token).toMatchObject({ type: 'client', projects: ['shop'], environment: 'production' })
    expect(token.expiresAt).toStartWith('2099-12-31')

    // Deleting it: cancelled first, then allowed only once its name is typed.
    const tokens = async () =>
      (await admin('GET', '/api/admin/api-tokens')).body.tokens.map((entry: { tokenName: string }) => entry.tokenName)
    await page.getByRole('button', { name: 'Delete shop-prod' }).click()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect(await tokens()).toContain('shop-prod')
    await page.getByRole('button', { name: 'Delete shop-prod' }).click()
    await accessible(page, 'confirm dialog')
    const confirm = dialog.getByRole('button', { name: 'Delete token' })
    expect(await confirm.isDisabled()).toBe(true)
    await dialog.getByLabel('Type shop-prod to confirm').fill('shop-pro')
    expect(await confirm.isDisabled()).toBe(true)
    await dialog.getByLabel('Type shop-prod to confirm').fill('shop-prod')
    await confirm.click()
    await eventually(async () => (await tokens()).includes('shop-prod'), false)
    await page.getByRole('cell', { name: 'shop-prod', exact: true }).waitFor({ state: 'detached' })

    // A project, deleted once its id is typed.
    await page.goto(`${under.base}/#/projects/doomed/settings`)
    await page.getByRole('button', { name: 'Delete project' }).click()
    await dialog.getByLabel('Type doomed to confirm').fill('doomed')
    await dialog.getByRole('button', { name: 'Delete project' }).click()
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor()
    expect((await admin('GET', '/api/admin/projects/doomed')).status).toBe(404)

    // A role changed in place, then undone from the toast.
    const role = async () =>
      (await admin('GET', '/api/admin/user-admin')).body.users.find(
        (user: { username: string }) => user.username === 'rita',
      ).rootRole
    await page.goto(`${under.base}/#/users`)
    await page.getByLabel('Role of rita').selectOption('Editor')
    const notice = page.getByRole('status').filter({ hasText: 'rita is now Editor.' })
    // Focus in a toast holds it: it stays while the service is asked.
    await notice.getByRole('button', { name: 'Undo' }).focus()
    await eventually(role, 2)
    await notice.getByRole('button', { name: 'Undo' }).click()
    await eventually(role, 3)
    await eventually(() => page.getByLabel('Role of rita').inputValue(), 'Viewer')

    // A password reset by an admin: the new one signs in.
    await page.getByRole('button', { name: 'Reset password of rita' }).click()
    await dialog.getByLabel('New password for the user').fill('Rita-new-word-2')
    await dialog.getByRole('button', { name: 'Reset password' }).click()
    await dialog.waitFor({ state: 'hidden' })
    const login = await fetch(`${under.base}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'rita', password: 'Rita-new-word-2' }),
    })
    expect(login.status).toBe(200)

    // A new environment, added to a project from its settings, then removed after confirming.
    await page.goto(`${under.base}/#/environments`)
    await page.getByLabel('Environment name').fill('staging')
    await page.getByLabel('Environment type').selectOption('test')
    await page.getByRole('button', { name: 'Create environment' }).click()
    await page.getByRole('cell', { name: 'staging', exact: true }).waitFor()
    const environments = async () => (await admin('GET', '/api/admin/projects/shop')).body.environments as string[]
    await page.goto(`${under.base}/#/projects/shop/settings`)
    await page.getByLabel('Environment to add').selectOption('staging')
    await page.getByRole('button', { name: 'Add environment' }).click()
    await eventually(async () => (await environments()).includes('staging'), true)
    await page.getByRole('button', { name: 'Remove staging' }).click()
    await dialog.getByRole('button', { name: 'Remove environment' }).click()
    await eventually(async () => (await environments()).includes('staging'), false)
    expect(problems).toEqual([])
    await close()
  },
  90_000,
)

withChromium.test(
  'a change made elsewhere shows on an open flags list without a reload (the live stream, or polling where there is none)',
  async () => {
    const { page, close } = await open(1280, 'light')
    await page.goto(`${under.base}/#/projects/shop`)
    const toggle = page.getByRole('switch', { name: 'checkout-b in development' })
    await toggle.waitFor()
    expect(await toggle.isChecked()).toBe(false)
    expect(
      (await admin('POST', '/api/admin/projects/shop/features/checkout-b/environments/development/on')).status,
    ).toBeLessThan(300)
    // Polling asks every 10 s; the stream, where the server has it, within a second.
    await eventually(() => toggle.isChecked(), true, 15_000)
    await close()
  },
  60_000,
)
