import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../src/services'
import { KEY_FILE } from '../src/storage/secret-key'
import type { GeneratedManifest } from './generate-events'
import {
  derivedFiles,
  expectedTotals,
  fmt,
  type Load,
  loadAverage,
  percentile,
  PHRASES,
  phraseTotals,
  processMemory,
  removeDerived,
  removeDir,
  ROOT,
  spawnServer,
  table,
  tempDataDir,
  untilReady,
  wrk,
} from './lib'

/**
 * The audit log at ten million events (issue 21), run by hand on a directory that
 * bench/generate-events.ts wrote:
 *
 *   npx bun bench/run.ts generate --events 10000000 --out /tmp/flagstore-10m
 *   npx bun bench/run.ts audit --dir /tmp/flagstore-10m [--runs 2] [--seconds 10] [--cold] [--patch-seconds 30] [--no-load]
 *
 * The 32-connection figures need wrk (Debian: apt-get install wrk); `--no-load` leaves them out.
 * The directory is used in place: PATCHes append to its log (later runs count them in), and the
 * service writes its segments there.
 *
 * Each run starts the real server (`bun src/main.ts`, free port, DATA_DIR on the directory) and
 * measures, with the process's resident memory sampled every 50 ms from spawn:
 *   - spawn to `/ready` answering 200, and to the first free-text search answered (exact total);
 *   - the background phase after `/ready` (the search index, segments written): its length, GET
 *     /health p50/p99/max probed sequentially throughout it, RSS peak; the phase ends once
 *     `searchIndexReady` is true and no file the service derives in the data directory has grown
 *     for 3 s (every file there but the store's own is derived: segments, a cache of the log);
 *   - RSS at ready, after the background phase, idle (and of it the anonymous and the file-backed part), and the peak (VmHWM);
 *   - p50 of sequential requests (1 connection) and req/s with 32 connections (wrk) for: a rare
 *     word, a word with ~5,000 matches, a word in most events (exact total), a type filter, the
 *     last page (offset = total - 50); every answer's total is checked against the generator's
 *     exact count (plus what earlier runs appended, counted from the log's tail);
 *   - the same for queries the words alone do not decide (PHRASES: several words, separators),
 *     whose totals a scan of the whole log counts once (cached in `<dir>.phrases.json`);
 *   - in the last run, durable PATCH throughput (16 connections, fsync on) on this log and on the
 *     same state over an empty log, taking turns of 1 s (`--patch-seconds` turns each, 0: none);
 *   - the derived files' size next to events.jsonl.
 * `--cold` removes the derived files before the first run, so that it measures a start that must
 * build them; later runs are restarts. Figures go to standard output as JSON lines and a table.
 */
