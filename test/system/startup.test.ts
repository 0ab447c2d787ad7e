/**
 * Start-up failures that are not configuration values, with the real process: a busy port, a HOST
 * that is not this machine's or does not resolve, DATA_DIR that is a file or under one, a directory
 * that cannot be written. Each is one line on standard error naming the setting and the problem,
 * exit code 1, and nothing written: no store, no seed, no admin token (a data directory made for the
 * start keeps its lock file at most). And the first admin token is never lost: a first start that
 * cannot listen makes none, and the next start makes and prints it.
 */
import { afterEach, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { makeApi } from '../helpers/api'
import { tempDir, dirSnapshot } from '../helpers/files'
import { freePort, untilReady, waitFor } from '../helpers/processes'
import { markMoved } from '../../src/storage/moved'

const ROOT = join(import.meta.dir, '../..')
const SECRET = /\*:\*\.[0-9a-f]{64}/g
const cleanups: (() => void)[] = []
afterEach(() => cleanups.splice(0).forEach(cleanup => cleanup()))

function newDir(): string {
  const dir = tempDir('startup-')
  cleanups.push(() => {
    chmodSync(dir.path, 0o755)
    for (const name of readdirSync(dir.path)) chmodSync(join(dir.path, name), 0o755)
    dir.remove()
  })
  return dir.path
}

/** Root may write anywhere: the unwritable cases run as `nobody` then (setpriv, util-linux). */
const asUnprivileged = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []

function startEnv(extra: Record<string, string>) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(freePort()),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  }
  delete env.INIT_ADMIN_API_TOKENS
  return { ...env, ...extra }
}

/** Runs `bun src/main.ts` to its end (a start that fails must end on its own). */
async function failedStart(extra: Record<string, string>, prefix: string[] = []) {
  const proc = Bun.spawn([...prefix, process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: startEnv(extra),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000)
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ])
  clearTimeout(timer)
  return { code, stdout, stderr }
}

/** Exactly one line, starting "Cannot start: ", matching `problem`; nothing on stdout; no stack trace. */
function expectOneLine(result: { code: number; stdout: string; stderr: string }, problem: RegExp) {
  expect({ code: result.code, stdout: result.stdout, lines: result.stderr.split('\n').length }).toEqual({
    code: 1,
    stdout: '',
    lines: 2,
  })
  expect(result.stderr).toMatch(/^Cannot start: .*\n$/)
  expect(result.stderr).toMatch(problem)
}

test('a busy PORT: one line naming PORT, exit 1, no store and no admin token made; the next start makes and prints the token', async () => {
  const parent = newDir()
  const dataDir = join(parent, 'data')
  const busy = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('someone else') })
  cleanups.unshift(() => busy.stop(true))
  const result = await failedStart({ DATA_DIR: dataDir, PORT: String(busy.port) })
  expectOneLine(
    result,
    new RegExp(
      `^Cannot start: PORT ${busy.port} is already in use on HOST 127\\.0\\.0\\.1: another process listens there \\(EADDRINUSE\\)\\n$`,
    ),
  )
  // The directory was made for the start and holds its lock's file only: no seed, no token.
  expect(readdirSync(dataDir)).toEqual(['.lock'])
  expect(result.stderr).not.toMatch(SECRET)

  // The next start, on a free port, makes the first admin token and shows its secret, which works.
  const port = freePort()
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: startEnv({ DATA_DIR: dataDir, PORT: String(port) }),
    stdout: 'ignore',
    stderr: 'pipe',
  })
  cleanups.unshift(() => proc.kill('SIGKILL'))
  let stderr = ''
  const reading = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  const base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: proc })
  await waitFor(() => /\n=+\n/.test(stderr), 'the whole admin secret banner on standard error')
  const secrets: string[] = stderr.match(SECRET) ?? []
  expect(secrets).toHaveLength(1)
  expect(stderr).toContain('=== flagstore: admin API token created ===')
  const tokens = await fetch(`${base}/api/admin/api-tokens`, { headers: { authorization: secrets[0] } })
  expect(tokens.status).toBe(200)
  expect((await tokens.json()).tokens).toHaveLength(1)
  const created = await fetch(`${base}/api/admin/search/events?type=IS:api-token-created`, {
    headers: { authorization: secrets[0] },
  })
  expect((await created.json()).total).toBe(1)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  await reading
}, 60_000)

