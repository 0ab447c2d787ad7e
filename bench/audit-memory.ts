/**
 * Starts and memory at ten million events, on a directory from `bench/run.ts generate`: `memory`
 * (resident memory by kind of query, optionally with the files evicted from the page cache) and
 * `audit-cold` (a start without search segments). Run through bench/run.ts.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { DATA_FILES } from '../src/services'
import type { GeneratedManifest } from './generate-events'
import {
  expectedTotals,
  fmt,
  freePort,
  loadAverage,
  percentile,
  phraseTotals,
  processMemory,
  ROOT,
  spawnServer,
  table,
  untilReady,
  wrk,
} from './lib'

/**
 * The start and the memory of the audit log at 10M events (issue 21), query kind by query kind,
 * run by hand on a directory that bench/generate-events.ts wrote and the audit scenario ran on once
 * (its segments written, its phrases' totals cached in `<dir>.phrases.json`):
 *
 *   npx bun bench/run.ts memory --dir /tmp/flagstore-10m [--evict] [--seconds 10]
 *
 * `--evict` drops the directory's files from the OS page cache first (`dd iflag=nocache count=0`
 * per file, posix_fadvise DONTNEED: only these files, not the whole cache), so that the start reads
 * the disk. Then the real server is spawned (free port) and measured:
 *   - spawn to `/ready`, to the first search answered (exact total), to `searchIndexReady` (the
 *     segments' checksums are read before the index is built: that is when the background check
 *     is done); GET /health p50/p99/max probed sequentially until then;
 *   - RSS at ready, idle after the background phase, and then for each query kind alone under 32
 *     connections (wrk, `--seconds`): the peak (VmHWM, reset before each kind through
 *     /proc/<pid>/clear_refs) and the RSS after; every answer's total checked first.
 * Figures go to standard output as JSON lines.
 */
