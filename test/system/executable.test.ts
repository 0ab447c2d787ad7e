/**
 * `npm run build` makes one self-contained executable: built here into a temp directory and started
 * from there, with no node_modules anywhere near, it answers /health, finishes loading (its search
 * worker is inside it), serves the embedded Swagger UI, takes a write and checks names against a
 * naming pattern (the RE2 engine is inside it too); npm start on its data directory beside it is
 * refused (the lock works in the executable too); its command line (--version, --help, an unknown
 * command, healthcheck, backup) starts no server; it stops gracefully on SIGTERM.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/files'
import { freePort, untilReady, PATIENCE_MS } from '../helpers/processes'
import { ADMIN_SECRET as SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
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
  // Its command line: none of these starts a server or makes ./data (issue 14 item 7).
  const cwd = join(dir.path, 'elsewhere')
  mkdirSync(cwd)
  const cli = (...args: string[]) => {
    const result = Bun.spawnSync([outfile, ...args], {
      cwd,
      env: { PATH: '/usr/bin:/bin', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dir.path, 'data') },
      timeout: PATIENCE_MS,
    })
    return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
  }
  const version = (await Bun.file(join(ROOT, 'package.json')).json()).version
  expect(cli('--version')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
  expect(cli('--help')).toEqual({ code: 0, stdout: expect.stringContaining('backup [FILE]'), stderr: '' })
  expect(cli('backup-everything')).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('Usage: flagstore') })
  expect(cli('healthcheck')).toEqual({ code: 1, stdout: '', stderr: expect.stringContaining('did not answer') })
  expect(readdirSync(cwd)).toEqual([])

  server = Bun.spawn([outfile], {
    cwd: dir.path,
    env: {
      PATH: '/usr/bin:/bin',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir.path, 'data'),
      INIT_ADMIN_API_TOKENS: SECRET,
      LOG_LEVEL: 'warn',
    },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: server })
  expect(await (await fetch(`${base}/health`)).json()).toEqual({ health: 'GOOD' })
  expect((await fetch(`${base}/swagger/assets/swagger-ui-bundle.js`)).status).toBe(200)
  // The console, built into the executable: its page and its hashed assets, far from the sources.
  const consolePage = await (await fetch(`${base}/`)).text()
  const consoleAssets = [...consolePage.matchAll(/(?:href|src)="(\/console\/assets\/main-[^"]+)"/g)].map(
    match => match[1]!,
  )
  expect(consoleAssets.length).toBe(2)
  for (const asset of consoleAssets) {
    const served = await fetch(`${base}${asset}`)
    expect({ asset, status: served.status, length: (await served.text()).length > 1000 }).toEqual({
      asset,
      status: 200,
      length: true,
    })
  }
  const headers = { authorization: SECRET, 'content-type': 'application/json' }
  const created = await fetch(`${base}/api/admin/projects`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ id: 'bin', name: 'bin', featureNaming: { pattern: '[a-z]+' } }),
  })
  expect(created.status).toBe(201)
  const validate = (name: string) =>
    fetch(`${base}/api/admin/features/validate`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name, projectId: 'bin' }),
    })
  expect((await validate('abc')).status).toBe(200)
  const refused = await validate('abc-1')
  expect({ status: refused.status, message: (await refused.json()).message }).toEqual({
    status: 400,
    message: expect.stringContaining('does not match the naming pattern'),
  })
  const search = await (await fetch(`${base}/api/admin/search/events?type=IS:project-created`, { headers })).json()
  expect(search.total).toBeGreaterThanOrEqual(2)
  // The Dockerfile's HEALTHCHECK and an online backup, with the executable alone.
  expect(cli('healthcheck')).toEqual({ code: 0, stdout: `${base}/ready: ready\n`, stderr: '' })
  expect(cli('backup', 'backup.jsonl')).toEqual({ code: 0, stdout: expect.stringContaining('Backed up'), stderr: '' })
  expect(await Bun.file(join(cwd, 'backup.jsonl')).text()).toContain('"bin"')
  expect(readdirSync(cwd)).toEqual(['backup.jsonl'])

  // npm start beside it, on the same directory, is refused at once, naming the executable.
  const dataDir = join(dir.path, 'data')
  const files = () =>
    Object.fromEntries(readdirSync(dataDir).map(name => [name, readFileSync(join(dataDir, name), 'utf8')]))
  const before = files()
  const second = Bun.spawnSync(['npm', 'start'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(freePort()), HOST: '127.0.0.1', DATA_DIR: dataDir },
    timeout: PATIENCE_MS,
  })
  expect(second.exitCode).toBe(1)
  expect(second.stderr.toString()).toContain(
    `Cannot start: ${dataDir} is in use by another process: pid ${server.pid} `,
  )
  expect(second.stderr.toString()).toContain(
    `command: ${outfile}; only one process may use a data directory at a time\n`,
  )
  expect(files()).toEqual(before)
  expect((await fetch(`${base}/health`)).status).toBe(200)
  // The process metrics (read from /proc) work inside the executable too.
  const metrics = await (await fetch(`${base}/internal-backstage/prometheus`)).text()
  expect(metrics).toMatch(/^process_resident_memory_bytes \d+$/m)
  expect(metrics).toMatch(/^http_requests_total\{method="POST",route="\/api\/admin\/projects",status="201"\} 1$/m)

  // SIGTERM, as a supervisor sends it, stops it gracefully: exit 0, no longer listening, and the
  // clean stop's checkpoint holds the write (the journal is empty).
  server.kill('SIGTERM')
  expect(await server.exited).toBe(0)
  expect(
    await fetch(`${base}/health`).then(
      () => 'answered',
      () => 'refused',
    ),
  ).toBe('refused')
  expect(await Bun.file(join(dir.path, 'data', 'state.journal.jsonl')).text()).toBe('')
  expect((await Bun.file(join(dir.path, 'data', 'state.json')).text()).includes('"bin"')).toBe(true)
}, 60_000)