test('a busy PORT on an existing data directory changes none of its files', async () => {
  const dataDir = newDir()
  const api = await makeApi({ dataDir })
  expect((await api.createFlag('default', 'kept')).status).toBe(201)
  await api.close()
  expect(readdirSync(dataDir)).toContain('state.json')
  const busy = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  cleanups.unshift(() => busy.stop(true))
  const before = dirSnapshot(dataDir)
  const result = await failedStart({ DATA_DIR: dataDir, PORT: String(busy.port) })
  expectOneLine(result, /PORT \d+ is already in use/)
  const after = dirSnapshot(dataDir)
  delete after['.lock']
  expect(after).toEqual(before)
}, 30_000)

test('a HOST that is not an address of this machine, or that does not resolve, is named in one line; nothing is written', async () => {
  for (const [host, problem] of [
    ['203.0.113.1', /^Cannot start: HOST 203\.0\.113\.1 is not an address of this machine \(EADDRNOTAVAIL\)/],
    [
      'no-such-host.invalid',
      /^Cannot start: HOST no-such-host\.invalid is not an address, and it cannot be resolved to one: .*\(E[A-Z_]+\)\n$/,
    ],
  ] as const) {
    const dataDir = join(newDir(), 'data')
    const result = await failedStart({ DATA_DIR: dataDir, HOST: host })
    expectOneLine(result, problem)
    expect(existsSync(dataDir) ? readdirSync(dataDir).filter(name => name !== '.lock') : []).toEqual([])
  }
}, 30_000)

test('DATA_DIR that is a file, or under a file, is named in one line and the file is left as it was', async () => {
  const parent = newDir()
  const file = join(parent, 'a-file')
  writeFileSync(file, 'not a directory')
  expectOneLine(
    await failedStart({ DATA_DIR: file }),
    new RegExp(`^Cannot start: DATA_DIR ${file} is a file, not a directory\\n$`),
  )
  const under = join(file, 'data', 'deeper')
  expectOneLine(
    await failedStart({ DATA_DIR: under }),
    new RegExp(`^Cannot start: DATA_DIR ${under} cannot be created: ${file} is a file, not a directory\\n$`),
  )
  expect(readFileSync(file, 'utf8')).toBe('not a directory')
  expect(readdirSync(parent)).toEqual(['a-file'])
}, 30_000)