export async function auditMemory() {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      seconds: { type: 'string', default: '10' },
      evict: { type: 'boolean', default: false },
      only: { type: 'string' },
    },
  })
  if (!values.dir) throw new Error('--dir DIR: a directory written by bench/generate-events.ts')
  const DIR = values.dir.replace(/\/+$/, '')
  const SECONDS = Number(values.seconds)
  const manifest = JSON.parse(readFileSync(`${DIR}.generated.json`, 'utf8')) as GeneratedManifest
  const headers = { authorization: manifest.adminSecret }
  const TYPE = 'feature-strategy-update'
  const out = (label: string, value: unknown) =>
    console.log(`${label} ${JSON.stringify(value, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`)

  /** The highest anonymous and file-backed RSS sampled every 20 ms while `during` runs. */
  async function sampled<T>(pid: number, during: Promise<T>): Promise<{ result: T; anon: number; file: number }> {
    let anon = 0
    let file = 0
    const timer = setInterval(() => {
      const m = processMemory(pid)
      anon = Math.max(anon, m.anon)
      file = Math.max(file, m.file)
    }, 20)
    try {
      return { result: await during, anon, file }
    } finally {
      clearInterval(timer)
    }
  }

  function evict(path: string) {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name)
      if (entry.isDirectory()) evict(full)
      else Bun.spawnSync(['dd', `if=${full}`, 'iflag=nocache', 'count=0', 'status=none'])
    }
  }

  /** Of the directory's files, the MiB the page cache holds (fincore, util-linux), or NaN without it. */
  function cachedMiB(): number {
    const files: string[] = []
    const walk = (path: string) => {
      for (const entry of readdirSync(path, { withFileTypes: true }))
        entry.isDirectory() ? walk(join(path, entry.name)) : files.push(join(path, entry.name))
    }
    walk(DIR)
    const result = Bun.spawnSync(['fincore', '--bytes', '--noheadings', '--output', 'RES', ...files])
    if (result.exitCode !== 0) return NaN
    return (
      result.stdout
        .toString()
        .trim()
        .split('\n')
        .reduce((n, line) => n + Number(line.trim()), 0) /
      2 ** 20
    )
  }

  async function total(url: string): Promise<number> {
    for (;;) {
      const response = await fetch(url, { headers }).catch(() => null)
      if (response?.status === 200) return ((await response.json()) as { total: number }).total
    }
  }

  const totals = expectedTotals(DIR, manifest, TYPE)
  const phrases = phraseTotals(DIR)
  const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
  out('setup', {
    date: new Date().toISOString(),
    commit,
    dir: DIR,
    events: totals.events,
    load: loadAverage(),
    nice: Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[16]),
  })
  if (values.evict) {
    const before = cachedMiB()
    evict(DIR)
    out('evicted', { cachedMiBBefore: before, cachedMiBAfter: cachedMiB() })
  }

  const server = spawnServer(DIR, { INIT_ADMIN_API_TOKENS: undefined, LOG_LEVEL: 'info' })
  try {
    const readyMs = await untilReady(server)
    const rssAtReady = processMemory(server.pid).rss
    const search = (query: string) => `${server.base}/api/admin/search/events?${query}`
    const health: number[] = []
    let probing = true
    const prober = (async () => {
      while (probing) {
        const t = performance.now()
        await (await fetch(`${server.base}/health`)).arrayBuffer()
        health.push(performance.now() - t)
      }
    })()
    const first = await total(search(`query=${manifest.words.thousands.word}`))
    const firstSearchMs = performance.now() - server.spawnedAt
    if (first !== totals.thousands) throw new Error(`first search: total ${first}, expected ${totals.thousands}`)
    for (;;) {
      const ready = (await (await fetch(`${server.base}/ready`)).json()) as { searchIndexReady: boolean }
      if (ready.searchIndexReady) break
      await Bun.sleep(100)
    }
    const indexMs = performance.now() - server.spawnedAt
    probing = false
    await prober
    health.sort((a, b) => a - b)
    await Bun.sleep(3000)
    const notices = server.log.filter(line => line.msg === 'event search').map(line => line.message)
    out('start', {
      readyMs,
      firstSearchMs,
      indexMs,
      health: { p50: percentile(health, 50), p99: percentile(health, 99), max: health.at(-1), samples: health.length },
      rssAtReady,
      idle: processMemory(server.pid),
      notices,
    })

    const offset = Math.max(0, totals.events - 50)
    const kinds: [string, string, number][] = [
      ['rare word', `query=${manifest.words.rare.word}`, totals.rare],
      ['~5,000 matches', `query=${manifest.words.thousands.word}`, totals.thousands],
      ['word in most events', `query=${manifest.words.most.word}`, totals.most],
      ['type filter', `type=IS:${TYPE}`, totals.type],
      ['last page', `offset=${offset}`, totals.events],
      ...Object.entries(phrases).map(([phrase, n]): [string, string, number] => [
        `phrase '${phrase}'`,
        `query=${encodeURIComponent(phrase)}`,
        n,
      ]),
    ]
    for (const [name, query, expected] of kinds) {
      if (values.only && !values.only.split(',').some(part => name.includes(part))) continue
      const answered = await total(search(query))
      if (answered !== expected) throw new Error(`${name}: total ${answered}, expected ${expected}`)
      // Resets VmHWM to the current RSS: the peak read after is this kind's.
      writeFileSync(`/proc/${server.pid}/clear_refs`, '5')
      const before = processMemory(server.pid).rss
      const {
        result: load,
        anon,
        file,
      } = await sampled(server.pid, wrk(search(query), headers, SECONDS, ['--timeout', '60s']))
      const { rss, hwm } = processMemory(server.pid)
      out('kind', {
        name,
        rssBefore: before,
        peak: hwm,
        anonPeak: anon,
        filePeak: file,
        rssAfter: rss,
        rps: load.rps,
        p50: load.p50,
        p99: load.p99,
        errors: load.errors,
        load: load.load,
      })
      await Bun.sleep(2000)
    }
    out('end', { ...processMemory(server.pid), notices: server.log.filter(line => line.msg === 'event search').length })
  } finally {
    await server.stop()
  }
}

