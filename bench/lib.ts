/**
 * Shared pieces of the benchmarks: starting the real server, load loops and statistics; the
 * synthetic data directories are in bench/data.ts, re-exported here. Benchmarks are run by hand
 * (`npx bun bench/run.ts <scenario>`), never by the test suite.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DATA_FILES } from '../src/services'

export * from './data'

export const ROOT = join(import.meta.dir, '..')
export const SECRET = '*:*.benchmark-admin-secret-0123456789'

export function tempDataDir(prefix = 'bench-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true })
}

export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

export interface RunningServer {
  base: string
  pid: number
  /** The server's JSON log lines so far. */
  log: Record<string, unknown>[]
  /** Milliseconds from spawn until /ready answered 200. */
  readyMs: number
  stop(): Promise<void>
}

export interface SpawnedServer {
  base: string
  pid: number
  /** performance.now() at the spawn. */
  spawnedAt: number
  /** The server's JSON log lines so far (request lines left out), each with `at`: ms since the spawn. */
  log: Record<string, unknown>[]
  exited: Promise<number>
  stop(): Promise<number>
}

/**
 * Spawns the server on `dataDir` (a free port, the admin secret SECRET unless `env` says otherwise;
 * a variable set to undefined in `env` is left out) without waiting for it. `SRC=other/src` in the
 * bench's own environment runs another copy of src/ (with a package.json beside it), for a before/after.
 */
export function spawnServer(
  dataDir: string,
  env: Record<string, string | undefined> = {},
  runtimeArgs: string[] = [],
): SpawnedServer {
  const port = freePort()
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    INIT_ADMIN_API_TOKENS: SECRET,
    ...env,
  }
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key]
  const spawnedAt = performance.now()
  const child = Bun.spawn([process.execPath, ...runtimeArgs, `${process.env.SRC ?? 'src'}/main.ts`], {
    cwd: ROOT,
    env: childEnv,
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const log: Record<string, unknown>[] = []
  void (async () => {
    let carry = ''
    for await (const chunk of child.stdout as ReadableStream<Uint8Array>) {
      const lines = (carry + new TextDecoder().decode(chunk)).split('\n')
      carry = lines.pop()!
      for (const line of lines) {
        // Request lines are many (one per request) and never read: parsing them would take CPU from the server measured.
        if (line.includes('"msg":"request"')) continue
        try {
          log.push({ at: Math.round(performance.now() - spawnedAt), ...JSON.parse(line) })
        } catch {}
      }
    }
  })()
  return {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid,
    spawnedAt,
    log,
    exited: child.exited,
    async stop() {
      child.kill('SIGTERM')
      return child.exited
    },
  }
}

/** Waits until a spawned server's /ready answers 200; the ms since its spawn. */
export async function untilReady(server: SpawnedServer): Promise<number> {
  for (;;) {
    try {
      if ((await fetch(`${server.base}/ready`)).ok) return performance.now() - server.spawnedAt
    } catch {}
    const code = await Promise.race([server.exited, Bun.sleep(5).then(() => null)])
    if (code !== null) throw new Error(`server exited with ${code} before it was ready`)
  }
}

/** Spawns the server (see spawnServer) and waits until /ready answers 200. */
export async function startServer(
  dataDir: string,
  env: Record<string, string | undefined> = {},
  runtimeArgs: string[] = [],
): Promise<RunningServer> {
  const server = spawnServer(dataDir, env, runtimeArgs)
  const readyMs = await untilReady(server)
  return {
    base: server.base,
    pid: server.pid,
    log: server.log,
    readyMs,
    async stop() {
      await server.stop()
    },
  }
}

/** Waits until the server's search index is built: the steady state the figures are about. */
export async function waitForSearchIndex(base: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    const ready = await (await fetch(`${base}/ready`)).json()
    if (ready.searchIndexReady) return performance.now() - started
    await Bun.sleep(100)
  }
}

/** A process's user and system CPU seconds so far and its minor page faults (/proc/<pid>/stat, Linux). */
export function processStat(pid: number): { user: number; system: number; faults: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100, faults: Number(fields[7]) }
}

/** CPU seconds (user and system) a process has used so far (Linux). */
export function cpuSeconds(pid: number): number {
  const { user, system } = processStat(pid)
  return user + system
}

