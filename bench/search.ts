/**
 * The store and the event search at 1,000,000 events: `storage` (PATCH on a long log, durable
 * writes, start-up, memory) and `search` (latency by kind of query, /health under load). Run
 * through bench/run.ts.
 */
import autocannon from 'autocannon'
import { parseArgs } from 'node:util'
import { readFileSync } from 'node:fs'
import {
  authHeaders,
  fmt,
  median,
  percentile,
  removeDir,
  rssMiB,
  seedDataDir,
  startServer,
  table,
  tempDataDir,
  waitForSearchIndex,
  word,
} from './lib'

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
export async function storage() {
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
      return {
        writesPerSecond: ok / SECONDS,
        errors: result.errors + result.non2xx,
        p50: result.latency.p50,
        p99: result.latency.p99,
      }
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
  const seedStarted = performance.now()
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
    const smallP50 = median(smallRuns.map(r => r.p50))
    const largeP50 = median(largeRuns.map(r => r.p50))
    // Each ratio is taken within one run (both logs measured back to back), then the median of those.
    const ratio = median(smallRuns.map((small, run) => largeRuns[run].p50 / small.p50))

    const throughputRuns = []
    for (let run = 0; run < RUNS; run++) {
      throughputRuns.push(await throughput(large, FLAGS, 32))
      console.log(
        `run ${run + 1}: ${fmt(throughputRuns.at(-1)!.writesPerSecond, 0)} writes/s, ${throughputRuns.at(-1)!.errors} errors`,
      )
    }

    const startupRuns = []
    for (let run = 0; run < RUNS; run++) {
      startupRuns.push(await startup(large))
      const s = startupRuns.at(-1)!
      console.log(
        `run ${run + 1}: ready in ${fmt(s.readyMs / 1000, 2)} s, RSS ${fmt(s.readyRss, 0)} MiB; index after ${fmt(s.indexMs / 1000, 1)} s more, RSS ${fmt(s.indexedRss, 0)} MiB`,
      )
    }

    console.log(
      '\n' +
        table(
          ['scenario', 'median of runs', 'target'],
          [
            ['PATCH p50, 1,000 events', `${fmt(smallP50, 2)} ms`, ''],
            [
              `PATCH p50, ${EVENTS.toLocaleString('en')} events`,
              `${fmt(largeP50, 2)} ms (median of per-run ratios ${fmt(ratio, 2)})`,
              'ratio ≤ 1.5',
            ],
            [
              'durable PATCH throughput, 32 connections',
              `${fmt(median(throughputRuns.map(r => r.writesPerSecond)), 0)} writes/s (p50 ${median(throughputRuns.map(r => r.p50))} ms, p99 ${median(throughputRuns.map(r => r.p99))} ms, ${throughputRuns.reduce((n, r) => n + r.errors, 0)} errors)`,
              '≥ 3,000 writes/s',
            ],
            [
              `start-up to /ready, ${EVENTS.toLocaleString('en')} events + ${FLAGS.toLocaleString('en')} flags`,
              `${fmt(median(startupRuns.map(r => r.readyMs)) / 1000, 2)} s`,
              '≤ 10 s',
            ],
            ['resident memory at ready', `${fmt(median(startupRuns.map(r => r.readyRss)), 0)} MiB`, '≤ 2 GB'],
            [
              'resident memory once the search index is built',
              `${fmt(median(startupRuns.map(r => r.indexedRss)), 0)} MiB`,
              '≤ 2 GB',
            ],
          ],
        ),
    )
  } finally {
    removeDir(small)
    removeDir(large)
  }
}

