/**
 * The real process: `bun src/main.ts` on a temp data directory and a free port. Start-up output,
 * health, clean shutdown on SIGTERM, restarts on the same directory, INIT_ADMIN_API_TOKENS, and a
 * refused start on a corrupt data file.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { cleanupAfterEach, dirSnapshot } from '../helpers/files'
import { freePort, PATIENCE_MS } from '../helpers/processes'

const ROOT = join(import.meta.dir, '../..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
const SECRET = /\*:\*\.[0-9a-f]{64}/g
const INIT_SECRET = '*:*.some-init-secret-1234567890'

interface Server {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  port: number
  base: string
  stdout(): string
  stderr(): string
  /** Resolves once the process exited and both pipes are read to the end. */
  finished(): Promise<number>
}

/** Each test's servers are killed when it ends, before its directories (registered earlier) are removed. */
const { later, newDir } = cleanupAfterEach()

/** Reads a pipe as it fills; `closed` settles when the process has closed it. */
function collect(stream: ReadableStream<Uint8Array>): { text: () => string; closed: Promise<void> } {
  let text = ''
  const decoder = new TextDecoder()
  const closed = (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true })
  })().catch(() => {})
  return { text: () => text, closed }
}

function start(dataDir: string, extraEnv: Record<string, string> = {}): Server {
  const port = freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of ['INIT_ADMIN_API_TOKENS', 'BODY_LIMIT', 'SYNC']) delete env[key]
  const proc = Bun.spawn([BUN, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, ...extraEnv },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const out = collect(proc.stdout)
  const err = collect(proc.stderr)
  const server: Server = {
    proc,
    port,
    base: `http://127.0.0.1:${port}`,
    stdout: out.text,
    stderr: err.text,
    finished: async () => {
      const code = await proc.exited
      await Promise.all([out.closed, err.closed])
      return code
    },
  }
  later(async () => {
    if (server.proc.exitCode === null && server.proc.signalCode === null) {
      server.proc.kill('SIGKILL')
      await server.proc.exited
    }
  })
  return server
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Waits until /health answers 200; fails early if the process exits. */
async function ready(server: Server, ms = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (server.proc.exitCode !== null) {
      throw new Error(`server exited with ${server.proc.exitCode}: ${server.stderr()} ${server.stdout()}`)
    }
    try {
      const response = await fetch(`${server.base}/health`, { signal: AbortSignal.timeout(500) })
      if (response.status === 200) {
        // The listening line follows the secret, but on another pipe: wait for both to be complete.
        const lineDeadline = Date.now() + PATIENCE_MS
        const complete = () =>
          server.stdout().includes('"listening"') &&
          (!server.stderr().includes('token created ===') || /\n=+\n/.test(server.stderr()))
        while (!complete() && Date.now() < lineDeadline) await Bun.sleep(10)
        return
      }
    } catch {}
    await Bun.sleep(25)
  }
  throw new Error(`server did not become healthy: ${server.stderr()} ${server.stdout()}`)
}

async function stop(server: Server): Promise<number> {
  server.proc.kill('SIGTERM')
  return within(server.finished(), PATIENCE_MS, 'exit after SIGTERM')
}

