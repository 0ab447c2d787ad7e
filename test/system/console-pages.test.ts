/**
 * The console's pages in a real browser (Debian's Chromium through playwright-core), against the
 * real server, one browser for the file: a flag's page (constraint editor whose operators and
 * values fit the context field, constraint chips in words, the variants' weight bar and typed
 * payloads, the lifecycle stage, the usage chart after metrics are posted), the playground
 * (evaluate a context, open an explanation, keep the context and share it as a link), the event
 * log (filters, highlighted search text, "Show changes") and a project's overview. Each page is
 * checked with axe-core in the light and dark themes and at 390 px wide (no sideways scrolling).
 */
import { expect } from 'bun:test'
import { withChromium } from './chromium'
import { everyWay, eventually, newPage, showsText, signIn, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-pages-admin-secret-0123456789'
const PASSWORD = 'Console-pages-pass-1'

const under = useConsoleBrowser(SECRET, PASSWORD)
const admin = under.admin

/** A client token for development, and its SDK's registration and one metrics bucket. */
async function reportUsage(appName: string, toggles: Record<string, { yes: number; no: number }>, projects = ['*']) {
  const secret = (
    await admin('POST', '/api/admin/api-tokens', {
      tokenName: `${appName}-token`,
      type: 'client',
      environment: 'development',
      projects,
    })
  ).secret
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${under.base}${path}`, {
      method: 'POST',
      headers: { authorization: secret, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(response.status).toBeLessThan(300)
  }
  const now = new Date()
  await post('/api/client/register', {
    appName,
    instanceId: `${appName}-1`,
    sdkVersion: 'unleash-client-node:6.0.0',
    strategies: ['default'],
    started: now.toISOString(),
    interval: 10_000,
  })
  await post('/api/client/metrics', {
    appName,
    instanceId: `${appName}-1`,
    bucket: { start: new Date(now.getTime() - 10_000).toISOString(), stop: now.toISOString(), toggles },
  })
}

withChromium.test(
  "a flag's page: operators and values fit the context field, constraints read in words, the weight bar adds up to 100 % and payloads are checked",
  async () => {
    await admin('POST', '/api/admin/context', {
      name: 'region',
      legalValues: [{ value: 'eu', description: 'Europe' }, { value: 'us' }],
    })
    await admin('POST', '/api/admin/projects/default/features', { name: 'pages-flag' })
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/default/features/pages-flag`)
    await page.getByRole('heading', { name: 'pages-flag', level: 1 }).waitFor()
    await showsText(page.getByRole('region', { name: 'Lifecycle' }), 'Stage Initial')

    await page.getByRole('button', { name: 'Add strategy in development' }).click()
    await page.getByLabel('Rollout percentage').fill('30')
    await page.getByRole('button', { name: 'Add constraint' }).click()
    const constraint = page.getByRole('group', { name: 'Constraint 1' })
    // The current time is compared as a date, and only so.
    await constraint.getByLabel('Context field').selectOption('currentTime')
    expect(await constraint.getByLabel('Operator').locator('option').allTextContents()).toEqual([
      'is after',
      'is before',
    ])
    // A field with legal values offers them, and the chip reads the constraint in words.
    await constraint.getByLabel('Context field').selectOption('region')
    const operators = await constraint.getByLabel('Operator').locator('option').allTextContents()
    expect(operators).toContain('is one of')
    expect(operators).not.toContain('is after')
    await constraint.getByRole('group', { name: 'Values' }).getByLabel('eu').check()
    await constraint.getByRole('group', { name: 'Values' }).getByLabel('us').check()
    await showsText(constraint.getByRole('status', { name: 'Constraint 1 reads' }), 'region is one of eu, us')
    // A version is checked as one before it is sent.
    await constraint.getByLabel('Context field').selectOption('userId')
    await constraint.getByLabel('Operator').selectOption({ label: 'is a version after' })
    await constraint.getByLabel('Value', { exact: true }).fill('v1')
    await showsText(constraint.getByText('Not a version such as 1.2.3'), 'Not a version')
    await constraint.getByLabel('Context field').selectOption('region')
    await constraint.getByRole('group', { name: 'Values' }).getByLabel('eu').check()
    await everyWay(page, 'constraint editor')
    await page.getByRole('button', { name: 'Save strategy' }).click()
    const strategies = page.getByRole('region', { name: 'Environment development' })
    await showsText(strategies.getByRole('listitem'), 'region is one of eu')
    await showsText(strategies.getByText(/30 % of users/), '30 % of users by default stickiness (group pages-flag)')
    const saved = await admin(
      'GET',
      '/api/admin/projects/default/features/pages-flag/environments/development/strategies',
    )
    expect(saved).toMatchObject([
      {
        name: 'flexibleRollout',
        parameters: { rollout: '30' },
        constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
      },
    ])

    // Two variants share 100 %; a custom weight on one leaves the rest to the other, shown at once.
    await page.getByRole('button', { name: 'Add variant in development' }).click()
    await page.getByRole('button', { name: 'Add variant in development' }).click()
    const bar = page.getByRole('list', { name: 'Variant weights in development, 100 % in all' })
    await eventually(() => bar.locator('li').allTextContents(), ['variant-1 50 %', 'variant-2 50 %'])
    const first = page.getByRole('group', { name: 'Variant 1' })
    const second = page.getByRole('group', { name: 'Variant 2' })
    await first.getByLabel('Custom weight').check()
    await first.getByLabel('Weight (%)').fill('70')
    await eventually(() => bar.locator('li').allTextContents(), ['variant-1 70 %', 'variant-2 30 %'])
    await showsText(second.getByText('Shares the rest'), 'Shares the rest: 30 %')
    // More than 100 % in custom weights cannot be saved.
    await first.getByLabel('Weight (%)').fill('120')
    await showsText(page.getByRole('alert'), 'Custom weights add up to 120 %, more than 100 %')
    expect(await page.getByRole('button', { name: 'Save variants in development' }).isDisabled()).toBe(true)
    await first.getByLabel('Weight (%)').fill('70')
    // A JSON payload must be JSON.
    await second.getByLabel('Payload type').selectOption('json')
    await second.getByLabel('Payload', { exact: true }).fill('{"colour": ')
    await showsText(page.getByRole('alert'), 'Payload of variant-2: Not valid JSON')
    expect(await page.getByRole('button', { name: 'Save variants in development' }).isDisabled()).toBe(true)
    await second.getByLabel('Payload', { exact: true }).fill('{"colour": "teal"}')
    await everyWay(page, 'variants')
    await page.getByRole('button', { name: 'Save variants in development' }).click()
    await eventually(async () => {
      const flag = await admin('GET', '/api/admin/projects/default/features/pages-flag')
      return flag.environments
        .find((environment: { name: string }) => environment.name === 'development')
        .variants.map((v: { name: string; weight: number; weightType: string; payload?: unknown }) => [
          v.name,
          v.weight,
          v.weightType,
          v.payload ?? null,
        ])
    }, [
      ['variant-1', 700, 'fix', null],
      ['variant-2', 300, 'variable', { type: 'json', value: '{"colour": "teal"}' }],
    ])
    expect(problems).toEqual([])
  },
  120_000,
)

