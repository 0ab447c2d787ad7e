/**
 * The store and the event search at 1,000,000 events: `storage` (PATCH on a long log, durable
 * writes, start-up, memory) and `search` (latency by kind of query, /health under load); and what
 * the audit scenarios read of a directory written by bench/generate-events.ts. Run through
 * bench/run.ts.
 */
import {
  api,
  authHeaders,
  cannon,
  cpuSeconds,
  fmt,
  fmtMedian,
  options,
  random,
  removeDir,
  repeat,
  rssMiB,
  seedDataDir,
  spread,
  table,
  tempDataDir,
  waitForSearchIndex,
  withDataDir,
  withServer,
  word,
} from './lib'

/**
 * `storage`:
 * 1. PATCH latency p50 on a log of 1,000 events and on one of `--events` events, both with
 *    `--flags` flags (one client, sequential requests, once the search index is built), and their ratio.
 * 2. Sustained durable PATCH throughput with 32 connections (autocannon, 10 s).
 * 3. Start-up to /ready with `--events` events and `--flags` flags, and resident memory then and
 *    once the search index is built.
 * Each figure is the median of `--runs` runs; every run starts a fresh server process.
 */
export async function storage() {
  const o = options({ events: 1000000, flags: 10000, runs: 3, seconds: 10 })
  const { events: EVENTS, flags: FLAGS, runs: RUNS, seconds: SECONDS } = o
  const patch = (i: number, value: string) => ({
    path: `/api/admin/projects/default/features/flag-${i % FLAGS}`,
    body: JSON.stringify([{ op: 'replace', path: '/description', value }]),
  })

  async function patchLatencies(base: string, count: number): Promise<number[]> {
    const latencies: number[] = []
    for (let i = 0; i < count; i++) {
      const { path, body } = patch(i, `latency run ${i} ${Math.random()}`)
      const started = performance.now()
      const response = await fetch(base + path, { method: 'PATCH', headers: authHeaders, body })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`PATCH answered ${response.status}`)
      latencies.push(performance.now() - started)
    }
    return latencies
  }

  const latency = (dir: string) =>
    withServer(dir, {}, async server => {
      await waitForSearchIndex(server.base)
      await patchLatencies(server.base, 200)
      return spread(await patchLatencies(server.base, 1000))
    })

  const throughput = (dir: string) =>
    withServer(dir, {}, async server => {
      await waitForSearchIndex(server.base)
      let counter = 0
      const setupRequest = (request: any) => ({
        ...request,
        headers: authHeaders,
        ...patch(counter, `throughput ${counter++}`),
      })
      const load = await cannon({ url: server.base, duration: SECONDS, requests: [{ method: 'PATCH', setupRequest }] })
      return { writesPerSecond: load.requests! / SECONDS, errors: load.errors, p50: load.p50, p99: load.p99 }
    })

  const startup = (dir: string) =>
    withServer(dir, {}, async server => {
      const readyRss = rssMiB(server.pid)
      // Memory once the background index build is done: what a long-running process holds.
      const indexMs = await waitForSearchIndex(server.base)
      await Bun.sleep(1000)
      return { readyMs: server.readyMs, readyRss, indexMs, indexedRss: rssMiB(server.pid) }
    })

  const [small, large] = [tempDataDir(), tempDataDir()]
  console.log(`Seeding ${EVENTS} events and ${FLAGS} flags…`)
  const seedStarted = performance.now()
  seedDataDir(small, { events: 1000, flags: FLAGS })
  seedDataDir(large, { events: EVENTS, flags: FLAGS })
  console.log(`seeded in ${fmt((performance.now() - seedStarted) / 1000)} s`)
  try {
    // Both logs measured back to back in each run; the ratio is taken within the run, then the median.
    const latencies = await repeat(RUNS, async () => ({ small: await latency(small), large: await latency(large) }))
    const writes = await repeat(RUNS, () => throughput(large))
    const starts = await repeat(RUNS, () => startup(large))
    const [events, flags] = [EVENTS.toLocaleString('en'), FLAGS.toLocaleString('en')]
    const ratio = fmtMedian(latencies, 2, r => r.large.p50 / r.small.p50)
    const [p50, p99, errors] = [
      fmtMedian(writes, 0, r => r.p50),
      fmtMedian(writes, 0, r => r.p99),
      writes.reduce((n, r) => n + r.errors, 0),
    ]
    const rows = [
      ['PATCH p50, 1,000 events', `${fmtMedian(latencies, 2, r => r.small.p50)} ms`, ''],
      [
        `PATCH p50, ${events} events`,
        `${fmtMedian(latencies, 2, r => r.large.p50)} ms (median of per-run ratios ${ratio})`,
        'ratio ≤ 1.5',
      ],
      [
        'durable PATCH throughput, 32 connections',
        `${fmtMedian(writes, 0, r => r.writesPerSecond)} writes/s (p50 ${p50} ms, p99 ${p99} ms, ${errors} errors)`,
        '≥ 3,000 writes/s',
      ],
      [
        `start-up to /ready, ${events} events + ${flags} flags`,
        `${fmtMedian(starts, 2, r => r.readyMs / 1000)} s`,
        '≤ 10 s',
      ],
      ['resident memory at ready', `${fmtMedian(starts, 0, r => r.readyRss)} MiB`, '≤ 2 GB'],
      ['resident memory once the search index is built', `${fmtMedian(starts, 0, r => r.indexedRss)} MiB`, '≤ 2 GB'],
    ]
    console.log(`\n${table(['scenario', 'median of runs', 'target'], rows)}`)
  } finally {
    removeDir(small)
    removeDir(large)
  }
}

