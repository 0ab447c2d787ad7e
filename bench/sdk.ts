/**
 * Server-side SDK paths: `client` (GET /api/client/features, write-to-visible) and `metrics`
 * (POST /api/client/metrics). Run through bench/run.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { JOURNAL_FILE } from '../src/services'
import {
  addClientStrategies,
  authHeaders,
  errorsOf,
  fmt,
  freePort,
  type Load,
  loadAverage,
  loadColumns,
  loadsOf,
  median,
  percentile,
  removeDir,
  ROOT,
  seedDataDir,
  startServer,
  table,
  tempDataDir,
  wrk,
  wrk as wrkFor,
} from './lib'

/**
 * The server-side SDK API (issue 12, "Speed"), run by hand:
 *
 *   npx bun bench/run.ts client [--runs 3] [--seconds 10] [--writes 50]
 *
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
  const wrk = (url: string, headers: Record<string, string>) => wrkFor(url, headers, SECONDS)

  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      writes: { type: 'string', default: '50' },
    },
  })
  const RUNS = Number(values.runs)
  const SECONDS = Number(values.seconds)
  const WRITES = Number(values.writes)
  const FLAGS = 1000
  const SEGMENTS = 20
  const ENVIRONMENT = 'production'

  async function bare(bytes: Uint8Array) {
    const dir = tempDataDir('bare-')
    const file = join(dir, 'body.json')
    writeFileSync(file, bytes)
    const port = freePort()
    const child = Bun.spawn([process.execPath, join(ROOT, 'bench/clients.ts'), 'bare', String(port), file], {
      stdout: 'pipe',
    })
    await child.stdout.getReader().read()
    return {
      url: `http://127.0.0.1:${port}`,
      stop: async () => {
        child.kill()
        await child.exited
        removeDir(dir)
      },
    }
  }

  async function clientToken(base: string, name: string) {
    const created = await fetch(`${base}/api/admin/api-tokens`, {
      method: 'POST',
      headers: authHeaders,
      body: JSON.stringify({ tokenName: name, type: 'client', projects: ['*'], environment: ENVIRONMENT }),
    })
    if (created.status !== 201) throw new Error(`token creation answered ${created.status}: ${await created.text()}`)
    // Every current SDK sends Unleash-Client-Spec, and so gets segment ids with the definitions once
    // at the top level rather than each strategy's segment constraints inlined.
    return { authorization: (await created.json()).secret as string, 'unleash-client-spec': '5.2.0' }
  }

  /**
   * The 304 path once more with LOG_LEVEL=warn: every request otherwise writes an access-log line
   * that startServer's reader (in this process, on the same two cores) parses.
   */
  async function notModifiedQuiet(dir: string, index: number) {
    const server = await startServer(dir, { LOG_LEVEL: 'warn' })
    try {
      const client = await clientToken(server.base, `bench-quiet-${index}`)
      const url = `${server.base}/api/client/features`
      const first = await fetch(url, { headers: client })
      await first.arrayBuffer()
      return await wrk(url, { ...client, 'if-none-match': first.headers.get('etag')! })
    } finally {
      await server.stop()
    }
  }

  async function run(dir: string, index: number) {
    const server = await startServer(dir)
    try {
      const client = await clientToken(server.base, `bench-client-${index}`)
      const url = `${server.base}/api/client/features`
      const first = await fetch(url, { headers: client })
      if (first.status !== 200) throw new Error(`client features answered ${first.status}`)
      const etag = first.headers.get('etag')!
      const bytes = new Uint8Array(await first.arrayBuffer())
      const body = JSON.parse(new TextDecoder().decode(bytes))
      const withSegments = body.features.filter((f: { strategies: { segments?: number[] }[] }) =>
        f.strategies.some(s => s.segments?.length),
      ).length

      const ceilingServer = await bare(bytes)
      let features: Load, ceiling: Load
      if (index % 2 === 0) {
        features = await wrk(url, client)
        ceiling = await wrk(ceilingServer.url, {})
      } else {
        ceiling = await wrk(ceilingServer.url, {})
        features = await wrk(url, client)
      }
      await ceilingServer.stop()
      const notModified = await wrk(url, { ...client, 'if-none-match': etag })
      // The smallest answer a bare Bun server gives: the ceiling for the 304 path on this machine.
      const emptyServer = await bare(new Uint8Array(0))
      const emptyCeiling = await wrk(emptyServer.url, {})
      await emptyServer.stop()

      // Write-to-visible: flag-0 has the flexibleRollout; toggling it changes what production serves.
      const flag = 'flag-0'
      const toggleUrl = (on: boolean) =>
        `${server.base}/api/admin/projects/default/features/${flag}/environments/${ENVIRONMENT}/${on ? 'on' : 'off'}`
      let enabled = body.features.find((f: { name: string }) => f.name === flag).enabled as boolean
      let current = etag
      const load = loadAverage()
      const ackToVisible: number[] = []
      const writeToVisible: number[] = []
      const polls: number[] = []
      // An even number of writes leaves the flag as it was, so every run starts from the same state.
      for (let i = 0; i < WRITES + (WRITES % 2); i++) {
        const started = performance.now()
        const write = await fetch(toggleUrl(!enabled), { method: 'POST', headers: authHeaders })
        await write.arrayBuffer()
        if (write.status !== 200 && write.status !== 204) throw new Error(`toggle answered ${write.status}`)
        enabled = !enabled
        const acknowledged = performance.now()
        let count = 0
        let visible = 0
        for (;;) {
          count++
          const response = await fetch(url, { headers: { ...client, 'if-none-match': current } })
          if (response.status === 200) {
            const received = await response.arrayBuffer()
            // Visible once the body has arrived; checking it is the benchmark's own work, not timed.
            visible = performance.now()
            const seen = JSON.parse(new TextDecoder().decode(received))
            const next = response.headers.get('etag')!
            if (next === current || seen.features.find((f: { name: string }) => f.name === flag).enabled !== enabled)
              throw new Error('a 200 without the write')
            current = next
            break
          }
          await response.arrayBuffer()
          if (response.status !== 304) throw new Error(`client features answered ${response.status}`)
        }
        ackToVisible.push(visible - acknowledged)
        writeToVisible.push(visible - started)
        polls.push(count)
      }
      // The same GET with nothing changed, for comparison: what fetching 400 KiB costs by itself.
      const plain: number[] = []
      for (let i = 0; i < WRITES; i++) {
        const started = performance.now()
        await (await fetch(url, { headers: client })).arrayBuffer()
        plain.push(performance.now() - started)
      }
      plain.sort((a, b) => a - b)
      ackToVisible.sort((a, b) => a - b)
      writeToVisible.sort((a, b) => a - b)
      return {
        bytes: bytes.length,
        flags: body.features.length,
        withSegments,
        features,
        ceiling,
        notModified,
        emptyCeiling,
        visible: {
          load,
          ackP50: percentile(ackToVisible, 50),
          ackP99: percentile(ackToVisible, 99),
          p50: percentile(writeToVisible, 50),
          p99: percentile(writeToVisible, 99),
          maxPolls: Math.max(...polls),
          plainGetP50: percentile(plain, 50),
        },
      }
    } finally {
      await server.stop()
    }
  }

  const dir = tempDataDir()
  seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ['development', 'production'] })
  addClientStrategies(dir, { flags: FLAGS, segments: SEGMENTS, environment: ENVIRONMENT })
  try {
    const runs: (Awaited<ReturnType<typeof run>> & { notModifiedQuiet: Load })[] = []
    for (let i = 0; i < RUNS; i++) {
      runs.push({ ...(await run(dir, i)), notModifiedQuiet: await notModifiedQuiet(dir, i) })
      console.log(
        `run ${i + 1}:`,
        JSON.stringify(runs.at(-1), (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)),
      )
    }
    const m = (pick: (r: (typeof runs)[number]) => number) => median(runs.map(pick))
    const loads = (pick: (r: (typeof runs)[number]) => number) => loadsOf(runs, pick)
    const row = (
      name: string,
      load: (r: (typeof runs)[number]) => Load,
      ceiling: ((r: (typeof runs)[number]) => Load) | null,
      target: string,
    ) => [name, ...loadColumns(runs, load, ceiling), errorsOf(runs, load), loads(r => load(r).load), target]
    console.log(
      `\n${runs[0].flags} flags (${runs[0].withSegments} with constraints and a segment), ${fmt(runs[0].bytes / 1024, 0)} KiB per answer; ${RUNS} runs, wrk ${SECONDS} s, ${WRITES} writes.\n`,
    )
    console.log(
      table(
        [
          'scenario',
          'requests/s',
          'p50',
          'p99',
          'bare Bun requests/s',
          'ratio',
          'errors',
          'load average per run',
          'target',
        ],
        [
          row(
            'GET /api/client/features, 200 (wrk, 32 connections)',
            r => r.features,
            r => r.ceiling,
            'ratio ≥ 0.5',
          ),
          row(
            'GET /api/client/features, If-None-Match → 304 (vs bare Bun, empty body)',
            r => r.notModified,
            r => r.emptyCeiling,
            '≥ 30,000/s',
          ),
          row(
            'the same 304, LOG_LEVEL=warn (no access-log line)',
            r => r.notModifiedQuiet,
            r => r.emptyCeiling,
            '≥ 30,000/s',
          ),
          [
            `write-to-visible (${WRITES} toggles, sequential): from the write's answer / from sending it`,
            '',
            `${fmt(
              m(r => r.visible.ackP50),
              2,
            )} / ${fmt(
              m(r => r.visible.p50),
              2,
            )} ms`,
            `${fmt(
              m(r => r.visible.ackP99),
              2,
            )} / ${fmt(
              m(r => r.visible.p99),
              2,
            )} ms`,
            '',
            '',
            '0',
            loads(r => r.visible.load),
            'p50 ≤ 5 ms',
          ],
        ],
      ),
    )
  } finally {
    removeDir(dir)
  }
}

