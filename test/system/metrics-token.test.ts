/**
 * METRICS_TOKEN with the real program: set in the environment, the Prometheus endpoint of a server
 * listening on every address answers only `Authorization: Bearer <it>`; a token too short stops the
 * start naming the setting. (Without it the endpoint needs no token: test/http/metrics.test.ts.)
 */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { tempDir } from '../helpers/files'
import { freePort, untilReady, PATIENCE_MS } from '../helpers/processes'
import { ADMIN_SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const cleanups: (() => void | Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

function env(extra: Record<string, string>) {
  const dir = tempDir('metrics-token-')
  cleanups.push(() => dir.remove())
  const base: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: join(dir.path, 'data'),
    LOG_LEVEL: 'warn',
    INIT_ADMIN_API_TOKENS: ADMIN_SECRET,
  }
  for (const key of Object.keys(base))
    if (key.startsWith('DATABASE_') || key === 'METRICS_TOKEN' || key === 'BASE_URI_PATH') delete base[key]
  return { ...base, ...extra }
}

test('a server started with METRICS_TOKEN answers the metrics only with "Authorization: Bearer <it>"', async () => {
  const port = freePort()
  const token = 'metrics-scrape-0123456789abcdef'
  // HOST=0.0.0.0 as by default; the test calls it only through loopback.
  const server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: env({ PORT: String(port), HOST: '0.0.0.0', METRICS_TOKEN: token }),
    stdout: 'ignore',
    stderr: 'inherit',
  })
  cleanups.push(() => {
    server.kill('SIGKILL')
    return server.exited
  })
  const base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: server })
  const url = `${base}/internal-backstage/prometheus`
  const anonymous = await fetch(url)
  expect(anonymous.status).toBe(401)
  expect(((await anonymous.json()) as { message: string }).message).toContain('Authorization: Bearer <METRICS_TOKEN>')
  expect((await fetch(url, { headers: { authorization: ADMIN_SECRET } })).status).toBe(401)
  const scraped = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  expect(scraped.status).toBe(200)
  expect(await scraped.text()).toMatch(/^projects 1$/m)
})

test('a METRICS_TOKEN that is too short stops the start, naming it', () => {
  const result = Bun.spawnSync([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: env({ PORT: String(freePort()), HOST: '127.0.0.1', METRICS_TOKEN: 'short' }),
    timeout: PATIENCE_MS,
  })
  expect({ code: result.exitCode, stdout: result.stdout.toString() }).toEqual({ code: 1, stdout: '' })
  expect(result.stderr.toString()).toMatch(
    /^Cannot start: METRICS_TOKEN must be 16 to 256 printable ASCII characters without spaces/,
  )
})