test('a DATA_DIR that cannot be written or made is named in one line, and an existing store in it is left as it was', async () => {
  const parent = newDir()
  chmodSync(parent, 0o755)
  const readOnly = join(parent, 'read-only')
  mkdirSync(readOnly)
  chmodSync(readOnly, 0o555)
  expectOneLine(
    await failedStart({ DATA_DIR: readOnly }, asUnprivileged),
    new RegExp(`^Cannot start: DATA_DIR ${readOnly} cannot be written: permission denied \\(EACCES\\)\\n$`),
  )
  expect(readdirSync(readOnly)).toEqual([])
  const below = join(readOnly, 'data')
  expectOneLine(
    await failedStart({ DATA_DIR: below }, asUnprivileged),
    new RegExp(`^Cannot start: DATA_DIR ${below} cannot be created: permission denied \\(EACCES\\)\\n$`),
  )

  // A store made by a first run, then its directory made read-only: the lock's file can still be
  // opened, so it is the store's own check that refuses, after the server listened.
  const store = join(parent, 'store')
  mkdirSync(store)
  const secret = '*:*.startup-test-secret-0123456789'
  const port = freePort()
  chmodSync(store, 0o777)
  const first = Bun.spawn([...asUnprivileged, process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: startEnv({ DATA_DIR: store, PORT: String(port), INIT_ADMIN_API_TOKENS: secret }),
    stdout: 'ignore',
    stderr: 'pipe',
  })
  cleanups.unshift(() => first.kill('SIGKILL'))
  await untilReady(`http://127.0.0.1:${port}`, { process: first })
  first.kill('SIGTERM')
  expect(await first.exited).toBe(0)
  // A directory made for the service by someone else, open to all: the service cannot narrow it
  // (it is not the owner), says so, and starts all the same. Run as its owner, it narrows it.
  const warnings = (await new Response(first.stderr).text())
    .split('\n')
    .filter(line => line.includes('"warn"'))
    .map(line => JSON.parse(line))
  expect(warnings).toEqual([
    asUnprivileged.length > 0
      ? expect.objectContaining({
          msg: expect.stringContaining('cannot change that'),
          paths: [`${store}: 777 (operation not permitted (EPERM))`],
        })
      : expect.objectContaining({
          msg: expect.stringContaining('permissions narrowed'),
          changes: [`${store}: 777 -> 700`],
        }),
  ])
  chmodSync(store, 0o555)
  const before = dirSnapshot(store)
  expect(Object.keys(before).sort()).toEqual([
    '.lock',
    'events.jsonl',
    'secret.key',
    'state.journal.jsonl',
    'state.json',
  ])
  expectOneLine(
    await failedStart({ DATA_DIR: store }, asUnprivileged),
    new RegExp(`^Cannot start: DATA_DIR ${store} cannot be written: permission denied \\(EACCES\\)\\n$`),
  )
  // The lock's file says who holds it: the one file a refused start may write.
  const after = dirSnapshot(store)
  after['.lock'] = before['.lock']
  expect(after).toEqual(before)
}, 60_000)

test('a data directory marked as moved to PostgreSQL stops a start without DATABASE_URL, naming it and the way back; nothing is written', async () => {
  // The mark a restore into PostgreSQL leaves (the whole move: test/system/postgres-backup.test.ts).
  const dataDir = newDir()
  const api = await makeApi({ dataDir })
  expect((await api.createFlag('default', 'left-behind')).status).toBe(201)
  await api.close()
  markMoved(dataDir, {
    movedTo: 'PostgreSQL db.internal:5432/flagstore (schema public)',
    movedAt: '2026-11-28T06:00:00.000Z',
    backup: '/backups/moving-in.jsonl',
  })
  const before = dirSnapshot(dataDir)
  const marker = join(dataDir, 'moved.json')
  expectOneLine(
    await failedStart({ DATA_DIR: dataDir }),
    new RegExp(
      `^Cannot start: DATA_DIR ${dataDir} was moved to PostgreSQL db\\.internal:5432/flagstore \\(schema public\\) on 2026-11-28T06:00:00\\.000Z, and its files miss every write made there since\\. ` +
        `Set DATABASE_URL \\(or DATABASE_HOST…\\) to use the database; to use these files again on purpose, remove ${marker}\\n$`,
    ),
  )
  expect(dirSnapshot(dataDir)).toEqual(before)

  // Removed on purpose, the files are served again.
  rmSync(marker)
  const port = freePort()
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: startEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      INIT_ADMIN_API_TOKENS: '*:*.startup-test-secret-0123456789',
    }),
    stdout: 'ignore',
    stderr: 'ignore',
  })
  cleanups.unshift(() => proc.kill('SIGKILL'))
  await untilReady(`http://127.0.0.1:${port}`, { process: proc })
  const flag = await fetch(`http://127.0.0.1:${port}/api/admin/projects/default/features/left-behind`, {
    headers: { authorization: '*:*.startup-test-secret-0123456789' },
  })
  expect(flag.status).toBe(200)
}, 30_000)
