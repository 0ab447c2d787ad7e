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
import autocannon from 'autocannon'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { authHeaders, errorsOf, loadColumns, fmt, freePort, median, percentile, removeDir, ROOT, SECRET, seedDataDir, startServer, table, tempDataDir, loadAverage, wrk as wrkFor, type Load } from './lib'

const wrk = (url: string, headers: Record<string, string>) => wrkFor(url, headers, SECONDS)

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' } } })
const RUNS = Number(values.runs)
const SECONDS = Number(values.seconds)

async function cannon(options: { url: string; method?: string; headers?: Record<string, string>; body?: string }): Promise<Load> {
  const load = loadAverage()
  const result = await autocannon({ url: options.url, method: (options.method ?? 'GET') as 'GET', headers: options.headers, body: options.body, connections: 32, duration: SECONDS })
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx, load }
}

async function bare(bytes: Uint8Array) {
  const file = join(tempDataDir('bare-'), 'body.json')
  writeFileSync(file, bytes)
  const port = freePort()
  const child = Bun.spawn([process.execPath, join(ROOT, 'bench/bare-server.ts'), String(port), file], { stdout: 'pipe' })
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

    const validate = await cannon({ url: `${server.base}/api/admin/features/validate`, method: 'POST', headers: authHeaders, body: JSON.stringify({ name: 'a-free-name' }) })
    const health = await cannon({ url: `${server.base}/health` })
    const smallBare = await bare(new TextEncoder().encode('{"health":"GOOD"}'))
    const healthCeiling = await cannon({ url: smallBare.url })
    smallBare.stop()

    const names = Array.from({ length: 1000 }, (_, i) => `flag-${i}`)
    const bulk = (state: 'on' | 'off') =>
      fetch(`${server.base}/api/admin/projects/default/bulk_features/environments/production/${state}`, { method: 'POST', headers: authHeaders, body: JSON.stringify({ features: names }) })
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
    return { list, listCeiling, listBytes: listBytes.length, validate, health, healthCeiling, bulkOff: { p50: percentile(offTimes, 50), p99: percentile(offTimes, 99) } }
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
    console.log(`run ${i + 1}:`, JSON.stringify(runs.at(-1), (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)))
  }
  const m = (pick: (r: (typeof runs)[number]) => number) => median(runs.map(pick))
  const row = (name: string, load: (r: (typeof runs)[number]) => Load, ceiling?: (r: (typeof runs)[number]) => Load, target = '') => [
    name,
    ...loadColumns(runs, load, ceiling),
    errorsOf(runs, load),
    target,
  ]
  console.log(`\nProject list: ${fmt(runs[0].listBytes / 1024, 0)} KiB per answer.\n`)
  console.log(table(
    ['scenario', 'requests/s', 'p50', 'p99', 'bare Bun requests/s', 'ratio', 'errors', 'target'],
    [
      row('project feature list, 1,000 flags × 3 environments (wrk)', (r) => r.list, (r) => r.listCeiling, 'ratio ≥ 0.5'),
      row('POST /api/admin/features/validate (autocannon)', (r) => r.validate, (r) => r.healthCeiling, '≥ 15,000/s'),
      row('GET /health (autocannon)', (r) => r.health, (r) => r.healthCeiling),
      ['bulk off of 1,000 flags, sequential', '', `${fmt(m((r) => r.bulkOff.p50), 2)} ms`, `${fmt(m((r) => r.bulkOff.p99), 2)} ms`, '', '', '0', 'p50 ≤ 50 ms'],
    ],
  ))
} finally {
  removeDir(dir)
}