function call(server: Server, method: string, path: string, token: string | null, body?: unknown) {
  const headers: Record<string, string> = {}
  if (token !== null) headers.authorization = token
  if (body !== undefined) headers['content-type'] = 'application/json'
  return fetch(`${server.base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(PATIENCE_MS),
  })
}

function secretsIn(text: string): string[] {
  return text.match(SECRET) ?? []
}

describe('the server process', () => {
  test('a first start on an empty directory prints one admin secret, answers /health, and SIGTERM ends it with code 0', async () => {
    const dir = newDir()
    const server = start(dir)
    await ready(server)

    const secrets = secretsIn(server.stderr())
    expect(secrets).toHaveLength(1)
    const secret = secrets[0]

    const health = await call(server, 'GET', '/health', null)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ health: 'GOOD' })
    expect((await call(server, 'GET', '/api/admin/projects', secret)).status).toBe(200)
    expect((await call(server, 'GET', '/api/admin/projects', null)).status).toBe(401)

    expect(await stop(server)).toBe(0)
    // The secret is shown once, on standard error only (not among the JSON log lines), clearly
    // marked, and nowhere on disk.
    expect(secretsIn(server.stderr())).toEqual([secret])
    expect(server.stderr()).toContain('=== flagstore: admin API token created ===')
    expect(server.stdout()).not.toContain(secret)
    expect(readFileSync(join(dir, 'state.json'), 'utf8')).not.toContain(secret)
    expect(readFileSync(join(dir, 'events.jsonl'), 'utf8')).not.toContain(secret)
  })

  test('a restart on the same directory prints no new secret, keeps the old secret valid and keeps the data', async () => {
    const dir = newDir()
    const first = start(dir)
    await ready(first)
    const [secret] = secretsIn(first.stderr())
    expect(secret).toBeDefined()
    const created = await call(first, 'POST', '/api/admin/projects/default/features', secret, {
      name: 'survives-restart',
      description: 'made in run one',
    })
    expect(created.status).toBe(201)
    expect(
      (
        await call(
          first,
          'POST',
          '/api/admin/projects/default/features/survives-restart/environments/development/on',
          secret,
        )
      ).status,
    ).toBe(200)
    const eventsBefore = await (await call(first, 'GET', '/api/admin/search/events?limit=1000', secret)).json()
    expect(await stop(first)).toBe(0)

    const second = start(dir)
    await ready(second)
    expect(secretsIn(second.stderr())).toEqual([])
    const flag = await call(second, 'GET', '/api/admin/projects/default/features/survives-restart', secret)
    expect(flag.status).toBe(200)
    const body = await flag.json()
    expect(body.description).toBe('made in run one')
    expect(body.environments.find((environment: any) => environment.name === 'development').enabled).toBe(true)
    const eventsAfter = await (await call(second, 'GET', '/api/admin/search/events?limit=1000', secret)).json()
    expect(eventsAfter).toEqual(eventsBefore)
    expect(eventsAfter.events.filter((event: any) => event.type === 'project-created')).toHaveLength(1)
    expect(eventsAfter.events.filter((event: any) => event.type === 'api-token-created')).toHaveLength(1)
    expect(await stop(second)).toBe(0)
  })

  test('INIT_ADMIN_API_TOKENS makes that admin token work, with no generated secret and no duplicate on restart', async () => {
    const dir = newDir()
    const first = start(dir, { INIT_ADMIN_API_TOKENS: INIT_SECRET })
    await ready(first)
    expect(secretsIn(first.stderr())).toEqual([])
    expect(first.stdout()).not.toContain(INIT_SECRET)
    expect((await call(first, 'GET', '/api/admin/projects', INIT_SECRET)).status).toBe(200)
    expect((await call(first, 'GET', '/api/admin/projects', `Bearer ${INIT_SECRET}`)).status).toBe(200)
    expect((await call(first, 'GET', '/api/admin/projects', '*:*.some-other-secret-123456789')).status).toBe(401)
    const created = await call(first, 'POST', '/api/admin/projects', INIT_SECRET, {
      id: 'from-init-token',
      name: 'From init token',
    })
    expect(created.status).toBe(201)
    expect(await stop(first)).toBe(0)

    const second = start(dir, { INIT_ADMIN_API_TOKENS: INIT_SECRET })
    await ready(second)
    expect(secretsIn(second.stderr())).toEqual([])
    const tokens = await call(second, 'GET', '/api/admin/api-tokens', INIT_SECRET)
    expect(tokens.status).toBe(200)
    expect((await tokens.json()).tokens).toHaveLength(1)
    const project = await call(second, 'GET', '/api/admin/projects/from-init-token', INIT_SECRET)
    expect(project.status).toBe(200)
    const events = await (
      await call(second, 'GET', '/api/admin/search/events?type=IS:api-token-created', INIT_SECRET)
    ).json()
    expect(events.total).toBe(1)
    expect(await stop(second)).toBe(0)
  })

  test('a corrupt state.json makes the process exit non-zero with a message naming the file, and leaves the file as it was', async () => {
    const dir = newDir()
    const first = start(dir)
    await ready(first)
    expect(await stop(first)).toBe(0)
    const statePath = join(dir, 'state.json')
    const corrupt = '{"formatVersion":1,'
    writeFileSync(statePath, corrupt)
    const eventsBefore = readFileSync(join(dir, 'events.jsonl'))

    const second = start(dir)
    const code = await within(second.finished(), PATIENCE_MS, 'exit on a corrupt state.json')
    expect(code).not.toBe(0)
    expect(second.stderr()).toContain(statePath)
    expect(second.stderr()).toMatch(/JSON/)
    expect(secretsIn(second.stderr())).toEqual([])
    expect(readFileSync(statePath, 'utf8')).toBe(corrupt)
    expect(readFileSync(join(dir, 'events.jsonl')).equals(eventsBefore)).toBe(true)
  })

  test('a corrupt line in the middle of events.jsonl makes the process exit non-zero with a message naming the file', async () => {
    const dir = newDir()
    const first = start(dir)
    await ready(first)
    expect(await stop(first)).toBe(0)
    const eventsPath = join(dir, 'events.jsonl')
    const lines = readFileSync(eventsPath, 'utf8').split('\n')
    expect(lines.length).toBeGreaterThan(3)
    lines[1] = 'not json at all'
    writeFileSync(eventsPath, lines.join('\n'))
    const before = readFileSync(eventsPath)

    const second = start(dir)
    const code = await within(second.finished(), PATIENCE_MS, 'exit on a corrupt events.jsonl')
    expect(code).not.toBe(0)
    expect(second.stderr()).toContain(eventsPath)
    expect(second.stderr()).toMatch(/line 2\b/)
    expect(readFileSync(eventsPath).equals(before)).toBe(true)
  })
})

function cli(dataDir: string, ...args: string[]) {
  const result = Bun.spawnSync([BUN, 'src/main.ts', ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir } })
  return { exitCode: result.exitCode, output: result.stdout.toString() + result.stderr.toString() }
}

describe('one process per data directory', () => {
  /** The one line a second process prints about the first. */
  function refusal(dir: string, holder: Server): RegExp {
    const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    return new RegExp(
      `^Cannot start: ${escapeRegExp(dir)} is in use by another process: pid ${holder.proc.pid} on [^,]+, started \\d{4}-[^,]+Z, command: [^\\n]*src/main\\.ts; only one process may use a data directory at a time\\n$`,
    )
  }

  test('a second server on the same directory exits non-zero at once, naming the directory and the first, and writes nothing', async () => {
    const dir = newDir()
    const first = start(dir)
    await ready(first)
    const [secret] = secretsIn(first.stderr())
    expect(
      (await call(first, 'POST', '/api/admin/projects/default/features', secret, { name: 'before-second' })).status,
    ).toBe(201)
    const before = dirSnapshot(dir)

    const second = start(dir)
    expect(await within(second.finished(), PATIENCE_MS, 'the second server to exit')).toBe(1)
    expect(second.stderr()).toMatch(refusal(dir, first))
    expect(second.stdout()).toBe('')
    expect(dirSnapshot(dir)).toEqual(before)

    // The first goes on as if nothing happened.
    expect(
      (await call(first, 'POST', '/api/admin/projects/default/features', secret, { name: 'after-second' })).status,
    ).toBe(201)
    expect((await call(first, 'GET', '/api/admin/projects/default/features/before-second', secret)).status).toBe(200)
    expect(await stop(first)).toBe(0)
  })

  test('a second start on the busy port of the first fails on the lock, before touching the directory', async () => {
    const dir = newDir()
    const first = start(dir)
    await ready(first)
    const before = dirSnapshot(dir)
    const second = start(dir, { PORT: String(first.port) })
    expect(await within(second.finished(), PATIENCE_MS, 'the second server to exit')).toBe(1)
    expect(second.stderr()).toMatch(refusal(dir, first))
    expect(second.stdout()).toBe('')
    expect(dirSnapshot(dir)).toEqual(before)
    expect((await call(first, 'GET', '/health', null)).status).toBe(200)
  })

  test('after the holder is killed with SIGKILL, a new start takes the directory with everything acknowledged', async () => {
    const dir = newDir()
    const first = start(dir)
    await ready(first)
    const [secret] = secretsIn(first.stderr())
    expect(
      (await call(first, 'POST', '/api/admin/projects/default/features', secret, { name: 'before-kill' })).status,
    ).toBe(201)
    first.proc.kill('SIGKILL')
    await first.finished()

    const second = start(dir)
    await ready(second)
    expect((await call(second, 'GET', '/api/admin/projects/default/features/before-kill', secret)).status).toBe(200)
    expect(JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')).pid).toBe(second.proc.pid)
    expect(await stop(second)).toBe(0)
  })

  test('a backup reads a directory a server holds; a restore into it is refused, naming the server', async () => {
    const dir = newDir()
    const server = start(dir)
    await ready(server)
    const [secret] = secretsIn(server.stderr())
    expect(
      (await call(server, 'POST', '/api/admin/projects/default/features', secret, { name: 'backed-up' })).status,
    ).toBe(201)
    const file = join(newDir(), 'backup.jsonl')
    expect(cli(dir, 'backup', file)).toEqual({ exitCode: 0, output: expect.stringContaining('Backed up') })
    expect(readFileSync(file, 'utf8')).toContain('"backed-up"')

    const before = dirSnapshot(dir)
    const restore = cli(dir, 'restore', file, dir)
    expect(restore.exitCode).toBe(1)
    expect(restore.output).toMatch(
      new RegExp(
        `^Cannot restore: ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another process: pid ${server.proc.pid} .*src/main\\.ts; only one process`,
      ),
    )
    expect(restore.output.trim().split('\n')).toHaveLength(1)
    expect(dirSnapshot(dir)).toEqual(before)
    expect((await call(server, 'GET', '/api/admin/projects/default/features/backed-up', secret)).status).toBe(200)
  })
})
