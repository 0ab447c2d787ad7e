/**
 * The playground's one-sentence answer to "why", in a real browser (Chromium through playwright-core):
 * before the details, each explanation says in words why the flag is on or off for the context — the
 * environment's switch, the strategy that matched with its bucket, or what each strategy needed and
 * what the context gave (a constraint's value, a segment, a rollout's bucket). Checked with axe-core
 * in both themes and at 390 px wide.
 */
import { expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { withChromium } from './chromium'
import { everyWay, newPage, showsText, signIn, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-why-admin-secret-0123456789'
const PASSWORD = 'Console-why-pass-1'

const under = useConsoleBrowser(SECRET, PASSWORD, async () => {
  const features = '/api/admin/projects/default/features'
  const strategies = (name: string) => `${features}/${name}/environments/development/strategies`
  const segment = await admin('POST', '/api/admin/segments', {
    name: 'beta-testers',
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['7'] }],
  })
  for (const name of ['why-rollout', 'why-segment', 'why-off']) await admin('POST', features, { name })
  await admin('POST', strategies('why-rollout'), {
    name: 'flexibleRollout',
    parameters: { rollout: '0', stickiness: 'userId', groupId: 'why-rollout' },
    constraints: [{ contextName: 'region', operator: 'IN', values: ['us'] }],
  })
  await admin('POST', strategies('why-segment'), {
    name: 'flexibleRollout',
    parameters: { rollout: '100', stickiness: 'userId', groupId: 'why-segment' },
    constraints: [],
    segments: [segment.id],
  })
  for (const name of ['why-rollout', 'why-segment'])
    await admin('POST', `${features}/${name}/environments/development/on`)
})
const admin = under.admin

/** Evaluates the context in the form and opens `flag`'s explanation in development (open ones stay open); returns its result. */
async function explain(page: Page, flag: string) {
  await page.getByRole('button', { name: 'Evaluate' }).click()
  const result = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: new RegExp(`^${flag}`) }) })
  const button = result.getByRole('button', { name: new RegExp(`^(Explain|Hide why) ${flag} in development$`) })
  if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click()
  return result
}

withChromium.test(
  'each explanation opens with why in one sentence: the switch, the constraint and the value seen, the segment, the bucket',
  async () => {
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.goto(`${under.base}/#/playground`)
    await page.getByLabel('userId', { exact: true }).fill('42')

    const off = await explain(page, 'why-off')
    await showsText(off, 'Off because the flag is turned off in development.')

    const rollout = await explain(page, 'why-rollout')
    await showsText(
      rollout,
      'Off because no strategy matched: Gradual rollout needs region is one of us, and the context has no region.',
    )
    await everyWay(page, 'playground with a one-sentence why')

    await page.getByRole('button', { name: 'Add property' }).click()
    await page.getByLabel('Name of property 1').fill('region')
    await page.getByLabel('Value of property 1').fill('us')
    const bucketed = await explain(page, 'why-rollout')
    await showsText(
      bucketed,
      /Off because no strategy matched: Gradual rollout takes 0 % and this context is in bucket \d+\./,
    )

    const segment = await explain(page, 'why-segment')
    await showsText(
      segment,
      'Off because no strategy matched: Gradual rollout needs segment beta-testers, which the context is not in.',
    )
    await page.getByLabel('userId', { exact: true }).fill('7')
    const matched = await explain(page, 'why-segment')
    await showsText(matched, /On because Gradual rollout matched \(bucket \d+ within 100 %\)\./)
    expect(problems).toEqual([])
    await page.context().close()
  },
  90_000,
)
