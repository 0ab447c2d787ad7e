/**
 * What every scenario shares: the real server started and stopped, a bare Bun server (the ceiling
 * it is compared with), the admin API, load tools (wrk, autocannon), probes of a process,
 * statistics and tables; bench/data.ts and the runner's `options` re-exported.
 */
import autocannon from 'autocannon'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedDataDir } from './data'

export * from './data'
export { options } from './run'
export const ROOT = join(import.meta.dir, '..')
export const SECRET = '*:*.benchmark-admin-secret-0123456789'
export const authHeaders = { authorization: SECRET, 'content-type': 'application/json' }

export const tempDataDir = (prefix = 'bench-'): string => mkdtempSync(join(tmpdir(), prefix))
export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true })

/** A temporary data directory seeded by seedDataDir for the time of `use`, removed after. */
export async function withDataDir<T>(seed: Parameters<typeof seedDataDir>[1], use: (dir: string) => Promise<T>) {
  const dir = tempDataDir()
  seedDataDir(dir, seed)
  try {
    return await use(dir)
  } finally {
    removeDir(dir)
  }
}

export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
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

export interface RunningServer extends SpawnedServer {
  /** Milliseconds from spawn until /ready answered 200. */
  readyMs: number
}

type Env = Record<string, string | undefined>

/**
 * Spawns the server on `dataDir` (a free port, the admin secret SECRET unless `env` says otherwise;
 * a variable set to undefined in `env` is left out) without waiting for it. Another checkout's
 * server, for a before/after: `root` (a directory holding src/ and node_modules), or `SRC=other/src`
 * in the bench's own environment. Warnings and errors (standard error) are shown and logged too.
 */
