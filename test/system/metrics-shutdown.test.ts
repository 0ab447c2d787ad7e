/**
 * SIGTERM in the middle of a burst of SDK metrics, with the real server: every report it answered
 * is counted after a restart, exactly, although no timed flush ran (METRICS_FLUSH_MS is an hour):
 * the last batch is committed when the store closes, after the server has finished its requests.
 */
import { usageRows } from '../../src/features/metrics/metrics.records'
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { openStore } from '../../src/open-store'
import { tempDir } from '../helpers/files'
import { freePort, untilReady } from '../helpers/processes'
import { ADMIN_SECRET as SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const cleanups: (() => void)[] = []
afterEach(() => cleanups.splice(0).forEach(cleanup => cleanup()))

const FLAGS = ['m-0', 'm-1', 'm-2']

async function start(dataDir: string) {
  const port = freePort()
  const server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      INIT_ADMIN_API_TOKENS: SECRET,
      UNLEASH_DEFAULT_ADMIN_PASSWORD: 'Console-Password-1!',
      METRICS_FLUSH_MS: '3600000',
      LOG_LEVEL: 'warn',
    },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  cleanups.push(() => server.kill('SIGKILL'))
  const base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: server })
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(base + path, {
      method,
      headers: { authorization: SECRET, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
    return response.json()
  }
  return { server, base, admin }
}

for (const connections of ['one request per connection', 'keep-alive connections'] as const) {
  test(`SIGTERM during a burst of metrics (${connections}): every answered report is counted after a restart, and no other`, async () => {
    const dir = tempDir('metrics-sigterm-')
    cleanups.push(() => dir.remove())
    const { server, base, admin } = await start(dir.path)
    for (const name of FLAGS) await admin('POST', '/api/admin/projects/default/features', { name })
    const { secret: token } = await admin('POST', '/api/admin/api-tokens', {
      tokenName: 'sdk',
      type: 'client',
      projects: ['*'],
      environment: 'development',
    })

    // Report i counts i + 1 yes for one flag and 1 no, under one of two applications; the sums of
    // the answered reports are then what a restart must find, to the unit.
    const answered = new Map<string, { yes: number; no: number }>()
    let sent = 0
    let refused = 0
    const post = async (i: number) => {
      const flag = FLAGS[i % FLAGS.length]
      const appName = `app-${i % 2}`
      const body = {
        appName,
        instanceId: `pod-${i % 5}`,
        bucket: {
          start: new Date().toISOString(),
          stop: new Date().toISOString(),
          toggles: { [flag]: { yes: i + 1, no: 1, variants: { blue: 1 } } },
        },
      }
      sent++
      let response: Response
      try {
        response = await fetch(`${base}/api/client/metrics`, {
          method: 'POST',
          headers: {
            authorization: token,
            'content-type': 'application/json',
            ...(connections === 'one request per connection' ? { connection: 'close' } : {}),
          },
          body: JSON.stringify(body),
        })
      } catch {
        refused++
        return false
      }
      expect(response.status).toBe(202)
      const key = `${flag}|${appName}`
      const sum = answered.get(key) ?? { yes: 0, no: 0 }
      answered.set(key, { yes: sum.yes + i + 1, no: sum.no + 1 })
      return true
    }
    // 16 clients posting one report after another until the server stops answering.
    let next = 0
    const clients = Array.from({ length: 16 }, async () => {
      while (await post(next++));
    })
    // Let the burst get going (a few hundred reports), then stop the server in the middle of it.
    while (sent < 300) await Bun.sleep(1)
    server.kill('SIGTERM')
    await Promise.all(clients)
    const stderr = await new Response(server.stderr).text()
    expect({ exitCode: await server.exited, stderr }).toEqual({ exitCode: 0, stderr: '' })
    const answeredCount = [...answered.values()].reduce((sum, counts) => sum + counts.no, 0)
    expect(answeredCount).toBeGreaterThan(250)
    expect(answeredCount + refused).toBe(sent)

    const store = await openStore(dir.path)
    const found = new Map<string, { yes: number; no: number }>()
    for (const row of usageRows(store.state.flagUsage)) {
      expect(row.environment).toBe('development')
      const key = `${row.featureName}|${row.appName}`
      const sum = found.get(key) ?? { yes: 0, no: 0 }
      // Rows of two hours when the burst crosses one: they add up.
      found.set(key, { yes: sum.yes + row.yes, no: sum.no + row.no })
    }
    expect(Object.fromEntries([...found].sort())).toEqual(Object.fromEntries([...answered].sort()))
    expect(Object.keys(store.state.clientApplications).sort()).toEqual(['app-0', 'app-1'])
    expect(Object.keys(store.state.flagLastSeen).sort()).toEqual(FLAGS)
    await store.close()
  }, 30_000)
}
