/**
 * `npm run build` makes one self-contained executable: built here into a temp directory and started
 * from there, with no node_modules anywhere near, it answers /health, finishes loading (both its
 * workers are inside it), serves the embedded Swagger UI, takes a write, and stops gracefully on SIGTERM.
 */
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { freePort, tempDir } from './helpers'

const ROOT = join(import.meta.dir, '..')
const SECRET = '*:*.executable-test-secret-01234'
const dir = tempDir('executable-')
let server: ReturnType<typeof Bun.spawn> | undefined
afterAll(async () => {
  server?.kill('SIGTERM')
  await server?.exited
  dir.remove()
})

test('the executable built by npm run build starts alone and answers', async () => {
  const build = (await Bun.file(join(ROOT, 'package.json')).json()).scripts.build as string
  const outfile = join(dir.path, 'flagstore')
  const args = build.replace(/^bun /, '').replace('dist/flagstore', outfile).split(' ')
  const built = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT })
  expect({ exitCode: built.exitCode, stderr: built.stderr.toString() }).toEqual({ exitCode: 0, stderr: '' })

  const port = freePort()
  server = Bun.spawn([outfile], {
    cwd: dir.path,
    env: { PATH: '/usr/bin:/bin', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dir.path, 'data'), INIT_ADMIN_API_TOKENS: SECRET, LOG_LEVEL: 'warn' },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const base = `http://127.0.0.1:${port}`
  let ready = false
  for (let i = 0; i < 200 && !ready; i++) {
    ready = await fetch(`${base}/ready`).then((r) => r.ok, () => false)
    if (!ready) await Bun.sleep(25)
  }
  expect(ready).toBe(true)
  expect(await (await fetch(`${base}/health`)).json()).toEqual({ health: 'GOOD' })
  expect((await fetch(`${base}/swagger/assets/swagger-ui-bundle.js`)).status).toBe(200)
  const headers = { authorization: SECRET, 'content-type': 'application/json' }
  const created = await fetch(`${base}/api/admin/projects`, { method: 'POST', headers, body: JSON.stringify({ id: 'bin', name: 'bin', featureNaming: { pattern: '[a-z]+' } }) })
  expect(created.status).toBe(201)
  const search = await (await fetch(`${base}/api/admin/search/events?type=IS:project-created`, { headers })).json()
  expect(search.total).toBeGreaterThanOrEqual(2)
  // prom-client's process metrics work inside the executable too.
  const metrics = await (await fetch(`${base}/internal-backstage/prometheus`)).text()
  expect(metrics).toMatch(/^process_resident_memory_bytes \d+$/m)
  expect(metrics).toMatch(/^http_requests_total\{method="POST",route="\/api\/admin\/projects",status="201"\} 1$/m)

  // SIGTERM, as a supervisor sends it, stops it gracefully: exit 0, no longer listening, and the
  // clean stop's checkpoint holds the write (the journal is empty).
  server.kill('SIGTERM')
  expect(await server.exited).toBe(0)
  expect(await fetch(`${base}/health`).then(() => 'answered', () => 'refused')).toBe('refused')
  expect(await Bun.file(join(dir.path, 'data', 'state.journal.jsonl')).text()).toBe('')
  expect((await Bun.file(join(dir.path, 'data', 'state.json')).text()).includes('"bin"')).toBe(true)
}, 60_000)
