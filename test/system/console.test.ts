/**
 * The console in a real browser (Debian's Chromium through playwright-core, as the Swagger UI test
 * does; skipped, saying so, where there is none), against the real server: sign in; create a
 * project and a flag (its name checked as it is typed); enable it in development with a 50 %
 * rollout and a constraint, which an unleash-client SDK then sees exactly; edit a variant; search
 * the event log for the flag and see the user on each event; create a client token and read its
 * secret once; archive the flag; a viewer cannot change anything; sign out, and the session no
 * longer works. axe-core runs on each page and finds no serious or critical violation. Every page
 * is served with its Content-Security-Policy, and none reports a violation of it.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { hasChromium, launchChromium, withChromium } from './chromium'
import { accessible, eventually, showsText } from './console-browser'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { adminCall, destroySdk, eventOf, freePort, tempDir } from '../helpers'

const ROOT = join(import.meta.dir, '../..')
const SECRET = '*:*.console-test-admin-secret-0123456789'
const PASSWORD = 'Console-admin-pass-1'
const VIEWER_PASSWORD = 'Console-viewer-pass-1'

const dir = tempDir('console-browser-')
const port = freePort()
const base = `http://127.0.0.1:${port}`
let server: ReturnType<typeof Bun.spawn> | undefined
let browser: Browser | undefined
let client: Unleash | undefined

beforeAll(async () => {
  if (!hasChromium) return
  server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir.path,
      INIT_ADMIN_API_TOKENS: SECRET,
      UNLEASH_DEFAULT_ADMIN_PASSWORD: PASSWORD,
      LOG_LEVEL: 'warn',
    },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  for (
    let i = 0;
    i < 200 &&
    !(await fetch(`${base}/ready`).then(
      r => r.ok,
      () => false,
    ));
    i++
  )
    await Bun.sleep(25)
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  destroySdk(client)
  await browser?.close()
  server?.kill('SIGTERM')
  await server?.exited
  dir.remove()
})

/** Content-Security-Policy violations the browser reported, and the console pages loaded with and without a policy, over the whole file. */
const csp = { violations: [] as string[], withPolicy: 0, withoutPolicy: [] as string[] }

