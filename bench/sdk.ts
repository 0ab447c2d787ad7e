/**
 * Server-side SDK paths: `client` (GET /api/client/features, write-to-visible), `metrics`
 * (POST /api/client/metrics) and `usage-memory` (the usage history's memory, in process); and the
 * SDK's side that other scenarios share: the official SDK in this process, a write until visible.
 */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createServices, JOURNAL_FILE, STATE_FILE } from '../src/services'
import { openStore } from '../src/open-store'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import {
  addClientStrategies,
  api,
  authHeaders,
  bareServer,
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
/** The data directory of `client` and `metrics`: 1,000 flags. */
const SEED = { events: 1000, flags: 1000, environments: ['development', 'production'] }

/**
 * `client`: 1,000 flags, every other one in production with a flexibleRollout, two constraints and
 * one of 20 segments, read with a client token for production:
 * - the 200 with wrk next to a bare Bun server returning the same bytes, taking turns (server first
 *   in odd runs, bare first in even); the 304 (If-None-Match) next to a bare empty body;
 * - write-to-visible (writeToVisible), one write at a time.
 */
export async function clientApi() {
  const { runs: RUNS, seconds: SECONDS, writes: WRITES } = options({ runs: 3, seconds: 10, writes: 50 })
  const [FLAGS, SEGMENTS, ENVIRONMENT] = [1000, 20, 'production']

  /** A client token's headers, and the first answer of /api/client/features: its ETag and bytes. */
  const firstAnswer = async (base: string) => {
    // Every current SDK sends Unleash-Client-Spec, so gets segments once at the top level, not inlined.
    const client = { authorization: await createToken(base, 'client', ENVIRONMENT), 'unleash-client-spec': '5.2.0' }
    const url = `${base}/api/client/features`
    const first = await fetch(url, { headers: client })
    if (first.status !== 200) throw new Error(`client features answered ${first.status}`)
    return { client, url, etag: first.headers.get('etag')!, bytes: new Uint8Array(await first.arrayBuffer()) }
  }

  /** The 304 with LOG_LEVEL=warn: no access-log line for lib.ts's reader (this process, same cores) to parse. */
  const notModifiedQuiet = (dir: string) =>
    withServer(dir, { LOG_LEVEL: 'warn' }, async server => {
      const { client, url, etag } = await firstAnswer(server.base)
      return wrk(url, { ...client, 'if-none-match': etag }, SECONDS)
    })

  const run = (dir: string, index: number) =>
    withServer(dir, {}, async server => {
      const { client, url, etag, bytes } = await firstAnswer(server.base)
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

  const runs = await withDataDir(SEED, async dir => {
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
 * `metrics`: reports of 20 flags each (metricsBody) with a client token for development:
 * - wrk next to a bare Bun server answering an empty body, taking turns as in `client`; the counts
 *   read back may exceed the answers wrk received by the 32 requests in flight it drops at its end;
 * - autocannon sending exactly `--amount` requests: the counts must equal the 2xx answers;
 * - the commits (journal lines) the runs caused, and the counts again after a restart (SIGTERM
 *   commits the last batch).
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

  const journalLines = (dir: string) => readFileSync(join(dir, JOURNAL_FILE), 'utf8').split('\n').filter(Boolean).length

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

  const runs = await withDataDir(SEED, dir =>
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
 * `usage-memory`: in this process, for each of `hours` hours every application reports every flag
 * once in every environment (MetricsService.report, on an injected clock), and the flush commits the
 * hour; the rows held, the RSS after a full collection, the state file's size after a checkpoint.
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

/** The official SDK for `secret`, polling every `refreshInterval` ms or streaming; resolves once synchronised. */
export async function officialSdk(
  base: string,
  secret: string,
  mode: 'polling' | 'streaming',
  refreshInterval?: number,
) {
  const client = new Unleash({
    url: `${base}/api`,
    appName: `bench-${mode}`,
    customHeaders: { Authorization: secret },
    disableMetrics: true,
    refreshInterval,
    storageProvider: new InMemStorageProvider(),
    ...(mode === 'streaming' ? { experimentalMode: { type: 'streaming' } as any } : {}),
  })
  await new Promise(resolve => client.once('synchronized', resolve))
  return client
}

/** Resolves with the time (performance.now()) the SDK's copy holds `flag` as `enabled`. */
export function holds(client: Unleash, flag: string, enabled: boolean) {
  return new Promise<number>(resolve => {
    const repository = (client as any).repository
    const check = () => {
      if (repository.getToggle(flag)?.enabled === enabled) {
        repository.off('changed', check)
        resolve(performance.now())
      }
    }
    repository.on('changed', check)
    check()
  })
}

/**
 * Sequential toggles of `flag` in `environment` through `writer`'s admin API, starting from
 * `enabled`; after each answer `reader`'s /api/client/features is polled (with `headers` and the
 * previous ETag) until a 200 holds the change, visible once its body has arrived. The times from
 * each write's answer and from its sending, and the polls each took.
 */
export async function writeToVisible(o: {
  writer: string
  reader: string
  headers: Record<string, string>
  flag: string
  environment: string
  writes: number
  enabled: boolean
  etag?: string
  secret?: string
}) {
  const times = { fromAnswer: [] as number[], fromSend: [] as number[], polls: [] as number[] }
  let [enabled, etag] = [o.enabled, o.etag ?? '']
  for (let i = 0; i < o.writes; i++) {
    enabled = !enabled
    const path = `/api/admin/projects/default/features/${o.flag}/environments/${o.environment}/${enabled ? 'on' : 'off'}`
    const sent = performance.now()
    await api(o.writer, 'POST', path, undefined, o.secret)
    const answered = performance.now()
    for (let polls = 1; ; polls++) {
      if (performance.now() - answered > 30_000) throw new Error(`write ${i} not visible within 30 s`)
      const headers = { ...o.headers, ...(etag ? { 'if-none-match': etag } : {}) }
      const response = await fetch(`${o.reader}/api/client/features`, { headers })
      const body = await response.arrayBuffer()
      if (response.status === 304) continue
      if (response.status !== 200) throw new Error(`client features answered ${response.status}`)
      // Checking the answer is the benchmark's own work, not timed.
      const visible = performance.now()
      etag = response.headers.get('etag') ?? ''
      const seen = JSON.parse(new TextDecoder().decode(body)) as { features: { name: string; enabled: boolean }[] }
      if (seen.features.find(f => f.name === o.flag)?.enabled !== enabled) continue
      times.fromAnswer.push(visible - answered)
      times.fromSend.push(visible - sent)
      times.polls.push(polls)
      break
    }
  }
  return times
}