/**
 * SDK metrics (issue 13, "Speed"), run by hand:
 *
 *   npx bun bench/run.ts metrics [--runs 3] [--seconds 10] [--amount 100000]
 *
 * 1,000 flags. Every request is the report of an SDK that evaluated 20 flags (yes 1, no 0 each,
 * variants on five of them), sent with a client token for development.
 * - `POST /api/client/metrics` with wrk (32 connections, a Lua script for the POST body), next to a
 *   bare Bun server answering the same POSTs with an empty body (the two alternate within each run:
 *   server first in odd runs, bare first in even); then the
 *   counts read through GET /api/admin/client-metrics/features/flag-0, compared with the number of
 *   responses wrk received (wrk drops the requests in flight when it stops, which the server may
 *   still have counted: at most 32 more);
 * - the same with autocannon sending exactly `--amount` requests, where the counts must equal the
 *   2xx answers exactly;
 * - the commits (journal lines) the runs caused, and the counts again after a restart (SIGTERM
 *   commits the last batch).
 * Prints every run's figures with the load average, then medians of runs.
 */
export async function sdkMetrics() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      amount: { type: 'string', default: '100000' },
    },
  })
  const RUNS = Number(values.runs)
  const SECONDS = Number(values.seconds)
  const AMOUNT = Number(values.amount)
  const FLAGS = 1000
  const REPORTED = 20

  function body(appName: string): string {
    const toggles: Record<string, unknown> = {}
    for (let i = 0; i < REPORTED; i++)
      toggles[`flag-${i}`] = { yes: 1, no: 0, variants: i % 4 === 0 ? { blue: 1 } : {} }
    const now = new Date().toISOString()
    return JSON.stringify({
      appName,
      instanceId: `${appName}-1`,
      environment: 'development',
      bucket: { start: now, stop: now, toggles },
    })
  }

  async function clientToken(base: string, name: string): Promise<string> {
    const created = await fetch(`${base}/api/admin/api-tokens`, {
      method: 'POST',
      headers: authHeaders,
      body: JSON.stringify({ tokenName: name, type: 'client', projects: ['*'], environment: 'development' }),
    })
    if (created.status !== 201) throw new Error(`token creation answered ${created.status}: ${await created.text()}`)
    return (await created.json()).secret
  }

  /** flag-0's yes count and its variant count, over every row of the application. */
  async function counted(base: string, appName: string): Promise<{ yes: number; blue: number }> {
    const response = await fetch(`${base}/api/admin/client-metrics/features/flag-0`, { headers: authHeaders })
    const usage = await response.json()
    const rows = usage.lastHourUsage.filter((row: { appName: string }) => row.appName === appName)
    return {
      yes: rows.reduce((n: number, row: { yes: number }) => n + row.yes, 0),
      blue: rows.reduce((n: number, row: { variants: { blue?: number } }) => n + (row.variants.blue ?? 0), 0),
    }
  }

  /** A bare Bun server answering every request with an empty body (bench/clients.ts bare). */
  async function bare(dir: string) {
    const file = join(dir, 'empty.json')
    writeFileSync(file, '')
    const port = freePort()
    const child = Bun.spawn([process.execPath, join(ROOT, 'bench/clients.ts'), 'bare', String(port), file], {
      stdout: 'pipe',
    })
    await child.stdout.getReader().read()
    return {
      url: `http://127.0.0.1:${port}/api/client/metrics`,
      stop: async () => {
        child.kill()
        await child.exited
      },
    }
  }

  const journalLines = (dir: string) =>
    readFileSync(join(dir, JOURNAL_FILE), 'utf8')
      .split('\n')
      .filter(line => line !== '').length

  async function run(dir: string, index: number) {
    let server = await startServer(dir)
    try {
      const token = await clientToken(server.base, `bench-sdk-${index}`)
      const url = `${server.base}/api/client/metrics`
      const wrkApp = `wrk-app-${index}`
      const script = join(dir, `post-${index}.lua`)
      writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body(wrkApp))}\n`)
      const headers = { authorization: token, 'content-type': 'application/json' }
      const ceilingServer = await bare(dir)
      const ceilingRun = () => wrk(ceilingServer.url, headers, SECONDS, ['-s', script])
      const commitsBefore = journalLines(dir)
      let ceiling: Load | undefined
      if (index % 2 === 1) ceiling = await ceilingRun()
      const load = await wrk(url, headers, SECONDS, ['-s', script])
      const afterWrk = await counted(server.base, wrkApp)
      if (index % 2 === 0) ceiling = await ceilingRun()
      await ceilingServer.stop()

      const cannonApp = `cannon-app-${index}`
      const cannonLoad = loadAverage()
      const result = await autocannon({
        url,
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: body(cannonApp),
        connections: 32,
        amount: AMOUNT,
      })
      const cannon: Load = {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.non2xx,
        load: cannonLoad,
        requests: result['2xx'],
      }
      const afterCannon = await counted(server.base, cannonApp)
      const commits = journalLines(dir) - commitsBefore

      await server.stop()
      server = await startServer(dir)
      const restarted = { wrk: await counted(server.base, wrkApp), cannon: await counted(server.base, cannonApp) }
      return {
        wrk: load,
        ceiling: ceiling!,
        afterWrk,
        cannon,
        afterCannon,
        commits,
        restarted,
        seconds: SECONDS + result.duration,
      }
    } finally {
      await server.stop()
    }
  }

  const dir = tempDataDir('bench-metrics-')
  seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ['development', 'production'] })
  try {
    const runs: Awaited<ReturnType<typeof run>>[] = []
    for (let i = 0; i < RUNS; i++) {
      const result = await run(dir, i)
      runs.push(result)
      console.log(
        `run ${i + 1}:`,
        JSON.stringify(result, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)),
      )
      const { wrk: w, afterWrk, cannon, afterCannon, restarted } = result
      const inFlight = afterWrk.yes - w.requests!
      if (inFlight < 0 || inFlight > 32 || afterWrk.blue !== afterWrk.yes)
        throw new Error(`wrk run: ${afterWrk.yes} counted for ${w.requests} answered`)
      if (afterCannon.yes !== cannon.requests || afterCannon.blue !== cannon.requests)
        throw new Error(`autocannon run: ${afterCannon.yes} counted for ${cannon.requests} answered`)
      if (JSON.stringify(restarted) !== JSON.stringify({ wrk: afterWrk, cannon: afterCannon }))
        throw new Error('the counts changed across the restart')
    }
    const loads = (pick: (r: (typeof runs)[number]) => Load) => loadsOf(runs, r => pick(r).load)
    console.log(
      `\n${FLAGS} flags; each request reports ${REPORTED} flags; ${RUNS} runs, wrk ${SECONDS} s, autocannon ${AMOUNT} requests.\n`,
    )
    console.log(
      table(
        [
          'scenario',
          'requests/s',
          'p50',
          'p99',
          'bare Bun requests/s',
          'ratio',
          'answered',
          'counted',
          'errors',
          'load average per run',
          'target',
        ],
        [
          [
            'POST /api/client/metrics (wrk, 32 connections)',
            ...loadColumns(
              runs,
              r => r.wrk,
              r => r.ceiling,
            ),
            runs.map(r => r.wrk.requests).join(', '),
            runs.map(r => r.afterWrk.yes).join(', '),
            errorsOf(runs, r => r.wrk),
            loads(r => r.wrk),
            '≥ 10,000/s',
          ],
          [
            `POST /api/client/metrics (autocannon, 32 connections, exactly ${AMOUNT})`,
            ...loadColumns(runs, r => r.cannon),
            runs.map(r => r.cannon.requests).join(', '),
            runs.map(r => r.afterCannon.yes).join(', '),
            errorsOf(runs, r => r.cannon),
            loads(r => r.cannon),
            'counts exact',
          ],
        ],
      ),
    )
    console.log(
      `\ncommits (journal lines) per run, for ${runs.map(r => (r.wrk.requests ?? 0) + (r.cannon.requests ?? 0)).join(', ')} requests in ${runs.map(r => fmt(r.seconds, 0)).join(', ')} s: ${runs.map(r => r.commits).join(', ')}`,
    )
    console.log('counts after a restart: equal in every run')
  } finally {
    removeDir(dir)
  }
}