withChromium.test(
  "a flag's usage chart is an image named for the flag, with a summary of the posted counts; an environment without counts says what to do",
  async () => {
    await admin('POST', '/api/admin/projects/default/features', { name: 'charted' })
    await reportUsage('chart-app', { charted: { yes: 7, no: 3 } })
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/default/features/charted`)
    const chart = page.getByRole('img', { name: /^Usage of charted in development/ })
    await chart.waitFor()
    const summary = await chart.evaluate(element =>
      document.getElementById(element.getAttribute('aria-describedby')!)!.textContent!.trim(),
    )
    expect(summary).toStartWith('10 evaluations in the last 48 hours: 7 yes (70 %) and 3 no.')
    expect(summary).toEndWith('Reported by chart-app.')
    expect(await chart.locator('canvas').count()).toBe(1)
    await showsText(
      page.getByRole('region', { name: 'Usage in production' }),
      'No SDK reported charted in production in the last 48 hours',
    )
    await everyWay(page, 'usage chart')
    expect(problems).toEqual([])
  },
  60_000,
)

withChromium.test(
  'the event log filters by type, flag and who, highlights the searched text, and shows a change field by field',
  async () => {
    await admin('POST', '/api/admin/projects/default/features', { name: 'log-flag' })
    await admin('PUT', '/api/admin/projects/default/features/log-flag/variants-batch', {
      variants: [
        {
          name: 'sea',
          weight: 1000,
          weightType: 'variable',
          stickiness: 'default',
          payload: { type: 'string', value: 'turquoise' },
        },
      ],
      environments: ['development'],
    })
    const [recorded] = (
      await admin('GET', '/api/admin/search/events?feature=IS:log-flag&type=IS:feature-environment-variants-updated')
    ).events
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.getByRole('link', { name: 'Event log' }).click()
    await page.getByRole('heading', { name: 'Event log' }).waitFor()
    await page.getByLabel('Type').selectOption('feature-environment-variants-updated')
    await page.getByLabel('Flag', { exact: true }).fill('log-flag')
    await page.getByLabel('Who').fill(recorded.createdBy)
    await page.getByRole('button', { name: 'Search' }).click()
    await showsText(page.getByText(/^\d+ events/), '1 events, 1–1 shown')
    await page.getByRole('button', { name: 'Show changes' }).click()
    const diff = page.getByRole('table', { name: `Changes of event ${recorded.id}` })
    const row = (field: string) =>
      diff
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: field, exact: true }) })
        .getByRole('cell')
        .allTextContents()
    expect(await row('variants[0].payload.value')).toEqual(['—', 'turquoise'])
    expect(await row('variants[0].name')).toEqual(['—', 'sea'])
    await everyWay(page, 'event log with a change shown')

    // The searched text is highlighted where it was found.
    await page.getByLabel('Search text').fill('TURQUO')
    await page.getByRole('button', { name: 'Search' }).click()
    await showsText(page.locator('.events mark'), 'turquo')
    await showsText(page.locator('.match'), 'data.variants[0].payload.value')
    await everyWay(page, 'event log with a highlighted match')

    // A time range with no event: the page says what to do.
    await page.getByRole('button', { name: 'Clear filters' }).click()
    await page.getByLabel('From', { exact: true }).fill('2001-01-01')
    await page.getByLabel('To', { exact: true }).fill('2001-01-02')
    await page.getByRole('button', { name: 'Search' }).click()
    await showsText(page.getByText(/^\d+ events/), '0 events')
    await showsText(page.locator('.empty-state'), 'No event matches')
    expect(problems).toEqual([])
  },
  60_000,
)

withChromium.test(
  "a project's overview shows its flags by lifecycle stage, the stale ones, its recent changes and the SDK applications seen",
  async () => {
    await admin('POST', '/api/admin/projects', { id: 'ov', name: 'ov' })
    for (const name of ['ov-live', 'ov-stale', 'ov-new'])
      await admin('POST', '/api/admin/projects/ov/features', { name })
    await admin('POST', '/api/admin/projects/ov/features/ov-live/environments/development/on')
    await admin('PATCH', '/api/admin/projects/ov/features/ov-stale', [{ op: 'replace', path: '/stale', value: true }])
    await reportUsage('ov-app', { 'ov-live': { yes: 1, no: 0 } }, ['ov'])
    const stages: Record<string, number> = {}
    for (const flag of (await admin('GET', '/api/admin/projects/ov/features')).features)
      stages[flag.lifecycle.stage] = (stages[flag.lifecycle.stage] ?? 0) + 1

    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/ov`)
    await page.getByRole('link', { name: 'Overview' }).click()
    await page.getByRole('heading', { name: 'Overview of ov' }).waitFor()
    const byStage = page.getByRole('region', { name: 'Flags by lifecycle stage' })
    await eventually(
      async () => {
        const terms = await byStage.locator('dt').allTextContents()
        const counts = (await byStage.locator('dd').allTextContents()).map(Number)
        return Object.fromEntries(terms.map((term, i) => [term, counts[i]]).filter(([, count]) => count))
      },
      Object.fromEntries(
        Object.entries(stages).map(([stage, count]) => [
          { initial: 'Initial', 'pre-live': 'Pre-live', live: 'Live', completed: 'Completed' }[stage],
          count,
        ]),
      ),
    )
    const stale = page.getByRole('region', { name: 'Stale flags' })
    await stale.getByRole('link', { name: 'ov-stale' }).waitFor()
    expect(await stale.getByRole('link').allTextContents()).toEqual(['ov-stale'])
    await showsText(page.getByRole('region', { name: 'Recent changes' }).getByRole('listitem'), 'feature-created')
    await showsText(page.getByRole('region', { name: 'SDK applications' }).getByRole('listitem'), 'ov-app')
    await everyWay(page, 'project overview')
    // Opened on its own, the overview reads the project's status, not its flag list.
    const reads: string[] = []
    page.on('request', request => reads.push(new URL(request.url()).pathname))
    await page.reload()
    await stale.getByRole('link', { name: 'ov-stale' }).waitFor()
    expect(reads).toContain('/api/admin/projects/ov/status')
    expect(reads).not.toContain('/api/admin/projects/ov/features')
    await stale.getByRole('link', { name: 'ov-stale' }).click()
    await page.getByRole('heading', { name: 'ov-stale', level: 1 }).waitFor()
    expect(problems).toEqual([])
  },
  60_000,
)