export function spawnServer(dataDir: string, env: Env = {}, spawn: { args?: string[]; root?: string } = {}) {
  const port = freePort()
  const childEnv: Env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir }
  Object.assign(childEnv, { INIT_ADMIN_API_TOKENS: SECRET }, env)
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key]
  const spawnedAt = performance.now()
  const main = spawn.root ? 'src/main.ts' : `${process.env.SRC ?? 'src'}/main.ts`
  const child = Bun.spawn([process.execPath, ...(spawn.args ?? []), main], {
    cwd: spawn.root ?? ROOT,
    env: childEnv,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const log: Record<string, unknown>[] = []
  const read = async (stream: ReadableStream<Uint8Array>, echo: boolean) => {
    let carry = ''
    for await (const chunk of stream) {
      const lines = (carry + new TextDecoder().decode(chunk)).split('\n')
      carry = lines.pop()!
      for (const line of lines) {
        if (echo) console.error(line)
        // Request lines are many (one per request) and never read: parsing them would take CPU from the server measured.
        if (line.includes('"msg":"request"')) continue
        try {
          log.push({ at: Math.round(performance.now() - spawnedAt), ...JSON.parse(line) })
        } catch {}
      }
    }
  }
  void read(child.stdout, false)
  void read(child.stderr, true)
  const stop = () => (child.kill('SIGTERM'), child.exited)
  const base = `http://127.0.0.1:${port}`
  return { base, pid: child.pid, spawnedAt, log, exited: child.exited, stop } as SpawnedServer
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
export async function startServer(dataDir: string, env: Env = {}, args: string[] = []): Promise<RunningServer> {
  const server = spawnServer(dataDir, env, { args })
  return Object.assign(server, { readyMs: await untilReady(server) })
}

/** A server started on `dataDir` for the time of `use`, stopped after. */
export async function withServer<T>(dataDir: string, env: Env, use: (server: RunningServer) => Promise<T>) {
  const server = await startServer(dataDir, env)
  try {
    return await use(server)
  } finally {
    await server.stop()
  }
}

/**
 * The bare Bun server answering every request with `bytes`, a script of its own in a temporary
 * directory (nothing else loaded: the ceiling for a response); `path` is added to its URL. With
 * `workUs` it first spins that many µs of its CPU per request, as a server with work to do.
 */
export async function bareServer(bytes: Uint8Array | string, path = '', workUs = 0) {
  const dir = mkdtempSync(join(tmpdir(), 'bare-'))
  writeFileSync(join(dir, 'body'), bytes)
  const port = freePort()
  const work = workUs > 0 ? `for (const end = performance.now() + ${workUs / 1000}; performance.now() < end; );` : ''
  writeFileSync(
    join(dir, 'serve.ts'),
    `const body = await Bun.file(${JSON.stringify(join(dir, 'body'))}).bytes()
const headers = { 'content-type': 'application/json' }
Bun.serve({ port: ${port}, hostname: '127.0.0.1', fetch: () => { ${work} return new Response(body, { headers }) } })
console.log('ready')
`,
  )
  const child = Bun.spawn([process.execPath, join(dir, 'serve.ts')], { stdout: 'pipe' })
  await child.stdout.getReader().read()
  return {
    url: `http://127.0.0.1:${port}${path}`,
    pid: child.pid,
    async stop() {
      child.kill()
      await child.exited
      rmSync(dir, { recursive: true, force: true })
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

/** An admin API call with `secret`; the parsed answer, or an error for a status ≥ 300. */
export async function api(base: string, method: string, path: string, body?: unknown, secret = SECRET) {
  const headers = { authorization: secret, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
  const response = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${path} → ${response.status} ${text.slice(0, 300)}`)
  return text ? JSON.parse(text) : undefined
}

/** A new API token of `type` for `environment` and `projects`; its secret. */
export async function createToken(base: string, type: string, environment: string, projects = ['*'], secret = SECRET) {
  const tokenName = `bench-${type}-${crypto.randomUUID()}`
  const created = await api(base, 'POST', '/api/admin/api-tokens', { tokenName, type, projects, environment }, secret)
  return created.secret as string
}

/** CPU seconds a process, or one of its threads, has used so far: in user space, in the kernel, in all (/proc/<pid>/stat, Linux). */
export function cpuTimes(pid: number, thread?: number): { user: number; system: number; total: number } {
  const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`
  const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ')
  const [user, system] = [Number(fields[11]) / 100, Number(fields[12]) / 100]
  return { user, system, total: user + system }
}
export const cpuSeconds = (pid: number, thread?: number) => cpuTimes(pid, thread).total

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

/** Resident set size of a process in MiB (Linux). */
export const rssMiB = (pid: number) => processMemory(pid).rss

/** A process's memory every `everyMs` until stopped: each sample's time since `since` and RSS, and the peaks. */
export function sampleMemory(pid: number, everyMs: number, since = performance.now()) {
  const sampled = { samples: [] as [number, number][], rss: 0, anon: 0, file: 0 }
  const timer = setInterval(() => {
    const memory = processMemory(pid)
    sampled.samples.push([performance.now() - since, memory.rss])
    sampled.rss = Math.max(sampled.rss, memory.rss || 0)
    sampled.anon = Math.max(sampled.anon, memory.anon || 0)
    sampled.file = Math.max(sampled.file, memory.file || 0)
  }, everyMs)
  return Object.assign(sampled, { stop: () => clearInterval(timer) })
}

/** GET /health one request after another until stopped: each one's start (performance.now()) and duration. */
export function probeHealth(base: string) {
  const times: [number, number][] = []
  let probing = true
  const done = (async () => {
    while (probing) {
      const started = performance.now()
      try {
        await (await fetch(`${base}/health`)).arrayBuffer()
        times.push([started, performance.now() - started])
      } catch {
        await Bun.sleep(5)
      }
    }
  })()
  return { times, stop: async () => ((probing = false), await done, times) }
}

/** The commit checked out in `root` (with `+dirty` when src/ has changes), for the setup line. */
export function gitCommit(root = ROOT): string {
  const git = (...args: string[]) =>
    Bun.spawnSync(['git', ...args], { cwd: root })
      .stdout.toString()
      .trim()
  return git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', 'src') ? '+dirty' : '')
}

export const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** p50, p99 and the largest of unsorted values, and how many. */
export function spread(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN, samples: sorted.length }
}

/** The median over runs of one figure, and the same formatted with `digits` decimals. */
export const medianOf = <R>(runs: R[], pick: (run: R) => number) => median(runs.map(pick))
export const fmtMedian = <R>(runs: R[], digits: number, pick: (run: R) => number) => fmt(medianOf(runs, pick), digits)

/** `count` runs of `run`, each one's figures printed as a JSON line as it ends. */
export async function repeat<R>(count: number, run: (index: number) => Promise<R>): Promise<R[]> {
  const runs: R[] = []
  for (let i = 0; i < count; i++) {
    runs.push(await run(i))
    out(`run ${i + 1}:`, runs.at(-1))
  }
  return runs
}

/** `a` then `b` when `aFirst`, else `b` then `a` (so that neither always comes second); both results. */
export async function inTurn<A, B>(aFirst: boolean, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  if (aFirst) return [await a(), await b()]
  const second = await b()
  return [await a(), second]
}

/** Formats a markdown table. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const lines = [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`]
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`)
  return lines.join('\n')
}

export const fmt = (value: number, digits = 1) => value.toFixed(digits)
export const ms = (value: number | undefined, digits = 2) =>
  value === undefined || Number.isNaN(value) ? '–' : `${fmt(value, digits)} ms`
export const mib = (value: number) => `${fmt(value, 0)} MiB`

/** Prints a labelled JSON line, numbers rounded to two decimals. */
export function out(label: string, value: unknown) {
  console.log(`${label} ${JSON.stringify(value, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`)
}

/** Writes a wrk Lua script into `dir`; its path. */
export function luaScript(dir: string, name: string, text: string): string {
  const path = join(dir, `${name}.lua`)
  writeFileSync(path, text)
  return path
}

export interface Load {
  rps: number
  p50: number
  p99: number
  errors: number
  /** The 1-minute load average when the load started. */
  load: number
  /** Responses received in all (wrk's "N requests in", autocannon's 2xx). */
  requests?: number
}

export const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])

/** wrk with 2 threads and 32 connections; parses its latency distribution. `extra`: more wrk arguments (`-s post.lua`). */
export async function wrk(url: string, headers: Record<string, string>, seconds: number, extra: string[] = []) {
  const load = loadAverage()
  const header = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
  const child = Bun.spawn(['wrk', '-t2', '-c32', `-d${seconds}s`, '--latency', ...extra, ...header, url], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const output = await new Response(child.stdout).text()
  await child.exited
  const ms = (text: string | undefined) => {
    const match = /([\d.]+)(us|ms|s)/.exec(text ?? '')
    if (!match) return NaN
    return Number(match[1]) * (match[2] === 'us' ? 0.001 : match[2] === 's' ? 1000 : 1)
  }
  // wrk counts only statuses ≥ 400 here, so the 304s are not errors.
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? '0')
  const socketErrors = [...(/Socket errors: (.*)/.exec(output)?.[1] ?? '').matchAll(/(\d+)/g)]
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]),
    p50: ms(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
    p99: ms(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
    errors: socketErrors.reduce((n, m) => n + Number(m[1]), errors),
    load,
    requests: Number(/(\d+) requests in/.exec(output)?.[1]),
  } satisfies Load
}

/** wrk, and the CPU `pid` used meanwhile per response (every thread; `systemUs` in the kernel): unlike requests/s, not shared with wrk. */
export async function wrkCpu(
  pid: number,
  url: string,
  headers: Record<string, string>,
  seconds: number,
  extra: string[] = [],
) {
  const before = cpuTimes(pid)
  const load = await wrk(url, headers, seconds, extra)
  const after = cpuTimes(pid)
  const perResponse = (seconds: number) => (seconds * 1e6) / load.requests!
  return { load, cpuUs: perResponse(after.total - before.total), systemUs: perResponse(after.system - before.system) }
}

/** autocannon (32 connections unless told) with its figures as a Load; `timeouts` apart. */
export async function cannon(options: autocannon.Options): Promise<Load & { timeouts: number; seconds: number }> {
  const load = loadAverage()
  const result = await autocannon({ connections: 32, ...options })
  const { requests, latency, timeouts, duration: seconds } = result
  const errors = result.errors + result.non2xx
  const { p50, p99 } = latency
  return { rps: requests.average, p50, p99, errors, load, requests: result['2xx'], timeouts, seconds }
}

/** A run's load, or its load and that of the bare Bun server run beside it (the ceiling). */
type Measured<R> = (run: R) => Load | [Load, Load]
const pair = (value: Load | [Load, Load]): [Load, Load | undefined] =>
  Array.isArray(value) ? value : [value, undefined]

/**
 * The columns every HTTP table shows for one scenario, medians over `runs`: requests/s, p50, p99
 * and, with a ceiling, its requests/s and the ratio of the two.
 */
export function loadColumns<R>(runs: R[], pick: Measured<R>): string[] {
  const load = (r: R) => pair(pick(r))[0]
  const ceiling = (r: R) => pair(pick(r))[1]!
  const bare = ceiling(runs[0]) ? fmtMedian(runs, 0, r => ceiling(r).rps) : ''
  const ratio = ceiling(runs[0]) ? fmtMedian(runs, 2, r => load(r).rps / ceiling(r).rps) : ''
  const rps = fmtMedian(runs, 0, r => load(r).rps)
  return [rps, `${fmtMedian(runs, 2, r => load(r).p50)} ms`, `${fmtMedian(runs, 2, r => load(r).p99)} ms`, bare, ratio]
}

/** Errors summed over the runs, and each run's load average, as table cells. */
export const errorsOf = <R>(runs: R[], pick: Measured<R>) =>
  String(runs.reduce((n, r) => n + pair(pick(r))[0].errors, 0))
export const loadsOf = <R>(runs: R[], load: (run: R) => number) => runs.map(r => fmt(load(r), 2)).join(', ')
