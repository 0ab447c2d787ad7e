/**
 * Slack, Microsoft Teams and Datadog: each message in the service's documented format, naming the
 * flag, the environment, the person and what changed (before → after), with a link to the flag's
 * console page when UNLEASH_URL is set.
 */
// Store-independent: it is about each provider's message text; the deliveries are queued and sent through the
// one commit path and delivery loop that addons.test.ts and retries.test.ts run again on PostgreSQL.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { expectOk, makeApi, waitFor, type Api } from '../../helpers'
import { startReceiver, type Receiver } from './receiver'

let api: Api
let receiver: Receiver
beforeEach(async () => {
  api = await makeApi({ addons: { retryBaseMs: 20, publicUrl: 'https://flags.example.com' } })
  receiver = startReceiver()
})
afterEach(async () => {
  receiver.stop()
  await api.close()
})

const LINK = 'https://flags.example.com/#/projects/default/features/checkout'

async function deliverWith(provider: string, parameters: Record<string, string>) {
  expectOk(
    await api.post('/api/admin/addons', {
      provider,
      enabled: true,
      parameters,
      events: ['feature-environment-enabled', 'feature-metadata-updated'],
    }),
  )
  await api.newFlag('default', 'checkout')
  expectOk(await api.toggle('default', 'checkout', 'production', true))
  await waitFor(() => receiver.received.length >= 1, 'the message')
  return { ...receiver.received[0], json: JSON.parse(receiver.received[0].body) }
}

test('Slack: an incoming-webhook message with channel, username and emoji, the change and a link', async () => {
  const message = await deliverWith('slack', {
    url: receiver.url,
    defaultChannel: '#flags',
    username: 'flagbot',
    emojiIcon: ':rocket:',
  })
  expect(message.json).toMatchObject({ channel: '#flags', username: 'flagbot', icon_emoji: ':rocket:' })
  const text: string = message.json.text
  expect(text).toContain('admin-bootstrap')
  expect(text).toContain('checkout')
  expect(text).toContain('production')
  expect(text).toContain('enabled: false → true')
  expect(message.json.attachments[0].actions[0]).toMatchObject({ type: 'button', url: LINK })
  expect(message.headers['x-flagstore-delivery']).toBeString()
})

test('Microsoft Teams: an Adaptive Card with the facts, the change and a link', async () => {
  const message = await deliverWith('teams', { url: receiver.url })
  expect(message.json.type).toBe('message')
  const [attachment] = message.json.attachments
  expect(attachment.contentType).toBe('application/vnd.microsoft.card.adaptive')
  const card = attachment.content
  expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4' })
  const facts = Object.fromEntries(card.body[1].facts.map((f: { title: string; value: string }) => [f.title, f.value]))
  expect(facts).toEqual({ Flag: 'checkout', Environment: 'production', Project: 'default', By: 'admin-bootstrap' })
  expect(card.body.map((block: { text?: string }) => block.text ?? '')).toContain('enabled: false → true')
  expect(card.actions[0]).toEqual({ type: 'Action.OpenUrl', title: 'Open in the console', url: LINK })
})

test('Datadog: an event for the events API with DD-API-KEY, tags and the source type', async () => {
  const message = await deliverWith('datadog', { url: receiver.url, apiKey: 'dd-key-123', sourceTypeName: 'flagstore' })
  expect(message.headers['dd-api-key']).toBe('dd-key-123')
  expect(message.json.title).toContain('checkout')
  expect(message.json.text).toStartWith('%%% \n')
  expect(message.json.text).toContain('enabled: false → true')
  expect(message.json.text).toContain(LINK)
  expect(message.json.source_type_name).toBe('flagstore')
  expect(message.json.tags).toEqual([
    'type:feature-environment-enabled',
    'flag:checkout',
    'project:default',
    'env:production',
  ])
  const listed = await api.get<{ addons: { parameters: Record<string, string> }[] }>('/api/admin/addons')
  expect(listed.body.addons[0].parameters.apiKey).toBe('*****')
})

test('Datadog with a body template: the text is the template over the event', async () => {
  const message = await deliverWith('datadog', {
    url: receiver.url,
    apiKey: 'k',
    bodyTemplate: '{{event.createdBy}} turned {{event.featureName}} on in {{event.environment}}',
  })
  expect(message.json.text).toContain('admin-bootstrap turned checkout on in production')
})
