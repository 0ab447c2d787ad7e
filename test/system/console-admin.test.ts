/**
 * The console's admin pages in a real browser against the real server (skipped, saying so, where
 * there is no Chromium): a project of many flags a page at a time; a flag's page with strategies,
 * segments, tags, dependencies and revival; the segments, context fields, tag types and strategy
 * types pages. axe-core runs on each page, and every page is served with its Content-Security-Policy.
 */
import { expect } from 'bun:test'
import { withChromium } from './chromium'
import { accessible, eventually, showsText } from './console-browser'

import { adminCall } from '../helpers/processes'
import { SECRET, PASSWORD, base, csp, useConsoleServer, newPage, signIn } from './console.setup'

useConsoleServer()

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
  'every console page above was served with its Content-Security-Policy, and the browser reported no violation of it',
  () => {
    // One console document at least per test above (each signs in on a page of its own).
    expect(csp.withPolicy).toBeGreaterThanOrEqual(3)
    expect(csp.withoutPolicy).toEqual([])
    expect(csp.violations).toEqual([])
  },
)