/** A page that records console errors and failed requests (the sign-in page's who-am-I 401 is expected). */
async function newPage(): Promise<{ page: Page; problems: string[] }> {
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

async function signIn(page: Page, username: string, password: string) {
  await page.goto(`${base}/`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Projects' }).waitFor()
}

const FLAG = 'new-checkout'

withChromium.test(
  'a person signs in, makes a flag, rolls it out to 50 % with a constraint the SDK sees, and the audit log names them',
  async () => {
    const { page, problems } = await newPage()
    await page.goto(`${base}/`)
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    await accessible(page, 'sign-in')
    // A wrong password is shown where the user acted.
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill('Wrong-password-1')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await showsText(page.getByRole('alert'), 'Wrong username or password')
    problems.splice(0) // that 401 was the point
    await signIn(page, 'admin', PASSWORD)
    await page.getByRole('button', { name: 'Account: admin' }).click()
    await showsText(page.getByText('Signed in as'), 'admin (Admin)')
    await page.keyboard.press('Escape')

    // A project, then a flag whose name is checked as it is typed.
    await page.getByLabel('New project id').fill('shop')
    await page.getByRole('button', { name: 'Create project' }).click()
    await page.getByRole('link', { name: 'shop', exact: true }).click()
    await page.getByRole('heading', { name: 'Project shop' }).waitFor()
    await accessible(page, 'projects')
    await page.getByRole('button', { name: 'New flag' }).click()
    await page.getByLabel('Flag name').fill('bad name')
    await showsText(page.locator('#name-problem'), 'URL-friendly')
    expect(await page.getByRole('button', { name: 'Create flag' }).isDisabled()).toBe(true)
    problems.splice(0) // the validate operation's 400 is how the name is checked
    await page.getByLabel('Flag name').fill(FLAG)
    await page.locator('#name-problem').waitFor({ state: 'detached' })
    await page.getByLabel('Description').fill('The new checkout')
    await page.getByRole('button', { name: 'Create flag' }).click()
    await page.getByRole('heading', { name: FLAG, level: 1 }).waitFor()

    // 50 % rollout with a constraint, then on in development.
    await page.getByRole('button', { name: 'Add strategy in development' }).click()
    await page.getByLabel('Rollout percentage').fill('50')
    await page.getByRole('button', { name: 'Add constraint' }).click()
    await page.getByLabel('Context field').selectOption('userId')
    await page.getByLabel('Values (comma-separated)').fill('alice, bob')
    await page.getByRole('button', { name: 'Save strategy' }).click()
    await page.getByText('50 % of users').waitFor()
    await page.getByRole('switch', { name: `${FLAG} in development` }).check()
    await eventually(() => page.getByRole('switch', { name: `${FLAG} in development` }).isChecked(), true)
    await accessible(page, 'flag')

    // A client token, its secret shown once.
    await page.getByRole('link', { name: 'API tokens' }).click()
    await page.getByLabel('Token name').fill('checkout-service')
    await page.getByRole('button', { name: 'Create token' }).click()
    const secret = (await page.getByLabel('Token secret').textContent())!.trim()
    expect(secret).toMatch(/^\*:development\.[0-9a-f]{64}$/)
    await accessible(page, 'tokens')
    await page.getByRole('button', { name: 'Done' }).click()
    await page.getByLabel('Token secret').waitFor({ state: 'detached' })
    await page.reload()
    await page.getByRole('cell', { name: 'checkout-service', exact: true }).waitFor()
    expect(await page.content()).not.toContain(secret)

    // The SDK sees exactly that: the strategy, its constraint, and the answer it gives.
    client = new Unleash({
      url: `${base}/api`,
      appName: 'console-test',
      customHeaders: { Authorization: secret },
      refreshInterval: 200,
      disableMetrics: true,
      storageProvider: new InMemStorageProvider(),
    })
    await eventOf(client, 'synchronized')
    const definition = client.getFeatureToggleDefinition(FLAG)!
    expect({ enabled: definition.enabled, strategies: definition.strategies }).toMatchObject({
      enabled: true,
      strategies: [
        {
          name: 'flexibleRollout',
          parameters: { rollout: '50', stickiness: 'default', groupId: FLAG },
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice', 'bob'] }],
        },
      ],
    })
    expect(client.isEnabled(FLAG, { userId: 'carol' })).toBe(false)

    // A variant, edited on the flag's page.
    await page.goto(`${base}/#/projects/shop/features/${FLAG}`)
    await page.getByRole('button', { name: 'Add variant in development' }).click()
    await page.getByLabel('Variant name').fill('blue')
    await page.getByLabel('Payload', { exact: true }).fill('sky')
    await page.getByRole('button', { name: 'Save variants in development' }).click()
    await eventually(async () => {
      const variants = (await adminCall(base, SECRET, 'GET', `/api/admin/projects/shop/features/${FLAG}`)).body
        .environments[0].variants as { name: string; payload?: unknown }[]
      return variants.map(({ name, payload }) => ({ name, payload }))
    }, [{ name: 'blue', payload: { type: 'string', value: 'sky' } }])

    // The event log: every event about the flag names the user.
    await page.getByRole('link', { name: 'Event log' }).click()
    await page.getByLabel('Flag', { exact: true }).fill(FLAG)
    await page.getByRole('button', { name: 'Search' }).click()
    const total = (await adminCall(base, SECRET, 'GET', `/api/admin/search/events?feature=IS:${FLAG}`)).body
      .total as number
    expect(total).toBeGreaterThanOrEqual(4) // created, strategy added, enabled, variants
    await showsText(page.getByText(/^\d+ events/), `${total} events`)
    const actors = await page.locator('.events .actor').allTextContents()
    expect(actors.length).toBe(total)
    expect(new Set(actors)).toEqual(new Set(['admin']))
    // The newest event (the variants) opens to its changes, field by field.
    await page.getByRole('button', { name: 'Show changes' }).first().click()
    await page.getByRole('cell', { name: 'sky', exact: true }).waitFor()
    // Free text with the flag filter: the search's own query parameter, answered by the API (not a 400).
    await page.getByLabel('Search text').fill('sky')
    await page.getByRole('button', { name: 'Search' }).click()
    const withText = (await adminCall(base, SECRET, 'GET', `/api/admin/search/events?feature=IS:${FLAG}&query=sky`))
      .body.total as number
    expect(withText).toBeGreaterThanOrEqual(1)
    await showsText(page.getByText(/^\d+ events/), `${withText} events`)
    await page.getByLabel('Search text').fill('')
    await page.getByRole('button', { name: 'Search' }).click()
    await showsText(page.getByText(/^\d+ events/), `${total} events`)
    await accessible(page, 'events')

    // The project's table, then archive.
    await page.goto(`${base}/#/projects/shop`)
    await eventually(() => page.getByRole('switch', { name: `${FLAG} in development` }).isChecked(), true)
    await eventually(() => page.getByRole('switch', { name: `${FLAG} in production` }).isChecked(), false)
    await page.getByRole('link', { name: FLAG }).click()
    await page.getByRole('button', { name: 'Archive flag' }).click()
    await page.getByRole('heading', { name: 'Project shop' }).waitFor()
    expect((await adminCall(base, SECRET, 'GET', `/api/admin/projects/shop/features/${FLAG}`)).body.archived).toBe(true)
    expect(problems).toEqual([])

    // Sign out: the session the browser held no longer works.
    const [cookie] = await page.context().cookies()
    expect(cookie).toMatchObject({ name: 'unleash-session', httpOnly: true, sameSite: 'Strict' })
    await page.getByRole('button', { name: 'Account: admin' }).click()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(
      (await fetch(`${base}/api/admin/projects`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } })).status,
    ).toBe(401)
  },
  120_000,
)

