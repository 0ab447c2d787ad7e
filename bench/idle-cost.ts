/**
 * What idle SSE streams cost the server, measured from inside it (issue 20, "streams never slow the
 * admin API"), run by hand:
 *
 *   bun bench/idle-cost.ts [--idle 10000] [--rounds 2] [--seconds 8] [--gc-rounds 7]
 *
 * One server (100 flags, as bench/streaming.ts) with bench/idle-probe.ts preloaded. Each round,
 * with no stream and then with `--idle` streams held by bench/stream-holder.ts at nice 19 (another
 * project's token, so they hear nothing but heartbeats), the probe measures in the server:
 * - quiet: the event loop's lag over `--seconds` with nothing asked;
 * - loaded: the same while wrk asks /health for `--seconds` (its p99 is printed too);
 * - after each: the heap after full collections (size, objects, protected handles, objects by
 *   type) and how long a full and an eden collection take (`--gc-rounds` of each: the shortest wall
 *   time, the least disturbed by other processes, and the median CPU time of the process).
 * The heap and collection figures depend little on the machine's load; the lag and wrk figures do.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { ProbeAsk, ProbeResult } from './idle-probe'
import { authHeaders, fmt, loadAverage, median, percentile, removeDir, seedDataDir, startServer, table, tempDataDir, wrk, type Load, type RunningServer } from './lib'
import { heldElsewhere, until } from './streams'

const { values } = parseArgs({
  options: {
    idle: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '8' },
    'gc-rounds': { type: 'string', default: '7' },
  },
})
const IDLE = Number(values.idle)
const ROUNDS = Number(values.rounds)
const SECONDS = Number(values.seconds)
const GC_ROUNDS = Number(values['gc-rounds'])

interface Side {
  quiet: ProbeResult
  loaded: ProbeResult
  health: Load
  load: number
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, { method, headers: authHeaders, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${path} → ${response.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}

const dir = tempDataDir('bench-idle-cost-')
const out = join(dir, 'probe.json')
const askFile = join(dir, 'ask.json')

async function probe(server: RunningServer, ask: ProbeAsk): Promise<ProbeResult> {
  rmSync(out, { force: true })
  writeFileSync(askFile, JSON.stringify(ask))
  process.kill(server.pid, 'SIGUSR2')
  let result: ProbeResult | null = null
  await until(
    () => {
      try {
        result = JSON.parse(readFileSync(out, 'utf8'))
      } catch {}
      return result !== null
    },
    ask.lagSeconds * 1000 + 120_000,
    'the probe',
  )
  return result!
}

async function side(server: RunningServer): Promise<Side> {
  const load = loadAverage()
  const quiet = await probe(server, { lagSeconds: SECONDS, gcRounds: GC_ROUNDS })
  const [loaded, health] = await Promise.all([probe(server, { lagSeconds: SECONDS, gcRounds: 1 }), wrk(`${server.base}/health`, {}, SECONDS)])
  return { quiet, loaded, health, load }
}

const rounds: { none: Side; idle: Side }[] = []
seedDataDir(join(dir, 'data'), { events: 0, flags: 100 })
const server = await startServer(
  join(dir, 'data'),
  { LOG_LEVEL: 'warn', STREAMING_MAX_STREAMS: String(IDLE + 100), IDLE_PROBE_OUT: out, IDLE_PROBE_ASK: askFile },
  ['--preload', join(import.meta.dir, 'idle-probe.ts')],
)
try {
  await admin(server.base, 'POST', '/api/admin/projects', { id: 'idle', name: 'idle' })
  const { secret } = await admin(server.base, 'POST', '/api/admin/api-tokens', { tokenName: 'bench-idle', type: 'client', projects: ['idle'], environment: 'production' })
  // Warm the routes measured, so that the first side does not pay for compiling them.
  await wrk(`${server.base}/health`, {}, 2)
  for (let round = 0; round < ROUNDS; round++) {
    const none = await side(server)
    const streams = await heldElsewhere(server.base, secret, IDLE)
    // Opening is work of its own (connections, hydrations, garbage): measure streams held, not being opened.
    await Bun.sleep(3000)
    const idle = await side(server)
    await streams.close()
    await Bun.sleep(2000)
    rounds.push({ none, idle })
    console.error(`round ${round + 1} done`)
  }
} finally {
  await server.stop()
  removeDir(dir)
}

const MiB = 1024 * 1024
const sorted = (values: number[]) => [...values].sort((a, b) => a - b)
const lag = (result: ProbeResult, p: number) => percentile(sorted(result.lagMs), p)
const pair = (none: number, idle: number, digits = 1) => `${fmt(none, digits)} → ${fmt(idle, digits)}`

console.log(`\nWhat ${IDLE} idle streams cost inside the server, next to none (same server, same run; load average at the start of each side)\n`)
console.log(
  table(
    ['round', 'heap MiB', 'per stream', 'objects per stream', 'protected', 'full GC ms (min)', 'full GC CPU ms (median)', 'eden GC ms (min)', 'lag p99 quiet', 'lag p99 /health load', 'lag max /health load', '/health p99 (wrk)', 'loads'],
    rounds.map(({ none, idle }, index) => [
      String(index + 1),
      pair(none.quiet.heapSize / MiB, idle.quiet.heapSize / MiB),
      `${fmt((idle.quiet.heapSize - none.quiet.heapSize) / IDLE / 1024, 2)} KiB`,
      fmt((idle.quiet.objectCount - none.quiet.objectCount) / IDLE, 1),
      pair(none.quiet.protectedObjectCount, idle.quiet.protectedObjectCount, 0),
      pair(Math.min(...none.quiet.fullGcMs), Math.min(...idle.quiet.fullGcMs), 2),
      pair(median(none.quiet.fullGcCpuMs), median(idle.quiet.fullGcCpuMs), 2),
      pair(Math.min(...none.quiet.edenGcMs), Math.min(...idle.quiet.edenGcMs), 2),
      pair(lag(none.quiet, 99), lag(idle.quiet, 99), 2),
      pair(lag(none.loaded, 99), lag(idle.loaded, 99), 2),
      pair(Math.max(...none.loaded.lagMs), Math.max(...idle.loaded.lagMs), 1),
      `${pair(none.health.p99, idle.health.p99, 2)} (${fmt(idle.health.p99 / none.health.p99, 2)})`,
      `${fmt(none.load, 2)}, ${fmt(idle.load, 2)}`,
    ]),
  ),
)

// What one stream holds, by object type: the types whose count grows by at least 0.5 per stream.
const last = rounds[rounds.length - 1]
const types = new Set([...Object.keys(last.none.quiet.objectTypeCounts), ...Object.keys(last.idle.quiet.objectTypeCounts)])
const perStream = [...types]
  .map((type) => [type, ((last.idle.quiet.objectTypeCounts[type] ?? 0) - (last.none.quiet.objectTypeCounts[type] ?? 0)) / IDLE] as const)
  .filter(([, n]) => n >= 0.5)
  .sort((a, b) => b[1] - a[1])
console.log(`\nObjects per idle stream by type (last round)\n`)
console.log(table(['type', 'per stream'], perStream.map(([type, n]) => [type, fmt(n, 2)])))
