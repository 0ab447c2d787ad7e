/**
 * The real OpenFeature providers against the real process: `@openfeature/ofrep-provider` in the
 * server SDK (`@openfeature/server-sdk`, one request per evaluation, Bearer token) and
 * `@openfeature/ofrep-web-provider` in the web SDK (`@openfeature/web-sdk`, run in Bun: one bulk
 * request per context, then polling with If-None-Match, X-API-Key): boolean, string, number and
 * object flags, a flag not found, a disabled flag, and a change made through the admin API, seen by
 * polling, and, with an EventSource, through the bulk answer's eventStreams with polling off (in
 * Chromium, with the browser's own: ofrep-browser.test.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { OpenFeature as ServerFeatures } from '@openfeature/server-sdk'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
import { OpenFeature as WebFeatures, ProviderEvents } from '@openfeature/web-sdk'
import { adminCall, startService, withTimeout, type RunningService } from '../helpers'

const ADMIN = '*:*.ofrep-providers-admin-secret-0123456789'
let service: RunningService
let frontendToken: string
let clientToken: string

async function admin(method: string, path: string, body?: unknown) {
  const answer = await adminCall(service.base, ADMIN, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

const flagPath = (name: string) => `/api/admin/projects/default/features/${name}`

async function withPayload(name: string, payload: { type: string; value: string }) {
  await admin('POST', '/api/admin/projects/default/features', { name })
  await admin('POST', `${flagPath(name)}/environments/development/strategies`, { name: 'default' })
  await admin('PUT', `${flagPath(name)}/environments/development/variants`, [{ name: `${name}-variant`, weight: 1000, weightType: 'variable', stickiness: 'default', payload }])
  await admin('POST', `${flagPath(name)}/environments/development/on`)
}

beforeAll(async () => {
  service = await startService(ADMIN, 'flags-ofrep-')
  await admin('POST', '/api/admin/projects/default/features', { name: 'checkout' })
  await admin('POST', `${flagPath('checkout')}/environments/development/strategies`, { name: 'userWithId', parameters: { userIds: 'alice' } })
  await admin('POST', `${flagPath('checkout')}/environments/development/on`)
  await admin('POST', '/api/admin/projects/default/features', { name: 'dark-mode' })
  await admin('POST', `${flagPath('dark-mode')}/environments/development/strategies`, { name: 'default' })
  // dark-mode stays off.
  await withPayload('banner-text', { type: 'string', value: 'Spring sale' })
  await withPayload('max-items', { type: 'number', value: '25' })
  await withPayload('theme', { type: 'json', value: '{"color":"green","sizes":[1,2]}' })
  frontendToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'browser', type: 'frontend', projects: ['default'], environment: 'development' })).secret
  clientToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'server', type: 'client', projects: ['default'], environment: 'development' })).secret
})

afterAll(async () => {
  await ServerFeatures.close()
  await WebFeatures.close()
  await service?.stop()
})

test('the server provider evaluates each flag type, a missing flag and a disabled one, and sees a change at once', async () => {
  await ServerFeatures.setProviderAndWait(new OFREPProvider({ baseUrl: service.base, headers: [['Authorization', `Bearer ${clientToken}`]] }))
  const client = ServerFeatures.getClient()
  const alice = { targetingKey: 'alice' }
  expect(await client.getBooleanDetails('checkout', false, alice)).toMatchObject({ value: true, reason: 'TARGETING_MATCH', variant: 'on', flagMetadata: { project: 'default' } })
  expect(await client.getBooleanDetails('checkout', true, { targetingKey: 'bob' })).toMatchObject({ value: false, reason: 'DEFAULT', variant: 'off' })
  expect(await client.getStringDetails('banner-text', 'none', alice)).toMatchObject({ value: 'Spring sale', reason: 'STATIC', variant: 'banner-text-variant' })
  expect(await client.getNumberValue('max-items', 0, alice)).toBe(25)
  expect(await client.getObjectValue('theme', {}, alice)).toEqual({ color: 'green', sizes: [1, 2] })
  expect(await client.getBooleanDetails('dark-mode', true, alice)).toMatchObject({ value: false, reason: 'DISABLED' })
  const missing = await client.getBooleanDetails('no-such-flag', true, alice)
  expect(missing).toMatchObject({ value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' })
  await admin('POST', `${flagPath('dark-mode')}/environments/development/on`)
  expect(await client.getBooleanDetails('dark-mode', false, alice)).toMatchObject({ value: true, reason: 'STATIC' })
  await admin('POST', `${flagPath('dark-mode')}/environments/development/off`)
})

test('the web provider reads every flag in one request, follows a context change, and picks a change up by polling', async () => {
  await WebFeatures.setContext({ targetingKey: 'bob' })
  const provider = new OFREPWebProvider({
    baseUrl: service.base,
    headers: [['X-API-Key', frontendToken]],
    pollInterval: 200,
    changeDetection: 'polling',
    cacheMode: 'disabled',
    disableVisibilityRefresh: true,
  })
  await WebFeatures.setProviderAndWait(provider)
  const client = WebFeatures.getClient()
  expect(client.getBooleanDetails('checkout', true)).toMatchObject({ value: false, reason: 'DEFAULT' })
  expect(client.getStringDetails('banner-text', 'none')).toMatchObject({ value: 'Spring sale', variant: 'banner-text-variant' })
  expect(client.getNumberValue('max-items', 0)).toBe(25)
  expect(client.getObjectValue('theme', {})).toEqual({ color: 'green', sizes: [1, 2] })
  expect(client.getBooleanDetails('dark-mode', true)).toMatchObject({ value: false, reason: 'DISABLED' })
  expect(client.getBooleanDetails('no-such-flag', true)).toMatchObject({ value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' })

  await WebFeatures.setContext({ targetingKey: 'alice' })
  expect(client.getBooleanDetails('checkout', false)).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })

  const changed = new Promise<string[]>((resolve) => client.addHandler(ProviderEvents.ConfigurationChanged, (details) => resolve(details?.flagsChanged ?? [])))
  await admin('POST', `${flagPath('dark-mode')}/environments/development/on`)
  expect(await withTimeout(changed, 5000)).toContain('dark-mode')
  expect(client.getBooleanDetails('dark-mode', false)).toMatchObject({ value: true, reason: 'STATIC' })
})

test("the web provider opens the bulk answer's eventStreams and refetches on a change, without polling", async () => {
  // Browsers have EventSource; Bun does not. launchdarkly-eventsource (unleash-client's own) is a
  // real implementation over HTTP, put where the provider looks for the browser's.
  // @ts-expect-error the package ships no types; its EventSource has the browser's interface.
  const { EventSource } = (await import('launchdarkly-eventsource')) as { EventSource: typeof globalThis.EventSource }
  const had = (globalThis as { EventSource?: unknown }).EventSource
  ;(globalThis as { EventSource?: unknown }).EventSource = EventSource
  try {
    await WebFeatures.setContext({ targetingKey: 'bob' })
    // pollInterval 0: the provider never polls, so only the event stream can tell it of a change.
    const provider = new OFREPWebProvider({ baseUrl: service.base, headers: [['X-API-Key', frontendToken]], pollInterval: 0, cacheMode: 'disabled', disableVisibilityRefresh: true })
    await WebFeatures.setProviderAndWait(provider)
    const client = WebFeatures.getClient()
    const before = client.getBooleanValue('dark-mode', false)
    const connected = (provider as unknown as { _sseManager?: { isConnected: boolean; connectedUrls: Set<string>; _connections: { readyState: number }[] } })._sseManager
    expect(connected?.isConnected).toBe(true)
    expect([...connected!.connectedUrls][0]).toStartWith(`${service.base}/ofrep/v1/events?channel=`)
    // The stream is answered (EventSource OPEN) before the write: a change made before it listens is not sent.
    for (let tries = 0; connected!._connections[0].readyState !== 1 && tries < 500; tries++) await Bun.sleep(10)
    expect(connected!._connections[0].readyState).toBe(1)
    const changed = new Promise<string[]>((resolve) => client.addHandler(ProviderEvents.ConfigurationChanged, (details) => resolve(details?.flagsChanged ?? [])))
    await admin('POST', `${flagPath('dark-mode')}/environments/development/${before ? 'off' : 'on'}`)
    expect(await withTimeout(changed, 5000)).toContain('dark-mode')
    expect(client.getBooleanValue('dark-mode', before)).toBe(!before)
  } finally {
    await WebFeatures.clearProviders()
    ;(globalThis as { EventSource?: unknown }).EventSource = had
  }
})
