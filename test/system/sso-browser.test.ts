/**
 * Single sign-on end to end in a real browser: the service (src/main.ts, OIDC from its environment)
 * and oidc-provider (a certified OpenID provider) on loopback; the console's "Sign in with SSO", the
 * provider's own sign-in and consent forms, and back in the console signed in as the person the
 * provider vouched for, made at this first sign-in. Then the sign-out goes on to the provider.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Browser } from 'playwright-core'
import { freePort } from '../helpers/processes'
import { CLIENT_ID, CLIENT_SECRET, startProvider, type TestProvider } from '../features/sso/provider'
import { hasChromium, launchChromium, withChromium } from './chromium'
import { accessible, type ConsoleServer, newPage, startConsoleServer } from './console-browser'

const port = freePort()
const base = `http://127.0.0.1:${port}`
let provider: TestProvider | undefined
let server: ConsoleServer | undefined
let browser: Browser | undefined

beforeAll(async () => {
  if (!hasChromium) return
  provider = await startProvider([`${base}/auth/oidc/callback`])
  provider.accounts.set('ivy', { email: 'ivy@example.com', email_verified: true, name: 'Ivy' })
  server = await startConsoleServer(
    '*:*.sso-browser-admin-secret-0123456789',
    'Sso-admin-pass-1',
    {
      OIDC_ENABLED: 'true',
      OIDC_DISCOVER_URL: provider.issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_AUTO_CREATE: 'true',
      OIDC_DEFAULT_ROOT_ROLE: 'Editor',
      OIDC_ENABLE_SINGLE_SIGN_OUT: 'true',
    },
    port,
  )
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await provider?.close()
})

withChromium.test(
  'Sign in with SSO: the provider signs the person in, and the console shows them signed in',
  async () => {
    const { page } = await newPage(browser!)
    await page.goto(`${base}/`)
    const button = page.getByRole('link', { name: 'Sign in with SSO' })
    await button.waitFor()
    await accessible(page, 'the sign-in page with SSO')
    await button.click()
    // The provider's own pages: its sign-in form (any password), then its consent.
    await page.locator('input[name="login"]').fill('ivy')
    await page.locator('input[name="password"]').fill('any password')
    await page.locator('button[type="submit"]').click()
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Projects' }).waitFor()
    expect(new URL(page.url()).origin).toBe(base)
    expect(page.url()).not.toContain('signed-in')
    const me = await page.evaluate(async () => (await fetch('/api/admin/user')).json())
    expect(me.user).toMatchObject({ email: 'ivy@example.com', name: 'Ivy', rootRole: 2, isAPI: false })
    // Signing out ends the session here, then at the provider, which comes back to the console.
    await page.getByRole('button', { name: /^Account:/ }).click()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(url => url.origin === provider!.issuer)
    const after = await page.goto(`${base}/api/admin/user`)
    expect(after?.status()).toBe(401)
  },
  60_000,
)
