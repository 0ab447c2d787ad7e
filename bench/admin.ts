/**
 * Admin-path scenarios: the HTTP hot paths next to a bare Bun server (`admin`), the cost of many
 * tokens (`tokens`) and a mixed soak (`soak`). Run through bench/run.ts.
 */
import autocannon from 'autocannon'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import { createApp } from '../src/app'
import { createServices, initialise, openStore, stopWorkers } from '../src/services'
import { STATE_FILE } from '../src/storage/files'
import type { ApiTokenRecord } from '../src/features/tokens/tokens.records'
import { SecretHasher } from '../src/features/tokens/secret-hash'
import { newKey, writeKey } from '../src/storage/secret-key'
import type { StateDoc } from '../src/storage/records'
import { SYSTEM_ACTOR } from '../src/domain/events'
import {
  authHeaders,
  errorsOf,
  fmt,
  freePort,
  type Load,
  loadAverage,
  loadColumns,
  median,
  percentile,
  removeDir,
  ROOT,
  rssMiB,
  SECRET,
  seedDataDir,
  startServer,
  table,
  tempDataDir,
  waitForSearchIndex,
  wrk as wrkFor,
} from './lib'

/**
 * HTTP hot paths (issue "Fast and hard to break"), run by hand:
 *
 *   npx bun bench/run.ts admin [--runs 3] [--seconds 10]
 *
 * - project feature list, 1,000 flags in 3 environments: wrk (autocannon's single thread is the
 *   limit for responses this large), next to a bare Bun server returning the same bytes;
 * - POST /api/admin/features/validate and GET /health: autocannon, next to the bare server;
 * - bulk off of 1,000 flags: sequential requests (each after a bulk on), p50 and p99.
 * Prints a table of requests/s, p50, p99 and the ratio to the bare-Bun ceiling, medians of runs.
 */
