/**
 * A flag's stage history on its page, in a real browser against the real server: each stage with
 * when it was entered (as GET …/lifecycle answers), the current one marked, the ones not reached
 * said so; checked with axe-core in both themes and at 390 px wide.
 */
import { expect } from 'bun:test'
import { withChromium } from './chromium'
import { everyWay, newPage, showsText, signIn, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-lifecycle-admin-secret-0123456789'
const PASSWORD = 'Console-lifecycle-pass-1'

const under = useConsoleBrowser(SECRET, PASSWORD)
const admin = under.admin

interface StageEntry {
  stage: string
  enteredStageAt: string
  status?: string
}

withChromium.test(
  "a flag's page shows the stages it went through with when each was entered, the current one marked",
  async () => {
    const flagPath = '/api/admin/projects/default/features/staged-flag'
    await admin('POST', '/api/admin/projects/default/features', { name: 'staged-flag' })
    await admin('POST', `${flagPath}/environments/production/on`)
    const lived = (await admin('GET', `${flagPath}/lifecycle`)) as StageEntry[]
    expect(lived.map(entry => entry.stage)).toEqual(['initial', 'pre-live', 'live'])

    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/projects/default/features/staged-flag`)
    const lifecycle = page.getByRole('region', { name: 'Lifecycle' })
    const steps = lifecycle.getByRole('list', { name: 'Stage history' }).getByRole('listitem')
    await showsText(steps.filter({ hasText: 'Live' }), 'entered')
    expect(await steps.count()).toBe(5)
    // Each reached stage carries the time the API answers, machine-readable; the others say they were not reached.
    for (const entry of lived) {
      const step = steps.filter({ has: page.locator(`time[datetime="${entry.enteredStageAt}"]`) })
      expect(await step.count()).toBeGreaterThanOrEqual(1)
    }
    const current = lifecycle.locator('[aria-current="step"]')
    expect(await current.textContent()).toContain('Live')
    expect(await steps.filter({ hasText: 'Completed' }).textContent()).toContain('not reached')
    await everyWay(page, 'stage history')

    // Completed elsewhere: the page, opened again, shows the new stage with its status.
    await admin('POST', `${flagPath}/lifecycle/complete`, { status: 'kept' })
    const completed = ((await admin('GET', `${flagPath}/lifecycle`)) as StageEntry[]).at(-1)!
    expect(completed).toMatchObject({ stage: 'completed', status: 'kept' })
    await page.reload()
    await showsText(steps.filter({ hasText: 'Completed' }), 'kept')
    expect(await lifecycle.locator('[aria-current="step"]').textContent()).toContain('Completed')
    expect(await steps.filter({ hasText: 'Completed' }).locator('time').getAttribute('datetime')).toBe(
      completed.enteredStageAt,
    )
    expect(await steps.filter({ hasText: 'Archived' }).textContent()).toContain('not reached')
    await everyWay(page, 'stage history, completed')
    expect(problems).toEqual([])
    await page.close()
  },
  90_000,
)