export async function auditLog() {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      runs: { type: 'string', default: '2' },
      seconds: { type: 'string', default: '10' },
      'patch-seconds': { type: 'string', default: '30' },
      cold: { type: 'boolean', default: false },
      'no-load': { type: 'boolean', default: false },
      'background-limit': { type: 'string', default: '900' },
    },
  })
  if (!values.dir) throw new Error('--dir DIR: a directory written by bench/generate-events.ts')
  const DIR = values.dir.replace(/\/+$/, '')
  const RUNS = Number(values.runs)
  const SECONDS = Number(values.seconds)
  const PATCH_SECONDS = Number(values['patch-seconds'])
  const BACKGROUND_LIMIT_MS = Number(values['background-limit']) * 1000
  const manifest = JSON.parse(readFileSync(`${DIR}.generated.json`, 'utf8')) as GeneratedManifest
  const SECRET = manifest.adminSecret
  const headers = { authorization: SECRET }

  const round = (_: string, v: unknown) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)
  const out = (label: string, value: unknown) => console.log(`${label} ${JSON.stringify(value, round)}`)

  const TYPE = 'feature-strategy-update'

  /** The generated directory's own admin token is the one used: no INIT_ADMIN_API_TOKENS, so starting writes nothing. */
  const GENERATED_TOKENS = { INIT_ADMIN_API_TOKENS: undefined, LOG_LEVEL: 'info' }

  async function get(url: string): Promise<{ ms: number; status: number; body: any }> {
    const started = performance.now()
    const response = await fetch(url, { headers })
    const text = await response.text()
    const ms = performance.now() - started
    let body: any = null
    try {
      body = JSON.parse(text)
    } catch {}
    return { ms, status: response.status, body }
  }

  /** p50 of sequential requests: 3 warm-up ones, then up to 30, at most ~15 s. */
  async function p50(url: string, check: (body: any) => void): Promise<{ p50: number; samples: number }> {
    for (let i = 0; i < 3; i++) check((await get(url)).body)
    const times: number[] = []
    const until = performance.now() + 15_000
    while (times.length < 30 && (times.length < 5 || performance.now() < until)) {
      const { ms, status, body } = await get(url)
      if (status !== 200) throw new Error(`${url}: ${status} ${JSON.stringify(body)}`)
      check(body)
      times.push(ms)
    }
    return {
      p50: percentile(
        times.sort((a, b) => a - b),
        50,
      ),
      samples: times.length,
    }
  }

  const totalIs = (what: string, expected: number) => (body: any) => {
    if (body?.total !== expected) throw new Error(`${what}: total ${body?.total}, expected ${expected}`)
  }

  /** Durable PATCHes of flag descriptions, `connections` loops for `seconds`; each loop its own flag. */
  async function patchThroughput(base: string, flags: { name: string; project: string }[], seconds: number) {
    let done = 0
    let failed = 0
    const times: number[] = []
    const until = performance.now() + seconds * 1000
    const started = performance.now()
    await Promise.all(
      flags.map(async ({ name, project }, i) => {
        for (let n = 0; performance.now() < until; n++) {
          const t = performance.now()
          const response = await fetch(`${base}/api/admin/projects/${project}/features/${name}`, {
            method: 'PATCH',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify([{ op: 'replace', path: '/description', value: `bench patch ${i}-${n}` }]),
          })
          await response.arrayBuffer()
          times.push(performance.now() - t)
          if (response.ok) done++
          else failed++
        }
      }),
    )
    const elapsed = (performance.now() - started) / 1000
    times.sort((a, b) => a - b)
    return {
      perSecond: done / elapsed,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      failed,
      load: loadAverage(),
    }
  }

  const PATCH_CONNECTIONS = 16

  /**
   * The same state (flags, tokens, key) with an empty event log: a copy of the checkpoint that
   * includes no event and no commit, next to an empty log and journal. So the comparison isolates
   * the log's length; the state's size (a checkpoint of thousands of flags) is the same on both sides.
   * The two servers take turns, one second each, `--patch-seconds` rounds, so that the machine's
   * other load (shared cores, which swings several-fold within seconds) falls on both alike; the
   * figures are the means over the rounds and the median of the rounds' ratios.
   */
  async function patchesAgainstEmptyLog(base: string, flags: { name: string; project: string }[]) {
    const dir = tempDataDir('audit-empty-')
    const state = JSON.parse(readFileSync(join(DIR, STATE_FILE), 'utf8'))
    state.lastEventId = 0
    state.commitSeq = 0
    writeFileSync(join(dir, STATE_FILE), JSON.stringify(state), { mode: 0o600 })
    writeFileSync(join(dir, JOURNAL_FILE), '', { mode: 0o600 })
    writeFileSync(join(dir, EVENTS_FILE), '', { mode: 0o600 })
    copyFileSync(join(DIR, KEY_FILE), join(dir, KEY_FILE))
    const empty = spawnServer(dir, GENERATED_TOKENS)
    try {
      await untilReady(empty)
      const rounds = { log: [] as Patches[], empty: [] as Patches[] }
      for (let round = 0; round < PATCH_SECONDS; round++) {
        rounds.log.push(await patchThroughput(base, flags, 1))
        rounds.empty.push(await patchThroughput(empty.base, flags, 1))
      }
      const sum = (list: Patches[]) => ({
        perSecond: list.reduce((n, r) => n + r.perSecond, 0) / list.length,
        rounds: list.map(r => Math.round(r.perSecond)),
        p99: Math.max(...list.map(r => r.p99)),
        failed: list.reduce((n, r) => n + r.failed, 0),
      })
      const ratios = rounds.log.map((r, i) => r.perSecond / rounds.empty[i].perSecond).sort((a, b) => a - b)
      return { log: sum(rounds.log), empty: sum(rounds.empty), medianRatio: percentile(ratios, 50) }
    } finally {
      await empty.stop()
      removeDir(dir)
    }
  }
  type Patches = Awaited<ReturnType<typeof patchThroughput>>

  async function run(index: number, last: boolean) {
    const totals = expectedTotals(DIR, manifest, TYPE)
    const phrases = phraseTotals(DIR)
    const server = spawnServer(DIR, GENERATED_TOKENS)
    const samples: [number, number][] = []
    const sampler = setInterval(
      () => samples.push([performance.now() - server.spawnedAt, processMemory(server.pid).rss]),
      50,
    )
    const rssAt = () => processMemory(server.pid).rss
    try {
      const readyMs = await untilReady(server)
      const rssAtReady = rssAt()
      const { words } = manifest
      const search = (query: string) => `${server.base}/api/admin/search/events?${query}`
      // The background phase, from /ready on: /health probed one request after another, beside
      // everything else, until the phase ends (so also while a first search waits for a rebuild).
      const backgroundStarted = performance.now()
      const health: [number, number][] = []
      let probing = true
      const prober = (async () => {
        while (probing) {
          const t = performance.now()
          await (await fetch(`${server.base}/health`)).arrayBuffer()
          health.push([t, performance.now() - t])
        }
      })()
      // Until one is answered: a search that waits for a rebuild longer than Bun's 10 s idle
      // timeout is cut by the server, and asked again.
      let first = await get(search(`query=${words.thousands.word}`)).catch(() => null)
      let firstAttempts = 1
      while (first?.status !== 200) {
        first = await get(search(`query=${words.thousands.word}`)).catch(() => null)
        firstAttempts++
      }
      const firstSearchMs = performance.now() - server.spawnedAt
      totalIs('first search', totals.thousands)(first.body)

      let indexMs = NaN
      let lastGrowth = backgroundStarted
      let lastDerived = derivedFiles(DIR).bytes
      for (;;) {
        await Bun.sleep(250)
        const derived = derivedFiles(DIR).bytes
        if (derived !== lastDerived) {
          lastDerived = derived
          lastGrowth = performance.now()
        }
        if (Number.isNaN(indexMs)) {
          const ready = await (await fetch(`${server.base}/ready`)).json()
          if (ready.searchIndexReady !== false) indexMs = performance.now() - server.spawnedAt
        }
        if (!Number.isNaN(indexMs) && performance.now() - lastGrowth > 3000) break
        if (performance.now() - backgroundStarted > BACKGROUND_LIMIT_MS) break
      }
      probing = false
      await prober
      // It ended when the index was ready and the derived files last grew; the 3 s of waiting after are not part of it.
      const backgroundEnd = Math.max(server.spawnedAt + (Number.isNaN(indexMs) ? 0 : indexMs), lastGrowth)
      const backgroundMs = Math.max(0, backgroundEnd - backgroundStarted)
      const during = health
        .filter(([at]) => at <= backgroundEnd)
        .map(([, took]) => took)
        .sort((a, b) => a - b)
      const rssAfterBackground = rssAt()
      await Bun.sleep(3000)
      const rssIdle = rssAt()
      const { anon: idleAnon, file: idleFile } = processMemory(server.pid)

      const offset = Math.max(0, totals.events - 50)
      const scenarios: [string, string, (body: any) => void][] = [
        [
          `rare word "${words.rare.word}" (${totals.rare} events)`,
          search(`query=${words.rare.word}`),
          totalIs('rare', totals.rare),
        ],
        [
          `word with ~5,000 matches "${words.thousands.word}" (${totals.thousands})`,
          search(`query=${words.thousands.word}`),
          totalIs('thousands', totals.thousands),
        ],
        [
          `word in most events "${words.most.word}" (${totals.most}), exact total`,
          search(`query=${words.most.word}`),
          totalIs('most', totals.most),
        ],
        [`type filter ${TYPE} (${totals.type})`, search(`type=IS:${TYPE}`), totalIs('type', totals.type)],
        [
          `last page, offset ${offset}`,
          search(`offset=${offset}`),
          body => (totalIs('all', totals.events)(body), body.events.length === 50 || fail('last page length')),
        ],
        ...PHRASES.map((phrase): [string, string, (body: any) => void] => [
          `phrase '${phrase}' (${phrases[phrase]})`,
          search(`query=${encodeURIComponent(phrase)}`),
          totalIs(phrase, phrases[phrase]),
        ]),
      ]
      const latency: Record<string, { p50: number; samples: number; error?: string }> = {}
      for (const [name, url, check] of scenarios) {
        // A search slower than Bun's 10 s idle timeout is cut by the server: recorded, not fatal.
        latency[name] = await p50(url, check).catch(error => ({ p50: NaN, samples: 0, error: String(error) }))
        if (latency[name].error) await drained(search('type=IS:feature-created&limit=1'))
      }
      const concurrent: Record<string, Load> = {}
      if (!values['no-load']) {
        for (const [name, url] of scenarios) {
          // A long timeout: a slow search is a low rate, not an error; then the queue wrk left is
          // drained, so that it is not counted against the next scenario.
          concurrent[name] = await wrk(url, headers, SECONDS, ['--timeout', '60s'])
          await drained(search('type=IS:feature-created&limit=1'))
        }
      }
      const rssAfterLoad = rssAt()

      let patches: Awaited<ReturnType<typeof patchesAgainstEmptyLog>> | null = null
      if (last && PATCH_SECONDS > 0) {
        const state = JSON.parse(readFileSync(join(DIR, STATE_FILE), 'utf8'))
        const flags = Object.values(state.flags as Record<string, { name: string; project: string }>)
          .slice(0, PATCH_CONNECTIONS)
          .map(({ name, project }) => ({ name, project }))
        patches = await patchesAgainstEmptyLog(server.base, flags)
      }
      const { hwm } = processMemory(server.pid)
      const stopStarted = performance.now()
      await server.stop()
      const stopMs = performance.now() - stopStarted
      clearInterval(sampler)
      const peak = Math.max(hwm, ...samples.map(([, rss]) => rss).filter(Number.isFinite))
      // A coarse timeline: the highest sample in each 5 s.
      const timeline: Record<string, number> = {}
      for (const [at, rss] of samples) {
        const key = `${Math.floor(at / 5000) * 5}s`
        if (!(rss <= timeline[key])) timeline[key] = Math.round(rss)
      }
      const derived = derivedFiles(DIR)
      return {
        run: index + 1,
        readyMs,
        firstSearchMs,
        firstAttempts,
        indexMs,
        backgroundMs,
        health: {
          p50: percentile(during, 50),
          p99: percentile(during, 99),
          max: during.at(-1),
          samples: during.length,
        },
        rss: {
          atReady: rssAtReady,
          afterBackground: rssAfterBackground,
          idle: rssIdle,
          idleAnon,
          idleFile,
          afterLoad: rssAfterLoad,
          peak,
        },
        timeline,
        latency,
        concurrent,
        patches,
        stopMs,
        derived,
        eventsBytes: statSync(join(DIR, EVENTS_FILE)).size,
        log: server.log
          .filter(line => line.level !== 'info' || /segment|index|ready|listening/i.test(String(line.msg)))
          .slice(0, 40),
      }
    } catch (error) {
      clearInterval(sampler)
      await server.stop()
      throw error
    }
  }

  /** Waits until a cheap search answers quickly again (up to a minute). */
  async function drained(url: string) {
    const until = performance.now() + 60_000
    // The server cuts a request that waited 10 s (Bun's idle timeout): that is a busy answer too.
    while (performance.now() < until && (await get(url).catch(() => ({ ms: Infinity }))).ms > 50) await Bun.sleep(200)
  }

  function fail(message: string): never {
    throw new Error(message)
  }

  const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
  const dirty = Bun.spawnSync(['git', 'status', '--porcelain', 'src'], { cwd: ROOT }).stdout.toString().trim() !== ''
  out('setup', {
    date: new Date().toISOString(),
    commit: commit + (dirty ? '+dirty' : ''),
    dir: DIR,
    events: manifest.events,
    eventsMiB: manifest.bytes / 2 ** 20,
    bytesPerEvent: manifest.bytes / manifest.events,
    load: loadAverage(),
  })
  if (values.cold) {
    removeDerived(DIR)
    out('cold', 'derived files removed before run 1')
  }
  if (!existsSync(join(DIR, EVENTS_FILE))) throw new Error(`${DIR} holds no ${EVENTS_FILE}`)
  const results: Awaited<ReturnType<typeof run>>[] = []
  for (let i = 0; i < RUNS; i++) {
    const result = await run(i, i === RUNS - 1)
    results.push(result)
    out(`run ${i + 1}`, result)
  }

  const s = (ms: number) => `${fmt(ms / 1000, 2)} s`
  const ms = (value: number | undefined) =>
    value === undefined || Number.isNaN(value) ? '–' : `${fmt(value, value < 10 ? 2 : 1)} ms`
  const mib = (value: number) => `${fmt(value, 0)} MiB`
  const rows: (string | number)[][] = [
    ['restart to /ready', ...results.map(r => s(r.readyMs))],
    ['to first search answered (~5,000 matches, exact total)', ...results.map(r => s(r.firstSearchMs))],
    ['search index ready (searchIndexReady)', ...results.map(r => (Number.isNaN(r.indexMs) ? '–' : s(r.indexMs)))],
    ['background phase after /ready (derived files growing)', ...results.map(r => s(r.backgroundMs))],
    [
      'GET /health p50 / p99 / max during it',
      ...results.map(r => `${ms(r.health.p50)} / ${ms(r.health.p99)} / ${ms(r.health.max)} (${r.health.samples})`),
    ],
    [
      'RSS at ready → after background → idle (peak)',
      ...results.map(
        r => `${mib(r.rss.atReady)} → ${mib(r.rss.afterBackground)} → ${mib(r.rss.idle)} (${mib(r.rss.peak)})`,
      ),
    ],
    ['RSS idle: anonymous + file-backed', ...results.map(r => `${mib(r.rss.idleAnon)} + ${mib(r.rss.idleFile)}`)],
    ['RSS after the load tests', ...results.map(r => mib(r.rss.afterLoad))],
    ...Object.keys(results[0].latency).flatMap(name => [
      [`${name}: 1 conn p50`, ...results.map(r => ms(r.latency[name].p50))],
      [
        `${name}: 32 conn req/s (p50)`,
        ...results.map(r =>
          r.concurrent[name]
            ? `${fmt(r.concurrent[name].rps, r.concurrent[name].rps < 10 ? 1 : 0)} (${ms(r.concurrent[name].p50)})`
            : '–',
        ),
      ],
    ]),
    [
      'durable PATCH/s, 16 conn: this log vs empty log (ratio of means; median ratio of rounds)',
      ...results.map(r =>
        r.patches
          ? `${fmt(r.patches.log.perSecond, 0)} vs ${fmt(r.patches.empty.perSecond, 0)} (${fmt(r.patches.log.perSecond / r.patches.empty.perSecond, 2)}; ${fmt(r.patches.medianRatio, 2)})`
          : '–',
      ),
    ],
    [
      'derived files (segments) vs events.jsonl',
      ...results.map(
        r =>
          `${r.derived.files} files, ${mib(r.derived.bytes / 2 ** 20)} vs ${mib(r.eventsBytes / 2 ** 20)} (${fmt((100 * r.derived.bytes) / r.eventsBytes, 1)} %)`,
      ),
    ],
  ]
  console.log(
    '\n' + table(['', ...results.map(r => `run ${r.run}${r.run === 1 && values.cold ? ' (cold)' : ''}`)], rows),
  )

  /**
   * Issue 21's "Must show" targets, checked on the last run (a restart: the first run of `--cold`
   * builds the segments, and its /health figure is the one taken while they are written). The 32-
   * connection targets are ten times the 3M figure the issue measured (21 req/s for ~5,000 matches)
   * or, where it gave none, ten times this bench's on main at 3M (docs/benchmarks.md: 4 req/s for
   * the word in most events); where the 1-connection figure already met its target there, none.
   */
  const final = results.at(-1)!
  const building = results[0]
  const latencyOf = (prefix: string) => final.latency[Object.keys(final.latency).find(name => name.startsWith(prefix))!]
  const rateOf = (prefix: string) =>
    final.concurrent[Object.keys(final.concurrent).find(name => name.startsWith(prefix))!]?.rps ?? NaN
  const check = (what: string, value: number, target: number, unit: string, atMost = true): (string | number)[] => [
    what,
    `${fmt(value, value < 10 ? 2 : 1)} ${unit}`,
    `${atMost ? '≤' : '≥'} ${target} ${unit}`,
    Number.isNaN(value) ? 'not measured' : (atMost ? value <= target : value >= target) ? 'met' : '**not met**',
  ]
  const patchRatio = final.patches ? final.patches.log.perSecond / final.patches.empty.perSecond : NaN
  console.log(
    '\n' +
      table(
        ['target (issue 21, "Must show")', 'measured', 'target', ''],
        [
          check('restart to /ready', final.readyMs / 1000, 5, 's'),
          check('restart to first search', final.firstSearchMs / 1000, 10, 's'),
          check('RSS peak, any run', Math.max(...results.map(r => r.rss.peak)), 2048, 'MiB'),
          check('RSS idle', final.rss.idle, 1024, 'MiB'),
          check('segment files / events.jsonl', (100 * final.derived.bytes) / final.eventsBytes, 50, '%'),
          check('rare word, 1 conn p50', latencyOf('rare').p50, 5, 'ms'),
          check('~5,000 matches, 1 conn p50', latencyOf('word with').p50, 5, 'ms'),
          check('word in most events (exact total), 1 conn p50', latencyOf('word in most').p50, 100, 'ms'),
          check('type filter, 1 conn p50', latencyOf('type').p50, 5, 'ms'),
          check('last page, 1 conn p50', latencyOf('last page').p50, 5, 'ms'),
          check('~5,000 matches, 32 conn', rateOf('word with'), 210, 'req/s', false),
          check('word in most events, 32 conn', rateOf('word in most'), 40, 'req/s', false),
          check('durable PATCH/s, this log / empty log (mean)', patchRatio, 0.9, '', false),
          check(
            'durable PATCH/s, this log / empty log (median of 1 s rounds)',
            final.patches?.medianRatio ?? NaN,
            0.9,
            '',
            false,
          ),
          check(
            `/health p99 while ${building === final ? 'the background phase runs' : 'run 1 builds'}`,
            building.health.p99,
            20,
            'ms',
          ),
        ],
      ),
  )
}