/**
 * `search`, on a synthetic log (see bench/data.ts: every event holds "common", one in ten "often", and one of
 * 200,000 rare words), once the index is built:
 *   - a `type` filter page of 50, and a deep page (offset 900,000);
 *   - free text matching under 100 events, and matching over 100,000 (exact total);
 *   - GET /health and a 50-flag project feature list while 4 clients run heavy free-text searches
 *     non-stop (and without them, for comparison);
 *   - the index build time and the worker's heap, and the process's resident memory;
 *   - GET /health p50 and p99 while `--clients` (50) clients fetch `limit=1000` pages at deep
 *     offsets non-stop (pageClients below, in its own thread); `--only pages` runs just this one.
 * Each latency is the p50 of 50 sequential requests after 5 warm-up ones (sequentialP50); figures are medians of
 * `--runs` server starts.
 */
export async function eventSearch() {
  const o = options({ events: 1000000, runs: 3, only: undefined as string | undefined, clients: 50, seconds: 10 })
  const { events: EVENTS, clients: CLIENTS, seconds: SECONDS } = o
  const PAGES_ONLY = o.only === 'pages'

  async function timed(url: string): Promise<{ ms: number; body: any }> {
    const started = performance.now()
    const response = await fetch(url, { headers: authHeaders })
    const body = await response.json()
    if (!response.ok) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`)
    return { ms: performance.now() - started, body }
  }

  const p50 = async (url: string, check?: (body: any) => boolean) => (await sequentialP50(url, authHeaders, check)).p50

  /** Each URL's latencies, requested one after another in turn for `seconds`. */
  async function inTurnFor(seconds: number, urls: string[]) {
    const times = urls.map(() => [] as number[])
    for (const until = performance.now() + seconds * 1000; performance.now() < until; )
      for (const [i, url] of urls.entries()) times[i].push((await timed(url)).ms)
    return times.map(spread)
  }

  /** `/health` p50 and p99 while `CLIENTS` clients fetch pages of 1,000 events at deep offsets (pageClients); and without. */
  async function heavyPages(base: string, pid: number) {
    const [quiet] = await inTurnFor(3, [`${base}/health`])
    const worker = new Worker(new URL('./search.ts', import.meta.url).href)
    const done = new Promise<{ pages: number; bytes: number; failures: number }>(
      resolve => (worker.onmessage = message => resolve(message.data)),
    )
    worker.postMessage({ base, clients: CLIENTS, events: EVENTS, headers: authHeaders })
    const loadStarted = performance.now()
    // CPU time of the server's HTTP thread (its main thread), per page served (the /health probes are counted too).
    const cpuBefore = cpuSeconds(pid, pid)
    await Bun.sleep(1000)
    const [loaded] = await inTurnFor(SECONDS, [`${base}/health`])
    worker.postMessage('stop')
    const load = await done
    const cpu = (cpuSeconds(pid, pid) - cpuBefore) * 1000
    const seconds = (performance.now() - loadStarted) / 1000
    worker.terminate()
    if (load.failures > 0) throw new Error(`${load.failures} page requests failed`)
    const perPage = { pagesPerSecond: load.pages / seconds, pageKiB: load.bytes / load.pages / 1024 }
    return { quiet, loaded, ...perPage, httpThreadMsPerPage: cpu / load.pages, httpThreadBusy: cpu / (seconds * 1000) }
  }

  const run = (dir: string) =>
    withServer(dir, {}, async server => {
      const base = server.base
      const indexMs = await waitForSearchIndex(base)
      await Bun.sleep(200)
      if (PAGES_ONLY) return { pages: await heavyPages(base, server.pid), rss: rssMiB(server.pid) }
      const built = server.log.find(line => line.msg === 'search index built') as
        | { buildMs: number; workerHeapMiB: number }
        | undefined
      const search = (query: string) => `${base}/api/admin/search/events?${query}`
      const rare = word(4096 + 12345)
      const results = {
        typePage: await p50(search('type=IS:feature-tagged&limit=50'), b => b.events.length === 50),
        deepPage: await p50(search(`offset=${Math.floor(EVENTS * 0.9)}&limit=50`), b => b.events.length === 50),
        deepTypePage: await p50(
          search(`type=IS_ANY_OF:feature-tagged,feature-created&offset=${Math.floor(EVENTS * 0.3)}&limit=50`),
        ),
        rareText: await p50(search(`query=${rare}`), b => b.total > 0 && b.total < 100),
        oftenText: await p50(search('query=often'), b => b.total > EVENTS / 11),
        commonText: await p50(search('query=common&limit=50')),
        infixText: await p50(search(`query=${rare.slice(1, -1)}`)),
      }
      // The project list under load: a small project made through the API.
      await api(base, 'POST', '/api/admin/projects', { id: 'small', name: 'small' })
      for (let i = 0; i < 50; i++) await api(base, 'POST', '/api/admin/projects/small/features', { name: `small-${i}` })
      const probes = [`${base}/health`, `${base}/api/admin/projects/small/features`]
      const [health, list] = await inTurnFor(5, probes)
      const quiet = { health: health.p99, list: list.p99, samples: health.samples + list.samples }
      let searching = true
      let heavy = 0
      const searchers = ['common', 'often', 'seldom', 'release'].map(async query => {
        for (; searching; heavy++) await timed(search(`query=${query}`))
      })
      await Bun.sleep(500)
      const [healthLoaded, listLoaded] = await inTurnFor(10, probes)
      const loaded = {
        health: healthLoaded.p99,
        list: listLoaded.p99,
        samples: healthLoaded.samples + listLoaded.samples,
      }
      searching = false
      await Promise.all(searchers)
      const pages = await heavyPages(base, server.pid)
      return { ...results, indexMs, built, quiet, loaded, heavy, pages, rss: rssMiB(server.pid) }
    })

  console.log(`Seeding ${EVENTS} events…`)
  const runs: any[] = await withDataDir({ events: EVENTS, flags: 10_000 }, dir => repeat(o.runs, () => run(dir)))
  const m = (digits: number, pick: (r: any) => number) => fmtMedian(runs, digits, pick)
  const p = (pick: (r: any) => number) => `${m(2, pick)} ms p50`
  const pageRows = [
    [
      `GET /health p50 / p99, ${CLIENTS} clients fetching limit=1000 pages at deep offsets`,
      `${m(2, r => r.pages.loaded.p50)} ms / ${m(2, r => r.pages.loaded.p99)} ms`,
      'p99 ≤ 10 ms',
    ],
    [
      'GET /health p50 / p99 without them',
      `${m(2, r => r.pages.quiet.p50)} ms / ${m(2, r => r.pages.quiet.p99)} ms`,
      '',
    ],
    [
      'pages of 1,000 served meanwhile',
      `${m(0, r => r.pages.pagesPerSecond)}/s of ${m(0, r => r.pages.pageKiB)} KiB`,
      '',
    ],
    [
      'server HTTP thread CPU per page (share of the thread busy)',
      `${m(3, r => r.pages.httpThreadMsPerPage)} ms (${m(0, r => 100 * r.pages.httpThreadBusy)} %)`,
      '',
    ],
  ]
  const searchRows = () => [
    ['`type` filter, page of 50', p(r => r.typePage), '≤ 5 ms'],
    [`deep page, offset=${Math.floor(EVENTS * 0.9)}`, p(r => r.deepPage), '≤ 20 ms'],
    [`deep page of a two-type filter, offset=${Math.floor(EVENTS * 0.3)}`, p(r => r.deepTypePage), ''],
    ['free text matching < 100 events (a rare word)', p(r => r.rareText), '≤ 20 ms'],
    ['free text inside a rare word', p(r => r.infixText), ''],
    [
      `free text matching > ${Math.floor(EVENTS / 11).toLocaleString('en')} events ("often"), exact total`,
      `${m(1, r => r.oftenText)} ms p50`,
      '≤ 300 ms',
    ],
    ['free text matching every event ("common"), exact total', `${m(1, r => r.commonText)} ms p50`, ''],
    [
      'GET /health p99, 4 heavy searchers running (quiet)',
      `${m(2, r => r.loaded.health)} ms (${m(2, r => r.quiet.health)} ms)`,
      '≤ 10 ms',
    ],
    [
      'project feature list p99, 4 heavy searchers running (quiet)',
      `${m(2, r => r.loaded.list)} ms (${m(2, r => r.quiet.list)} ms)`,
      '≤ 10 ms',
    ],
    ['index build, in the background after /ready', `${m(1, r => (r.built?.buildMs ?? r.indexMs) / 1000)} s`, '≤ 30 s'],
    ['worker heap (log + indexes), once built', `${m(0, r => r.built?.workerHeapMiB ?? NaN)} MiB`, '≤ 1.5 GB'],
    ['process resident memory at the end', `${m(0, r => r.rss)} MiB`, ''],
  ]
  console.log(
    `\n${table(['scenario', 'median of runs', 'target'], [...(PAGES_ONLY ? [] : searchRows()), ...pageRows])}`,
  )
}

/**
 * The p50 of sequential GETs of `url`: `warmup` first, then `count`, or fewer once `seconds` have
 * passed (5 at least). Every answer must be a 200 that `check` does not refuse (by throwing or
 * returning false); each is timed until its body has been read, before it is parsed.
 */
export async function sequentialP50(
  url: string,
  headers: Record<string, string>,
  check: (body: any) => boolean | void = () => {},
  { warmup = 5, count = 50, seconds = Infinity } = {},
): Promise<{ p50: number; samples: number }> {
  const get = async () => {
    const started = performance.now()
    const response = await fetch(url, { headers })
    const text = await response.text()
    const ms = performance.now() - started
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`)
    const body = JSON.parse(text)
    if (check(body) === false) throw new Error(`${url}: unexpected answer (total ${body.total})`)
    return ms
  }
  for (let i = 0; i < warmup; i++) await get()
  const times: number[] = []
  const until = performance.now() + seconds * 1000
  while (times.length < count && (times.length < 5 || performance.now() < until)) times.push(await get())
  const { p50, samples } = spread(times)
  return { p50, samples }
}

