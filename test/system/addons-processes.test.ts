/**
 * Deliveries across real processes (`bun src/main.ts`):
 * - the receiver is down while writes are acknowledged, then the service is killed with SIGKILL and
 *   started again on its data directory: every delivery arrives, signed, and a delivery received
 *   twice carries the same delivery id both times;
 * - killed while deliveries are being sent, then started again: every delivery arrives, and one
 *   sent but not recorded before the kill arrives again with the same delivery id;
 * - two instances on one PostgreSQL, writes made on both: each delivery is sent once, by one of them.
 */
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startPostgres, type PostgresCluster } from '../postgres-cluster'
import { tempDir } from '../helpers/files'
import { adminCall, freePort, untilReady, waitFor } from '../helpers/processes'
import { needs, TOOLS } from '../tools'
import { startReceiver, verifySignature, type Receiver } from '../features/addons/receiver'

const ROOT = join(import.meta.dir, '../..')
const ADMIN = '*:*.addons-process-admin-secret-0123456789'
const SECRET = 'whsec-process-test'

const children: ReturnType<typeof Bun.spawn>[] = []
const cleanups: (() => void | Promise<void>)[] = []
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  for (const cleanup of cleanups) await cleanup()
})

async function launch(port: number, env: Record<string, string>) {
  const child = Bun.spawn([join(ROOT, 'node_modules', '.bin', 'bun'), 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      INIT_ADMIN_API_TOKENS: ADMIN,
      LOG_LEVEL: 'warn',
      ADDONS_RETRY_BASE_MS: '50',
      ...env,
    },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
  })
  children.push(child)
  const base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: child, ms: 60_000 })
  return { child, base }
}

const hook = (url: string) => ({
  provider: 'webhook',
  enabled: true,
  parameters: { url, signingSecret: SECRET },
  events: ['feature-created'],
})

/** Every flag named arrived, signed; each delivery id belongs to one flag. Answers the requests per delivery id. */
function checkArrivals(receiver: Receiver, flags: string[]): Map<string, number> {
  const byId = new Map<string, number>()
  const flagOf = new Map<string, string>()
  for (const request of receiver.received) {
    expect(verifySignature(SECRET, request.headers['x-flagstore-signature'], request.body)).toBe(true)
    const id = request.headers['x-flagstore-delivery']
    const flag = JSON.parse(request.body).featureName
    expect(flagOf.get(id) ?? flag).toBe(flag)
    flagOf.set(id, flag)
    byId.set(id, (byId.get(id) ?? 0) + 1)
  }
  expect([...new Set(flagOf.values())].sort()).toEqual([...flags].sort())
  expect(byId.size).toBe(flags.length)
  return byId
}

test('a receiver down while writes are acknowledged, then SIGKILL and a restart: every delivery arrives', async () => {
  const dir = tempDir('addons-crash-')
  cleanups.push(() => dir.remove())
  const receiverPort = freePort()
  let receiver = startReceiver(receiverPort)
  receiver.stop()
  const port = freePort()
  const first = await launch(port, { DATA_DIR: dir.path })
  expect((await adminCall(first.base, ADMIN, 'POST', '/api/admin/addons', hook(receiver.url))).status).toBe(200)
  const flags = Array.from({ length: 30 }, (_, i) => `crash-${i}`)
  for (const name of flags)
    expect((await adminCall(first.base, ADMIN, 'POST', '/api/admin/projects/default/features', { name })).status).toBe(
      201,
    )
  first.child.kill('SIGKILL')
  await first.child.exited

  receiver = startReceiver(receiverPort)
  cleanups.push(() => receiver.stop())
  const second = await launch(port, { DATA_DIR: dir.path })
  await waitFor(
    () => new Set(receiver.received.map(r => JSON.parse(r.body).featureName)).size === flags.length,
    'every delivery',
    { ms: 60_000 },
  )
  await waitFor(
    async () => (await adminCall(second.base, ADMIN, 'GET', '/api/admin/addons/1/events')).body.waitingCount === 0,
    'nothing waiting',
  )
  checkArrivals(receiver, flags)
  const order = receiver.received.map(r => Number(JSON.parse(r.body).id))
  expect(order).toEqual([...order].sort((a, b) => a - b))
  second.child.kill('SIGTERM')
  await second.child.exited
})

test('SIGKILL while deliveries are being sent: after the restart every one arrives, a repeated one with the same delivery id', async () => {
  const dir = tempDir('addons-mid-')
  cleanups.push(() => dir.remove())
  const receiver = startReceiver()
  cleanups.push(() => receiver.stop())
  receiver.answer = async () => (await Bun.sleep(100), new Response('ok'))
  const port = freePort()
  const first = await launch(port, { DATA_DIR: dir.path })
  expect((await adminCall(first.base, ADMIN, 'POST', '/api/admin/addons', hook(receiver.url))).status).toBe(200)
  const flags = Array.from({ length: 30 }, (_, i) => `mid-${i}`)
  for (const name of flags)
    expect((await adminCall(first.base, ADMIN, 'POST', '/api/admin/projects/default/features', { name })).status).toBe(
      201,
    )
  await waitFor(() => receiver.received.length >= 3, 'the first deliveries')
  first.child.kill('SIGKILL')
  await first.child.exited
  const sentBefore = receiver.received.length
  const second = await launch(port, { DATA_DIR: dir.path })
  await waitFor(
    async () => (await adminCall(second.base, ADMIN, 'GET', '/api/admin/addons/1/events')).body.waitingCount === 0,
    'nothing waiting',
    { ms: 60_000 },
  )
  expect(sentBefore).toBeLessThan(flags.length)
  checkArrivals(receiver, flags)
  second.child.kill('SIGTERM')
  await second.child.exited
})

needs(TOOLS.postgres).test('two instances on one PostgreSQL: each delivery is sent once', async () => {
  const pg: PostgresCluster = await startPostgres({ fsync: false })
  cleanups.push(() => pg.stop())
  const url = await pg.createDatabase('addons')
  const receiver = startReceiver()
  cleanups.push(() => receiver.stop())
  const dirs = [tempDir('addons-pg-a-'), tempDir('addons-pg-b-')]
  for (const dir of dirs) cleanups.push(() => dir.remove())
  const a = await launch(freePort(), { DATABASE_URL: url, DATA_DIR: dirs[0].path })
  const b = await launch(freePort(), { DATABASE_URL: url, DATA_DIR: dirs[1].path })
  expect((await adminCall(a.base, ADMIN, 'POST', '/api/admin/addons', hook(receiver.url))).status).toBe(200)
  const flags = Array.from({ length: 40 }, (_, i) => `shared-${i}`)
  await Promise.all(
    flags.map(async (name, i) => {
      const base = i % 2 === 0 ? a.base : b.base
      expect((await adminCall(base, ADMIN, 'POST', '/api/admin/projects/default/features', { name })).status).toBe(201)
    }),
  )
  await waitFor(() => receiver.received.length >= flags.length, 'every delivery', { ms: 60_000 })
  await waitFor(
    async () => (await adminCall(b.base, ADMIN, 'GET', '/api/admin/addons/1/events')).body.waitingCount === 0,
    'nothing waiting',
  )
  await Bun.sleep(1500)
  const byId = checkArrivals(receiver, flags)
  expect([...byId.values()].every(count => count === 1)).toBe(true)
  expect(receiver.received).toHaveLength(flags.length)
})
