/**
 * The fixed cost of a request, CPU per request (run through bench/run.ts):
 * - `cost`: server CPU per request, from /proc/<pid>/stat (user + system, every thread) around a wrk
 *   load of `--seconds` (2 threads, 32 connections), divided by the responses wrk received; next to
 *   each path a bare Bun server (bench/lib.ts) answering the same bytes without reading the
 *   request: bare's CPU per request over the path's is the share of bare Bun's rate the path reaches
 *   on one core. With `--root DIR` (a checkout holding src/ and node_modules) that code runs as a
 *   second server on a copy of the same data; each round runs every path on bare, this tree and the
 *   other, in an order that turns round by round. `--bareWork US` adds a bare server that spins US µs
 *   of its CPU before each answer: what a server with that much work pays in the kernel per request
 *   once its clients wait for it (the part in the kernel is shown for every server).
 * - `cost-process`: the service alone through `app.handle` (no sockets, no access log line), this
 *   tree's app and `--root`'s, each on its own copy of one data directory; batches of `--batch`
 *   sequential requests alternate between the trees, which goes first turning each time; a batch's
 *   figure is the process's CPU (every thread) per request, Elysia's after-response hooks included.
 * - `tokens`: what an authenticated request costs with many API tokens (below).
 * Data: `--flags` flags and `--events` synthetic events (bench/data.ts), 24 of the flags reported per
 * SDK metrics body (about 1.2 KB).
 */
import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../src/app'
import { SYSTEM_ACTOR } from '../src/domain/events'
import { SecretHasher } from '../src/features/tokens/secret-hash'
import type { ApiTokenRecord } from '../src/features/tokens/tokens.records'
import { openStore } from '../src/open-store'
import { createServices, initialise, stopWorkers } from '../src/services'
import { STATE_FILE } from '../src/storage/files'
import type { StateDoc } from '../src/storage/records'
import { newKey, writeKey } from '../src/storage/secret-key'
import type { Store } from '../src/storage/store'
import {
  bareServer,
  authHeaders,
  cannon,
  createToken,
  fmt,
  fmtMedian,
  type Load,
  loadAverage,
  luaScript,
  metricsBody,
  median,
  options,
  removeDir,
  ROOT,
  type RunningServer,
  SECRET,
  seedDataDir,
  spawnServer,
  startServer,
  table,
  tempDataDir,
  untilReady,
  wrkCpu,
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

/** One load of `path` on `pid` at `url`: µs of the server's CPU per response received (`sys` of them in the kernel), and responses/s. */
async function measure(pid: number, url: string, headers: Record<string, string>, script: string[], seconds: number) {
  const { load, cpuUs, systemUs } = await wrkCpu(pid, url, headers, seconds, script)
  if (load.errors > 0) throw new Error(`${url}: ${load.errors} errors`)
  return { us: cpuUs, sys: systemUs, rps: load.rps }
}
type Figure = Awaited<ReturnType<typeof measure>>
export async function requestCost() {
  const o = options({ rounds: 5, seconds: 4, root: '', only: '', flags: 1000, events: 20000, bareWork: 0 })
  const paths = o.only ? PATHS.filter(p => o.only.split(',').includes(p.name)) : PATHS
  const dirs = [tempDataDir('bench-cost-')]
  seedDataDir(dirs[0]!, { events: o.events, flags: o.flags })
  if (o.root) dirs.push(tempDataDir('bench-cost-')), cpSync(dirs[0]!, dirs[1]!, { recursive: true })
  const targets: Target[] = []
  const bares = new Map<string, Awaited<ReturnType<typeof bareServer>>>()
  const bareNames = ['bare', ...(o.bareWork > 0 ? [`bare+${o.bareWork}`] : [])] // per path, keyed `${path} ${name}`
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
      for (const [b, name] of bareNames.entries())
        bares.set(`${path.name} ${name}`, await bareServer(path.etag ? '' : bytes, path.path, b * o.bareWork))
      const lua = `wrk.method = "${init.method}"\n${path.body ? `wrk.body = ${JSON.stringify(path.body)}\n` : ''}`
      scripts.set(path.name, ['-s', luaScript(dirs[0]!, `cost-${path.name}`, lua)])
    }
    // A warm-up of every path on every server: its code compiled, its caches filled.
    for (const target of targets) for (const path of paths) await load(target, path, 1)
    const figures = new Map<string, Figure[]>()
    const record = (key: string, figure: Figure) => {
      figures.set(key, [...(figures.get(key) ?? []), figure])
    }
    const med = (key: string, field: keyof Figure) => median(figures.get(key)!.map(f => f[field]))
    async function load(target: Target, path: Path, seconds: number) {
      const headers: Record<string, string> = { ...authHeaders, authorization: target.secrets[path.token] }
      if (path.etag) headers['if-none-match'] = etags.get(path.name)!
      return measure(target.server.pid, target.server.base + path.path, headers, scripts.get(path.name)!, seconds)
    }
    for (let round = 0; round < o.rounds; round++) {
      for (const path of paths) {
        const turns: (() => Promise<void>)[] = [
          ...bareNames
            .map(name => `${path.name} ${name}`)
            .map(key => async () => {
              const bare = bares.get(key)!
              record(key, await measure(bare.pid, bare.url, {}, scripts.get(path.name)!, o.seconds))
            }),
          ...targets.map(
            target => async () => record(`${path.name} ${target.name}`, await load(target, path, o.seconds)),
          ),
        ]
        for (let t = 0; t < turns.length; t++) await turns[(t + round) % turns.length]!()
      }
      console.log(`round ${round + 1} of ${o.rounds} done, load average ${loadAverage()}`)
    }
    // Each server's µs per request, its part in the kernel and requests/s; next to ours, their shares of bare's.
    const rows = paths.map(path => {
      const [key, bare] = [(name: string) => `${path.name} ${name}`, `${path.name} bare`]
      const cells = (k: string) => [fmt(med(k, 'us'), 1), fmt(med(k, 'sys'), 1), fmt(med(k, 'rps'), 0)]
      const shares = (k: string) => [fmt(med(bare, 'us') / med(k, 'us'), 2), fmt(med(k, 'rps') / med(bare, 'rps'), 2)]
      const ours = targets.flatMap(target => [...cells(key(target.name)), ...shares(key(target.name))])
      return [path.name, ...bareNames.flatMap(name => cells(key(name))), ...ours]
    })
    const columns = (name: string) => [`${name} µs`, 'in kernel', `${name} req/s`]
    const headers = ['path', ...bareNames.flatMap(columns)]
    for (const target of targets) headers.push(...columns(target.name), 'CPU of bare', 'req/s of bare')
    console.log(`\nServer CPU per request, in the kernel, requests/s: medians of ${o.rounds} rounds of ${o.seconds} s`)
    if (o.bareWork > 0) console.log(`bare+${o.bareWork}: the bare server spinning ${o.bareWork} µs before each answer`)
    console.log(table(headers, rows))
    for (const path of paths)
      for (const target of targets) {
        const each = figures.get(`${path.name} ${target.name}`)!.map(f => fmt(f.us, 1))
        console.log(`${path.name} ${target.name}: ${each.join(', ')} µs`)
      }
  } finally {
    for (const bare of bares.values()) await bare.stop()
    for (const target of targets) await target.server.stop()
    for (const dir of dirs) removeDir(dir)
  }
}

