/**
 * The fixed cost of a request, run by hand:
 *
 *   npx bun bench/run.ts cost [--rounds 5] [--seconds 4] [--root DIR] [--only 304,validate,...]
 *
 * Server CPU per request, from /proc/<pid>/stat (user + system, every thread) around a wrk load of
 * `--seconds` (2 threads, 32 connections), divided by the responses wrk received. CPU per request
 * holds on a machine that other work keeps busy, where requests/s does not. Next to each path, a
 * bare Bun server (bench/clients.ts) answering the same bytes without reading the request: bare's
 * CPU per request over the path's is the share of bare Bun's rate the path reaches on one core.
 *
 * With `--root DIR` (a checkout holding src/ and node_modules) that code runs too, as a second
 * server on a copy of the same data; each round runs every path on bare, this tree and the other,
 * in an order that turns round by round. Data: `--flags` flags and `--events` synthetic events
 * (bench/data.ts), 24 of the flags reported per SDK metrics body (about 1.2 KB).
 */
import { cpSync } from 'node:fs'
import { bareServer } from './clients'
import {
  authHeaders,
  cpuSeconds,
  createToken,
  fmt,
  loadAverage,
  luaScript,
  median,
  options,
  removeDir,
  type RunningServer,
  seedDataDir,
  spawnServer,
  tempDataDir,
  table,
  untilReady,
  wrk,
} from './lib'

interface Path {
  name: string
  /** The request: its path, method and body, and the secret it authenticates with. */
  path: string
  method?: 'POST'
  body?: string
  token: 'admin' | 'client' | 'frontend'
  /** Sent with If-None-Match set to the first answer's ETag. */
  etag?: boolean
}

/** A metrics report of `flags` flags, about 1.2 KB for 24. */
export function metricsBody(flags: number): string {
  const toggles: Record<string, unknown> = {}
  for (let i = 0; i < flags; i++) toggles[`flag-${i}`] = { yes: 1, no: 0, variants: i % 4 === 0 ? { blue: 1 } : {} }
  const now = new Date().toISOString()
  return JSON.stringify({
    appName: 'cost',
    instanceId: 'cost-1',
    environment: 'development',
    bucket: { start: now, stop: now, toggles },
  })
}

const PATHS: Path[] = [
  { name: '304', path: '/api/client/features', token: 'client', etag: true },
  { name: 'client', path: '/api/client/features', token: 'client' },
  {
    name: 'validate',
    path: '/api/admin/features/validate',
    method: 'POST',
    body: '{"name":"free-name"}',
    token: 'admin',
  },
  { name: 'metrics', path: '/api/client/metrics', method: 'POST', body: metricsBody(24), token: 'client' },
  { name: 'search-type', path: '/api/admin/search/events?type=IS:feature-tagged&limit=50', token: 'admin' },
  { name: 'frontend', path: '/api/frontend?userId=17&sessionId=4', token: 'frontend' },
  { name: 'health', path: '/health', token: 'admin' },
]

interface Target {
  name: string
  server: RunningServer
  secrets: Record<Path['token'], string>
}

/** One load of `path` on `pid` at `url`: µs of the server's CPU per response received, and responses/s. */
async function measure(pid: number, url: string, headers: Record<string, string>, script: string[], seconds: number) {
  const before = cpuSeconds(pid)
  const load = await wrk(url, headers, seconds, script)
  const cpu = cpuSeconds(pid) - before
  if (load.errors > 0) throw new Error(`${url}: ${load.errors} errors`)
  return { us: (cpu * 1e6) / load.requests!, rps: load.rps }
}

