/**
 * The frontend API (issue 13, "Speed"), run by hand:
 *
 *   npx bun bench/run.ts frontend [--runs 3] [--seconds 10]
 *
 * 1,000 flags in production (bench/frontend-data.ts: half on; default, flexibleRollout with
 * segments, constraints and strategy variants, userWithId + remoteAddress, gradualRolloutUserId with
 * NUM/DATE constraints and flag variants; some parents). A frontend token for production reads them
 * with wrk (32 connections, 2 threads) through GET /api/frontend, each request for another user
 * (a Lua script varies userId, sessionId and the properties), once with the access log on (the
 * default) and once with LOG_LEVEL=warn. Prints each run's figures with the load average, then
 * medians of runs. The per-flag evaluation cost in process is bench/frontend-eval.ts.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { authHeaders, fmt, median, removeDir, seedDataDir, startServer, table, tempDataDir, wrk, type Load, cpuSeconds } from './lib'
import { addFrontendFlags, ENVIRONMENT, FLAGS } from './frontend-data'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' } } })
const RUNS = Number(values.runs)
const SECONDS = Number(values.seconds)

/** Each request another user (5,000 of them), session and e-mail; the same properties bench/frontend-data.ts's contextFor sends. */
const SCRIPT = `
counter = 0
request = function()
  counter = counter + 1
  local path = "/api/frontend?userId=user-" .. (counter % 5000) .. "&sessionId=session-" .. counter ..
    "&properties%5Bemail%5D=user-" .. counter .. "%40example.com&appVersion=1.4.0&region=eu-west&age=" .. (15 + counter % 10)
  return wrk.format("GET", path)
end
`

async function frontendToken(base: string, name: string): Promise<string> {
  const created = await fetch(`${base}/api/admin/api-tokens`, {
    method: 'POST',
    headers: authHeaders,
    body: JSON.stringify({ tokenName: name, type: 'frontend', projects: ['*'], environment: ENVIRONMENT }),
  })
  if (created.status !== 201) throw new Error(`token creation answered ${created.status}: ${await created.text()}`)
  return (await created.json()).secret as string
}

async function run(dir: string, script: string, index: number, env: Record<string, string>) {
  const server = await startServer(dir, env)
  try {
    const token = await frontendToken(server.base, `bench-frontend-${index}-${env.LOG_LEVEL ?? 'info'}`)
    const url = `${server.base}/api/frontend`
    // What one answer holds, checked before the load (and warming the compiled scope).
    const sample = await fetch(`${url}?userId=user-1&properties%5Bemail%5D=a%40example.com&appVersion=1.4.0&region=eu-west&age=20`, { headers: { authorization: token } })
    if (sample.status !== 200) throw new Error(`frontend answered ${sample.status}`)
    const text = await sample.text()
    const listed = JSON.parse(text).toggles.length
    const cpuBefore = cpuSeconds(server.pid)
    const load = await wrk(url, { authorization: token }, SECONDS, ['-s', script])
    // The server's own CPU time per request: unlike requests/s, not shared with wrk and the other processes on the machine.
    const cpuUs = ((cpuSeconds(server.pid) - cpuBefore) / (load.rps * SECONDS)) * 1e6
    return { listed, bytes: text.length, load, cpuUs }
  } finally {
    await server.stop()
  }
}

const dir = tempDataDir()
seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ['development', 'production'] })
addFrontendFlags(dir)
const script = join(dir, 'frontend.lua')
writeFileSync(script, SCRIPT)
try {
  const runs: { logged: Load; quiet: Load; listed: number; bytes: number; loggedCpuUs: number; quietCpuUs: number }[] = []
  for (let i = 0; i < RUNS; i++) {
    const logged = await run(dir, script, i, {})
    const quiet = await run(dir, script, i, { LOG_LEVEL: 'warn' })
    runs.push({ logged: logged.load, quiet: quiet.load, listed: logged.listed, bytes: logged.bytes, loggedCpuUs: logged.cpuUs, quietCpuUs: quiet.cpuUs })
    console.log(`run ${i + 1}:`, JSON.stringify(runs.at(-1), (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)))
  }
  type Run = (typeof runs)[number]
  const row = (name: string, pick: (r: Run) => Load, cpu: (r: Run) => number) => [
    name,
    ...runs.map((r) => `${fmt(pick(r).rps, 0)}/s, p99 ${fmt(pick(r).p99, 1)} ms, ${fmt(cpu(r), 0)} µs CPU/request (load ${fmt(pick(r).load, 1)})`),
    `${fmt(median(runs.map((r) => pick(r).rps)), 0)}/s, p50 ${fmt(median(runs.map((r) => pick(r).p50)), 1)} ms, p99 ${fmt(median(runs.map((r) => pick(r).p99)), 1)} ms, ` +
      `${fmt(median(runs.map(cpu)), 0)} µs CPU/request, errors ${runs.reduce((n, r) => n + pick(r).errors, 0)}`,
  ]
  console.log(`\n${FLAGS} flags (${FLAGS / 2} on in ${ENVIRONMENT}); a sample answer lists ${runs[0].listed} flags in ${runs[0].bytes} bytes\n`)
  console.log(table(['GET /api/frontend, varying user (wrk -c32)', ...runs.map((_, i) => `run ${i + 1}`), 'median'], [row('access log on', (r) => r.logged, (r) => r.loggedCpuUs), row('LOG_LEVEL=warn', (r) => r.quiet, (r) => r.quietCpuUs)]))
} finally {
  removeDir(dir)
}
