/**
 * The official browser SDK, `unleash-proxy-client`, against the real process (it runs in Bun with
 * the global fetch): it reads a few flags through the frontend API with a frontend token, by GET
 * and with usePOSTrequests, follows a context change, and sees a change
 * made through the admin API on its next refresh; the metrics it sends are counted exactly.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { EVENTS, InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client'
import { adminCall, startService, type RunningService } from '../helpers/processes'
import { paths } from '../helpers/service'

const ADMIN = '*:*.frontend-sdk-admin-secret-0123456789'
let service: RunningService
let secret: string
const clients: UnleashClient[] = []

async function admin(method: string, path: string, body?: unknown) {
  const answer = await adminCall(service.base, ADMIN, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

beforeAll(async () => {
  service = await startService(ADMIN, 'flags-frontend-sdk-')
  for (const name of ['banner', 'checkout', 'beta-search', 'dark-mode'])
    await admin('POST', '/api/admin/projects/default/features', { name })
  await admin('POST', `${paths.flag('banner')}/environments/development/strategies`, { name: 'default' })
  await admin('PUT', `${paths.flag('banner')}/environments/development/variants`, [
    {
      name: 'spring',
      weight: 1000,
      weightType: 'variable',
      stickiness: 'default',
      payload: { type: 'json', value: '{"color":"green"}' },
    },
  ])
  await admin('POST', `${paths.flag('checkout')}/environments/development/strategies`, {
    name: 'userWithId',
    parameters: { userIds: 'alice' },
  })
  await admin('POST', `${paths.flag('beta-search')}/environments/development/strategies`, {
    name: 'flexibleRollout',
    parameters: { rollout: '100', stickiness: 'default' },
    constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
  })
  for (const name of ['banner', 'checkout', 'beta-search'])
    await admin('POST', `${paths.flag(name)}/environments/development/on`)
  // dark-mode stays off.
  secret = (
    await admin('POST', '/api/admin/api-tokens', {
      tokenName: 'browser',
      type: 'frontend',
      projects: ['default'],
      environment: 'development',
    })
  ).secret
})

afterAll(async () => {
  for (const client of clients) client.stop()
  await service?.stop()
})

function start(
  options: {
    usePOSTrequests?: boolean
    context?: Record<string, unknown>
    disableMetrics?: boolean
    metricsInterval?: number
    metricsIntervalInitial?: number
  } = {},
): Promise<UnleashClient> {
  const client = new UnleashClient({
    url: `${service.base}/api/frontend`,
    clientKey: secret,
    appName: 'web-shop',
    refreshInterval: 1,
    disableMetrics: true,
    storageProvider: new InMemoryStorageProvider(),
    ...options,
  })
  clients.push(client)
  return new Promise((resolve, reject) => {
    client.on(EVENTS.ERROR, (error: unknown) => reject(new Error(`SDK error: ${JSON.stringify(error)}`)))
    client.on(EVENTS.READY, () => resolve(client))
    void client.start()
  })
}

for (const usePOSTrequests of [false, true]) {
  test(`unleash-proxy-client reads flags, variants and payloads, and follows the context (${usePOSTrequests ? 'POST' : 'GET'})`, async () => {
    const client = await start({ usePOSTrequests, context: { userId: 'bob', properties: { plan: 'free' } } })
    expect(client.isEnabled('banner')).toBe(true)
    expect(client.getVariant('banner')).toMatchObject({
      name: 'spring',
      enabled: true,
      payload: { type: 'json', value: '{"color":"green"}' },
    })
    expect(client.isEnabled('checkout')).toBe(false)
    expect(client.isEnabled('beta-search')).toBe(false)
    expect(client.isEnabled('dark-mode')).toBe(false)
    expect(client.getVariant('checkout')).toMatchObject({ name: 'disabled', enabled: false })

    await client.updateContext({ userId: 'alice', properties: { plan: 'pro' } })
    expect(client.isEnabled('checkout')).toBe(true)
    expect(client.isEnabled('beta-search')).toBe(true)
    expect(client.getVariant('checkout')).toMatchObject({ name: 'disabled', enabled: false, feature_enabled: true })
    client.stop()
  })
}

test('the metrics unleash-proxy-client sends are counted exactly per flag, environment and application', async () => {
  const client = await start({
    disableMetrics: false,
    metricsInterval: 3600,
    metricsIntervalInitial: 0,
    context: { userId: 'bob' },
  })
  for (let i = 0; i < 3; i++) client.isEnabled('banner')
  for (let i = 0; i < 2; i++) client.getVariant('banner')
  client.isEnabled('checkout')
  client.isEnabled('no-such-flag')
  const sent = new Promise<void>(resolve => client.on(EVENTS.SENT, () => resolve()))
  await client.sendMetrics()
  await sent
  client.stop()
  const usage = async (name: string) => (await admin('GET', `/api/admin/client-metrics/features/${name}`)).lastHourUsage
  expect(await usage('banner')).toEqual([
    expect.objectContaining({
      environment: 'development',
      appName: 'web-shop',
      yes: 5,
      no: 0,
      variants: { spring: 2 },
    }),
  ])
  expect(await usage('checkout')).toEqual([
    expect.objectContaining({ environment: 'development', appName: 'web-shop', yes: 0, no: 1, variants: {} }),
  ])
  // The application it reported as is known, with the flags it evaluated here.
  const application = await admin('GET', '/api/admin/metrics/applications/web-shop')
  expect(application.appName).toBe('web-shop')
})

test('unleash-proxy-client sees a flag switched on through the admin API on its next refresh', async () => {
  const client = await start({ context: { userId: 'carol' } })
  expect(client.isEnabled('dark-mode')).toBe(false)
  const updated = new Promise<void>(resolve => client.on(EVENTS.UPDATE, () => resolve()))
  await admin('POST', `${paths.flag('dark-mode')}/environments/development/on`)
  await updated
  expect(client.isEnabled('dark-mode')).toBe(true)
  client.stop()
}, 15_000)
