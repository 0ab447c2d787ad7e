/**
 * Starts and memory at ten million events, on a directory from `bench/run.ts generate`: `memory`
 * (resident memory by kind of query, optionally with the files evicted from the page cache) and
 * `audit-cold` (a start without search segments); and what the audit scenario uses of this: the
 * durable PATCHes on such a log against an empty one, the phrases and their totals.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../src/services'
import { KEY_FILE } from '../src/storage/secret-key'
import {
  fmt,
  gitCommit,
  loadAverage,
  ms,
  options,
  out,
  probeHealth,
  processMemory,
  ROOT,
  removeDir,
  sampleMemory,
  spawnServer,
  spread,
  table,
  tempDataDir,
  untilReady,
  wrk,
} from './lib'
import { eachLogEvent, expectedTotals, openGenerated, removeDerived } from './search'

const TYPE = 'feature-strategy-update'
/** The generated directory's own admin token is the one used: no INIT_ADMIN_API_TOKENS, so starting writes nothing. */
export const GENERATED_TOKENS = { INIT_ADMIN_API_TOKENS: undefined, LOG_LEVEL: 'info' }

type Flag = { name: string; project: string }
type Headers = Record<string, string>
type Patches = Awaited<ReturnType<typeof patchThroughput>>

/** Durable PATCHes of flag descriptions, `connections` loops for `seconds`; each loop its own flag. */
async function patchThroughput(base: string, headers: Headers, flags: Flag[], seconds: number) {
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
  const { p50, p99 } = spread(times)
  return { perSecond: done / ((performance.now() - started) / 1000), p50, p99, failed, load: loadAverage() }
}

/**
 * The same state (flags, tokens, key) with an empty event log: a copy of the checkpoint that
 * includes no event and no commit, next to an empty log and journal. So the comparison isolates
 * the log's length; the state's size (a checkpoint of thousands of flags) is the same on both sides.
 * The two servers take turns, one second each, `rounds` rounds, so that the machine's
 * other load (shared cores, which swings several-fold within seconds) falls on both alike; the
 * figures are the means over the rounds and the median of the rounds' ratios.
 */
export async function patchesAgainstEmptyLog(
  DIR: string,
  base: string,
  headers: Headers,
  flags: Flag[],
  rounds: number,
) {
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
    const taken = { log: [] as Patches[], empty: [] as Patches[] }
    for (let round = 0; round < rounds; round++) {
      taken.log.push(await patchThroughput(base, headers, flags, 1))
      taken.empty.push(await patchThroughput(empty.base, headers, flags, 1))
    }
    const sum = (list: Patches[]) => ({
      perSecond: list.reduce((n, r) => n + r.perSecond, 0) / list.length,
      rounds: list.map(r => Math.round(r.perSecond)),
      p99: Math.max(...list.map(r => r.p99)),
      failed: list.reduce((n, r) => n + r.failed, 0),
    })
    const ratios = taken.log.map((r, i) => r.perSecond / taken.empty[i].perSecond)
    return { log: sum(taken.log), empty: sum(taken.empty), medianRatio: spread(ratios).p50 }
  } finally {
    await empty.stop()
    removeDir(dir)
  }
}

/**
 * Queries of several words or with separators, which the words alone do not decide: a common word
 * before the start of the rare vocabulary words, two common words adjacent (in most events), words
 * joined by '-' and by '.', and two common words never adjacent; then separators alone (`;;`, a
 * quote in every event, `":"`, a space), which the gaps' event lists decide (format 3).
 */
export const PHRASES = [
  'dashboard qx',
  'enabled":true',
  'europe-legacy',
  'example.com',
  'true false',
  ';;',
  '"',
  '":"',
  ' ',
]

/**
 * The PHRASES' exact totals in the directory's log, by a scan with the search's own text, cached in
 * `<dir>.phrases.json` with the log's size: events appended since (PATCHes of earlier benches) are
 * counted from the log's tail only.
 */
