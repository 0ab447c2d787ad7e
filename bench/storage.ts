/**
 * Storage benchmarks (issue "Storage that scales"), run by hand:
 *
 *   npx bun bench/run.ts storage [--events 1000000] [--flags 10000] [--runs 3]
 *
 * 1. PATCH latency p50 on a log of 1,000 events and on one of `--events` events, both with
 *    `--flags` flags (one client, sequential requests, once the search index is built), and their ratio.
 * 2. Sustained durable PATCH throughput with 32 connections (autocannon, 10 s).
 * 3. Start-up to /ready with `--events` events and `--flags` flags, and resident memory then and
 *    once the search index is built.
 * Each figure is the median of `--runs` runs; every run starts a fresh server process.
 */
import autocannon from 'autocannon'
import { parseArgs } from 'node:util'
import { authHeaders, fmt, median, percentile, removeDir, rssMiB, seedDataDir, startServer, table, tempDataDir, waitForSearchIndex } from './lib'

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    flags: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
  },
})
const EVENTS = Number(values.events)
const FLAGS = Number(values.flags)
const RUNS = Number(values.runs)
const SECONDS = Number(values.seconds)

async function patchLatencies(base: string, count: number, flags: number): Promise<number[]> {
  const latencies: number[] = []
  for (let i = 0; i < count; i++) {
    const flag = `flag-${i % flags}`
    const started = performance.now()
    const response = await fetch(`${base}/api/admin/projects/default/features/${flag}`, {
      method: 'PATCH',
      headers: authHeaders,
      body: JSON.stringify([{ op: 'replace', path: '/description', value: `latency run ${i} ${Math.random()}` }]),
    })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`PATCH answered ${response.status}`)
    latencies.push(performance.now() - started)
  }
  return latencies.sort((a, b) => a - b)
}

async function latencyP50(dir: string, flags: number) {
  const server = await startServer(dir)
  try {
    await waitForSearchIndex(server.base)
    await patchLatencies(server.base, 200, flags)
    const latencies = await patchLatencies(server.base, 1000, flags)
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
  } finally {
    await server.stop()
  }
}

async function throughput(dir: string, flags: number, connections: number) {
  const server = await startServer(dir)
  try {
    await waitForSearchIndex(server.base)
    let counter = 0
    const result = await autocannon({
      url: server.base,
      connections,
      duration: SECONDS,
      requests: [
        {
          method: 'PATCH',
          setupRequest: (request: any) => {
            const i = counter++
            return {
              ...request,
              path: `/api/admin/projects/default/features/flag-${i % flags}`,
              headers: authHeaders,
              body: JSON.stringify([{ op: 'replace', path: '/description', value: `throughput ${i}` }]),
            }
          },
        },
      ],
    })
    const ok = result['2xx']
    return { writesPerSecond: ok / SECONDS, errors: result.errors + result.non2xx, p50: result.latency.p50, p99: result.latency.p99 }
  } finally {
    await server.stop()
  }
}

async function startup(dir: string) {
  const server = await startServer(dir)
  try {
    const readyRss = rssMiB(server.pid)
    // Memory once the background index build is done: what a long-running process holds.
    const indexMs = await waitForSearchIndex(server.base)
    await Bun.sleep(1000)
    return { readyMs: server.readyMs, readyRss, indexMs, indexedRss: rssMiB(server.pid) }
  } finally {
    await server.stop()
  }
}

const small = tempDataDir()
const large = tempDataDir()
console.log(`Seeding ${EVENTS} events and ${FLAGS} flags…`)
let seedStarted = performance.now()
seedDataDir(small, { events: 1000, flags: FLAGS })
seedDataDir(large, { events: EVENTS, flags: FLAGS })
console.log(`seeded in ${fmt((performance.now() - seedStarted) / 1000)} s`)

try {
  const smallRuns: { p50: number; p99: number }[] = []
  const largeRuns: { p50: number; p99: number }[] = []
  for (let run = 0; run < RUNS; run++) {
    smallRuns.push(await latencyP50(small, FLAGS))
    largeRuns.push(await latencyP50(large, FLAGS))
    console.log(
      `run ${run + 1}: p50 ${fmt(smallRuns.at(-1)!.p50, 2)} ms (1,000 events) vs ${fmt(largeRuns.at(-1)!.p50, 2)} ms (${EVENTS} events), ratio ${fmt(largeRuns.at(-1)!.p50 / smallRuns.at(-1)!.p50, 2)}`,
    )
  }
  const smallP50 = median(smallRuns.map((r) => r.p50))
  const largeP50 = median(largeRuns.map((r) => r.p50))
  // Each ratio is taken within one run (both logs measured back to back), then the median of those.
  const ratio = median(smallRuns.map((small, run) => largeRuns[run].p50 / small.p50))

  const throughputRuns = []
  for (let run = 0; run < RUNS; run++) {
    throughputRuns.push(await throughput(large, FLAGS, 32))
    console.log(`run ${run + 1}: ${fmt(throughputRuns.at(-1)!.writesPerSecond, 0)} writes/s, ${throughputRuns.at(-1)!.errors} errors`)
  }

  const startupRuns = []
  for (let run = 0; run < RUNS; run++) {
    startupRuns.push(await startup(large))
    const s = startupRuns.at(-1)!
    console.log(`run ${run + 1}: ready in ${fmt(s.readyMs / 1000, 2)} s, RSS ${fmt(s.readyRss, 0)} MiB; index after ${fmt(s.indexMs / 1000, 1)} s more, RSS ${fmt(s.indexedRss, 0)} MiB`)
  }

  console.log('\n' + table(
    ['scenario', 'median of runs', 'target'],
    [
      ['PATCH p50, 1,000 events', `${fmt(smallP50, 2)} ms`, ''],
      [`PATCH p50, ${EVENTS.toLocaleString('en')} events`, `${fmt(largeP50, 2)} ms (median of per-run ratios ${fmt(ratio, 2)})`, 'ratio ≤ 1.5'],
      ['durable PATCH throughput, 32 connections', `${fmt(median(throughputRuns.map((r) => r.writesPerSecond)), 0)} writes/s (p50 ${median(throughputRuns.map((r) => r.p50))} ms, p99 ${median(throughputRuns.map((r) => r.p99))} ms, ${throughputRuns.reduce((n, r) => n + r.errors, 0)} errors)`, '≥ 3,000 writes/s'],
      [`start-up to /ready, ${EVENTS.toLocaleString('en')} events + ${FLAGS.toLocaleString('en')} flags`, `${fmt(median(startupRuns.map((r) => r.readyMs)) / 1000, 2)} s`, '≤ 10 s'],
      ['resident memory at ready', `${fmt(median(startupRuns.map((r) => r.readyRss)), 0)} MiB`, '≤ 2 GB'],
      ['resident memory once the search index is built', `${fmt(median(startupRuns.map((r) => r.indexedRss)), 0)} MiB`, '≤ 2 GB'],
    ],
  ))
} finally {
  removeDir(small)
  removeDir(large)
}
