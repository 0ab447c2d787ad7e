/**
 * Integrations (Unleash's addons): the API's shapes, sensitive parameters never answered back and
 * kept by *****, events without secrets, admin only; filters; and deliveries to a real receiver,
 * signed (checked with Node's crypto), with the body of the event or of a template.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { expectError, expectOk, sharedApp, tokenFor, waitFor, type Api } from '../../helpers'
import { startReceiver, verifySignature, type Receiver } from './receiver'

/** One app for the file; each test opens a fresh service of its own (helpers/shared-app.ts). */
const shared = await sharedApp({ addons: { retryBaseMs: 20 } })
let api: Api
let receiver: Receiver
beforeEach(async () => {
  api = await shared.open()
  receiver = startReceiver()
})
afterEach(async () => {
  receiver.stop()
  await api.close()
})

const SECRET = 'whsec-0123456789abcdef'
const webhook = (url: string, extra: Record<string, unknown> = {}) => ({
  provider: 'webhook',
  enabled: true,
  description: 'to the receiver',
  parameters: { url, signingSecret: SECRET, authorization: 'Bearer abc' },
  events: ['feature-created', 'feature-environment-enabled', 'feature-environment-disabled'],
  ...extra,
})

interface AddonBody {
  id: number
  provider: string
  parameters: Record<string, string>
}

describe('the addons API', () => {
  test('lists providers with their parameters and events; sensitive parameters are answered as *****', async () => {
    const list = await api.get<{
      addons: unknown[]
      providers: { name: string; parameters: { name: string; sensitive: boolean }[]; events: string[] }[]
    }>('/api/admin/addons')
    expectOk(list)
    expect(list.body.addons).toEqual([])
    expect(list.body.providers.map(p => p.name)).toEqual(['webhook', 'slack', 'teams', 'datadog'])
    const hook = list.body.providers[0]
    expect(hook.parameters.filter(p => p.sensitive).map(p => p.name)).toEqual([
      'authorization',
      'customHeaders',
      'signingSecret',
    ])
    expect(hook.events).toContain('feature-environment-enabled')

    const before = api.lastEventId()
    const created = await api.post<AddonBody>('/api/admin/addons', webhook(receiver.url))
    expectOk(created)
    expect(created.body.parameters).toEqual({ url: receiver.url, signingSecret: '*****', authorization: '*****' })
    const again = await api.get<AddonBody>(`/api/admin/addons/${created.body.id}`)
    expect(again.body.parameters.signingSecret).toBe('*****')
    const [event] = api.eventsSince(before)
    expect(event.type).toBe('addon-config-created')
    expect(JSON.stringify(event)).not.toContain(SECRET)
    expect(JSON.stringify(event)).not.toContain('Bearer abc')
    expect(event.data).toMatchObject({ provider: 'webhook', parameters: { url: receiver.url } })
  })

  test('a PUT with ***** keeps the secret; one left out is removed; each change is an event without secrets', async () => {
    const created = await api.post<AddonBody>('/api/admin/addons', webhook(receiver.url))
    const id = created.body.id
    const before = api.lastEventId()
    const body = webhook(receiver.url, { parameters: { url: receiver.url, signingSecret: '*****' }, enabled: false })
    expectOk(await api.put(`/api/admin/addons/${id}`, body))
    const stored = api.services.store.state.addons[String(id)]
    expect(stored.parameters).toEqual({ url: receiver.url, signingSecret: SECRET })
    expect(stored.enabled).toBe(false)
    const [updated] = api.eventsSince(before)
    expect(updated.type).toBe('addon-config-updated')
    expect(JSON.stringify(updated)).not.toContain(SECRET)
    expectOk(await api.delete(`/api/admin/addons/${id}`))
    expect(api.eventsSince(before).map(e => e.type)).toEqual(['addon-config-updated', 'addon-config-deleted'])
    expectError(await api.get(`/api/admin/addons/${id}`), 404, 'NotFoundError')
  })

  test('refuses an unknown provider, parameter or event, a missing URL, bad headers, and non-admins', async () => {
    const refused = async (body: unknown, mention: string) => {
      const before = api.lastEventId()
      expectError(await api.post('/api/admin/addons', body), 400, 'ValidationError', [mention])
      expect(api.lastEventId()).toBe(before)
    }
    await refused({ ...webhook(receiver.url), provider: 'pager' }, 'pager')
    await refused({ ...webhook(receiver.url), parameters: { url: receiver.url, colour: 'red' } }, 'colour')
    await refused({ ...webhook(receiver.url), parameters: {} }, 'Webhook URL')
    await refused({ ...webhook('ftp://example.com/x') }, 'ftp')
    await refused({ ...webhook(receiver.url), events: ['made-up'] }, 'made-up')
    await refused({ ...webhook(receiver.url), parameters: { url: receiver.url, customHeaders: '[1]' } }, 'JSON object')
    const editor = await tokenFor(api, 'editor-token', { role: 'editor' })
    expectError(await api.get('/api/admin/addons', { token: editor }), 403, 'NoAccessError')
    const before = api.lastEventId()
    expectError(await api.post('/api/admin/addons', webhook(receiver.url), { token: editor }), 403, 'NoAccessError')
    expect(api.lastEventId()).toBe(before)
  })
})