/**
 * The page clients of `search`, in a thread of their own so that receiving the big pages does not delay the
 * thread that times `/health`: `clients` loops, each fetching `limit=1000` pages of the event
 * search at random deep offsets (half of the whole log, half of a two-type filter) until told to
 * stop, then posting how many pages were read and their bytes.
 */
declare const self: Worker

interface Start {
  base: string
  clients: number
  events: number
  headers: Record<string, string>
}

let running = true
function pageClients() {
  self.onmessage = async (message: MessageEvent<Start | 'stop'>) => {
    if (message.data === 'stop') {
      running = false
      return
    }
    const { base, clients, events, headers } = message.data
    let pages = 0
    let bytes = 0
    let failures = 0
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        const rand = random(client + 1)
        for (let n = 0; running; n++) {
          // Deep: the last tenth of each list, 1,000 events before its end at most.
          const filtered = n % 2 === 1
          const span = filtered ? Math.floor(events * 0.4) : events
          const offset = Math.floor(span * (0.9 + rand() * 0.1)) - 1000
          const query = `${filtered ? 'type=IS_ANY_OF:feature-tagged,feature-created&' : ''}offset=${Math.max(0, offset)}&limit=1000`
          const response = await fetch(`${base}/api/admin/search/events?${query}`, { headers })
          const body = await response.arrayBuffer()
          if (response.ok) pages++
          else failures++
          bytes += body.byteLength
        }
      }),
    )
    self.postMessage({ pages, bytes, failures })
  }
}

if (!Bun.isMainThread) pageClients()