/** Lets Elysia's after-response hooks (setImmediate) run: a loop awaiting `app.handle` alone never does. */
const afterResponses = () => new Promise<void>(resolve => setImmediate(resolve))

/** The paths of `cost` that `cost-process` runs, in its order. */
const IN_PROCESS = ['validate', 'metrics', 'search-type', '304', 'frontend']

/** This tree's or `root`'s app on `dir`, with a client and a frontend token; `close` stops its workers. */
async function openApp(root: string, dir: string) {
  const services = await import(join(root, 'src/services.ts'))
  const { createApp } = await import(join(root, 'src/app.ts'))
  const store = await (await openStoreOf(root))(dir, { sync: true })
  const built = services.createServices(store, { metricsFlushMs: 3_600_000 })
  const app: { handle(request: Request): Promise<Response> } = createApp(built, { bodyLimit: 102_400 })
  await services.initialise(built, [SECRET])
  const token = async (type: string) => {
    const body = JSON.stringify({ tokenName: `cost-${type}`, type, projects: ['*'], environment: 'development' })
    const headers = { authorization: SECRET, 'content-type': 'application/json' }
    const request = new Request('http://bench/api/admin/api-tokens', { method: 'POST', headers, body })
    return (await (await app.handle(request)).json()).secret as string
  }
  const secrets = { admin: SECRET, client: await token('client'), frontend: await token('frontend') }
  return { app, secrets, close: () => (services.stopWorkers(built), store.close()) }
}

type Opened = Awaited<ReturnType<typeof openApp>>

/** `openStore` of the checkout at `root`: in src/open-store.ts, or in src/services.ts in older trees. */
export async function openStoreOf(root: string): Promise<(dir: string, options: { sync: boolean }) => Promise<Store>> {
  const file = existsSync(join(root, 'src/open-store.ts')) ? 'src/open-store.ts' : 'src/services.ts'
  return (await import(join(root, file))).openStore
}

