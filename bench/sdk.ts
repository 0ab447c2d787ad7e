/**
 * Server-side SDK paths: `client` (GET /api/client/features, write-to-visible), `metrics`
 * (POST /api/client/metrics) and `usage-memory` (the usage history's memory, in process). Run
 * through bench/run.ts.
 */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createServices, JOURNAL_FILE, STATE_FILE } from '../src/services'
import { openStore } from '../src/open-store'
import { bareServer, writeToVisible } from './clients'
import {
  addClientStrategies,
  authHeaders,
  cannon,
  createToken,
  errorsOf,
  fmt,
  fmtMedian,
  inTurn,
  type Load,
  loadAverage,
  loadColumns,
  loadsOf,
  luaScript,
  metricsBody,
  mib,
  options,
  repeat,
  spread,
  startServer,
  table,
  withDataDir,
  withServer,
  wrk,
} from './lib'

const COLUMNS = ['scenario', 'requests/s', 'p50', 'p99', 'bare Bun requests/s', 'ratio']
const USAGE = { flags: 1000, environments: 3, apps: 20, hours: 48 }

/**
 * `client`: the server-side SDK API:
 * 1,000 flags; in production every other flag has a flexibleRollout with two constraints and one
 * of 20 segments, the others a default strategy. A client token for production reads them.
 * - `GET /api/client/features` with wrk (32 connections), next to a bare Bun server returning the
 *   same bytes; the two alternate within each run (server first in odd runs, bare first in even);
 * - the 304 path: the same request with If-None-Match: <current ETag>, next to a bare Bun server
 *   answering an empty body, and once more from a server started with LOG_LEVEL=warn;
 * - write-to-visible: toggle a flag in production through the admin API, then poll the SDK
 *   endpoint with the old ETag until it answers 200 with a new one; sequential, one write at a time.
 * Prints every run's figures with the load average, then medians of runs.
 */
