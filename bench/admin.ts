/**
 * Admin-path scenarios: the HTTP hot paths next to a bare Bun server (`admin`), the cost of many
 * tokens (`tokens`) and the playground over the frontend benchmark's flags (`playground`). Run through bench/run.ts.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../src/app'
import { SYSTEM_ACTOR } from '../src/domain/events'
import { SecretHasher } from '../src/features/tokens/secret-hash'
import type { ApiTokenRecord } from '../src/features/tokens/tokens.records'
import { createServices, initialise, stopWorkers } from '../src/services'
import { openStore } from '../src/open-store'
import { STATE_FILE } from '../src/storage/files'
import type { StateDoc } from '../src/storage/records'
import { newKey, writeKey } from '../src/storage/secret-key'
import { bareServer } from './clients'
import {
  addFrontendFlags,
  authHeaders,
  contextFor,
  cannon,
  cpuSeconds,
  errorsOf,
  fmt,
  fmtMedian,
  FRONTEND_ENVIRONMENT,
  FRONTEND_FLAGS,
  type Load,
  loadAverage,
  loadColumns,
  median,
  options,
  percentile,
  removeDir,
  repeat,
  SECRET,
  seedDataDir,
  spread,
  startServer,
  table,
  tempDataDir,
  withDataDir,
  withServer,
  wrk,
} from './lib'

/**
 * `admin`, HTTP hot paths:
 * - project feature list, 1,000 flags in 3 environments: wrk (autocannon's single thread is the
 *   limit for responses this large), next to a bare Bun server returning the same bytes;
 * - POST /api/admin/features/validate and GET /health: autocannon, next to the bare server;
 * - bulk off of 1,000 flags: sequential requests (each after a bulk on), p50 and p99.
 * Prints a table of requests/s, p50, p99 and the ratio to the bare-Bun ceiling, medians of runs.
 */
