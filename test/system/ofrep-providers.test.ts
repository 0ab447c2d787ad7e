/**
 * The real OpenFeature providers against the real process: `@openfeature/ofrep-provider` in the
 * server SDK (`@openfeature/server-sdk`, one request per evaluation, Bearer token) and
 * `@openfeature/ofrep-web-provider` in the web SDK (`@openfeature/web-sdk`, run in Bun: one bulk
 * request per context, then polling with If-None-Match, X-API-Key): boolean, string, number and
 * object flags, a flag not found, a disabled flag, every answer shape (variant flags on, off and
 * without a payload, read with each type) giving the same details from both providers, and a
 * change made through the admin API, seen by
 * polling, and, with an EventSource, through the bulk answer's eventStreams with polling off (in
 * Chromium, with the browser's own: ofrep-browser.test.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { OpenFeature as ServerFeatures } from '@openfeature/server-sdk'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
import { OpenFeature as WebFeatures, ProviderEvents } from '@openfeature/web-sdk'
import { adminCall, startService, withTimeout, type RunningService } from '../helpers/processes'
import { paths } from '../helpers/service'

const ADMIN = '*:*.ofrep-providers-admin-secret-0123456789'
let service: RunningService
let frontendToken: string
let clientToken: string

async function admin(method: string, path: string, body?: unknown) {
  const answer = await adminCall(service.base, ADMIN, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

async function withPayload(
  name: string,
  payload: { type: string; value: string } | undefined,
  options: { on?: boolean; strategy?: Record<string, unknown> } = {},
) {
  await admin('POST', '/api/admin/projects/default/features', { name })
  await admin(
    'POST',
    `${paths.flag(name)}/environments/development/strategies`,
    options.strategy ?? { name: 'default' },
  )
  await admin('PUT', `${paths.flag(name)}/environments/development/variants`, [
    {
      name: `${name}-variant`,
      weight: 1000,
      weightType: 'variable',
      stickiness: 'default',
      ...(payload ? { payload } : {}),
    },
  ])
  if (options.on ?? true) await admin('POST', `${paths.flag(name)}/environments/development/on`)
}

beforeAll(async () => {
  service = await startService(ADMIN, 'flags-ofrep-')
  await admin('POST', '/api/admin/projects/default/features', { name: 'checkout' })
  await admin('POST', `${paths.flag('checkout')}/environments/development/strategies`, {
    name: 'userWithId',
    parameters: { userIds: 'alice' },
  })
  await admin('POST', `${paths.flag('checkout')}/environments/development/on`)
  await admin('POST', '/api/admin/projects/default/features', { name: 'dark-mode' })
  await admin('POST', `${paths.flag('dark-mode')}/environments/development/strategies`, { name: 'default' })
  // dark-mode stays off.
  await withPayload('banner-text', { type: 'string', value: 'Spring sale' })
  await withPayload('max-items', { type: 'number', value: '25' })
  await withPayload('theme', { type: 'json', value: '{"color":"green","sizes":[1,2]}' })
  // Variant flags off for a user: off in the environment, and on there for alice only.
  await withPayload('variant-off', { type: 'string', value: 'never seen' }, { on: false })
  await withPayload(
    'variant-for-alice',
    { type: 'json', value: '{"seats":3}' },
    { strategy: { name: 'userWithId', parameters: { userIds: 'alice' } } },
  )
  await withPayload('variant-plain', undefined)
  frontendToken = (
    await admin('POST', '/api/admin/api-tokens', {
      tokenName: 'browser',
      type: 'frontend',
      projects: ['default'],
      environment: 'development',
    })
  ).secret
  clientToken = (
    await admin('POST', '/api/admin/api-tokens', {
      tokenName: 'server',
      type: 'client',
      projects: ['default'],
      environment: 'development',
    })
  ).secret
})

afterAll(async () => {
  await ServerFeatures.close()
  await WebFeatures.close()
  await service?.stop()
})

test('the server provider evaluates each flag type, a missing flag and a disabled one, and sees a change at once', async () => {
  await ServerFeatures.setProviderAndWait(
    new OFREPProvider({ baseUrl: service.base, headers: [['Authorization', `Bearer ${clientToken}`]] }),
  )
  const client = ServerFeatures.getClient()
  const alice = { targetingKey: 'alice' }
  expect(await client.getBooleanDetails('checkout', false, alice)).toMatchObject({
    value: true,
    reason: 'TARGETING_MATCH',
    variant: 'on',
    flagMetadata: { project: 'default' },
  })
  expect(await client.getBooleanDetails('checkout', true, { targetingKey: 'bob' })).toMatchObject({
    value: false,
    reason: 'DEFAULT',
    variant: 'off',
  })
  expect(await client.getStringDetails('banner-text', 'none', alice)).toMatchObject({
    value: 'Spring sale',
    reason: 'STATIC',
    variant: 'banner-text-variant',
  })
  expect(await client.getNumberValue('max-items', 0, alice)).toBe(25)
  expect(await client.getObjectValue('theme', {}, alice)).toEqual({ color: 'green', sizes: [1, 2] })
  expect(await client.getBooleanDetails('dark-mode', true, alice)).toMatchObject({ value: false, reason: 'DISABLED' })
  const missing = await client.getBooleanDetails('no-such-flag', true, alice)
  expect(missing).toMatchObject({ value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' })
  await admin('POST', `${paths.flag('dark-mode')}/environments/development/on`)
  expect(await client.getBooleanDetails('dark-mode', false, alice)).toMatchObject({ value: true, reason: 'STATIC' })
  await admin('POST', `${paths.flag('dark-mode')}/environments/development/off`)
})

type Kind = 'boolean' | 'string' | 'number' | 'object'
/** Every answer shape, read with each type: [flag, user, type, the application's default, the details expected]. */
const MISMATCH = { reason: 'ERROR', errorCode: 'TYPE_MISMATCH' }
const SHAPES: [string, string, Kind, unknown, Record<string, unknown>][] = [
  ['checkout', 'alice', 'boolean', false, { value: true, reason: 'TARGETING_MATCH', variant: 'on' }],
  ['checkout', 'bob', 'boolean', true, { value: false, reason: 'DEFAULT', variant: 'off' }],
  ['dark-mode', 'alice', 'boolean', true, { value: false, reason: 'DISABLED', variant: 'off' }],
  ['checkout', 'alice', 'string', 'none', { value: 'none', ...MISMATCH }],
  [
    'banner-text',
    'alice',
    'string',
    'none',
    { value: 'Spring sale', reason: 'STATIC', variant: 'banner-text-variant' },
  ],
  ['banner-text', 'alice', 'boolean', false, { value: false, ...MISMATCH }],
  ['max-items', 'bob', 'number', 0, { value: 25, reason: 'STATIC', variant: 'max-items-variant' }],
  ['max-items', 'bob', 'string', '', { value: '', ...MISMATCH }],
  [
    'theme',
    'bob',
    'object',
    {},
    { value: { color: 'green', sizes: [1, 2] }, reason: 'STATIC', variant: 'theme-variant' },
  ],
  // A variant flag off in the environment: false, as a boolean; the application's default, as any other type.
  ['variant-off', 'alice', 'boolean', true, { value: false, reason: 'DISABLED', variant: 'disabled' }],
  ['variant-off', 'alice', 'string', 'fallback', { value: 'fallback', ...MISMATCH }],
  // On in the environment, off for bob.
  [
    'variant-for-alice',
    'alice',
    'object',
    { seats: 1 },
    { value: { seats: 3 }, reason: 'TARGETING_MATCH', variant: 'variant-for-alice-variant' },
  ],
  ['variant-for-alice', 'bob', 'object', { seats: 1 }, { value: { seats: 1 }, ...MISMATCH }],
  ['variant-for-alice', 'bob', 'boolean', true, { value: false, reason: 'DEFAULT', variant: 'disabled' }],
  ['variant-for-alice', 'bob', 'number', 5, { value: 5, ...MISMATCH }],
  // A variant without a payload: on, with its name.
  ['variant-plain', 'bob', 'boolean', false, { value: true, reason: 'STATIC', variant: 'variant-plain-variant' }],
  ['variant-plain', 'bob', 'string', 'fallback', { value: 'fallback', ...MISMATCH }],
  ['no-such-flag', 'bob', 'string', 'fallback', { value: 'fallback', reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' }],
]

type Details = { value: unknown; reason?: string; variant?: string; errorCode?: string }
type Reader = {
  [K in 'getBooleanDetails' | 'getStringDetails' | 'getNumberDetails' | 'getObjectDetails']: (
    key: string,
    fallback: never,
    context?: never,
  ) => Details | Promise<Details>
}
const READ = {
  boolean: 'getBooleanDetails',
  string: 'getStringDetails',
  number: 'getNumberDetails',
  object: 'getObjectDetails',
} as const
/** The details an application acts on, as text with the members in one order. */
const essentials = ({ value, reason, variant, errorCode }: Details) =>
  JSON.stringify({ errorCode, reason, value, variant })

test('both providers give the same details for every answer shape: variant flags on, off and without a payload, read with each type', async () => {
  await ServerFeatures.setProviderAndWait(
    new OFREPProvider({ baseUrl: service.base, headers: [['Authorization', `Bearer ${clientToken}`]] }),
  )
  const server = ServerFeatures.getClient() as unknown as Reader
  const provider = new OFREPWebProvider({
    baseUrl: service.base,
    headers: [['X-API-Key', frontendToken]],
    pollInterval: 0,
    changeDetection: 'polling',
    cacheMode: 'disabled',
    disableVisibilityRefresh: true,
  })
  try {
    await WebFeatures.setContext({ targetingKey: 'alice' })
    await WebFeatures.setProviderAndWait(provider)
    const web = WebFeatures.getClient() as unknown as Reader
    const wrong: string[] = []
    for (const user of ['alice', 'bob']) {
      await WebFeatures.setContext({ targetingKey: user })
      for (const [flag, forUser, kind, fallback, expected] of SHAPES) {
        if (forUser !== user) continue
        const fromServer = essentials(
          await server[READ[kind]](flag, fallback as never, { targetingKey: user } as never),
        )
        const fromWeb = essentials(await web[READ[kind]](flag, fallback as never))
        const want = essentials(expected as Details)
        for (const [who, got] of [
          ['server', fromServer],
          ['web', fromWeb],
        ] as const) {
          if (got !== want) wrong.push(`${who} ${flag} as ${kind} for ${user}: ${got}, expected ${want}`)
        }
      }
    }
    expect(wrong).toEqual([])
  } finally {
    await WebFeatures.clearProviders()
  }
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
  expect(client.getStringDetails('banner-text', 'none')).toMatchObject({
    value: 'Spring sale',
    variant: 'banner-text-variant',
  })
  expect(client.getNumberValue('max-items', 0)).toBe(25)
  expect(client.getObjectValue('theme', {})).toEqual({ color: 'green', sizes: [1, 2] })
  expect(client.getBooleanDetails('dark-mode', true)).toMatchObject({ value: false, reason: 'DISABLED' })
  expect(client.getBooleanDetails('no-such-flag', true)).toMatchObject({
    value: true,
    reason: 'ERROR',
    errorCode: 'FLAG_NOT_FOUND',
  })

  await WebFeatures.setContext({ targetingKey: 'alice' })
  expect(client.getBooleanDetails('checkout', false)).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })

  const changed = new Promise<string[]>(resolve =>
    client.addHandler(ProviderEvents.ConfigurationChanged, details => resolve(details?.flagsChanged ?? [])),
  )
  await admin('POST', `${paths.flag('dark-mode')}/environments/development/on`)
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
    const provider = new OFREPWebProvider({
      baseUrl: service.base,
      headers: [['X-API-Key', frontendToken]],
      pollInterval: 0,
      cacheMode: 'disabled',
      disableVisibilityRefresh: true,
    })
    await WebFeatures.setProviderAndWait(provider)
    const client = WebFeatures.getClient()
    const before = client.getBooleanValue('dark-mode', false)
    const connected = (
      provider as unknown as {
        _sseManager?: { isConnected: boolean; connectedUrls: Set<string>; _connections: { readyState: number }[] }
      }
    )._sseManager
    expect(connected?.isConnected).toBe(true)
    expect([...connected!.connectedUrls][0]).toStartWith(`${service.base}/ofrep/v1/events?channel=`)
    // The stream is answered (EventSource OPEN) before the write: a change made before it listens is not sent.
    for (let tries = 0; connected!._connections[0].readyState !== 1 && tries < 500; tries++) await Bun.sleep(10)
    expect(connected!._connections[0].readyState).toBe(1)
    const changed = new Promise<string[]>(resolve =>
      client.addHandler(ProviderEvents.ConfigurationChanged, details => resolve(details?.flagsChanged ?? [])),
    )
    await admin('POST', `${paths.flag('dark-mode')}/environments/development/${before ? 'off' : 'on'}`)
    expect(await withTimeout(changed, 5000)).toContain('dark-mode')
    expect(client.getBooleanValue('dark-mode', before)).toBe(!before)
  } finally {
    await WebFeatures.clearProviders()
    ;(globalThis as { EventSource?: unknown }).EventSource = had
  }
})