export async function clientApi() {
  const { runs: RUNS, seconds: SECONDS, writes: WRITES } = options({ runs: 3, seconds: 10, writes: 50 })
  const [FLAGS, SEGMENTS, ENVIRONMENT] = [1000, 20, 'production']

  /**
   * A client token for production. Every current SDK sends Unleash-Client-Spec, and so gets segment
   * ids with the definitions once at the top level rather than each strategy's constraints inlined.
   */
  const clientHeaders = async (base: string) => {
    const authorization = await createToken(base, 'client', ENVIRONMENT)
    return { authorization, 'unleash-client-spec': '5.2.0' }
  }

  /**
   * The 304 path once more with LOG_LEVEL=warn: every request otherwise writes an access-log line
   * that the server reader of bench/lib.ts (in this process, on the same two cores) parses.
   */
  const notModifiedQuiet = (dir: string) =>
    withServer(dir, { LOG_LEVEL: 'warn' }, async server => {
      const client = await clientHeaders(server.base)
      const url = `${server.base}/api/client/features`
      const first = await fetch(url, { headers: client })
      await first.arrayBuffer()
      return wrk(url, { ...client, 'if-none-match': first.headers.get('etag')! }, SECONDS)
    })

  const run = (dir: string, index: number) =>
    withServer(dir, {}, async server => {
      const client = await clientHeaders(server.base)
      const url = `${server.base}/api/client/features`
      const first = await fetch(url, { headers: client })
      if (first.status !== 200) throw new Error(`client features answered ${first.status}`)
      const etag = first.headers.get('etag')!
      const bytes = new Uint8Array(await first.arrayBuffer())
      type Features = { features: { name: string; enabled: boolean; strategies: { segments?: number[] }[] }[] }
      const body = JSON.parse(new TextDecoder().decode(bytes)) as Features
      const withSegments = body.features.filter(f => f.strategies.some(s => s.segments?.length)).length

      const bare = await bareServer(bytes)
      const [features, ceiling] = await inTurn(
        index % 2 === 0,
        () => wrk(url, client, SECONDS),
        () => wrk(bare.url, {}, SECONDS),
      )
      await bare.stop()
      const notModified = await wrk(url, { ...client, 'if-none-match': etag }, SECONDS)
      // The smallest answer a bare Bun server gives: the ceiling for the 304 path on this machine.
      const empty = await bareServer('')
      const emptyCeiling = await wrk(empty.url, {}, SECONDS)
      await empty.stop()

      // flag-0 has the flexibleRollout: toggling it changes what production serves. An even number
      // of writes leaves the flag as it was, so every run starts from the same state.
      const load = loadAverage()
      const visible = await writeToVisible({
        ...{ writer: server.base, reader: server.base, headers: client, flag: 'flag-0', environment: ENVIRONMENT },
        ...{ writes: WRITES + (WRITES % 2), enabled: body.features.find(f => f.name === 'flag-0')!.enabled, etag },
      })
      // The same GET with nothing changed, for comparison: what fetching 400 KiB costs by itself.
      const plain: number[] = []
      for (let i = 0; i < WRITES; i++) {
        const started = performance.now()
        await (await fetch(url, { headers: client })).arrayBuffer()
        plain.push(performance.now() - started)
      }
      const [ack, sent] = [spread(visible.fromAnswer), spread(visible.fromSend)]
      return {
        ...{ bytes: bytes.length, flags: body.features.length, withSegments },
        ...{ features, ceiling, notModified, emptyCeiling },
        visible: {
          ...{ load, ackP50: ack.p50, ackP99: ack.p99, p50: sent.p50, p99: sent.p99 },
          ...{ maxPolls: Math.max(...visible.polls), plainGetP50: spread(plain).p50 },
        },
      }
    })

  const seed = { events: 1000, flags: FLAGS, environments: ['development', 'production'] }
  const runs = await withDataDir(seed, async dir => {
    addClientStrategies(dir, { flags: FLAGS, segments: SEGMENTS, environment: ENVIRONMENT })
    return repeat(RUNS, async i => ({ ...(await run(dir, i)), notModifiedQuiet: await notModifiedQuiet(dir) }))
  })
  type Run = (typeof runs)[number]
  const row = (name: string, pick: (r: Run) => [Load, Load], target: string) => [
    name,
    ...loadColumns(runs, pick),
    errorsOf(runs, pick),
    loadsOf(runs, r => pick(r)[0].load),
    target,
  ]
  const both = (pick: (r: Run) => [number, number]) =>
    `${fmtMedian(runs, 2, r => pick(r)[0])} / ${fmtMedian(runs, 2, r => pick(r)[1])} ms`
  const { flags, withSegments, bytes } = runs[0]
  console.log(
    `\n${flags} flags (${withSegments} with constraints and a segment), ${fmt(bytes / 1024, 0)} KiB per answer; ${RUNS} runs, wrk ${SECONDS} s, ${WRITES} writes.\n`,
  )
  const notModified = 'GET /api/client/features, If-None-Match → 304 (vs bare Bun, empty body)'
  console.log(
    table(
      [...COLUMNS, 'errors', 'load average per run', 'target'],
      [
        row('GET /api/client/features, 200 (wrk, 32 connections)', r => [r.features, r.ceiling], 'ratio ≥ 0.5'),
        row(notModified, r => [r.notModified, r.emptyCeiling], '≥ 30,000/s'),
        row(
          'the same 304, LOG_LEVEL=warn (no access-log line)',
          r => [r.notModifiedQuiet, r.emptyCeiling],
          '≥ 30,000/s',
        ),
        [
          `write-to-visible (${WRITES} toggles, sequential): from the write's answer / from sending it`,
          '',
          both(r => [r.visible.ackP50, r.visible.p50]),
          both(r => [r.visible.ackP99, r.visible.p99]),
          '',
          '',
          '0',
          loadsOf(runs, r => r.visible.load),
          'p50 ≤ 5 ms',
        ],
      ],
    ),
  )
}

/**
 * `metrics`, SDK metrics:
 * 1,000 flags. Every request is the report of an SDK that evaluated 20 flags (yes 1, no 0 each,
 * variants on five of them), sent with a client token for development.
 * - `POST /api/client/metrics` with wrk (32 connections, a Lua script for the POST body), next to a
 *   bare Bun server answering the same POSTs with an empty body (the two alternate within each run:
 *   server first in odd runs, bare first in even); then the counts read through
 *   GET /api/admin/client-metrics/features/flag-0, compared with the number of responses wrk
 *   received (wrk drops the requests in flight when it stops, which the server may still have
 *   counted: at most 32 more);
 * - the same with autocannon sending exactly `--amount` requests, where the counts must equal the
 *   2xx answers exactly;
 * - the commits (journal lines) the runs caused, and the counts again after a restart (SIGTERM
 *   commits the last batch).
 * Prints every run's figures with the load average, then medians of runs.
 */