export async function requestCost() {
  const o = options({ rounds: 5, seconds: 4, root: '', only: '', flags: 1000, events: 20000 })
  const paths = o.only ? PATHS.filter(p => o.only.split(',').includes(p.name)) : PATHS
  const dirs = [tempDataDir('bench-cost-')]
  seedDataDir(dirs[0]!, { events: o.events, flags: o.flags })
  if (o.root) dirs.push(tempDataDir('bench-cost-')), cpSync(dirs[0]!, dirs[1]!, { recursive: true })
  const targets: Target[] = []
  const bares: Awaited<ReturnType<typeof bareServer>>[] = []
  try {
    for (const [i, dir] of dirs.entries()) {
      const server = spawnServer(dir, {}, i === 0 ? {} : { root: o.root })
      Object.assign(server, { readyMs: await untilReady(server) })
      const secrets = {
        admin: authHeaders.authorization,
        client: await createToken(server.base, 'client', 'development'),
        frontend: await createToken(server.base, 'frontend', 'development'),
      }
      targets.push({ name: i === 0 ? 'this tree' : o.root, server: server as RunningServer, secrets })
    }
    const scripts = new Map<string, string[]>()
    const etags = new Map<string, string>()
    for (const path of paths) {
      const first = targets[0]!
      const init = {
        method: path.method ?? 'GET',
        headers: { ...authHeaders, authorization: first.secrets[path.token] },
        body: path.body,
      }
      const answer = await fetch(first.server.base + path.path, init)
      const bytes = new Uint8Array(await answer.arrayBuffer())
      if (answer.status >= 300) throw new Error(`${path.name}: ${answer.status}`)
      if (path.etag) etags.set(path.name, answer.headers.get('etag')!)
      bares.push(await bareServer(path.etag ? '' : bytes, path.path))
      const lua = `wrk.method = "${init.method}"\n${path.body ? `wrk.body = ${JSON.stringify(path.body)}\n` : ''}`
      scripts.set(path.name, ['-s', luaScript(dirs[0]!, `cost-${path.name}`, lua)])
    }
    // A warm-up of every path on every server: its code compiled, its caches filled.
    for (const target of targets) for (const path of paths) await load(target, path, 1)
    const figures = new Map<string, { us: number; rps: number }[]>()
    const record = (key: string, figure: { us: number; rps: number }) => {
      figures.set(key, [...(figures.get(key) ?? []), figure])
    }
    const us = (key: string) => median(figures.get(key)!.map(f => f.us))
    const rps = (key: string) => median(figures.get(key)!.map(f => f.rps))
    async function load(target: Target, path: Path, seconds: number) {
      const headers: Record<string, string> = { ...authHeaders, authorization: target.secrets[path.token] }
      if (path.etag) headers['if-none-match'] = etags.get(path.name)!
      return measure(target.server.pid, target.server.base + path.path, headers, scripts.get(path.name)!, seconds)
    }
    for (let round = 0; round < o.rounds; round++) {
      for (const [p, path] of paths.entries()) {
        const bare = bares[p]!
        const turns: (() => Promise<void>)[] = [
          async () =>
            record(`${path.name} bare`, await measure(bare.pid, bare.url, {}, scripts.get(path.name)!, o.seconds)),
          ...targets.map(
            target => async () => record(`${path.name} ${target.name}`, await load(target, path, o.seconds)),
          ),
        ]
        for (let t = 0; t < turns.length; t++) await turns[(t + round) % turns.length]!()
      }
      console.log(`round ${round + 1} of ${o.rounds} done, load average ${loadAverage()}`)
    }
    const rows = paths.map(path => {
      const bare = `${path.name} bare`
      const cells = targets.flatMap(target => {
        const key = `${path.name} ${target.name}`
        return [fmt(us(key), 1), fmt(us(bare) / us(key), 2), fmt(rps(key), 0), fmt(rps(key) / rps(bare), 2)]
      })
      return [path.name, fmt(us(bare), 1), fmt(rps(bare), 0), ...cells]
    })
    const columns = (name: string) => [`${name} µs`, 'CPU of bare', `${name} req/s`, 'req/s of bare']
    const headers = ['path', 'bare µs', 'bare req/s', ...targets.flatMap(t => columns(t.name))]
    console.log(`\nServer CPU per request and requests/s, medians of ${o.rounds} rounds of ${o.seconds} s`)
    console.log(table(headers, rows))
    for (const path of paths)
      for (const target of targets) {
        const each = figures.get(`${path.name} ${target.name}`)!.map(f => fmt(f.us, 1))
        console.log(`${path.name} ${target.name}: ${each.join(', ')} µs`)
      }
  } finally {
    for (const bare of bares) await bare.stop()
    for (const target of targets) await target.server.stop()
    for (const dir of dirs) removeDir(dir)
  }
}