export async function adminPaths() {
  const wrk = (url: string, headers: Record<string, string>) => wrkFor(url, headers, SECONDS)

  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' } },
  })
  const RUNS = Number(values.runs)
  const SECONDS = Number(values.seconds)

  async function cannon(options: {
    url: string
    method?: string
    headers?: Record<string, string>
    body?: string
  }): Promise<Load> {
    const load = loadAverage()
    const result = await autocannon({
      url: options.url,
      method: (options.method ?? 'GET') as 'GET',
      headers: options.headers,
      body: options.body,
      connections: 32,
      duration: SECONDS,
    })
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.non2xx,
      load,
    }
  }

  async function bare(bytes: Uint8Array) {
    const file = join(tempDataDir('bare-'), 'body.json')
    writeFileSync(file, bytes)
    const port = freePort()
    const child = Bun.spawn([process.execPath, join(ROOT, 'bench/clients.ts'), 'bare', String(port), file], {
      stdout: 'pipe',
    })
    const reader = child.stdout.getReader()
    await reader.read()
    return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() }
  }

  async function run(dir: string) {
    const server = await startServer(dir)
    try {
      const listUrl = `${server.base}/api/admin/projects/default/features`
      const listBytes = new Uint8Array(await (await fetch(listUrl, { headers: authHeaders })).arrayBuffer())
      const list = await wrk(listUrl, { authorization: SECRET })
      const listBare = await bare(listBytes)
      const listCeiling = await wrk(listBare.url, {})
      listBare.stop()

      const validate = await cannon({
        url: `${server.base}/api/admin/features/validate`,
        method: 'POST',
        headers: authHeaders,
        body: JSON.stringify({ name: 'a-free-name' }),
      })
      const health = await cannon({ url: `${server.base}/health` })
      const smallBare = await bare(new TextEncoder().encode('{"health":"GOOD"}'))
      const healthCeiling = await cannon({ url: smallBare.url })
      smallBare.stop()

      const names = Array.from({ length: 1000 }, (_, i) => `flag-${i}`)
      const bulk = (state: 'on' | 'off') =>
        fetch(`${server.base}/api/admin/projects/default/bulk_features/environments/production/${state}`, {
          method: 'POST',
          headers: authHeaders,
          body: JSON.stringify({ features: names }),
        })
      const offTimes: number[] = []
      for (let i = 0; i < 25; i++) {
        await (await bulk('on')).arrayBuffer()
        const started = performance.now()
        const response = await bulk('off')
        await response.arrayBuffer()
        if (response.status !== 200) throw new Error(`bulk off answered ${response.status}`)
        if (i >= 5) offTimes.push(performance.now() - started)
      }
      offTimes.sort((a, b) => a - b)
      return {
        list,
        listCeiling,
        listBytes: listBytes.length,
        validate,
        health,
        healthCeiling,
        bulkOff: { p50: percentile(offTimes, 50), p99: percentile(offTimes, 99) },
      }
    } finally {
      await server.stop()
    }
  }

  const dir = tempDataDir()
  seedDataDir(dir, { events: 1000, flags: 1000, environments: ['development', 'staging', 'production'] })
  try {
    const runs: Awaited<ReturnType<typeof run>>[] = []
    for (let i = 0; i < RUNS; i++) {
      runs.push(await run(dir))
      console.log(
        `run ${i + 1}:`,
        JSON.stringify(runs.at(-1), (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)),
      )
    }
    const m = (pick: (r: (typeof runs)[number]) => number) => median(runs.map(pick))
    const row = (
      name: string,
      load: (r: (typeof runs)[number]) => Load,
      ceiling?: (r: (typeof runs)[number]) => Load,
      target = '',
    ) => [name, ...loadColumns(runs, load, ceiling), errorsOf(runs, load), target]
    console.log(`\nProject list: ${fmt(runs[0].listBytes / 1024, 0)} KiB per answer.\n`)
    console.log(
      table(
        ['scenario', 'requests/s', 'p50', 'p99', 'bare Bun requests/s', 'ratio', 'errors', 'target'],
        [
          row(
            'project feature list, 1,000 flags × 3 environments (wrk)',
            r => r.list,
            r => r.listCeiling,
            'ratio ≥ 0.5',
          ),
          row(
            'POST /api/admin/features/validate (autocannon)',
            r => r.validate,
            r => r.healthCeiling,
            '≥ 15,000/s',
          ),
          row(
            'GET /health (autocannon)',
            r => r.health,
            r => r.healthCeiling,
          ),
          [
            'bulk off of 1,000 flags, sequential',
            '',
            `${fmt(
              m(r => r.bulkOff.p50),
              2,
            )} ms`,
            `${fmt(
              m(r => r.bulkOff.p99),
              2,
            )} ms`,
            '',
            '',
            '0',
            'p50 ≤ 50 ms',
          ],
        ],
      ),
    )
  } finally {
    removeDir(dir)
  }
}