export async function requestCostInProcess() {
  const o = options({ root: '', batches: 40, batch: 200, only: '', flags: 1000, events: 20000 })
  const names = o.only ? o.only.split(',') : IN_PROCESS
  const roots = [ROOT, ...(o.root ? [o.root] : [])]
  const dirs = roots.map(() => tempDataDir('bench-cost-process-'))
  seedDataDir(dirs[0]!, { events: o.events, flags: o.flags })
  for (const dir of dirs.slice(1)) cpSync(dirs[0]!, dir, { recursive: true })
  const apps: Opened[] = []
  try {
    for (const [i, root] of roots.entries()) apps.push(await openApp(root, dirs[i]!))
    const rows: string[][] = []
    for (const name of names) {
      const spec = PATHS.find(path => path.name === name)!
      const etags = new Map<Opened, string>()
      const request = (opened: Opened) => {
        const headers: Record<string, string> = { authorization: opened.secrets[spec.token] }
        if (spec.body) headers['content-type'] = 'application/json'
        if (spec.etag && etags.has(opened)) headers['if-none-match'] = etags.get(opened)!
        return new Request(`http://bench${spec.path}`, { method: spec.body ? 'POST' : 'GET', headers, body: spec.body })
      }
      for (const opened of apps) {
        const first = await opened.app.handle(request(opened))
        if (first.status >= 300) throw new Error(`${name}: ${first.status} ${await first.text()}`)
        etags.set(opened, first.headers.get('etag') ?? '')
      }
      const batch = async (opened: Opened) => {
        const started = process.cpuUsage()
        for (let i = 0; i < o.batch; i++) {
          const response = await opened.app.handle(request(opened))
          await response.arrayBuffer()
          if (response.status >= 300 && response.status !== 304) throw new Error(`${name}: ${response.status}`)
        }
        await afterResponses()
        const used = process.cpuUsage(started)
        return (used.user + used.system) / o.batch
      }
      for (const opened of apps) for (let i = 0; i < 3; i++) await batch(opened)
      const figures = apps.map(() => [] as number[])
      for (let b = 0; b < o.batches; b++)
        for (let t = 0; t < apps.length; t++) {
          const i = (t + b) % apps.length
          figures[i]!.push(await batch(apps[i]!))
        }
      const medians = figures.map(median)
      const ratio = medians.length > 1 ? [fmt(medians[1]! / medians[0]!, 2)] : []
      rows.push([name, ...medians.map(us => fmt(us, 1)), ...ratio])
      console.log(rows.at(-1)!.join('  '))
    }
    const headers = ['path', 'this tree µs', ...(o.root ? [`${o.root} µs`, 'other / this'] : [])]
    console.log(`\nCPU per request through app.handle, medians of ${o.batches} batches of ${o.batch}`)
    console.log(table(headers, rows))
  } finally {
    for (const opened of apps) await opened.close()
    for (const dir of dirs) removeDir(dir)
  }
}

/** A viewer token with a random secret nobody uses: it is there to be many. */
function benchToken(hasher: SecretHasher, i: number, userId: number, createdAt: string): ApiTokenRecord {
  const secretHash = hasher.hash(`*:*.${randomBytes(32).toString('hex')}`)
  const scope = { projects: ['*'], environment: '*', prefix: '*:*' }
  return {
    tokenName: `bench-${i}`,
    type: 'admin',
    role: 'viewer',
    ...scope,
    secretHash,
    userId,
    createdAt,
    expiresAt: null,
  }
}

/**
 * `tokens`: a request with `--tokens` API tokens against one. Two apps in this process (memory
 * stores, the tokens stored in one commit as the service stores them) take alternating batches of
 * 500 `GET /api/admin/environments` through `app.handle`, so that both see the same machine noise;
 * no sockets: the service's own work. Then the same over HTTP (tokensOverHttp).
 */