withChromium.test(
  'the playground evaluates a context, explains a flag constraint by constraint with the rollout bucket, and keeps and shares the context',
  async () => {
    await admin('POST', '/api/admin/projects/default/features', { name: 'pg-flag' })
    await admin('POST', '/api/admin/projects/default/features/pg-flag/environments/development/strategies', {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'pg-flag' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice', 'bob'] }],
    })
    await admin('POST', '/api/admin/projects/default/features/pg-flag/environments/development/on')
    await admin('PUT', '/api/admin/projects/default/features/pg-flag/variants-batch', {
      variants: ['blue', 'green'].map(name => ({ name, weight: 500, weightType: 'variable', stickiness: 'default' })),
      environments: ['development'],
    })
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.getByRole('link', { name: 'Playground' }).click()
    await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor()
    await page.getByLabel('userId', { exact: true }).fill('alice')
    await page.getByRole('button', { name: 'Add property' }).click()
    await page.getByLabel('Name of property 1').fill('plan')
    await page.getByLabel('Value of property 1').fill('gold')
    await everyWay(page, 'playground form')
    await page.getByRole('button', { name: 'Evaluate' }).click()
    const result = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: /^pg-flag/ }) })
    await showsText(result, 'On in development')
    await result.getByRole('button', { name: 'Explain pg-flag in development' }).click()
    await showsText(result, 'userId is one of alice, bob (saw "alice")')
    await showsText(result, /Rollout: bucket \d+ of 100 against 100 %: in/)
    await showsText(result, /Variant (blue|green), chosen by bucket \d+ of 1000\./)
    await everyWay(page, 'playground with an explanation')

    // Another user is off, and the explanation says which constraint said no.
    await page.getByLabel('userId', { exact: true }).fill('carol')
    await page.getByRole('button', { name: 'Evaluate' }).click()
    await showsText(result, 'Off in development')
    await showsText(result, 'userId is one of alice, bob (saw "carol")')

    // Kept in this browser: a reload fills the form in again.
    await page.getByRole('button', { name: 'Keep context' }).click()
    await page.reload()
    await eventually(() => page.getByLabel('userId', { exact: true }).inputValue(), 'carol')
    // Shared as a link: the link opens the page with the context, in another browser.
    await page.getByLabel('userId', { exact: true }).fill('bob')
    await page.getByRole('button', { name: 'Copy link' }).click()
    await eventually(async () => page.url().includes('bob'), true)
    const link = page.url()
    const other = await newPage(under.browser)
    await signIn(other.page, under.base, 'admin', PASSWORD)
    await other.page.goto(link)
    await eventually(() => other.page.getByLabel('userId', { exact: true }).inputValue(), 'bob')
    expect(await other.page.getByLabel('Value of property 1').inputValue()).toBe('gold')
    expect([...problems, ...other.problems]).toEqual([])
  },
  90_000,
)
