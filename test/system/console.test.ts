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
import { expect } from 'bun:test'
import { withChromium } from './chromium'
import { accessible, eventually, showsText } from './console-browser'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { adminCall } from '../helpers/processes'
import { destroySdk, eventOf } from '../helpers/sdk'
import { SECRET, PASSWORD, VIEWER_PASSWORD, base, csp, useConsoleServer, newPage, signIn } from './console.setup'

let client: Unleash | undefined
useConsoleServer(() => destroySdk(client))

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
    // A switch shows the service's state: it turns once the service has answered, not as it is clicked
    // (`check()` would fail when the answer comes after its own look).
    await page.getByRole('switch', { name: `${FLAG} in development` }).click()
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