export async function tokenCount() {
  const o = options({ tokens: 5000, requests: 20000, rounds: 7, 'http-runs': 5, seconds: 5 })
  const { tokens: TOKENS, requests: REQUESTS, rounds: ROUNDS, seconds: SECONDS } = o
  const BATCH = 500
  const many = `${TOKENS.toLocaleString('en-US')} tokens`

  async function makeApp(extraTokens: number) {
    const store = await openStore(null)
    const services = createServices(store)
    const app = createApp(services, { bodyLimit: 102_400 })
    await initialise(services, [SECRET])
    if (extraTokens > 0)
      await store.transact(SYSTEM_ACTOR, tx => {
        const hasher = new SecretHasher(store.secretKey)
        for (let i = 0; i < extraTokens; i++)
          tx.put('tokens', `bench-${i}`, benchToken(hasher, i, tx.allocateUserId(), tx.now))
      })
    if (Object.keys(store.state.tokens).length !== extraTokens + 1) throw new Error('tokens were not all stored')
    /** Mean microseconds per request over `count` sequential requests. */
    const measure = async (count: number) => {
      const started = performance.now()
      for (let i = 0; i < count; i++) {
        const request = new Request('http://bench/api/admin/environments', { headers: { authorization: SECRET } })
        const response = await app.handle(request)
        if (response.status !== 200) throw new Error(`status ${response.status}`)
        await response.arrayBuffer()
      }
      await afterResponses()
      return ((performance.now() - started) * 1000) / count
    }
    return { measure, close: () => stopWorkers(services) }
  }

  const apps = [await makeApp(0), await makeApp(TOKENS)]
  // Warm-up: JIT and caches, not counted.
  for (let i = 0; i < 4; i++) await apps[i % 2].measure(REQUESTS / 4)
  const rows: (string | number)[][] = []
  const rounds: [number, number][] = []
  for (let round = 1; round <= ROUNDS; round++) {
    // Batches alternating between the apps (which goes first too), so a noisy moment of the machine
    // falls on both; each app's figure is the median of its batches.
    const batches: [number[], number[]] = [[], []]
    for (let batch = 0; batch < REQUESTS / BATCH; batch++)
      for (const i of batch % 2 === 0 ? [0, 1] : [1, 0]) batches[i].push(await apps[i].measure(BATCH))
    const [x, y] = batches.map(median)
    rounds.push([x, y])
    rows.push([round, `${fmt(x)} µs`, `${fmt(y)} µs`, fmt(y / x, 2)])
  }
  const [one, all] = [fmtMedian(rounds, 1, r => r[0]), fmtMedian(rounds, 1, r => r[1])]
  rows.push(['median', `**${one} µs**`, `**${all} µs**`, `**${fmtMedian(rounds, 2, r => r[1] / r[0])}**`])
  const what = `${REQUESTS} sequential GET /api/admin/environments per app and round, in alternating batches of ${BATCH}`
  console.log(`${what}, through app.handle; ${new Date().toISOString()}`)
  console.log(table(['round', '1 token', many, 'ratio'], rows))
  for (const app of apps) app.close()
  if (o['http-runs'] > 0) await tokensOverHttp(TOKENS, o['http-runs'], SECONDS)
}

/** The tokens scenario over HTTP: two servers whose states differ only in their tokens. */
async function tokensOverHttp(TOKENS: number, RUNS: number, SECONDS: number) {
  const dirs = [tempDataDir('bench-tokens-1-'), tempDataDir('bench-tokens-many-')]
  const servers: Awaited<ReturnType<typeof startServer>>[] = []
  const load = async (base: string, duration: number) => {
    const result = await cannon({ url: `${base}/api/admin/environments`, headers: { authorization: SECRET }, duration })
    if (result.errors > 0) throw new Error(`${result.errors} failed requests`)
    return result
  }
  try {
    for (const dir of dirs) seedDataDir(dir, { events: 1000, flags: 10 })
    const statePath = join(dirs[1], STATE_FILE)
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as StateDoc
    // Stored as the service stores them: keyed by the directory's key, written beside the state.
    const key = newKey()
    writeKey(dirs[1], key)
    const hasher = new SecretHasher(key)
    for (let i = 0; i < TOKENS; i++)
      state.tokens[`bench-${i}`] = benchToken(hasher, i, state.nextUserId++, new Date().toISOString())
    writeFileSync(statePath, JSON.stringify(state))
    for (const dir of dirs) servers.push(await startServer(dir))
    for (const server of servers) await load(server.base, 2) // warm-up, not counted
    const runs: Load[][] = []
    for (let run = 1; run <= RUNS; run++) {
      const got: Load[] = []
      for (const i of run % 2 === 1 ? [0, 1] : [1, 0]) got[i] = await load(servers[i].base, SECONDS)
      runs.push(got)
    }
    const cell = (l: Load) => `${fmt(l.rps, 0)}/s (p99 ${l.p99} ms)`
    const rows = runs.map((r, i) => [i + 1, cell(r[0]), cell(r[1]), fmt(r[0].rps / r[1].rps, 2)])
    const [one, all] = [fmtMedian(runs, 0, r => r[0].rps), fmtMedian(runs, 0, r => r[1].rps)]
    rows.push(['median', `**${one}/s**`, `**${all}/s**`, `**${fmtMedian(runs, 2, r => r[0].rps / r[1].rps)}**`])
    console.log(`\nautocannon, 32 connections, ${SECONDS} s per run, GET /api/admin/environments on a real server`)
    const many = `${TOKENS.toLocaleString('en-US')} tokens`
    console.log(table(['run', '1 token', many, 'ratio (1 token / many, requests/s)'], rows))
  } finally {
    for (const server of servers) await server.stop()
    for (const dir of dirs) removeDir(dir)
  }
}