/**
 * Event search benchmarks (issue "Event search at a million events"), run by hand:
 *
 *   npx bun bench/run.ts search [--events 1000000] [--runs 3] [--only pages] [--clients 50] [--seconds 10]
 *
 * On a synthetic log (see lib.ts: every event holds "common", one in ten "often", and one of
 * 200,000 rare words), once the index is built:
 *   - a `type` filter page of 50, and a deep page (offset 900,000);
 *   - free text matching under 100 events, and matching over 100,000 (exact total);
 *   - GET /health and a 50-flag project feature list while 4 clients run heavy free-text searches
 *     non-stop (and without them, for comparison);
 *   - the index build time and the worker's heap, and the process's resident memory;
 *   - GET /health p50 and p99 while `--clients` (50) clients fetch `limit=1000` pages at deep
 *     offsets non-stop (bench/clients.ts, in its own thread); `--only pages` runs just this one.
 * Each latency is the p50 of 50 sequential requests after 5 warm-up ones; figures are medians of
 * `--runs` server starts.
 */
export async function eventSearch() {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '3' },
      only: { type: 'string' },
      clients: { type: 'string', default: '50' },
      seconds: { type: 'string', default: '10' },
    },
  })
  const EVENTS = Number(values.events)
  const RUNS = Number(values.runs)
  const PAGES_ONLY = values.only === 'pages'
  const CLIENTS = Number(values.clients)
  const SECONDS = Number(values.seconds)

  async function timed(url: string): Promise<{ ms: number; body: any }> {
    const started = performance.now()
    const response = await fetch(url, { headers: authHeaders })
    const body = await response.json()
    const ms = performance.now() - started
    if (!response.ok) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`)
    return { ms, body }
  }

  async function p50(url: string, check?: (body: any) => void): Promise<number> {
    for (let i = 0; i < 5; i++) await timed(url)
    const times: number[] = []
    for (let i = 0; i < 50; i++) {
      const { ms, body } = await timed(url)
      check?.(body)
      times.push(ms)
    }
    return percentile(
      times.sort((a, b) => a - b),
      50,
    )
  }

  /** p99 of /health and a project list, alternating, for `seconds`. */
  async function probeP99(base: string, seconds: number) {
    const health: number[] = []
    const list: number[] = []
    const until = performance.now() + seconds * 1000
    while (performance.now() < until) {
      health.push((await timed(`${base}/health`)).ms)
      list.push((await timed(`${base}/api/admin/projects/small/features`)).ms)
    }
    const sort = (a: number[]) => a.sort((x, y) => x - y)
    return {
      health: percentile(sort(health), 99),
      list: percentile(sort(list), 99),
      samples: health.length + list.length,
    }
  }

  /**
   * `/health` p50 and p99, sequential requests for `SECONDS`, while `CLIENTS` clients fetch pages of
   * 1,000 events at deep offsets (see bench/clients.ts); and the same for 3 s without them.
   */
  async function heavyPages(base: string, pid: number) {
    const probe = async (seconds: number) => {
      const times: number[] = []
      const until = performance.now() + seconds * 1000
      while (performance.now() < until) {
        const started = performance.now()
        const response = await fetch(`${base}/health`)
        await response.arrayBuffer()
        times.push(performance.now() - started)
      }
      times.sort((a, b) => a - b)
      return { p50: percentile(times, 50), p99: percentile(times, 99), samples: times.length }
    }
    const quiet = await probe(3)
    const worker = new Worker(new URL('./clients.ts', import.meta.url).href)
    const done = new Promise<{ pages: number; bytes: number; failures: number }>(
      resolve => (worker.onmessage = message => resolve(message.data)),
    )
    worker.postMessage({ base, clients: CLIENTS, events: EVENTS, headers: authHeaders })
    const loadStarted = performance.now()
    const cpuBefore = threadCpuMs(pid)
    await Bun.sleep(1000)
    const loaded = await probe(SECONDS)
    worker.postMessage('stop')
    const load = await done
    const cpu = threadCpuMs(pid) - cpuBefore
    const seconds = (performance.now() - loadStarted) / 1000
    worker.terminate()
    if (load.failures > 0) fail(`${load.failures} page requests failed`)
    return {
      quiet,
      loaded,
      pagesPerSecond: load.pages / seconds,
      pageKiB: load.bytes / load.pages / 1024,
      /** CPU time of the server's HTTP thread per page served (the /health probes are counted too). */
      httpThreadMsPerPage: cpu / load.pages,
      httpThreadBusy: cpu / (seconds * 1000),
    }
  }

  /** CPU time (user + system) of a process's main thread so far, in ms (Linux). */
  function threadCpuMs(pid: number): number {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second).
    return (Number(fields[11]) + Number(fields[12])) * 10
  }

  async function run(dir: string) {
    const server = await startServer(dir)
    const base = server.base
    try {
      const indexMs = await waitForSearchIndex(base)
      await Bun.sleep(200)
      if (PAGES_ONLY) return { pages: await heavyPages(base, server.pid), rss: rssMiB(server.pid) }
      const built = server.log.find(line => line.msg === 'search index built') as
        | { buildMs: number; workerHeapMiB: number }
        | undefined
      const search = (query: string) => `${base}/api/admin/search/events?${query}`
      const rare = word(4096 + 12345)
      const results = {
        typePage: await p50(
          search('type=IS:feature-tagged&limit=50'),
          b => b.events.length === 50 || fail('type page'),
        ),
        deepPage: await p50(
          search(`offset=${Math.floor(EVENTS * 0.9)}&limit=50`),
          b => b.events.length === 50 || fail('deep page'),
        ),
        deepTypePage: await p50(
          search(`type=IS_ANY_OF:feature-tagged,feature-created&offset=${Math.floor(EVENTS * 0.3)}&limit=50`),
        ),
        rareText: await p50(
          search(`query=${rare}`),
          b => (b.total > 0 && b.total < 100) || fail(`rare total ${b.total}`),
        ),
        oftenText: await p50(search('query=often'), b => b.total > EVENTS / 11 || fail(`often total ${b.total}`)),
        commonText: await p50(search('query=common&limit=50')),
        infixText: await p50(search(`query=${rare.slice(1, -1)}`)),
      }
      // The project list under load: a small project made through the API.
      await fetch(`${base}/api/admin/projects`, {
        method: 'POST',
        headers: authHeaders,
        body: JSON.stringify({ id: 'small', name: 'small' }),
      })
      for (let i = 0; i < 50; i++) {
        await fetch(`${base}/api/admin/projects/small/features`, {
          method: 'POST',
          headers: authHeaders,
          body: JSON.stringify({ name: `small-${i}` }),
        })
      }
      const quiet = await probeP99(base, 5)
      let searching = true
      let heavy = 0
      const searchers = Array.from({ length: 4 }, async (_, i) => {
        while (searching) {
          await timed(search(`query=${['common', 'often', 'seldom', 'release'][i]}`))
          heavy++
        }
      })
      await Bun.sleep(500)
      const loaded = await probeP99(base, 10)
      searching = false
      await Promise.all(searchers)
      const pages = await heavyPages(base, server.pid)
      return { ...results, indexMs, built, quiet, loaded, heavy, pages, rss: rssMiB(server.pid) }
    } finally {
      await server.stop()
    }
  }

  function fail(message: string): never {
    throw new Error(message)
  }

  const dir = tempDataDir()
  console.log(`Seeding ${EVENTS} events…`)
  seedDataDir(dir, { events: EVENTS, flags: 10_000 })
  try {
    const runs: any[] = []
    for (let i = 0; i < RUNS; i++) {
      const result = await run(dir)
      runs.push(result)
      console.log(
        `run ${i + 1}:`,
        JSON.stringify(result, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)),
      )
    }
    const m = (pick: (r: (typeof runs)[number]) => number) => median(runs.map(pick))
    const pageRows = [
      [
        `GET /health p50 / p99, ${CLIENTS} clients fetching limit=1000 pages at deep offsets`,
        `${fmt(
          m(r => r.pages.loaded.p50),
          2,
        )} ms / ${fmt(
          m(r => r.pages.loaded.p99),
          2,
        )} ms`,
        'p99 ≤ 10 ms',
      ],
      [
        'GET /health p50 / p99 without them',
        `${fmt(
          m(r => r.pages.quiet.p50),
          2,
        )} ms / ${fmt(
          m(r => r.pages.quiet.p99),
          2,
        )} ms`,
        '',
      ],
      [
        `pages of 1,000 served meanwhile`,
        `${fmt(
          m(r => r.pages.pagesPerSecond),
          0,
        )}/s of ${fmt(
          m(r => r.pages.pageKiB),
          0,
        )} KiB`,
        '',
      ],
      [
        'server HTTP thread CPU per page (share of the thread busy)',
        `${fmt(
          m(r => r.pages.httpThreadMsPerPage),
          3,
        )} ms (${fmt(100 * m(r => r.pages.httpThreadBusy), 0)} %)`,
        '',
      ],
    ]
    if (PAGES_ONLY) console.log('\n' + table(['scenario', 'median of runs', 'target'], pageRows))
    else
      console.log(
        '\n' +
          table(
            ['scenario', 'median of runs', 'target'],
            [
              [
                '`type` filter, page of 50',
                `${fmt(
                  m(r => r.typePage),
                  2,
                )} ms p50`,
                '≤ 5 ms',
              ],
              [
                `deep page, offset=${Math.floor(EVENTS * 0.9)}`,
                `${fmt(
                  m(r => r.deepPage),
                  2,
                )} ms p50`,
                '≤ 20 ms',
              ],
              [
                `deep page of a two-type filter, offset=${Math.floor(EVENTS * 0.3)}`,
                `${fmt(
                  m(r => r.deepTypePage),
                  2,
                )} ms p50`,
                '',
              ],
              [
                'free text matching < 100 events (a rare word)',
                `${fmt(
                  m(r => r.rareText),
                  2,
                )} ms p50`,
                '≤ 20 ms',
              ],
              [
                'free text inside a rare word',
                `${fmt(
                  m(r => r.infixText),
                  2,
                )} ms p50`,
                '',
              ],
              [
                `free text matching > ${Math.floor(EVENTS / 11).toLocaleString('en')} events ("often"), exact total`,
                `${fmt(
                  m(r => r.oftenText),
                  1,
                )} ms p50`,
                '≤ 300 ms',
              ],
              [
                'free text matching every event ("common"), exact total',
                `${fmt(
                  m(r => r.commonText),
                  1,
                )} ms p50`,
                '',
              ],
              [
                'GET /health p99, 4 heavy searchers running (quiet)',
                `${fmt(
                  m(r => r.loaded.health),
                  2,
                )} ms (${fmt(
                  m(r => r.quiet.health),
                  2,
                )} ms)`,
                '≤ 10 ms',
              ],
              [
                'project feature list p99, 4 heavy searchers running (quiet)',
                `${fmt(
                  m(r => r.loaded.list),
                  2,
                )} ms (${fmt(
                  m(r => r.quiet.list),
                  2,
                )} ms)`,
                '≤ 10 ms',
              ],
              [
                'index build, in the background after /ready',
                `${fmt(m(r => r.built?.buildMs ?? r.indexMs) / 1000, 1)} s`,
                '≤ 30 s',
              ],
              [
                'worker heap (log + indexes), once built',
                `${fmt(
                  m(r => r.built?.workerHeapMiB ?? NaN),
                  0,
                )} MiB`,
                '≤ 1.5 GB',
              ],
              [
                'process resident memory at the end',
                `${fmt(
                  m(r => r.rss),
                  0,
                )} MiB`,
                '',
              ],
              ...pageRows,
            ],
          ),
      )
  } finally {
    removeDir(dir)
  }
}
