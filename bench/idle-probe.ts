/**
 * Loaded into the server by bench/idle-cost.ts (`bun --preload bench/idle-probe.ts src/main.ts`):
 * on SIGUSR2 it measures, inside the server, what the benchmark asks for in IDLE_PROBE_ASK (JSON)
 * and writes the result to IDLE_PROBE_OUT. Figures taken from inside the server's process do not
 * depend on how fast the clients read, which on a loaded machine the wrk figures do.
 *
 * - heap: after full collections, JSC's heap size, object count, protected (strong) handles, and
 *   the count of each object type (the difference over N streams is what one stream holds);
 * - gc: how long an explicit full collection (mark and sweep of the whole heap) and an eden
 *   collection take, in wall time and in the process's CPU time: what every major collection costs
 *   with the streams held;
 * - lag: the event loop's delay, sampled with 1 ms timers for `lagSeconds`: how long a request that
 *   arrived at a random moment waited for the loop (heartbeat ticks, collections, timers).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { edenGC, fullGC, heapStats } from 'bun:jsc'

export interface ProbeAsk {
  lagSeconds: number
  gcRounds: number
}

export interface ProbeResult {
  heapSize: number
  objectCount: number
  protectedObjectCount: number
  objectTypeCounts: Record<string, number>
  fullGcMs: number[]
  edenGcMs: number[]
  /** CPU time of the process (every thread: the collector marks on helpers too) over each collection: less dependent on other processes than the wall time. */
  fullGcCpuMs: number[]
  edenGcCpuMs: number[]
  lagMs: number[]
}

function time(run: () => void, wall: number[], cpu: number[]): void {
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  run()
  wall.push(performance.now() - started)
  const used = process.cpuUsage(cpuBefore)
  cpu.push((used.user + used.system) / 1000)
}

async function sampleLag(seconds: number): Promise<number[]> {
  const lags: number[] = []
  const end = performance.now() + seconds * 1000
  while (performance.now() < end) {
    const asked = performance.now()
    await new Promise((resolve) => setTimeout(resolve, 1))
    lags.push(performance.now() - asked - 1)
  }
  return lags
}

async function probe(ask: ProbeAsk): Promise<ProbeResult> {
  // Lag first: the collections below would otherwise leave the heap emptier than the server keeps it.
  const lagMs = await sampleLag(ask.lagSeconds)
  Bun.gc(true)
  Bun.gc(true)
  const stats = heapStats()
  const [fullGcMs, edenGcMs, fullGcCpuMs, edenGcCpuMs]: number[][] = [[], [], [], []]
  for (let round = 0; round < ask.gcRounds; round++) {
    time(() => fullGC(), fullGcMs, fullGcCpuMs)
    time(() => edenGC(), edenGcMs, edenGcCpuMs)
  }
  return {
    heapSize: stats.heapSize,
    objectCount: stats.objectCount,
    protectedObjectCount: stats.protectedObjectCount,
    objectTypeCounts: stats.objectTypeCounts as Record<string, number>,
    fullGcMs,
    edenGcMs,
    fullGcCpuMs,
    edenGcCpuMs,
    lagMs,
  }
}

const out = process.env.IDLE_PROBE_OUT
const askFile = process.env.IDLE_PROBE_ASK
if (out && askFile) {
  process.on('SIGUSR2', () => {
    const ask = JSON.parse(readFileSync(askFile, 'utf8')) as ProbeAsk
    void probe(ask).then((result) => writeFileSync(out, JSON.stringify(result)))
  })
}