/**
 * A cold start at ten million events (issue 21): the segments under search/ are missing (an upgrade
 * changed their format, or they were deleted by hand) and must be rebuilt from events.jsonl. Run by
 * hand on a COPY of a directory bench/generate-events.ts wrote (its search/ is deleted here):
 *
 *   cp -r /tmp/flagstore-10m /tmp/cold-10m && cp /tmp/flagstore-10m.generated.json /tmp/cold-10m.generated.json
 *   nice -n 19 npx bun bench/run.ts audit-cold --dir /tmp/cold-10m [--root DIR] [--limit 1800]
 *
 * `--root` runs the server of another checkout (`git archive` of a commit, with node_modules): the
 * same measurement before a change. It measures, from spawning the real server (`bun src/main.ts`):
 *   - time to `/ready`, and to the first search answered (the word with ~5,000 matches, exact total);
 *   - searches during the rebuild, one after another in turn (that word, a rare word, a type filter,
 *     the first page of everything, the word in most events), each total checked against the
 *     generator's count: their latencies (p50, first and last), and how many were answered;
 *   - the rebuild: from spawn until the server logs `search segments rebuilt` (or, for a server that
 *     answers no search before the rebuild ends, `ready`), with events/s; then the text index;
 *   - GET /health p50/p99/max probed one after another throughout the rebuild, and RSS (peak VmHWM).
 * Figures go to standard output as JSON lines and a table.
 */
