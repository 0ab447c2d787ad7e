/**
 * The official Node SDK (`unleash-client`) against the real process: it registers, fetches the
 * flags with a client token, evaluates them as stored, polls with If-None-Match, sees a change on
 * its next poll, and sends metrics, without a warning or an error; the service counts them and
 * records the application.
 */
import { afterEach, expect, test } from 'bun:test'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { adminCall, startService, type RunningService, waitFor } from '../helpers/processes'
import { destroySdk, eventOf } from '../helpers/sdk'
import { paths } from '../helpers/service'

const ADMIN = '*:*.sdk-test-admin-secret-0123456789'

let service: RunningService | undefined
let client: Unleash | undefined

afterEach(async () => {
  destroySdk(client)
  client = undefined
  await service?.stop()
  service = undefined
})

async function startServer(): Promise<string> {
  service = await startService(ADMIN, 'flags-sdk-')
  return service.base
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await adminCall(base, ADMIN, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

const strategiesOf = (name: string) => `${paths.flag(name)}/environments/development/strategies`
const toggle = (name: string, on: boolean) => `${paths.flag(name)}/environments/development/${on ? 'on' : 'off'}`

test('unleash-client reads and evaluates the flags, and sees a change on its next poll', async () => {
  const base = await startServer()
  const run = Date.now().toString(36)
  const names = {
    rollout: `sdk-rollout-${run}`,
    users: `sdk-users-${run}`,
    off: `sdk-off-${run}`,
    variants: `sdk-variants-${run}`,
  }
  for (const name of Object.values(names)) await admin(base, 'POST', '/api/admin/projects/default/features', { name })
  await admin(base, 'POST', strategiesOf(names.rollout), {
    name: 'flexibleRollout',
    parameters: { rollout: '100', stickiness: 'default', groupId: names.rollout },
  })
  await admin(base, 'POST', strategiesOf(names.users), { name: 'userWithId', parameters: { userIds: '7,9' } })
  await admin(base, 'POST', strategiesOf(names.off), { name: 'default' })
  await admin(base, 'POST', strategiesOf(names.variants), { name: 'default' })
  await admin(base, 'PUT', `${paths.flag(names.variants)}/environments/development/variants`, [
    {
      name: 'blue',
      weightType: 'variable',
      weight: 1000,
      stickiness: 'default',
      payload: { type: 'string', value: 'sky' },
    },
  ])
  for (const name of [names.rollout, names.users, names.variants]) await admin(base, 'POST', toggle(name, true))
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: `sdk-${run}`,
    type: 'client',
    projects: ['default'],
    environment: 'development',
  })

  const problems: string[] = []
  client = new Unleash({
    url: `${base}/api`,
    appName: 'sdk-test',
    customHeaders: { Authorization: token.secret },
    refreshInterval: 200,
    metricsInterval: 300,
    storageProvider: new InMemStorageProvider(),
  })
  client.on('error', (error: Error) => problems.push(`error: ${error.message}`))
  client.on('warn', (message: unknown) => problems.push(`warn: ${String(message)}`))
  const registered = eventOf(client, 'registered')
  await eventOf(client, 'synchronized')
  await registered

  expect(client.isEnabled(names.rollout, { userId: '1' })).toBe(true)
  expect(client.isEnabled(names.users, { userId: '7' })).toBe(true)
  expect(client.isEnabled(names.users, { userId: '8' })).toBe(false)
  expect(client.isEnabled(names.off)).toBe(false)
  const variant = client.getVariant(names.variants, { userId: '1' })
  expect({ name: variant.name, enabled: variant.enabled, payload: variant.payload as unknown }).toEqual({
    name: 'blue',
    enabled: true,
    payload: { type: 'string', value: 'sky' },
  })
  expect(client.getVariant(names.off).name).toBe('disabled')

  // Polls in between get 304s (counted by the service's own metrics); the write shows up on the next poll.
  await eventOf(client, 'unchanged')
  const prometheus = await (await fetch(`${base}/internal-backstage/prometheus`)).text()
  expect(prometheus).toMatch(/http_requests_total\{[^}]*route="\/api\/client\/features"[^}]*status="304"[^}]*\} [1-9]/)
  // Listened for before the write: the SDK's next poll may come before the write's answer is read.
  const changed = eventOf(client, 'changed')
  await admin(base, 'POST', toggle(names.off, true))
  await changed
  expect(client.isEnabled(names.off)).toBe(true)

  // A metrics report goes out and is accepted, and its counts are those of the evaluations above.
  const sent = eventOf(client, 'sent')
  await sent
  expect(problems).toEqual([])
  const usage = async (name: string) => {
    const rows: { appName: string; environment: string; yes: number; no: number; variants: Record<string, number> }[] =
      (await admin(base, 'GET', `/api/admin/client-metrics/features/${name}`)).lastHourUsage
    return rows.map(({ appName, environment, yes, no, variants }) => ({ appName, environment, yes, no, variants }))
  }
  const expected = { appName: 'sdk-test', environment: 'development' }
  await waitFor(async () => (await usage(names.users)).length > 0, "the SDK's metrics to be counted", { every: 100 })
  expect(await usage(names.users)).toEqual([{ ...expected, yes: 1, no: 1, variants: {} }])
  expect(await usage(names.rollout)).toEqual([{ ...expected, yes: 1, no: 0, variants: {} }])
  expect(await usage(names.variants)).toEqual([{ ...expected, yes: 1, no: 0, variants: { blue: 1 } }])
  const application = await admin(base, 'GET', '/api/admin/metrics/applications/sdk-test')
  expect(application.instances).toHaveLength(1)
  expect(application.instances[0].sdkVersion).toMatch(/^unleash-node-sdk:\d+\.\d+\.\d+$/)
  // The socket's peer: the SDK runs on this machine.
  expect(application.instances[0].clientIp).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/)
  expect(application.strategies.map((strategy: { name: string }) => strategy.name)).toContain('flexibleRollout')
}, 30_000)