withChromium.test(
  'a viewer sees the flags and can change nothing: every switch and button that would answer 403 is disabled or absent',
  async () => {
    expect(
      (
        await adminCall(base, SECRET, 'POST', '/api/admin/user-admin', {
          username: 'vera',
          rootRole: 'Viewer',
          password: VIEWER_PASSWORD,
        })
      ).status,
    ).toBe(201)
    expect(
      (await adminCall(base, SECRET, 'POST', '/api/admin/projects/default/features', { name: 'viewer-sees-this' }))
        .status,
    ).toBe(201)
    const { page, problems } = await newPage()
    await signIn(page, 'vera', VIEWER_PASSWORD)
    expect(await page.getByRole('button', { name: 'Create project' }).count()).toBe(0)
    await page.getByRole('link', { name: 'Default', exact: true }).click()
    const toggle = page.getByRole('switch', { name: 'viewer-sees-this in development' })
    await toggle.waitFor()
    expect(await toggle.isDisabled()).toBe(true)
    expect(await page.getByRole('button', { name: 'New flag' }).count()).toBe(0)
    expect(await page.getByRole('link', { name: 'API tokens' }).count()).toBe(0)
    await page.getByRole('link', { name: 'viewer-sees-this' }).click()
    await page.getByRole('heading', { name: 'viewer-sees-this', level: 1 }).waitFor()
    for (const control of await page.locator('main input, main select').all())
      expect(await control.isDisabled()).toBe(true)
    expect(await page.getByRole('button', { name: /Add strategy|Archive|Save/ }).count()).toBe(0)
    // The configuration pages: tables only, no control that would answer 403.
    for (const [link, heading] of [
      ['Segments', 'Segments'],
      ['Context fields', 'Context fields'],
      ['Tag types', 'Tag types'],
      ['Strategy types', 'Strategy types'],
      ['Applications', 'Applications'],
      ['Environments', 'Environments'],
    ]) {
      await page.getByRole('link', { name: link, exact: true }).click()
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      // The rows (with their buttons, were there any) are in once the page's requests are answered.
      await page.waitForLoadState('networkidle')
      expect([link, await page.locator('main button, main input, main select').count()]).toEqual([link, 0])
    }
    expect(problems).toEqual([])
  },
  60_000,
)