export async function sdkMetrics() {
  const { runs: RUNS, seconds: SECONDS, amount: AMOUNT } = options({ runs: 3, seconds: 10, amount: 100000 })
  const [FLAGS, REPORTED] = [1000, 20]

  /** flag-0's yes count and its variant count, over every row of the application. */
  async function counted(base: string, appName: string): Promise<{ yes: number; blue: number }> {
    const response = await fetch(`${base}/api/admin/client-metrics/features/flag-0`, { headers: authHeaders })
    type Row = { appName: string; yes: number; variants: { blue?: number } }
    const rows = ((await response.json()).lastHourUsage as Row[]).filter(row => row.appName === appName)
    return {
      yes: rows.reduce((n, row) => n + row.yes, 0),
      blue: rows.reduce((n, row) => n + (row.variants.blue ?? 0), 0),
    }
  }

  const journalLines = (dir: string) =>
    readFileSync(join(dir, JOURNAL_FILE), 'utf8')
      .split('\n')
      .filter(line => line !== '').length

  async function run(dir: string, index: number) {
    let server = await startServer(dir)
    try {
      const token = await createToken(server.base, 'client', 'development')
      const headers = { authorization: token, 'content-type': 'application/json' }
      const url = `${server.base}/api/client/metrics`
      const [wrkApp, cannonApp] = [`wrk-app-${index}`, `cannon-app-${index}`]
      const script = luaScript(
        dir,
        `post-${index}`,
        `wrk.method = "POST"\nwrk.body = ${JSON.stringify(metricsBody(REPORTED, wrkApp))}\n`,
      )
      const bare = await bareServer('', '/api/client/metrics')
      const commitsBefore = journalLines(dir)
      const served = async () => ({
        load: await wrk(url, headers, SECONDS, ['-s', script]),
        after: await counted(server.base, wrkApp),
      })
      const [{ load, after: afterWrk }, ceiling] = await inTurn(index % 2 === 0, served, () =>
        wrk(bare.url, headers, SECONDS, ['-s', script]),
      )
      await bare.stop()

      const cannonLoad = await cannon({
        url,
        method: 'POST',
        headers,
        body: metricsBody(REPORTED, cannonApp),
        amount: AMOUNT,
      })
      const afterCannon = await counted(server.base, cannonApp)
      const commits = journalLines(dir) - commitsBefore
      await server.stop()
      server = await startServer(dir)
      const restarted = { wrk: await counted(server.base, wrkApp), cannon: await counted(server.base, cannonApp) }
      const seconds = SECONDS + cannonLoad.seconds
      return { wrk: load, ceiling, afterWrk, cannon: cannonLoad, afterCannon, commits, restarted, seconds }
    } finally {
      await server.stop()
    }
  }

  const seed = { events: 1000, flags: FLAGS, environments: ['development', 'production'] }
  const runs = await withDataDir(seed, dir =>
    repeat(RUNS, async i => {
      const result = await run(dir, i)
      const { wrk: w, afterWrk, cannon, afterCannon, restarted } = result
      const inFlight = afterWrk.yes - w.requests!
      if (inFlight < 0 || inFlight > 32 || afterWrk.blue !== afterWrk.yes)
        throw new Error(`wrk run: ${afterWrk.yes} counted for ${w.requests} answered`)
      if (afterCannon.yes !== cannon.requests || afterCannon.blue !== cannon.requests)
        throw new Error(`autocannon run: ${afterCannon.yes} counted for ${cannon.requests} answered`)
      if (JSON.stringify(restarted) !== JSON.stringify({ wrk: afterWrk, cannon: afterCannon }))
        throw new Error('the counts changed across the restart')
      return result
    }),
  )
  type Run = (typeof runs)[number]
  const cells = (pick: (r: Run) => [Load, number]) => [
    runs.map(r => pick(r)[0].requests).join(', '),
    runs.map(r => pick(r)[1]).join(', '),
    errorsOf(runs, r => pick(r)[0]),
    loadsOf(runs, r => pick(r)[0].load),
  ]
  console.log(
    `\n${FLAGS} flags; each request reports ${REPORTED} flags; ${RUNS} runs, wrk ${SECONDS} s, autocannon ${AMOUNT} requests.\n`,
  )
  const exactly = `POST /api/client/metrics (autocannon, 32 connections, exactly ${AMOUNT})`
  console.log(
    table(
      [...COLUMNS, 'answered', 'counted', 'errors', 'load average per run', 'target'],
      [
        [
          'POST /api/client/metrics (wrk, 32 connections)',
          ...loadColumns(runs, r => [r.wrk, r.ceiling]),
          ...cells(r => [r.wrk, r.afterWrk.yes]),
          '≥ 10,000/s',
        ],
        [exactly, ...loadColumns(runs, r => r.cannon), ...cells(r => [r.cannon, r.afterCannon.yes]), 'counts exact'],
      ],
    ),
  )
  const requests = runs.map(r => (r.wrk.requests ?? 0) + (r.cannon.requests ?? 0)).join(', ')
  const seconds = runs.map(r => fmt(r.seconds, 0)).join(', ')
  console.log(
    `\ncommits (journal lines) per run, for ${requests} requests in ${seconds} s: ${runs.map(r => r.commits).join(', ')}`,
  )
  console.log('counts after a restart: equal in every run')
}