export async function adminPaths() {
  const { runs: RUNS, seconds: SECONDS } = options({ runs: 3, seconds: 10 })

  /** `load` of the service, then of a bare Bun server answering `bytes`. */
  async function beside(bytes: Uint8Array | string, load: (url: string | null) => Promise<Load>) {
    const served = await load(null)
    const bare = await bareServer(bytes)
    const ceiling = await load(bare.url)
    await bare.stop()
    return [served, ceiling]
  }

  const run = (dir: string) =>
    withServer(dir, {}, async server => {
      const listUrl = `${server.base}/api/admin/projects/default/features`
      const listBytes = new Uint8Array(await (await fetch(listUrl, { headers: authHeaders })).arrayBuffer())
      const [list, listCeiling] = await beside(listBytes, url =>
        wrk(url ?? listUrl, url ? {} : { authorization: SECRET }, SECONDS),
      )
      const [url, body] = [`${server.base}/api/admin/features/validate`, JSON.stringify({ name: 'a-free-name' })]
      const validate = await cannon({ url, method: 'POST', headers: authHeaders, body, duration: SECONDS })
      const healthBytes = '{"health":"GOOD"}'
      const [health, healthCeiling] = await beside(healthBytes, url =>
        cannon({ url: url ?? `${server.base}/health`, duration: SECONDS }),
      )

      const features = Array.from({ length: 1000 }, (_, i) => `flag-${i}`)
      const bulk = async (state: 'on' | 'off') => {
        const path = `/api/admin/projects/default/bulk_features/environments/production/${state}`
        const body = JSON.stringify({ features })
        const response = await fetch(server.base + path, { method: 'POST', headers: authHeaders, body })
        await response.arrayBuffer()
        if (response.status !== 200) throw new Error(`bulk ${state} answered ${response.status}`)
      }
      const offTimes: number[] = []
      for (let i = 0; i < 25; i++) {
        await bulk('on')
        const started = performance.now()
        await bulk('off')
        if (i >= 5) offTimes.push(performance.now() - started)
      }
      const bulkOff = spread(offTimes)
      return { list, listCeiling, listBytes: listBytes.length, validate, health, healthCeiling, bulkOff }
    })

  const seed = { events: 1000, flags: 1000, environments: ['development', 'staging', 'production'] }
  const runs = await withDataDir(seed, dir => repeat(RUNS, () => run(dir)))
  type Run = (typeof runs)[number]
  const row = (name: string, pick: (r: Run) => [Load, Load], target: string) => [
    name,
    ...loadColumns(runs, pick),
    errorsOf(runs, pick),
    target,
  ]
  const bulkOff = [`${fmtMedian(runs, 2, r => r.bulkOff.p50)} ms`, `${fmtMedian(runs, 2, r => r.bulkOff.p99)} ms`]
  console.log(`\nProject list: ${fmt(runs[0].listBytes / 1024, 0)} KiB per answer.\n`)
  console.log(
    table(
      ['scenario', 'requests/s', 'p50', 'p99', 'bare Bun requests/s', 'ratio', 'errors', 'target'],
      [
        row('project feature list, 1,000 flags × 3 environments (wrk)', r => [r.list, r.listCeiling], 'ratio ≥ 0.5'),
        row('POST /api/admin/features/validate (autocannon)', r => [r.validate, r.healthCeiling], '≥ 15,000/s'),
        row('GET /health (autocannon)', r => [r.health, r.healthCeiling], ''),
        ['bulk off of 1,000 flags, sequential', '', ...bulkOff, '', '', '0', 'p50 ≤ 50 ms'],
      ],
    ),
  )
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
 * `tokens`: what an authenticated request costs with many API tokens:
 * Two apps in this process, on memory stores: one with only the admin token, one with `--tokens`
 * more (made in one commit through the store, as the service would store them). Each round sends
 * `--requests` sequential `GET /api/admin/environments` through `app.handle` to each app, in
 * alternating batches of 500, so both see the same machine noise; the table gives each round's
 * median batch cost per request and the ratio, and the medians of rounds. No sockets: this is the
 * service's own work.
 *
 * Then the same over HTTP: two real servers, on data directories that differ only in the tokens
 * their state holds, loaded in turn by autocannon (32 connections, `--seconds` each, `--http-runs`
 * times, alternating which goes first); requests/s, p99 and the ratio of requests/s.
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

/**
 * `playground`, over the frontend benchmark's 1,000 flags (bench/data.ts): in each run a server answers POST /api/admin/
 * playground, then /advanced (production), one request after another, each for another user. Prints
 * per run the answer's size, p50 and p95 to the whole answer and the server's CPU per answer; medians.
 */
export async function playgroundAnswer() {
  const { runs: RUNS, requests: REQUESTS } = options({ runs: 3, requests: 200 })
  const ask = async (base: string, path: string, body: object) => {
    const started = performance.now()
    const response = await fetch(base + path, { method: 'POST', headers: authHeaders, body: JSON.stringify(body) })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 300)}`)
    return { ms: performance.now() - started, text }
  }
  const measure = async ({ base, pid }: { base: string; pid: number }, suffix: string, where: object) => {
    const [path, bodyOf] = [`/api/admin/playground${suffix}`, (n: number) => ({ ...where, context: contextFor(n) })]
    const sample = await ask(base, path, bodyOf(0))
    const flags = JSON.parse(sample.text).features.length
    if (flags !== FRONTEND_FLAGS) throw new Error(`${path} answered ${flags} flags, not ${FRONTEND_FLAGS}`)
    for (let n = 1; n <= 20; n++) await ask(base, path, bodyOf(n))
    const [cpuBefore, times] = [cpuSeconds(pid), [] as number[]]
    for (let n = 0; n < REQUESTS; n++) times.push((await ask(base, path, bodyOf(1000 + n))).ms)
    const cpuMs = ((cpuSeconds(pid) - cpuBefore) / REQUESTS) * 1000
    times.sort((a, b) => a - b)
    return { flags, kB: sample.text.length / 1024, p50: percentile(times, 50), p95: percentile(times, 95), cpuMs }
  }
  const seed = { events: 1000, flags: FRONTEND_FLAGS, environments: ['development', 'production'] }
  const runs = await withDataDir(seed, async dir => {
    addFrontendFlags(dir)
    return repeat(RUNS, () =>
      withServer(dir, {}, async server => ({
        playground: await measure(server, '', { environment: FRONTEND_ENVIRONMENT }),
        advanced: await measure(server, '/advanced', { environments: [FRONTEND_ENVIRONMENT] }),
      })),
    )
  })
  for (const route of ['playground', 'advanced'] as const) {
    const [p50, p95, cpu] = (['p50', 'p95', 'cpuMs'] as const).map(k => fmtMedian(runs, 1, r => r[route][k]))
    const load = loadAverage()
    console.log(`${route}: median of runs p50 ${p50} ms, p95 ${p95} ms, server CPU ${cpu} ms per answer (load ${load})`)
  }
}