withChromium.test(
  "a toggle the API refuses flips back, and the API's message is shown where the user acted",
  async () => {
    const user = await adminCall(base, SECRET, 'POST', '/api/admin/user-admin', {
      username: 'demoted-meanwhile',
      rootRole: 'Admin',
      password: 'Demoted-pass-word-1',
    })
    expect(user.status).toBe(201)
    expect(
      (await adminCall(base, SECRET, 'POST', '/api/admin/projects/default/features', { name: 'refused-meanwhile' }))
        .status,
    ).toBe(201)
    const { page } = await newPage()
    await signIn(page, 'demoted-meanwhile', 'Demoted-pass-word-1')
    await page.goto(`${base}/#/projects/default`)
    const toggle = page.getByRole('switch', { name: 'refused-meanwhile in development' })
    await toggle.waitFor()
    // Made a viewer by someone else after the table was loaded: the toggle answers 403, the row stays.
    const demoted = await adminCall(base, SECRET, 'PUT', `/api/admin/user-admin/${(user.body as { id: number }).id}`, {
      rootRole: 'Viewer',
    })
    expect(demoted.status).toBe(200)
    await toggle.click()
    await showsText(page.getByRole('alert'), 'lacks the UPDATE_FEATURE_ENVIRONMENT permission')
    await eventually(() => toggle.isChecked(), false)
  },
  60_000,
)

withChromium.test(
  'a project of many flags loads a page of rows at a time: scroll, filter, sort, select all shown and turn them on in one call',
  async () => {
    expect((await adminCall(base, SECRET, 'POST', '/api/admin/projects', { id: 'many', name: 'many' })).status).toBe(
      201,
    )
    const names = Array.from({ length: 250 }, (_, i) => `many-${String(i).padStart(3, '0')}`)
    for (let i = 0; i < names.length; i += 25) {
      await Promise.all(
        names
          .slice(i, i + 25)
          .map(async name =>
            expect((await adminCall(base, SECRET, 'POST', '/api/admin/projects/many/features', { name })).status).toBe(
              201,
            ),
          ),
      )
    }
    const { page, problems } = await newPage()
    const asked: string[] = []
    page.on('request', request => asked.push(new URL(request.url()).pathname + new URL(request.url()).search))
    await signIn(page, 'admin', PASSWORD)
    await page.goto(`${base}/#/projects/many`)
    await page.getByRole('switch', { name: 'many-000 in development' }).waitFor()
    await showsText(page.getByText(/of 250 flags/), '250 of 250 flags')
    // Never the whole list: pages of 100 from the search operation.
    expect(asked.filter(path => path.startsWith('/api/admin/projects/many/features'))).toEqual([])
    expect(
      asked.filter(path => path.startsWith('/api/admin/search/features')).every(path => path.includes('limit=100')),
    ).toBe(true)
    expect(await page.getByRole('switch', { name: 'many-249 in development' }).count()).toBe(0)
    await accessible(page, 'many flags')

    // Scrolled to the end, the last page is asked for and its rows appear.
    await page.locator('.table-scroll').evaluate(element => (element.scrollTop = element.scrollHeight))
    await page.getByRole('switch', { name: 'many-249 in development' }).waitFor()

    // Filtered on the service: 024, 124, 224 and 240–249.
    await page.getByLabel('Filter flags').fill('24')
    await showsText(page.getByText(/of 250 flags/), '13 of 250 flags')
    await page.getByRole('button', { name: 'Name' }).click()
    await eventually(() => page.locator('tbody a').first().textContent(), 'many-249')
    await page.getByLabel('Select all shown flags').check()
    await eventually(() => page.getByLabel('Select all shown flags').isChecked(), true)
    await page.getByRole('button', { name: 'Turn on selected' }).click()
    await eventually(() => page.getByRole('switch', { name: 'many-024 in development' }).isChecked(), true)
    const enabled = async () => {
      const answer = await adminCall(base, SECRET, 'GET', '/api/admin/search/features?project=IS:many&limit=1000')
      return answer.body.features
        .filter((flag: { environments: { name: string; enabled: boolean }[] }) =>
          flag.environments.some(entry => entry.name === 'development' && entry.enabled),
        )
        .map((flag: { name: string }) => flag.name)
        .sort()
    }
    await eventually(
      enabled,
      names.filter(name => name.includes('24')),
    )
    expect(problems).toEqual([])
  },
  60_000,
)

