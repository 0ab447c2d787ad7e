/** Servers and processes a test starts: free ports, waiting for a condition, the real service over HTTP. */
import { join } from 'node:path'
import { tempDir } from './files'

/** A free loopback port for a test server. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

/**
 * How long a test waits for something that takes a varying time (a spawned server to be ready, a
 * process to exit, a background write to land): generous, because a loaded machine (CI with a second
 * run beside it) is slow, not wrong. A test waits for the condition itself, never for a fixed time.
 */
export const PATIENCE_MS = 30_000

/**
 * Polls `condition` until it holds; fails naming `what` after `ms`. `giveUp`, checked before each
 * poll, returns a reason to stop at once (a spawned process that exited).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: { ms?: number; every?: number; giveUp?: () => string | null } = {},
): Promise<void> {
  const { ms = PATIENCE_MS, every = 25, giveUp } = options
  const deadline = performance.now() + ms
  for (;;) {
    const reason = giveUp?.()
    if (reason) throw new Error(`gave up waiting for ${what}: ${reason}`)
    if (await condition()) return
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`)
    await Bun.sleep(every)
  }
}

/** Waits until a spawned server answers `path` (by default /ready) with 2xx; fails at once if the process exits. */
export async function untilReady(
  base: string,
  options: { path?: string; process?: { exitCode: number | null }; ms?: number } = {},
): Promise<void> {
  const { path = '/ready', process: child, ms } = options
  await waitFor(
    () =>
      fetch(`${base}${path}`, { signal: AbortSignal.timeout(2000) }).then(
        r => r.ok,
        () => false,
      ),
    `${base}${path} to answer`,
    {
      ms,
      giveUp: () => (child && child.exitCode !== null ? `the server exited with ${child.exitCode}` : null),
    },
  )
}

/** Fails instead of hanging when the service never answers. */
export function withTimeout<T>(promise: Promise<T>, ms = 2000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** The real service, started as `npm start` would, on a free loopback port and a temp directory. */
export interface RunningService {
  base: string
  /** SIGTERM, wait for the exit, remove the data directory. */
  stop(): Promise<void>
}

export async function startService(
  adminSecret: string,
  prefix = 'flags-service-',
  extraEnv: Record<string, string> = {},
): Promise<RunningService> {
  const root = join(import.meta.dir, '../..')
  const dir = tempDir(prefix)
  const port = freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of ['BODY_LIMIT', 'SYNC']) delete env[key]
  const child = Bun.spawn([join(root, 'node_modules', '.bin', 'bun'), 'src/main.ts'], {
    cwd: root,
    env: {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir.path,
      INIT_ADMIN_API_TOKENS: adminSecret,
      ...extraEnv,
    },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await child.exited
    }
    dir.remove()
  }
  const base = `http://127.0.0.1:${port}`
  try {
    await untilReady(base, { path: '/health', process: child })
  } catch (error) {
    await stop()
    throw error
  }
  return { base, stop }
}

/** One admin API call over HTTP: the status and the parsed body (undefined when empty). */
export async function adminCall(
  base: string,
  secret: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string; body: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: secret, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {}
  return { status: response.status, text, body: parsed }
}