/**
 * What an authenticated request costs with many API tokens (issue 10, item 10), run by hand:
 *
 *   npx bun bench/run.ts tokens [--tokens 5000] [--requests 20000] [--rounds 7] [--http-runs 5] [--seconds 5]
 *
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
  const { values } = parseArgs({
    options: {
      tokens: { type: 'string', default: '5000' },
      requests: { type: 'string', default: '20000' },
      rounds: { type: 'string', default: '7' },
      'http-runs': { type: 'string', default: '5' },
      seconds: { type: 'string', default: '5' },
    },
  })
  const HTTP_RUNS = Number(values['http-runs'])
  const SECONDS = Number(values.seconds)
  const TOKENS = Number(values.tokens)
  const REQUESTS = Number(values.requests)
  const ROUNDS = Number(values.rounds)
  const BATCH = 500

  /** A viewer token with a random secret nobody uses: it is there to be many. */
  function benchToken(hasher: SecretHasher, i: number, userId: number, createdAt: string): ApiTokenRecord {
    const secret = `*:*.${randomBytes(32).toString('hex')}`
    return {
      tokenName: `bench-${i}`,
      type: 'admin',
      role: 'viewer',
      projects: ['*'],
      environment: '*',
      secretHash: hasher.hash(secret),
      prefix: '*:*',
      userId,
      createdAt,
      expiresAt: null,
    }
  }

  async function makeApp(extraTokens: number) {
    const store = await openStore(null)
    const services = createServices(store)
    const app = createApp(services, { bodyLimit: 102_400 })
    await initialise(services, [SECRET])
    if (extraTokens > 0) {
      await store.transact(SYSTEM_ACTOR, tx => {
        const hasher = new SecretHasher(store.secretKey)
        for (let i = 0; i < extraTokens; i++)
          tx.put('tokens', `bench-${i}`, benchToken(hasher, i, tx.allocateUserId(), tx.now))
      })
    }
    if (Object.keys(store.state.tokens).length !== extraTokens + 1) throw new Error('tokens were not all stored')
    return { app, close: () => stopWorkers(services) }
  }

  /** Mean microseconds per request over `count` sequential requests. */
  async function measure(app: Awaited<ReturnType<typeof makeApp>>['app'], count: number): Promise<number> {
    const request = () => new Request('http://bench/api/admin/environments', { headers: { authorization: SECRET } })
    const started = performance.now()
    for (let i = 0; i < count; i++) {
      const response = await app.handle(request())
      if (response.status !== 200) throw new Error(`status ${response.status}`)
      await response.arrayBuffer()
    }
    return ((performance.now() - started) * 1000) / count
  }

  const one = await makeApp(0)
  const many = await makeApp(TOKENS)
  // Warm-up: JIT and caches, not counted.
  for (let i = 0; i < 2; i++) {
    await measure(one.app, REQUESTS / 4)
    await measure(many.app, REQUESTS / 4)
  }

  const rows: (string | number)[][] = []
  const ratios: number[] = []
  const ones: number[] = []
  const manys: number[] = []
  for (let round = 1; round <= ROUNDS; round++) {
    // Batches of BATCH requests, alternating between the apps, so a noisy moment of the machine
    // falls on both; each app's figure is the median of its batches.
    const a: number[] = []
    const b: number[] = []
    for (let batch = 0; batch < REQUESTS / BATCH; batch++) {
      if (batch % 2 === 0) {
        a.push(await measure(one.app, BATCH))
        b.push(await measure(many.app, BATCH))
      } else {
        b.push(await measure(many.app, BATCH))
        a.push(await measure(one.app, BATCH))
      }
    }
    const [x, y] = [median(a), median(b)]
    ones.push(x)
    manys.push(y)
    ratios.push(y / x)
    rows.push([round, `${fmt(x)} µs`, `${fmt(y)} µs`, fmt(y / x, 2)])
  }
  rows.push(['median', `**${fmt(median(ones))} µs**`, `**${fmt(median(manys))} µs**`, `**${fmt(median(ratios), 2)}**`])
  console.log(
    `${REQUESTS} sequential GET /api/admin/environments per app and round, in alternating batches of ${BATCH}, through app.handle; ${new Date().toISOString()}`,
  )
  console.log(table(['round', '1 token', `${TOKENS.toLocaleString('en-US')} tokens`, 'ratio'], rows))
  one.close()
  many.close()

  if (HTTP_RUNS > 0) {
    const dirs = [tempDataDir('bench-tokens-1-'), tempDataDir('bench-tokens-many-')]
    dirs.forEach(dir => seedDataDir(dir, { events: 1000, flags: 10 }))
    const statePath = join(dirs[1], STATE_FILE)
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as StateDoc
    // Stored as the service stores them: keyed by the directory's key, written beside the state.
    const key = newKey()
    writeKey(dirs[1], key)
    const hasher = new SecretHasher(key)
    for (let i = 0; i < TOKENS; i++)
      state.tokens[`bench-${i}`] = benchToken(hasher, i, state.nextUserId++, new Date().toISOString())
    writeFileSync(statePath, JSON.stringify(state))
    const servers = [await startServer(dirs[0]), await startServer(dirs[1])]
    const load = async (base: string) => {
      const result = await autocannon({
        url: `${base}/api/admin/environments`,
        headers: { authorization: SECRET },
        connections: 32,
        duration: SECONDS,
      })
      if (result.errors + result.non2xx > 0) throw new Error(`${result.errors + result.non2xx} failed requests`)
      return { rps: result.requests.average, p99: result.latency.p99 }
    }
    try {
      // Warm-up, not counted.
      for (const server of servers)
        await autocannon({
          url: `${server.base}/api/admin/environments`,
          headers: { authorization: SECRET },
          connections: 32,
          duration: 2,
        })
      const httpRows: (string | number)[][] = []
      const httpRatios: number[] = []
      const rps: [number[], number[]] = [[], []]
      for (let run = 1; run <= HTTP_RUNS; run++) {
        const order = run % 2 === 1 ? [0, 1] : [1, 0]
        const got: { rps: number; p99: number }[] = []
        for (const i of order) got[i] = await load(servers[i].base)
        rps[0].push(got[0].rps)
        rps[1].push(got[1].rps)
        httpRatios.push(got[0].rps / got[1].rps)
        httpRows.push([
          run,
          `${fmt(got[0].rps, 0)}/s (p99 ${got[0].p99} ms)`,
          `${fmt(got[1].rps, 0)}/s (p99 ${got[1].p99} ms)`,
          fmt(got[0].rps / got[1].rps, 2),
        ])
      }
      httpRows.push([
        'median',
        `**${fmt(median(rps[0]), 0)}/s**`,
        `**${fmt(median(rps[1]), 0)}/s**`,
        `**${fmt(median(httpRatios), 2)}**`,
      ])
      console.log(
        `\nautocannon, 32 connections, ${SECONDS} s per run, GET /api/admin/environments on a real server (access log on)`,
      )
      console.log(
        table(
          ['run', '1 token', `${TOKENS.toLocaleString('en-US')} tokens`, 'ratio (1 token / many, requests/s)'],
          httpRows,
        ),
      )
    } finally {
      for (const server of servers) await server.stop()
      dirs.forEach(removeDir)
    }
  }
}