describe('deliveries', () => {
  test('each chosen event reaches the receiver once, signed, with the event as JSON and its delivery id', async () => {
    await api.post('/api/admin/addons', webhook(receiver.url))
    await api.newFlag('default', 'signed-flag')
    expectOk(await api.toggle('default', 'signed-flag', 'development', true))
    await waitFor(() => receiver.received.length >= 2, 'two deliveries')
    const [created, enabled] = receiver.received
    for (const request of receiver.received) {
      expect(verifySignature(SECRET, request.headers['x-flagstore-signature'], request.body)).toBe(true)
      expect(verifySignature('another-secret', request.headers['x-flagstore-signature'], request.body)).toBe(false)
      expect(request.headers.authorization).toBe('Bearer abc')
      expect(request.headers['x-flagstore-delivery']).toMatch(/^[0-9a-f-]{36}$/)
    }
    expect(JSON.parse(created.body)).toMatchObject({ type: 'feature-created', featureName: 'signed-flag' })
    const body = JSON.parse(enabled.body)
    expect(body).toMatchObject({
      type: 'feature-environment-enabled',
      environment: 'development',
      featureName: 'signed-flag',
    })
    expect(enabled.headers['x-flagstore-event']).toBe('feature-environment-enabled')
    await waitFor(() => api.services.store.state.addonStates['1']?.logSeq === 2, 'both recorded')
    const recorded = await api.get<{
      events: { outcome: string; statusCode: number; eventId: number }[]
      waitingCount: number
    }>('/api/admin/addons/1/events')
    expect(recorded.body.events.map(e => [e.outcome, e.statusCode])).toEqual([
      ['delivered', 200],
      ['delivered', 200],
    ])
    expect(recorded.body.events[0].eventId).toBeGreaterThan(recorded.body.events[1].eventId)
    expect(recorded.body.waitingCount).toBe(0)
  })

  test('a Mustache body template over the event, and the content type and headers given', async () => {
    const template =
      '{"flag":"{{event.featureName}}","type":"{{event.type}}","by":"{{event.createdBy}}","project":"{{event.project}}","env":"{{event.environment}}","on":{{event.data.enabled}}}'
    await api.post(
      '/api/admin/addons',
      webhook(receiver.url, {
        parameters: {
          url: receiver.url,
          bodyTemplate: template,
          contentType: 'application/vnd.x+json',
          customHeaders: '{"X-Team":"flags"}',
        },
        events: ['feature-environment-enabled'],
      }),
    )
    await api.newFlag('default', 'templated')
    await api.toggle('default', 'templated', 'production', true)
    await waitFor(() => receiver.received.length >= 1, 'a delivery')
    const [request] = receiver.received
    expect(JSON.parse(request.body)).toEqual({
      flag: 'templated',
      type: 'feature-environment-enabled',
      by: 'admin-bootstrap',
      project: 'default',
      env: 'production',
      on: true,
    })
    expect(request.headers['content-type']).toBe('application/vnd.x+json')
    expect(request.headers['x-team']).toBe('flags')
    expect(request.headers['x-flagstore-signature']).toBeUndefined()
  })

  test('filters: event types, projects and environments; an event without an environment passes', async () => {
    await api.newProject('other')
    await api.post(
      '/api/admin/addons',
      webhook(receiver.url, {
        events: ['feature-created', 'feature-environment-enabled'],
        projects: ['default'],
        environments: ['production'],
      }),
    )
    await api.newFlag('other', 'elsewhere')
    await api.toggle('other', 'elsewhere', 'production', true)
    await api.newFlag('default', 'here')
    await api.toggle('default', 'here', 'development', true)
    await api.toggle('default', 'here', 'production', true)
    await api.toggle('default', 'here', 'production', false)
    await waitFor(() => receiver.received.length >= 2, 'two deliveries')
    await api.services.store.flush()
    await Bun.sleep(100)
    expect(receiver.received.map(r => JSON.parse(r.body)).map(e => [e.type, e.featureName, e.environment])).toEqual([
      ['feature-created', 'here', null],
      ['feature-environment-enabled', 'here', 'production'],
    ])
  })

  test('a disabled integration records no deliveries', async () => {
    await api.post('/api/admin/addons', webhook(receiver.url, { enabled: false }))
    await api.newFlag('default', 'quiet')
    expect(Object.keys(api.services.store.state.addonDeliveries)).toEqual([])
  })

  test('send test event: delivered once, and the answer says how it was received', async () => {
    const created = await api.post<AddonBody>('/api/admin/addons', webhook(receiver.url))
    const sent = await api.post<{ ok: boolean; statusCode: number }>(`/api/admin/addons/${created.body.id}/test`)
    expectOk(sent)
    expect(sent.body).toMatchObject({ ok: true, statusCode: 200 })
    expect(receiver.received).toHaveLength(1)
    expect(
      verifySignature(SECRET, receiver.received[0].headers['x-flagstore-signature'], receiver.received[0].body),
    ).toBe(true)
    receiver.answer = () => new Response('no', { status: 404 })
    const failed = await api.post<{ ok: boolean; statusCode: number; error: string }>(
      `/api/admin/addons/${created.body.id}/test`,
    )
    expect(failed.body).toMatchObject({ ok: false, statusCode: 404, error: 'HTTP 404' })
  })
})