withChromium.test(
  "a flag's page reorders strategies, adds a custom strategy with a segment, a tag and a dependency, and revives the flag once archived",
  async () => {
    const admin = (method: string, path: string, body?: unknown) => adminCall(base, SECRET, method, path, body)
    const flagPath = '/api/admin/projects/default/features/extras'
    const strategiesPath = `${flagPath}/environments/development/strategies`
    expect((await admin('POST', '/api/admin/projects/default/features', { name: 'extras' })).status).toBe(201)
    expect((await admin('POST', '/api/admin/projects/default/features', { name: 'extras-parent' })).status).toBe(201)
    expect((await admin('POST', strategiesPath, { name: 'default' })).status).toBe(200)
    expect((await admin('POST', strategiesPath, { name: 'userWithId', parameters: { userIds: 'carol' } })).status).toBe(
      200,
    )
    expect(
      (
        await admin('POST', '/api/admin/strategies', {
          name: 'byRegion',
          parameters: [{ name: 'regions', type: 'list', description: 'Regions', required: true }],
        })
      ).status,
    ).toBe(201)
    const segment = await admin('POST', '/api/admin/segments', {
      name: 'beta-users',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['dave'] }],
    })
    expect(segment.status).toBe(201)

    const { page, problems } = await newPage()
    await signIn(page, 'admin', PASSWORD)
    await page.goto(`${base}/#/projects/default/features/extras`)
    await page.getByRole('heading', { name: 'extras', level: 1 }).waitFor()

    // The flag's type, changed in place (a JSON Patch of /type).
    await page.getByRole('combobox', { name: 'Flag type' }).selectOption('kill-switch')
    await eventually(async () => (await admin('GET', flagPath)).body.type, 'kill-switch')
    // The page shows it once it has read the flag again.
    await eventually(() => page.getByRole('combobox', { name: 'Flag type' }).inputValue(), 'kill-switch')

    // Reorder: one set-sort-order call, and the page shows the new order.
    await page.getByRole('button', { name: 'Move strategy 2 (userWithId) up' }).click()
    await page.getByRole('button', { name: 'Move strategy 1 (userWithId) down' }).waitFor()
    expect((await admin('GET', strategiesPath)).body.map((strategy: { name: string }) => strategy.name)).toEqual([
      'userWithId',
      'default',
    ])

    // A custom strategy type with its parameter, and a segment.
    await page.getByRole('button', { name: 'Add strategy in development' }).click()
    await page.getByRole('combobox', { name: 'Strategy' }).selectOption('byRegion')
    await page.getByLabel('regions').fill('eu,us')
    await page.getByLabel('Segment beta-users').check()
    await accessible(page, 'strategy form with a custom type and segments')
    await page.getByRole('button', { name: 'Save strategy' }).click()
    await page.getByText('regions: eu,us').waitFor()
    const added = (await admin('GET', strategiesPath)).body.find(
      (strategy: { name: string }) => strategy.name === 'byRegion',
    )
    expect(added).toMatchObject({ parameters: { regions: 'eu,us' }, segments: [segment.body.id] })

    // A tag and a dependency.
    await page.getByLabel('Tag value').fill('checkout')
    await page.getByRole('button', { name: 'Add tag' }).click()
    await page.getByRole('button', { name: 'Remove tag simple:checkout' }).waitFor()
    await page.getByLabel('Parent flag').fill('extras-parent')
    await page.getByRole('button', { name: 'Add dependency' }).click()
    await page.getByRole('button', { name: 'Remove dependency on extras-parent' }).waitFor()
    const flag = (await admin('GET', flagPath)).body
    expect(flag.tags).toEqual([{ type: 'simple', value: 'checkout' }])
    expect(flag.dependencies).toEqual([{ feature: 'extras-parent', enabled: true, variants: [] }])
    await accessible(page, 'flag page with tags and dependencies')

    // Archived, found among the project's archived flags, revived.
    await page.getByRole('button', { name: 'Archive flag' }).click()
    await page.getByRole('heading', { name: 'Project default' }).waitFor()
    await page.getByRole('link', { name: 'Archived flags' }).click()
    await page.getByRole('heading', { name: 'Archived flags of default' }).waitFor()
    await accessible(page, 'archived flags')
    await page.getByRole('link', { name: 'extras', exact: true }).click()
    await page.getByRole('button', { name: 'Revive flag' }).click()
    await page.getByRole('button', { name: 'Archive flag' }).waitFor()
    expect((await admin('GET', flagPath)).body.archived).toBe(false)
    expect(problems).toEqual([])
  },
  60_000,
)