/** RSS, its peak, and of the RSS the anonymous part (heaps, buffers) and the file-backed part (mapped segment pages, which the OS may drop). */
export function processMemory(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 }
  } catch {
    return { rss: NaN, hwm: NaN, anon: NaN, file: NaN }
  }
}

/** Files in the data directory that the service derives from the log (anything not the store's own). */
export function derivedFiles(dir: string): { files: number; bytes: number } {
  let files = 0
  let bytes = 0
  const walk = (path: string, top: boolean) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (top && DATA_FILES.includes(entry.name)) continue
      const full = join(path, entry.name)
      if (entry.isDirectory()) walk(full, false)
      else {
        files++
        try {
          bytes += statSync(full).size
        } catch {}
      }
    }
  }
  walk(dir, true)
  return { files, bytes }
}

/** Deletes what derivedFiles counts. */
export function removeDerived(dir: string) {
  for (const name of readdirSync(dir))
    if (!DATA_FILES.includes(name)) rmSync(join(dir, name), { recursive: true, force: true })
}

/** Resident set size of a process in MiB (Linux). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

export function sha256(text: string) {
  return createHash('sha256').update(text).digest('hex')
}

export const authHeaders = { authorization: SECRET, 'content-type': 'application/json' }

/** Formats a markdown table. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const lines = [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`]
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`)
  return lines.join('\n')
}

export const fmt = (value: number, digits = 1) => value.toFixed(digits)

export interface Load {
  rps: number
  p50: number
  p99: number
  errors: number
  /** The 1-minute load average when wrk started. */
  load: number
  /** Responses received in all (wrk's "N requests in"; not set by every runner). */
  requests?: number
}

export const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])

/** wrk with 2 threads and 32 connections; parses its latency distribution. `extra`: more wrk arguments (`-s post.lua`). */
export async function wrk(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  extra: string[] = [],
): Promise<Load> {
  const load = loadAverage()
  const args = [
    'wrk',
    '-t2',
    '-c32',
    `-d${seconds}s`,
    '--latency',
    ...extra,
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    url,
  ]
  const child = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' })
  const output = await new Response(child.stdout).text()
  await child.exited
  const ms = (text: string | undefined) => {
    const match = /([\d.]+)(us|ms|s)/.exec(text ?? '')
    if (!match) return NaN
    return Number(match[1]) * (match[2] === 'us' ? 0.001 : match[2] === 's' ? 1000 : 1)
  }
  // wrk counts only statuses ≥ 400 here, so the 304s are not errors.
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? '0'
  const socketErrors = [...(/Socket errors: (.*)/.exec(output)?.[1] ?? '').matchAll(/(\d+)/g)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  )
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]),
    p50: ms(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
    p99: ms(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
    errors: Number(errors) + socketErrors,
    load,
    requests: Number(/(\d+) requests in/.exec(output)?.[1]),
  }
}

/**
 * The columns every HTTP table shows for one scenario, medians over `runs`: requests/s, p50, p99
 * and, with a ceiling (a bare Bun server run beside it), its requests/s and the ratio of the two.
 */
export function loadColumns<R>(runs: R[], load: (run: R) => Load, ceiling?: ((run: R) => Load) | null): string[] {
  const m = (pick: (run: R) => number) => median(runs.map(pick))
  return [
    fmt(
      m(r => load(r).rps),
      0,
    ),
    `${fmt(
      m(r => load(r).p50),
      2,
    )} ms`,
    `${fmt(
      m(r => load(r).p99),
      2,
    )} ms`,
    ceiling
      ? fmt(
          m(r => ceiling(r).rps),
          0,
        )
      : '',
    ceiling
      ? fmt(
          m(r => load(r).rps / ceiling(r).rps),
          2,
        )
      : '',
  ]
}

/** Errors summed over the runs, and each run's load average, as table cells. */
export const errorsOf = <R>(runs: R[], load: (run: R) => Load) => String(runs.reduce((n, r) => n + load(r).errors, 0))
export const loadsOf = <R>(runs: R[], load: (run: R) => number) => runs.map(r => fmt(load(r), 2)).join(', ')
