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
import autocannon from 'autocannon'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { JOURNAL_FILE } from '../src/services'
import { authHeaders, errorsOf, loadColumns, loadsOf, fmt, freePort, loadAverage, removeDir, ROOT, seedDataDir, startServer, table, tempDataDir, wrk, type Load } from './lib'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, amount: { type: 'string', default: '100000' } } })
const RUNS = Number(values.runs)
const SECONDS = Number(values.seconds)
const AMOUNT = Number(values.amount)
const FLAGS = 1000
const REPORTED = 20

function body(appName: string): string {
  const toggles: Record<string, unknown> = {}
  for (let i = 0; i < REPORTED; i++) toggles[`flag-${i}`] = { yes: 1, no: 0, variants: i % 4 === 0 ? { blue: 1 } : {} }
  const now = new Date().toISOString()
  return JSON.stringify({ appName, instanceId: `${appName}-1`, environment: 'development', bucket: { start: now, stop: now, toggles } })
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
  return { yes: rows.reduce((n: number, row: { yes: number }) => n + row.yes, 0), blue: rows.reduce((n: number, row: { variants: { blue?: number } }) => n + (row.variants.blue ?? 0), 0) }
}

/** A bare Bun server answering every request with an empty body (bench/bare-server.ts). */
async function bare(dir: string) {
  const file = join(dir, 'empty.json')
  writeFileSync(file, '')
  const port = freePort()
  const child = Bun.spawn([process.execPath, join(ROOT, 'bench/bare-server.ts'), String(port), file], { stdout: 'pipe' })
  await child.stdout.getReader().read()
  return {
    url: `http://127.0.0.1:${port}/api/client/metrics`,
    stop: async () => {
      child.kill()
      await child.exited
    },
  }
}

const journalLines = (dir: string) => readFileSync(join(dir, JOURNAL_FILE), 'utf8').split('\n').filter((line) => line !== '').length

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
    const result = await autocannon({ url, method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: body(cannonApp), connections: 32, amount: AMOUNT })
    const cannon: Load = { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx, load: cannonLoad, requests: result['2xx'] }
    const afterCannon = await counted(server.base, cannonApp)
    const commits = journalLines(dir) - commitsBefore

    await server.stop()
    server = await startServer(dir)
    const restarted = { wrk: await counted(server.base, wrkApp), cannon: await counted(server.base, cannonApp) }
    return { wrk: load, ceiling: ceiling!, afterWrk, cannon, afterCannon, commits, restarted, seconds: SECONDS + result.duration }
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
    console.log(`run ${i + 1}:`, JSON.stringify(result, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)))
    const { wrk: w, afterWrk, cannon, afterCannon, restarted } = result
    const inFlight = afterWrk.yes - w.requests!
    if (inFlight < 0 || inFlight > 32 || afterWrk.blue !== afterWrk.yes) throw new Error(`wrk run: ${afterWrk.yes} counted for ${w.requests} answered`)
    if (afterCannon.yes !== cannon.requests || afterCannon.blue !== cannon.requests) throw new Error(`autocannon run: ${afterCannon.yes} counted for ${cannon.requests} answered`)
    if (JSON.stringify(restarted) !== JSON.stringify({ wrk: afterWrk, cannon: afterCannon })) throw new Error('the counts changed across the restart')
  }
  const loads = (pick: (r: (typeof runs)[number]) => Load) => loadsOf(runs, (r) => pick(r).load)
  console.log(`\n${FLAGS} flags; each request reports ${REPORTED} flags; ${RUNS} runs, wrk ${SECONDS} s, autocannon ${AMOUNT} requests.\n`)
  console.log(table(
    ['scenario', 'requests/s', 'p50', 'p99', 'bare Bun requests/s', 'ratio', 'answered', 'counted', 'errors', 'load average per run', 'target'],
    [
      ['POST /api/client/metrics (wrk, 32 connections)', ...loadColumns(runs, (r) => r.wrk, (r) => r.ceiling),
        runs.map((r) => r.wrk.requests).join(', '), runs.map((r) => r.afterWrk.yes).join(', '), errorsOf(runs, (r) => r.wrk), loads((r) => r.wrk), '≥ 10,000/s'],
      [`POST /api/client/metrics (autocannon, 32 connections, exactly ${AMOUNT})`, ...loadColumns(runs, (r) => r.cannon),
        runs.map((r) => r.cannon.requests).join(', '), runs.map((r) => r.afterCannon.yes).join(', '), errorsOf(runs, (r) => r.cannon), loads((r) => r.cannon), 'counts exact'],
    ],
  ))
  console.log(`\ncommits (journal lines) per run, for ${runs.map((r) => (r.wrk.requests ?? 0) + (r.cannon.requests ?? 0)).join(', ')} requests in ${runs.map((r) => fmt(r.seconds, 0)).join(', ')} s: ${runs.map((r) => r.commits).join(', ')}`)
  console.log('counts after a restart: equal in every run')
} finally {
  removeDir(dir)
}