/**
 * `usage-memory`: the usage history's memory:
 * In this process, a data directory of `flags` flags; then for each of `hours` hours every
 * application reports every flag once in every environment (through MetricsService.report, on an
 * injected clock) and the flush commits the hour. Prints the rows held and the RSS (after a full
 * collection) before and after, and the state file's size after a checkpoint.
 */
export async function usageMemory() {
  const { flags: FLAGS, environments: ENVS, apps: APPS, hours: HOURS } = options(USAGE)
  const environments = Array.from({ length: ENVS }, (_, i) => `env-${i}`)
  const rss = () => (Bun.gc(true), process.memoryUsage().rss / 2 ** 20)
  const toggles: Record<string, { yes: number; no: number; variants: Record<string, number> }> = {}
  for (let f = 0; f < FLAGS; f++) toggles[`flag-${f}`] = { yes: 3, no: 1, variants: {} }
  await withDataDir({ events: 1, flags: FLAGS, environments }, async dir => {
    let now = Date.UTC(2026, 0, 1)
    const store = await openStore(dir, { sync: false })
    const services = createServices(store, { metricsFlushMs: 3_600_000, metricsClock: () => new Date(now) })
    const before = rss()
    const started = performance.now()
    for (let hour = 0; hour < HOURS; hour++) {
      now = Date.UTC(2026, 0, 1) + hour * 3_600_000
      for (const environment of environments)
        for (let a = 0; a < APPS; a++) {
          const report = { appName: `app-${a}`, instanceId: 'i-1', bucket: { start: 0, stop: 0, toggles } }
          services.metrics.report({ projects: ['*'], environment }, report, null)
        }
      await services.metrics.flush()
    }
    const seconds = (performance.now() - started) / 1000
    const after = rss()
    const { usageRows, usageSeries } = services.metrics.sizes
    const answered = (await services.metrics.featureHistory('flag-0', '48')).data.length
    await store.close()
    const offered = FLAGS * ENVS * APPS * HOURS
    console.log(
      `${FLAGS} flags × ${ENVS} environments × ${APPS} applications × ${HOURS} hours reported ` +
        `(${offered} rows offered) in ${fmt(seconds)} s`,
    )
    console.log(`rows held: ${usageRows} in ${usageSeries} series; RSS ${mib(before)} before, ${mib(after)} after`)
    console.log(`GET …/features/flag-0/raw?hoursBack=48 answers ${answered} rows`)
    console.log(`state.json after the last checkpoint: ${fmt(statSync(join(dir, STATE_FILE)).size / 2 ** 20)} MiB`)
  })
}