/**
 * Soak (issue "Fast and hard to break"), run by hand:
 *
 *   npx bun bench/run.ts soak [--minutes 5]
 *
 * Mixed reads and writes from 16 keep-alive clients at 2,000 requests/s for `--minutes`
 * against a server on a log of 100,000 events and 1,000 flags: flag lists, single flags, searches
 * and name validations, and one request in ten a write (PATCH, toggle, tag added or removed).
 * Every write adds an event, which the log keeps (in memory too, for search), so memory grows
 * with the writes by design; Reports errors and the resident
 * memory each minute; the target is zero errors and memory at the end within 10 % of what it was
 * after the first minute.
 */
export async function soak() {
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' } } })
  const MINUTES = Number(values.minutes)

  const dir = tempDataDir()
  seedDataDir(dir, { events: 100_000, flags: 1000 })
  const server = await startServer(dir)
  await waitForSearchIndex(server.base)
  let counter = 0
  const next = () => counter++
  const flag = () => `flag-${Math.floor(Math.random() * 1000)}`
  const auth = { authorization: authHeaders.authorization }

  /** One request of the mix: method, path, body. */
  function nextRequest(): [string, string, unknown?] {
    const n = next()
    if (n % 10 === 9) {
      // One request in ten writes: a PATCH, a toggle, or a tag that comes and goes (so flags do not
      // grow without end).
      const write = Math.floor(n / 10)
      switch (write % 3) {
        case 0:
          return [
            'PATCH',
            `/api/admin/projects/default/features/${flag()}`,
            [{ op: 'replace', path: '/description', value: `soak ${n}` }],
          ]
        case 1:
          return [
            'POST',
            `/api/admin/projects/default/features/${flag()}/environments/development/${write % 2 === 0 ? 'on' : 'off'}`,
          ]
        default: {
          const target = `flag-${Math.floor(write / 3) % 1000}`
          return Math.floor(write / 3000) % 2 === 0
            ? ['POST', `/api/admin/features/${target}/tags`, { value: 'soak-tag' }]
            : ['DELETE', `/api/admin/features/${target}/tags/simple/soak-tag`]
        }
      }
    }
    switch (n % 5) {
      case 0:
        return ['GET', '/api/admin/projects/default/features']
      case 1:
        return ['GET', `/api/admin/projects/default/features/${flag()}`]
      case 2:
        return ['GET', `/api/admin/search/events?query=${['often', 'kalomi', 'release', 'seldom'][n % 4]}&limit=20`]
      case 3:
        return ['GET', '/api/admin/search/events?type=IS:feature-tagged&limit=50']
      default:
        return ['POST', '/api/admin/features/validate', { name: `free-${n}` }]
    }
  }

  const CONNECTIONS = 16
  /** Requests per second at most, so that the log grows at a steady, moderate pace. */
  const RATE = 2000
  const samples: { minute: number; rss: number; requests: number; errors: number; p99: number }[] = []
  let stopAt = 0
  async function client(stats: { requests: number; errors: number; latencies: number[]; examples: string[] }) {
    while (performance.now() < stopAt) {
      const started = performance.now()
      const [method, path, body] = nextRequest()
      try {
        const response = await fetch(server.base + path, {
          method,
          headers: body === undefined ? auth : authHeaders,
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        await response.arrayBuffer()
        if (response.status >= 300) {
          stats.errors++
          if (stats.examples.length < 5) stats.examples.push(`${method} ${path} → ${response.status}`)
        }
      } catch (error) {
        stats.errors++
        if (stats.examples.length < 5) stats.examples.push(`${method} ${path} → ${String(error)}`)
      }
      stats.requests++
      stats.latencies.push(performance.now() - started)
      const pause = (CONNECTIONS * 1000) / RATE - (performance.now() - started)
      if (pause > 0) await Bun.sleep(pause)
    }
  }

  let totalRequests = 0
  let totalErrors = 0
  for (let minute = 1; minute <= MINUTES; minute++) {
    const stats = { requests: 0, errors: 0, latencies: [] as number[], examples: [] as string[] }
    stopAt = performance.now() + 60_000
    await Promise.all(Array.from({ length: CONNECTIONS }, () => client(stats)))
    stats.latencies.sort((a, b) => a - b)
    const p99 = stats.latencies[Math.floor(stats.latencies.length * 0.99)]
    totalRequests += stats.requests
    totalErrors += stats.errors
    samples.push({ minute, rss: rssMiB(server.pid), requests: stats.requests, errors: stats.errors, p99 })
    console.log(
      `minute ${minute}: ${stats.requests} requests, ${stats.errors} errors ${stats.examples.join('; ')}, p99 ${fmt(p99, 1)} ms, RSS ${fmt(rssMiB(server.pid), 0)} MiB`,
    )
  }
  await server.stop()
  removeDir(dir)
  const first = samples[0].rss
  const last = samples.at(-1)!.rss
  console.log(
    '\n' +
      table(
        ['minute', 'requests', 'errors', 'p99', 'resident memory'],
        samples.map(s => [s.minute, s.requests, s.errors, `${fmt(s.p99, 1)} ms`, `${fmt(s.rss, 0)} MiB`]),
      ),
  )
  console.log(
    `\n${totalRequests} requests, ${totalErrors} errors; memory after the last minute is ${fmt((last / first - 1) * 100, 1)} % from after the first (target: 0 errors, within ±10 %).`,
  )
}