export function phraseTotals(dir: string): Record<string, number> {
  const size = statSync(join(dir, EVENTS_FILE)).size
  const cache = `${dir}.phrases.json`
  const cached = existsSync(cache)
    ? (JSON.parse(readFileSync(cache, 'utf8')) as { size: number; totals: Record<string, number> })
    : null
  const usable = cached !== null && cached.size <= size && PHRASES.every(phrase => phrase in cached.totals)
  if (usable && cached.size === size) return cached.totals
  const totals: Record<string, number> = usable ? cached.totals : Object.fromEntries(PHRASES.map(phrase => [phrase, 0]))
  eachLogEvent(
    dir,
    usable ? cached.size : 0,
    (_, text) => {
      for (const phrase of PHRASES) if (text.includes(phrase)) totals[phrase]++
    },
    // Lines holding none of the phrases anywhere are not parsed.
    line => {
      const lower = line.toLowerCase()
      return PHRASES.some(phrase => lower.includes(phrase))
    },
  )
  writeFileSync(cache, JSON.stringify({ size, totals }))
  return totals
}

/** Every file under `path`. */
function filesUnder(path: string): string[] {
  return readdirSync(path, { withFileTypes: true }).flatMap(entry =>
    entry.isDirectory() ? filesUnder(join(path, entry.name)) : [join(path, entry.name)],
  )
}

