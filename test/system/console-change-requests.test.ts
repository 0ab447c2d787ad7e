/**
 * Change requests in the console, in a real browser against the real server: an environment under
 * change requests says so, its switch adds to a draft, the flag page shows the pending request, the
 * "Change requests" page lists it, and the request's page takes it through review (another person
 * approves) to applied, refuses a schedule in the past, shows each change as a diff against the
 * flag as it is now, and warns of a conflict. Each page with axe in both themes and at 390 px.
 */
import { expect } from 'bun:test'
import { withChromium } from './chromium'
import { eventually, everyWay, newPage, showsText, signIn, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-change-requests-secret-0123'
const PASSWORD = 'Console-cr-pass-1'

const under = useConsoleBrowser(SECRET, PASSWORD)
const admin = under.admin

withChromium.test(
  'a switch under change requests adds to a draft; the request is reviewed, approved by another person and applied',
  async () => {
    await admin('POST', '/api/admin/projects/default/features', { name: 'cr-flag' })
    await admin('PUT', '/api/admin/projects/default/environments/production/change-requests/config', {
      changeRequestsEnabled: true,
      requiredApprovals: 1,
    })
    await admin('POST', '/api/admin/user-admin', { username: 'bob', rootRole: 'Editor', password: PASSWORD })
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/default/features/cr-flag`)
    const production = page.getByRole('region', { name: 'Environment production' })
    await showsText(production.getByRole('note'), 'Change requests: changes here need approval')
    await production.getByRole('switch', { name: 'cr-flag in production' }).click()
    await showsText(production.getByRole('status'), 'Pending change request #1')
    expect(await production.getByRole('switch', { name: 'cr-flag in production' }).isChecked()).toBe(false)
    await everyWay(page, 'flag page under change requests')

    await page.goto(`${under.base}/#/change-requests`)
    await page.getByRole('heading', { name: 'Change requests', level: 1 }).waitFor()
    await page.getByRole('link', { name: /#1/ }).click()
    await page.getByRole('heading', { name: /#1/, level: 1 }).waitFor()
    await showsText(page.getByRole('list', { name: 'Changes to cr-flag' }), 'Turn on: off → on')
    await page.getByRole('button', { name: 'Send to review' }).click()
    await showsText(page.getByText(/^In review/), 'In review')
    await everyWay(page, 'change request page')

    const reviewer = await newPage(under.browser)
    await signIn(reviewer.page, under.base, 'bob', PASSWORD)
    await reviewer.page.goto(`${under.base}/#/change-requests/default/1`)
    await reviewer.page.getByLabel('Comment', { exact: true }).fill('Fine by me')
    await reviewer.page.getByRole('button', { name: 'Add comment' }).click()
    await showsText(reviewer.page.getByRole('list', { name: 'Comments' }), 'bob: Fine by me')
    await reviewer.page.getByRole('button', { name: 'Approve' }).click()
    await showsText(reviewer.page.getByRole('list', { name: 'Approvals' }), 'bob')
    // The schedule picker refuses a time that has passed, and nothing is scheduled.
    await reviewer.page.getByLabel('Apply at').fill('2020-01-06T09:00')
    await reviewer.page.getByRole('button', { name: 'Schedule' }).click()
    await showsText(reviewer.page.getByRole('alert'), 'has passed: pick a time to come')
    expect(await reviewer.page.getByLabel('Apply at').getAttribute('aria-invalid')).toBe('true')
    expect((await admin('GET', '/api/admin/projects/default/change-requests/1')).state).toBe('Approved')
    await everyWay(reviewer.page, 'change request schedule refused')
    await reviewer.page.getByRole('button', { name: 'Apply' }).click()
    await showsText(reviewer.page.getByText(/^Applied/), 'Applied')
    const flag = await admin('GET', '/api/admin/projects/default/features/cr-flag')
    expect(flag.environments.find((e: { name: string }) => e.name === 'production').enabled).toBe(true)
    expect([...problems, ...reviewer.problems]).toEqual([])
  },
  90_000,
)

withChromium.test(
  'a request whose flag moved since shows the conflict warning',
  async () => {
    await admin('POST', '/api/admin/projects/default/features', { name: 'cr-moved' })
    await admin('PUT', '/api/admin/projects/default/environments/production/change-requests/config', {
      changeRequestsEnabled: true,
    })
    const request = await admin('POST', '/api/admin/projects/default/environments/production/change-requests', {
      feature: 'cr-moved',
      action: 'updateEnabled',
      payload: { enabled: true },
    })
    // An admin token skips change requests and moves what the change changes.
    await admin('POST', '/api/admin/projects/default/features/cr-moved/environments/production/strategies', {
      name: 'default',
    })
    const { page } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/change-requests/default/${request.id}`)
    await showsText(page.getByRole('alert'), 'Conflict: cr-moved')
    await everyWay(page, 'change request with a conflict')
  },
  60_000,
)

withChromium.test(
  'each change is shown as a field-by-field diff against the flag as it is now',
  async () => {
    await admin('POST', '/api/admin/projects/default/features', { name: 'cr-parent' })
    await admin('POST', '/api/admin/projects/default/features', { name: 'cr-diff' })
    const strategies = '/api/admin/projects/default/features/cr-diff/environments/production/strategies'
    const strategy = await admin('POST', strategies, { name: 'flexibleRollout', parameters: { rollout: '50' } })
    await admin('PUT', '/api/admin/projects/default/environments/production/change-requests/config', {
      changeRequestsEnabled: true,
    })
    const request = await admin('POST', '/api/admin/projects/default/environments/production/change-requests', [
      {
        feature: 'cr-diff',
        action: 'updateStrategy',
        payload: {
          id: strategy.id,
          name: 'flexibleRollout',
          parameters: { ...strategy.parameters, rollout: '80' },
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['7'] }],
        },
      },
      {
        feature: 'cr-diff',
        action: 'patchVariant',
        payload: { variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }] },
      },
      { feature: 'cr-diff', action: 'addDependency', payload: { feature: 'cr-parent' } },
    ])
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/change-requests/default/${request.id}`)
    const changes = page.getByRole('list', { name: 'Changes to cr-diff' })
    // Each row is drawn at once and filled in once the flag as it is now has loaded: read until it is.
    const cellsOf = (table: string, field: string) =>
      changes
        .getByRole('table', { name: new RegExp(table) })
        .getByRole('row', { name: field })
        .getByRole('cell')
        .allTextContents()
    await eventually(() => cellsOf('Update strategy flexibleRollout', 'parameters.rollout'), ['50', '80'])
    await eventually(() => cellsOf('Update strategy flexibleRollout', 'constraints[0].contextName'), ['—', 'userId'])
    await eventually(() => cellsOf('Set variants', 'variants[0].name'), ['—', 'blue'])
    await eventually(() => cellsOf('Depend on cr-parent', 'dependencies[0].feature'), ['—', 'cr-parent'])
    // Unchanged fields are not listed.
    const update = changes.getByRole('table', { name: /Update strategy flexibleRollout/ })
    expect(await update.getByRole('row', { name: /parameters\.stickiness/ }).count()).toBe(0)
    await everyWay(page, 'change request diff')
    expect(problems).toEqual([])
  },
  60_000,
)
