/**
 * The console's Integrations page in a real browser against the real server and a real receiver:
 * add a webhook (its signing secret write-only), edit it without retyping the secret, send a test
 * event, open the delivery log with its failure marked, retry the dead letter, disable it. Checked
 * with axe-core in both themes and at 390 px wide.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { startReceiver, verifySignature, type Receiver } from '../features/addons/receiver'
import { hasChromium, withChromium } from './chromium'
import { eventually, everyWay, newPage, showsText, signIn, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-integrations-admin-0123456789'
const PASSWORD = 'Console-integrations-1'
const SIGNING = 'signing-secret-from-the-form'

const under = useConsoleBrowser(SECRET, PASSWORD)
const admin = under.admin
let receiver: Receiver

beforeAll(async () => {
  if (!hasChromium) return
  receiver = startReceiver()
}, 60_000)

afterAll(() => {
  receiver?.stop()
})

withChromium.test(
  'integrations: add a signed webhook, keep its secret on edit, send a test event, retry a dead letter from the log, disable it',
  async () => {
    receiver.answer = () => new Response('no', { status: 400 })
    const { page, problems } = await newPage(under.browser)
    await signIn(page, under.base, 'admin', PASSWORD)
    await page.getByRole('link', { name: 'Integrations' }).click()
    await page.getByRole('heading', { name: 'Integrations', level: 1 }).waitFor()
    await showsText(page.getByRole('main'), 'No integrations')
    await everyWay(page, 'integrations, none yet')

    await page.getByRole('button', { name: 'Add integration' }).click()
    const form = page.getByRole('form', { name: 'New integration' })
    await form.getByLabel('Provider').selectOption('webhook')
    await form.getByLabel('Description').fill('Deploy hook')
    await form.getByLabel('Webhook URL').fill(receiver.url)
    await form.getByLabel('Signing secret').fill(SIGNING)
    await everyWay(page, 'the new integration form')
    await form.getByRole('button', { name: 'Save' }).click()
    const item = page
      .getByRole('list', { name: 'Integrations' })
      .getByRole('listitem')
      .filter({ hasText: 'Deploy hook' })
    await showsText(item, 'Enabled')
    const [stored] = (await admin('GET', '/api/admin/addons')).addons
    expect(stored.parameters).toEqual({ url: receiver.url, signingSecret: '*****' })

    // Write-only: the edit form shows no secret, and saving without one keeps it.
    await item.getByRole('button', { name: 'Edit Deploy hook' }).click()
    const edit = page.getByRole('form', { name: 'Edit Deploy hook' })
    expect(await edit.getByLabel('Signing secret').inputValue()).toBe('')
    expect(await edit.getByLabel('Signing secret').getAttribute('placeholder')).toBe('Stored: type to replace')
    expect(await edit.getByLabel('Provider').isDisabled()).toBe(true)
    await everyWay(page, 'the edit form')
    await edit.getByRole('button', { name: 'Save' }).click()
    await edit.waitFor({ state: 'detached' })

    await item.getByRole('button', { name: 'Send test event to Deploy hook' }).click()
    await showsText(page.getByRole('alert'), 'Test event not delivered: HTTP 400')
    expect(
      verifySignature(SIGNING, receiver.received[0].headers['x-flagstore-signature'], receiver.received[0].body),
    ).toBe(true)

    // A real event, refused by the receiver: a dead letter, marked in the log.
    await admin('POST', '/api/admin/projects/default/features', { name: 'hooked-flag' })
    await eventually(async () => (await admin('GET', '/api/admin/addons/1/events')).waiting.length, 1)
    const [dead] = (await admin('GET', '/api/admin/addons/1/events')).waiting
    await item.getByRole('button', { name: 'Delivery log of Deploy hook' }).click()
    const log = page.getByRole('region', { name: 'Deliveries of Deploy hook' })
    await showsText(log.getByRole('row'), 'Failed: dead letter')
    await showsText(log, '1 waiting, 1 dead-lettered.')
    await everyWay(page, 'the delivery log with a dead letter')

    receiver.answer = () => new Response('ok')
    await log.getByRole('button', { name: `Retry event ${dead.eventId}` }).click()
    await eventually(
      async () =>
        receiver.received.some(
          r =>
            r.body.includes('hooked-flag') &&
            r.headers['x-flagstore-delivery'] === dead.deliveryId &&
            verifySignature(SIGNING, r.headers['x-flagstore-signature'], r.body),
        ),
      true,
    )
    await eventually(async () => (await admin('GET', '/api/admin/addons/1/events')).waitingCount, 0)
    await log.getByRole('button', { name: 'Refresh' }).click()
    await showsText(log.getByRole('row'), 'Delivered')
    await showsText(log, 'Nothing waiting.')

    await item.getByRole('button', { name: 'Disable Deploy hook' }).click()
    await showsText(item, 'Disabled')
    expect((await admin('GET', '/api/admin/addons/1')).enabled).toBe(false)
    expect((await admin('GET', '/api/admin/addons')).addons[0].parameters.signingSecret).toBe('*****')
    expect(problems).toEqual([])
  },
  120_000,
)