export async function auditCold() {
  const { values } = parseArgs({
    options: { dir: { type: 'string' }, root: { type: 'string' }, limit: { type: 'string', default: '1800' } },
  })
  if (!values.dir) throw new Error('--dir DIR: a copy of a directory written by bench/generate-events.ts')
  const DIR = values.dir.replace(/\/+$/, '')
  const root = values.root ?? ROOT
  const manifest = JSON.parse(readFileSync(`${DIR}.generated.json`, 'utf8')) as GeneratedManifest
  const totals = expectedTotals(DIR, manifest, 'feature-strategy-update')
  /** A search answered with a wrong total: the bench stops. */
  class TotalError extends Error {}
  const headers = { authorization: manifest.adminSecret }
  const out = (label: string, value: unknown) =>
    console.log(`${label} ${JSON.stringify(value, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`)

  for (const name of readdirSync(DIR))
    if (!DATA_FILES.includes(name)) rmSync(join(DIR, name), { recursive: true, force: true })
  const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: root }).stdout.toString().trim() || root
  out('setup', {
    date: new Date().toISOString(),
    root,
    commit,
    events: totals.events,
    eventsMiB: manifest.bytes / 2 ** 20,
    load: loadAverage(),
  })

  const port = freePort()
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: DIR,
    LOG_LEVEL: 'info',
  }
  delete env.INIT_ADMIN_API_TOKENS
  const spawnedAt = performance.now()
  const child = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' })
  const since = () => performance.now() - spawnedAt
  const base = `http://127.0.0.1:${port}`
  const logged: Record<string, number> = {}
  const notes: unknown[] = []
  // Warnings (a notice that segments are missing among them) go to standard error.
  const read = async (stream: ReadableStream<Uint8Array>) => {
    let carry = ''
    for await (const chunk of stream) {
      const lines = (carry + new TextDecoder().decode(chunk)).split('\n')
      carry = lines.pop()!
      for (const line of lines) {
        if (line.includes('"msg":"request"')) continue
        try {
          const entry = JSON.parse(line)
          logged[entry.msg] ??= since()
          if (/segment|index|ready|event search/.test(entry.msg)) notes.push({ at: Math.round(since()), ...entry })
        } catch {
          if (line.trim()) console.error(line)
        }
      }
    }
  }
  void read(child.stdout as ReadableStream<Uint8Array>)
  void read(child.stderr as ReadableStream<Uint8Array>)

  const memory = (field: string) => {
    try {
      return (
        Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) /
        1024
      )
    } catch {
      return NaN
    }
  }
  let rssPeak = 0
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, memory('VmRSS') || 0)), 100)

  /** The rebuild is over once the server says so (`ready` for a server whose searches wait for it). */
  const rebuilt = () =>
    logged['search segments rebuilt'] ??
    (notes.some((note: any) => /missing/.test(String(note.message))) ? undefined : logged.ready)

  const health: [number, number][] = []
  let probing = true
  const prober = (async () => {
    while (probing) {
      const t = performance.now()
      try {
        await (await fetch(`${base}/health`)).arrayBuffer()
        health.push([t - spawnedAt, performance.now() - t])
      } catch {
        await Bun.sleep(5)
      }
    }
  })()

  let readyMs = NaN
  try {
    for (;;) {
      try {
        if ((await fetch(`${base}/ready`)).ok) break
      } catch {}
      await Bun.sleep(10)
    }
    readyMs = since()
    const { words } = manifest
    const type = 'feature-strategy-update'
    const kinds: [string, string, number][] = [
      [`~5,000 matches "${words.thousands.word}"`, `query=${words.thousands.word}`, totals.thousands],
      [`rare word "${words.rare.word}"`, `query=${words.rare.word}`, totals.rare],
      [`type filter ${type}`, `type=IS:${type}`, totals.type],
      ['first page of everything', 'limit=50', totals.events],
      [`word in most events "${words.most.word}"`, `query=${words.most.word}`, totals.most],
    ]
    const searches: { kind: string; at: number; ms: number; ok: boolean; status: number }[] = []
    let firstSearchMs = NaN
    const limitMs = Number(values.limit) * 1000
    for (let k = 0; rebuilt() === undefined && since() < limitMs; k++) {
      const [kind, query, expected] = kinds[k % kinds.length]
      const t = performance.now()
      let status = 0
      let ok = false
      try {
        const response = await fetch(`${base}/api/admin/search/events?${query}`, { headers })
        status = response.status
        const body = (await response.json()) as { total: number }
        ok = status === 200 && body.total === expected
        if (status === 200 && !ok) throw new TotalError(`${kind}: total ${body.total}, expected ${expected}`)
      } catch (error) {
        if (error instanceof TotalError) throw error
      }
      searches.push({ kind, at: t - spawnedAt, ms: performance.now() - t, ok, status })
      if (ok && Number.isNaN(firstSearchMs)) firstSearchMs = since()
    }
    const rebuildMs = rebuilt() ?? NaN
    for (; logged['search index built'] === undefined && since() < limitMs; ) await Bun.sleep(200)
    probing = false
    await prober
    clearInterval(sampler)
    const hwm = memory('VmHWM')
    const during = health
      .filter(([at]) => at >= readyMs && at <= rebuildMs)
      .map(([, ms]) => ms)
      .sort((a, b) => a - b)
    const answered = searches.filter(s => s.ok)
    const byKind = Object.fromEntries(
      kinds.map(([kind]) => {
        const times = answered.filter(s => s.kind === kind).map(s => s.ms)
        const sorted = [...times].sort((a, b) => a - b)
        return [
          kind,
          {
            answered: times.length,
            asked: searches.filter(s => s.kind === kind).length,
            p50: percentile(sorted, 50),
            first: times[0],
            last: times.at(-1),
          },
        ]
      }),
    )
    const result = {
      readyMs,
      firstSearchMs,
      rebuildMs,
      eventsPerSecond: totals.events / ((rebuildMs - readyMs) / 1000),
      indexMs: logged['search index built'],
      searches: byKind,
      cutOrFailed: searches.length - answered.length,
      health: { p50: percentile(during, 50), p99: percentile(during, 99), max: during.at(-1), samples: during.length },
      rss: { peak: Math.max(hwm || 0, rssPeak) },
      load: loadAverage(),
      notes: notes.slice(0, 12),
    }
    out('result', result)
    const s = (ms: number) => (Number.isNaN(ms) || ms === undefined ? '–' : `${fmt(ms / 1000, 2)} s`)
    const ms = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '–' : `${fmt(v, v < 10 ? 2 : 0)} ms`)
    console.log(
      '\n' +
        table(
          ['cold start', `${commit}`],
          [
            ['spawn to /ready', s(readyMs)],
            ['spawn to first search answered (~5,000 matches, exact total)', s(firstSearchMs)],
            ['spawn to segments rebuilt', s(rebuildMs)],
            ['rebuild rate (events / time from /ready to rebuilt)', `${fmt(result.eventsPerSecond, 0)} events/s`],
            ['spawn to text index built', s(result.indexMs)],
            ...Object.entries(byKind).map(([kind, k]) => [
              `during the rebuild: ${kind}, p50 (first → last; answered/asked)`,
              `${ms(k.p50)} (${ms(k.first)} → ${ms(k.last)}; ${k.answered}/${k.asked})`,
            ]),
            [
              'GET /health p50 / p99 / max during the rebuild',
              `${ms(result.health.p50)} / ${ms(result.health.p99)} / ${ms(result.health.max)} (${result.health.samples})`,
            ],
            ['RSS peak', `${fmt(result.rss.peak, 0)} MiB`],
          ],
        ),
    )
  } finally {
    probing = false
    clearInterval(sampler)
    child.kill('SIGTERM')
    await child.exited
  }
}