/**
 * `memory`: the start and the memory of the audit log at 10M events, query kind by query kind, on
 * a directory that bench/generate-events.ts wrote and the audit scenario ran on once (its segments
 * written, its phrases' totals cached in `<dir>.phrases.json`). `--evict` drops the directory's files from the OS page cache first (`dd iflag=nocache count=0`
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
  const none = undefined as string | undefined
  const o = options({ dir: none, seconds: 10, evict: false, only: none })
  const { dir: DIR, manifest, headers } = openGenerated(o.dir)
  /** Of the directory's files, the MiB the page cache holds (fincore, util-linux), or NaN without it. */
  const cachedMiB = () => {
    const result = Bun.spawnSync(['fincore', '--bytes', '--noheadings', '--output', 'RES', ...filesUnder(DIR)])
    if (result.exitCode !== 0) return NaN
    const lines = result.stdout.toString().trim().split('\n')
    return lines.reduce((n, line) => n + Number(line.trim()), 0) / 2 ** 20
  }
  /** A search's total, asked until answered. */
  async function total(url: string): Promise<number> {
    for (;;) {
      const response = await fetch(url, { headers }).catch(() => null)
      if (response?.status === 200) return ((await response.json()) as { total: number }).total
    }
  }

  const totals = expectedTotals(DIR, manifest, TYPE)
  const phrases = phraseTotals(DIR)
  const nice = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[16])
  const date = new Date().toISOString()
  out('setup', { date, commit: gitCommit(), dir: DIR, events: totals.events, load: loadAverage(), nice })
  if (o.evict) {
    const before = cachedMiB()
    for (const file of filesUnder(DIR)) Bun.spawnSync(['dd', `if=${file}`, 'iflag=nocache', 'count=0', 'status=none'])
    out('evicted', { cachedMiBBefore: before, cachedMiBAfter: cachedMiB() })
  }

  const server = spawnServer(DIR, GENERATED_TOKENS)
  try {
    const readyMs = await untilReady(server)
    const rssAtReady = processMemory(server.pid).rss
    const search = (query: string) => `${server.base}/api/admin/search/events?${query}`
    const health = probeHealth(server.base)
    const first = await total(search(`query=${manifest.words.thousands.word}`))
    const firstSearchMs = performance.now() - server.spawnedAt
    if (first !== totals.thousands) throw new Error(`first search: total ${first}, expected ${totals.thousands}`)
    while (!((await (await fetch(`${server.base}/ready`)).json()) as { searchIndexReady: boolean }).searchIndexReady)
      await Bun.sleep(100)
    const indexMs = performance.now() - server.spawnedAt
    const probed = spread((await health.stop()).map(([, took]) => took))
    await Bun.sleep(3000)
    const notices = server.log.filter(line => line.msg === 'event search').map(line => line.message)
    const idle = processMemory(server.pid)
    out('start', { readyMs, firstSearchMs, indexMs, health: probed, rssAtReady, idle, notices })

    const kinds: [string, string, number][] = [
      ['rare word', `query=${manifest.words.rare.word}`, totals.rare],
      ['~5,000 matches', `query=${manifest.words.thousands.word}`, totals.thousands],
      ['word in most events', `query=${manifest.words.most.word}`, totals.most],
      ['type filter', `type=IS:${TYPE}`, totals.type],
      ['last page', `offset=${Math.max(0, totals.events - 50)}`, totals.events],
      ...Object.entries(phrases).map(([phrase, n]): [string, string, number] => [
        `phrase '${phrase}'`,
        `query=${encodeURIComponent(phrase)}`,
        n,
      ]),
    ]
    for (const [name, query, expected] of kinds) {
      if (o.only && !o.only.split(',').some(part => name.includes(part))) continue
      const answered = await total(search(query))
      if (answered !== expected) throw new Error(`${name}: total ${answered}, expected ${expected}`)
      // Resets VmHWM to the current RSS: the peak read after is this kind's.
      writeFileSync(`/proc/${server.pid}/clear_refs`, '5')
      const rssBefore = processMemory(server.pid).rss
      const sampled = sampleMemory(server.pid, 20)
      const load = await wrk(search(query), headers, o.seconds, ['--timeout', '60s'])
      sampled.stop()
      const { rss, hwm } = processMemory(server.pid)
      const { rps, p50, p99, errors } = load
      out('kind', {
        name,
        rssBefore,
        peak: hwm,
        anonPeak: sampled.anon,
        filePeak: sampled.file,
        rssAfter: rss,
        rps,
        p50,
        p99,
        errors,
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
 * A cold start at ten million events: the segments under search/ are missing (an upgrade changed
 * their format, or they were deleted by hand) and must be rebuilt from events.jsonl. Run by hand
 * on a COPY of a directory bench/generate-events.ts wrote (its search/ is deleted here):
 *   cp -r /tmp/flagstore-10m /tmp/cold-10m && cp /tmp/flagstore-10m.generated.json /tmp/cold-10m.generated.json
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
  const o = options({ dir: undefined as string | undefined, root: undefined as string | undefined, limit: 1800 })
  const { dir: DIR, manifest, headers } = openGenerated(o.dir)
  const root = o.root ?? ROOT
  const totals = expectedTotals(DIR, manifest, TYPE)
  removeDerived(DIR)
  const commit = gitCommit(root) || root
  out('setup', {
    date: new Date().toISOString(),
    root,
    commit,
    events: totals.events,
    eventsMiB: manifest.bytes / 2 ** 20,
    load: loadAverage(),
  })

  const server = spawnServer(DIR, GENERATED_TOKENS, { root })
  const since = () => performance.now() - server.spawnedAt
  /** When the server first logged `msg`, in ms since its spawn. */
  const logged = (msg: string) => server.log.find(line => line.msg === msg)?.at as number | undefined
  const notes = () => server.log.filter(line => /segment|index|ready|event search/.test(String(line.msg)))
  /** The rebuild is over once the server says so (`ready` for a server whose searches wait for it). */
  const rebuilt = () =>
    logged('search segments rebuilt') ??
    (notes().some(note => /missing/.test(String(note.message))) ? undefined : logged('ready'))
  const memory = sampleMemory(server.pid, 100)
  const health = probeHealth(server.base)
  try {
    const readyMs = await untilReady(server)
    const { words } = manifest
    const kinds: [string, string, number][] = [
      [`~5,000 matches "${words.thousands.word}"`, `query=${words.thousands.word}`, totals.thousands],
      [`rare word "${words.rare.word}"`, `query=${words.rare.word}`, totals.rare],
      [`type filter ${TYPE}`, `type=IS:${TYPE}`, totals.type],
      ['first page of everything', 'limit=50', totals.events],
      [`word in most events "${words.most.word}"`, `query=${words.most.word}`, totals.most],
    ]
    const searches: { kind: string; at: number; ms: number; ok: boolean; status: number }[] = []
    let firstSearchMs = NaN
    for (let k = 0; rebuilt() === undefined && since() < o.limit * 1000; k++) {
      const [kind, query, expected] = kinds[k % kinds.length]
      const t = performance.now()
      const response = await fetch(`${server.base}/api/admin/search/events?${query}`, { headers }).catch(() => null)
      const body = (await response?.json().catch(() => null)) as { total: number } | null
      const status = response?.status ?? 0
      const ok = status === 200 && body?.total === expected
      // A search answered with a wrong total: the bench stops.
      if (status === 200 && !ok) throw new Error(`${kind}: total ${body?.total}, expected ${expected}`)
      searches.push({ kind, at: t - server.spawnedAt, ms: performance.now() - t, ok, status })
      if (ok && Number.isNaN(firstSearchMs)) firstSearchMs = since()
    }
    const rebuildMs = rebuilt() ?? NaN
    while (logged('search index built') === undefined && since() < o.limit * 1000) await Bun.sleep(200)
    const during = (await health.stop())
      .filter(([at]) => at - server.spawnedAt >= readyMs && at - server.spawnedAt <= rebuildMs)
      .map(([, took]) => took)
    memory.stop()
    const answered = searches.filter(s => s.ok)
    const byKind = Object.fromEntries(
      kinds.map(([kind]) => {
        const times = answered.filter(s => s.kind === kind).map(s => s.ms)
        const asked = searches.filter(s => s.kind === kind).length
        return [kind, { answered: times.length, asked, p50: spread(times).p50, first: times[0], last: times.at(-1) }]
      }),
    )
    const result = {
      ...{ readyMs, firstSearchMs, rebuildMs, eventsPerSecond: totals.events / ((rebuildMs - readyMs) / 1000) },
      ...{ indexMs: logged('search index built'), searches: byKind, cutOrFailed: searches.length - answered.length },
      ...{ health: spread(during), rss: { peak: Math.max(processMemory(server.pid).hwm || 0, memory.rss) } },
      ...{ load: loadAverage(), notes: notes().slice(0, 12) },
    }
    out('result', result)
    const s = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? '–' : `${fmt(ms / 1000, 2)} s`)
    const t = (value: number | undefined) => ms(value, value !== undefined && value < 10 ? 2 : 0)
    const rows = [
      ['spawn to /ready', s(readyMs)],
      ['spawn to first search answered (~5,000 matches, exact total)', s(firstSearchMs)],
      ['spawn to segments rebuilt', s(rebuildMs)],
      ['rebuild rate (events / time from /ready to rebuilt)', `${fmt(result.eventsPerSecond, 0)} events/s`],
      ['spawn to text index built', s(result.indexMs)],
      ...Object.entries(byKind).map(([kind, k]) => [
        `during the rebuild: ${kind}, p50 (first → last; answered/asked)`,
        `${t(k.p50)} (${t(k.first)} → ${t(k.last)}; ${k.answered}/${k.asked})`,
      ]),
      [
        'GET /health p50 / p99 / max during the rebuild',
        `${t(result.health.p50)} / ${t(result.health.p99)} / ${t(result.health.max)} (${result.health.samples})`,
      ],
      ['RSS peak', `${fmt(result.rss.peak, 0)} MiB`],
    ]
    console.log(`\n${table(['cold start', commit], rows)}`)
  } finally {
    await health.stop()
    memory.stop()
    await server.stop()
  }
}
