/**
 * The official Node SDK (`unleash-client`) against the real process: it registers, fetches the
 * flags with a client token, evaluates them as stored, polls with If-None-Match, sees a change on
 * its next poll, and sends metrics, without a warning or an error.
 */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { freePort, tempDir } from '../helpers'

const ROOT = join(import.meta.dir, '../..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
const ADMIN = '*:*.sdk-test-admin-secret-0123456789'

let server: Subprocess | undefined
let client: Unleash | undefined
let dir: { path: string; remove(): void } | undefined

afterEach(async () => {
  client?.destroy()
  client = undefined
  if (server && server.exitCode === null) {
    server.kill('SIGTERM')
    await server.exited
  }
  server = undefined
  dir?.remove()
  dir = undefined
})

async function startServer(): Promise<string> {
  dir = tempDir('flags-sdk-')
  const port = freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of ['BODY_LIMIT', 'SYNC']) delete env[key]
  server = Bun.spawn([BUN, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir.path, INIT_ADMIN_API_TOKENS: ADMIN },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const base = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 200; attempt++) {
    const up = await fetch(`${base}/health`).then((response) => response.ok, () => false)
    if (up) return base
    await Bun.sleep(50)
  }
  throw new Error('the server did not start')
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: ADMIN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${path} → ${response.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}

const flagPath = (name: string) => `/api/admin/projects/default/features/${name}`
const strategiesOf = (name: string) => `${flagPath(name)}/environments/development/strategies`
const toggle = (name: string, on: boolean) => `${flagPath(name)}/environments/development/${on ? 'on' : 'off'}`

function waitFor(unleash: Unleash, event: string, ms = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms)
    unleash.once(event, () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

test('unleash-client reads and evaluates the flags, and sees a change on its next poll', async () => {
  const base = await startServer()
  const run = Date.now().toString(36)
  const names = { rollout: `sdk-rollout-${run}`, users: `sdk-users-${run}`, off: `sdk-off-${run}`, variants: `sdk-variants-${run}` }
  for (const name of Object.values(names)) await admin(base, 'POST', '/api/admin/projects/default/features', { name })
  await admin(base, 'POST', strategiesOf(names.rollout), { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: names.rollout } })
  await admin(base, 'POST', strategiesOf(names.users), { name: 'userWithId', parameters: { userIds: '7,9' } })
  await admin(base, 'POST', strategiesOf(names.off), { name: 'default' })
  await admin(base, 'POST', strategiesOf(names.variants), { name: 'default' })
  await admin(base, 'PUT', `${flagPath(names.variants)}/environments/development/variants`, [
    { name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default', payload: { type: 'string', value: 'sky' } },
  ])
  for (const name of [names.rollout, names.users, names.variants]) await admin(base, 'POST', toggle(name, true))
  const token = await admin(base, 'POST', '/api/admin/api-tokens', { tokenName: `sdk-${run}`, type: 'client', projects: ['default'], environment: 'development' })

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
  const registered = waitFor(client, 'registered')
  await waitFor(client, 'synchronized')
  await registered

  expect(client.isEnabled(names.rollout, { userId: '1' })).toBe(true)
  expect(client.isEnabled(names.users, { userId: '7' })).toBe(true)
  expect(client.isEnabled(names.users, { userId: '8' })).toBe(false)
  expect(client.isEnabled(names.off)).toBe(false)
  const variant = client.getVariant(names.variants, { userId: '1' })
  expect({ name: variant.name, enabled: variant.enabled, payload: variant.payload as unknown }).toEqual({ name: 'blue', enabled: true, payload: { type: 'string', value: 'sky' } })
  expect(client.getVariant(names.off).name).toBe('disabled')

  // Polls in between get 304s (counted by the service's own metrics); the write shows up on the next poll.
  await waitFor(client, 'unchanged')
  const prometheus = await (await fetch(`${base}/internal-backstage/prometheus`)).text()
  expect(prometheus).toMatch(/http_requests_total\{[^}]*route="\/api\/client\/features"[^}]*status="304"[^}]*\} [1-9]/)
  await admin(base, 'POST', toggle(names.off, true))
  await waitFor(client, 'changed')
  expect(client.isEnabled(names.off)).toBe(true)

  // A metrics report goes out and is accepted.
  const sent = waitFor(client, 'sent')
  await sent
  expect(problems).toEqual([])
}, 30_000)