withChromium.test(
  "segments, context fields, tag types and strategy types are listed, created, edited and removed; applications and a flag's usage are shown",
  async () => {
    const admin = (method: string, path: string, body?: unknown) => adminCall(base, SECRET, method, path, body)
    const { page, problems } = await newPage()
    await signIn(page, 'admin', PASSWORD)

    // Segments.
    await page.getByRole('link', { name: 'Segments', exact: true }).click()
    await page.getByRole('button', { name: 'New segment' }).click()
    await page.getByLabel('Segment name').fill('eu-users')
    await page.getByRole('button', { name: 'Add constraint' }).click()
    await page.getByLabel('Values (comma-separated)').fill('erin, frank')
    await accessible(page, 'segment form')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('cell', { name: 'userId IN erin,frank' }).waitFor()
    await page.getByRole('button', { name: 'Edit eu-users' }).click()
    await page.getByLabel('Description').fill('Europe')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('cell', { name: 'Europe' }).waitFor()
    const segment = (await admin('GET', '/api/admin/segments')).body.segments.find(
      (entry: { name: string }) => entry.name === 'eu-users',
    )
    expect(segment).toMatchObject({
      description: 'Europe',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['erin', 'frank'] }],
    })
    await accessible(page, 'segments')
    await page.getByRole('button', { name: 'Delete eu-users' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete segment' }).click()
    await page.getByRole('cell', { name: 'eu-users', exact: true }).waitFor({ state: 'detached' })
    expect((await admin('GET', `/api/admin/segments/${segment.id}`)).status).toBe(404)

    // Context fields.
    await page.getByRole('link', { name: 'Context fields', exact: true }).click()
    await page.getByRole('button', { name: 'New context field' }).click()
    await page.getByLabel('Context field name').fill('region')
    await page.getByLabel('Legal values (comma-separated)').fill('eu, us')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('cell', { name: 'eu, us' }).waitFor()
    await page.getByRole('button', { name: 'Edit region' }).click()
    await page.getByLabel('Usable as stickiness').check()
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('button', { name: 'New context field' }).waitFor()
    await eventually(async () => (await admin('GET', '/api/admin/context/region')).body.stickiness, true)
    expect(
      (await admin('GET', '/api/admin/context/region')).body.legalValues.map((entry: { value: string }) => entry.value),
    ).toEqual(['eu', 'us'])
    await accessible(page, 'context fields')
    await page.getByRole('button', { name: 'Delete region' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete context field' }).click()
    await page.getByRole('button', { name: 'Delete region' }).waitFor({ state: 'detached' })
    expect((await admin('GET', '/api/admin/context/region')).status).toBe(404)

    // Tag types.
    await page.getByRole('link', { name: 'Tag types', exact: true }).click()
    await page.getByRole('button', { name: 'New tag type' }).click()
    await page.getByLabel('Tag type name').fill('team')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('button', { name: 'Edit team' }).click()
    await page.getByLabel('Description').fill('Owning team')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('cell', { name: 'Owning team' }).waitFor()
    expect((await admin('GET', '/api/admin/tag-types/team')).body.tagType).toMatchObject({
      name: 'team',
      description: 'Owning team',
    })
    await accessible(page, 'tag types')
    await page.getByRole('button', { name: 'Delete team' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete tag type' }).click()
    await page.getByRole('button', { name: 'Delete team' }).waitFor({ state: 'detached' })
    expect((await admin('GET', '/api/admin/tag-types/team')).status).toBe(404)

    // Strategy types: the API retires a type by deprecating it (strategies using it stay served).
    await page.getByRole('link', { name: 'Strategy types', exact: true }).click()
    await page.getByRole('button', { name: 'New strategy type' }).click()
    await page.getByLabel('Strategy type name').fill('byTenant')
    await page.getByRole('button', { name: 'Add parameter' }).click()
    await page.getByLabel('Parameter name').fill('tenants')
    await page.getByLabel('Parameter type').selectOption('list')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('button', { name: 'Edit byTenant' }).click()
    await page.getByLabel('Description', { exact: true }).fill('Per tenant')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('cell', { name: 'Per tenant' }).waitFor()
    expect((await admin('GET', '/api/admin/strategies/byTenant')).body).toMatchObject({
      description: 'Per tenant',
      parameters: [{ name: 'tenants', type: 'list' }],
    })
    await page.getByRole('button', { name: 'Deprecate byTenant' }).click()
    await page.getByRole('button', { name: 'Reactivate byTenant' }).waitFor()
    expect((await admin('GET', '/api/admin/strategies/byTenant')).body.deprecated).toBe(true)
    await accessible(page, 'strategy types')
    await page.getByRole('button', { name: 'Delete byTenant' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete strategy type' }).click()
    await page.getByRole('button', { name: 'Edit byTenant' }).waitFor({ state: 'detached' })
    expect((await admin('GET', '/api/admin/strategies/byTenant')).status).toBe(404)

    // Applications, and the yes/no counts of the last hour on a flag's page.
    expect((await admin('POST', '/api/admin/projects/default/features', { name: 'usage-shown' })).status).toBe(201)
    const client = (
      await admin('POST', '/api/admin/api-tokens', {
        tokenName: 'usage-app',
        type: 'client',
        environment: 'development',
        projects: ['*'],
      })
    ).body.secret
    const clientCall = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: client, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const now = new Date()
    expect(
      (
        await clientCall('/api/client/register', {
          appName: 'shop-web',
          instanceId: 'web-1',
          sdkVersion: 'unleash-client-node:6.0.0',
          strategies: ['default'],
          started: now.toISOString(),
          interval: 10_000,
        })
      ).status,
    ).toBeLessThan(300)
    expect(
      (
        await clientCall('/api/client/metrics', {
          appName: 'shop-web',
          instanceId: 'web-1',
          bucket: {
            start: new Date(now.getTime() - 10_000).toISOString(),
            stop: now.toISOString(),
            toggles: { 'usage-shown': { yes: 7, no: 3 } },
          },
        })
      ).status,
    ).toBeLessThan(300)
    await eventually(
      async () => (await admin('GET', '/api/admin/client-metrics/features/usage-shown')).body.seenApplications,
      ['shop-web'],
      20_000,
    )
    await page.getByRole('link', { name: 'Applications', exact: true }).click()
    await page.getByRole('cell', { name: 'shop-web' }).waitFor()
    await accessible(page, 'applications')
    await page.goto(`${base}/#/projects/default/features/usage-shown`)
    const usage = page.getByRole('table', { name: 'Evaluations in the last hour' })
    await usage.waitFor()
    expect(await usage.locator('tbody tr').first().locator('td').allTextContents()).toEqual([
      'shop-web',
      'development',
      '7',
      '3',
    ])
    await accessible(page, 'flag usage')
    expect(problems).toEqual([])
  },
  120_000,
)

withChromium.test(
  'a signed-in user changes their own password: a wrong current one is shown at the form, then every session ends and the new one signs in',
  async () => {
    expect(
      (
        await adminCall(base, SECRET, 'POST', '/api/admin/user-admin', {
          username: 'paula',
          rootRole: 'Editor',
          password: 'Paula-pass-word-1',
        })
      ).status,
    ).toBe(201)
    const { page, problems } = await newPage()
    await signIn(page, 'paula', 'Paula-pass-word-1')
    await page.getByRole('button', { name: 'Account: paula' }).click()
    await page.getByRole('link', { name: 'Change password' }).click()
    await page.getByRole('heading', { name: 'Change your password' }).waitFor()
    await accessible(page, 'change password')
    await page.getByLabel('Current password').fill('Not-the-password-1')
    await page.getByLabel('New password', { exact: true }).fill('Paula-new-word-2')
    await page.getByLabel('Confirm new password').fill('Paula-new-word-2')
    await page.getByRole('button', { name: 'Change password' }).click()
    await showsText(page.getByRole('alert'), 'The current password is wrong (/oldPassword)')
    await page.getByLabel('Current password').fill('Paula-pass-word-1')
    await page.getByRole('button', { name: 'Change password' }).click()
    await showsText(page.getByRole('status'), 'sign in with the new password')
    await page.getByLabel('Username').fill('paula')
    await page.getByLabel('Password', { exact: true }).fill('Paula-new-word-2')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Account: paula' }).click()
    await showsText(page.getByText('Signed in as'), 'paula')
    // The one refused request is the wrong current password, answered where the user acted.
    expect(problems.length).toBe(1)
    expect(problems[0]).toStartWith('400 POST')
  },
  60_000,
)

withChromium.test(
  'every console page above was served with its Content-Security-Policy, and the browser reported no violation of it',
  () => {
    expect(csp.withPolicy).toBeGreaterThan(5)
    expect(csp.withoutPolicy).toEqual([])
    expect(csp.violations).toEqual([])
  },
)
