/**
 * The console's screenshots in docs/: `npm run screenshots` starts the service on a temp data
 * directory, fills it through the admin API and the SDK metrics API with a small shop's flags, and
 * saves each page in the light and the dark theme (docs/console-<page>-<theme>.png), and the flag
 * list and a flag's page at a phone's width (…-phone.png). docs/console-flags-light.png is the
 * README's picture. Run it after a change to the console and commit the images it wrote.
 */
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { adminCall } from '../helpers/processes'
import { launchChromium } from './chromium'
import { signIn, startConsoleServer } from './console-browser'

const ROOT = join(import.meta.dir, '../..')
const DOCS = join(ROOT, 'docs')
const SECRET = '*:*.screenshots-admin-secret-0123456789'
const PASSWORD = 'Screenshots-admin-pass-1'

type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<unknown>

/** The admin API (or, given its token, the SDK API) of the service at `base`, stopping at the first refusal. */
function caller(base: string): Call {
  return async (method, path, body, token = SECRET) => {
    const answer = await adminCall(base, token, method, path, body)
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`)
    return answer.body
  }
}

const FLAGS: { name: string; description: string; type?: string }[] = [
  { name: 'new-checkout', description: 'The one-page checkout' },
  { name: 'free-shipping-banner', description: 'Banner above the basket', type: 'experiment' },
  { name: 'search-suggestions', description: 'Suggestions while typing in search' },
  { name: 'dark-mode', description: 'Dark theme for the shop' },
  { name: 'payment-provider-b', description: 'Route a share of payments to provider B', type: 'operational' },
  { name: 'recommendations-v2', description: 'The new recommendation model', type: 'experiment' },
  { name: 'gift-wrapping', description: 'Offer gift wrapping at checkout' },
  { name: 'maintenance-mode', description: 'Show the maintenance page', type: 'kill-switch' },
]

/** A shop's flags: strategies with constraints, variants, a few switched on, SDK metrics for one. */
async function seed(call: Call) {
  await call('POST', '/api/admin/context', {
    name: 'country',
    description: 'Where the customer is',
    legalValues: ['NO', 'SE', 'DK', 'DE'].map(value => ({ value })),
  })
  for (const flag of FLAGS) await call('POST', '/api/admin/projects/default/features', { type: 'release', ...flag })
  const strategies = (name: string, env: string) =>
    `/api/admin/projects/default/features/${name}/environments/${env}/strategies`
  await call('POST', strategies('new-checkout', 'development'), {
    name: 'flexibleRollout',
    parameters: { rollout: '50', stickiness: 'default', groupId: 'new-checkout' },
    constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }],
    variants: [
      { name: 'blue', weight: 700, weightType: 'variable', stickiness: 'default' },
      { name: 'green', weight: 300, weightType: 'variable', stickiness: 'default' },
    ],
  })
  await call('POST', strategies('new-checkout', 'production'), {
    name: 'flexibleRollout',
    parameters: { rollout: '10', stickiness: 'default', groupId: 'new-checkout' },
  })
  for (const name of ['new-checkout', 'dark-mode', 'search-suggestions', 'gift-wrapping']) {
    if (name !== 'new-checkout') await call('POST', strategies(name, 'development'), { name: 'default' })
    await call('POST', `/api/admin/projects/default/features/${name}/environments/development/on`)
  }
  await call('POST', '/api/admin/projects/default/features/new-checkout/environments/production/on')
  const token = (await call('POST', '/api/admin/api-tokens', {
    tokenName: 'shop-web',
    type: 'client',
    environment: 'development',
    projects: ['*'],
  })) as { secret: string }
  const now = new Date().toISOString()
  await call(
    'POST',
    '/api/client/metrics',
    {
      appName: 'shop-web',
      instanceId: 'web-1',
      bucket: {
        start: now,
        stop: now,
        toggles: {
          'new-checkout': { yes: 412, no: 388, variants: { blue: 290, green: 122 } },
          'dark-mode': { yes: 120, no: 0 },
        },
      },
    },
    token.secret,
  )
}

async function save(page: Page, name: string) {
  await page.waitForLoadState('networkidle')
  await page.screenshot({ path: join(DOCS, `console-${name}.png`) })
}

async function pages(browser: Browser, base: string, theme: 'light' | 'dark') {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: theme })
  const page = await context.newPage()
  await page.goto(`${base}/`)
  await page.getByRole('button', { name: 'Sign in' }).waitFor()
  await save(page, `sign-in-${theme}`)
  await signIn(page, base, 'admin', PASSWORD)
  await page.goto(`${base}/#/projects/default`)
  await page.getByRole('switch', { name: 'new-checkout in development' }).waitFor()
  await save(page, `flags-${theme}`)
  await page.goto(`${base}/#/projects/default/features/new-checkout`)
  await page.getByRole('heading', { name: 'new-checkout', level: 1 }).waitFor()
  await save(page, `flag-${theme}`)
  await page.goto(`${base}/#/projects/default/overview`)
  await save(page, `overview-${theme}`)
  await page.goto(`${base}/#/playground`)
  await page.getByLabel('userId', { exact: true }).fill('user-42')
  await page.getByRole('button', { name: 'Evaluate' }).click()
  await page.getByText('new-checkout').first().waitFor()
  await save(page, `playground-${theme}`)
  await page.goto(`${base}/#/events`)
  await page.getByRole('button', { name: 'Show changes' }).first().click()
  await save(page, `events-${theme}`)
  await page.goto(`${base}/#/segments`)
  await page.getByRole('heading', { name: 'Segments' }).waitFor()
  await save(page, `segments-${theme}`)
  await context.close()
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: theme })
  const small = await phone.newPage()
  await signIn(small, base, 'admin', PASSWORD)
  await small.goto(`${base}/#/projects/default`)
  await small.getByRole('switch', { name: 'new-checkout in development' }).waitFor()
  await save(small, `flags-${theme}-phone`)
  await phone.close()
}

const server = await startConsoleServer(SECRET, PASSWORD)
const browser = await launchChromium()
try {
  await seed(caller(server.base))
  for (const theme of ['light', 'dark'] as const) await pages(browser, server.base, theme)
  console.log(`screenshots written to ${DOCS}`)
} finally {
  await browser.close()
  await server.stop()
}
