/**
 * Starts and memory at ten million events: `memory` (by kind of query) and `audit-cold` (a start
 * without search segments); and what the three 10M scenarios share: the directory `generate` wrote
 * read back, the searches they time (auditQueries) and the totals those must answer.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { searchableText } from '../src/features/events/search/searchable-text'
import { DATA_FILES } from '../src/open-store'
import { EVENTS_FILE } from '../src/services'
import type { EventRecord } from '../src/storage/records'
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
  sampleMemory,
  spawnServer,
  spread,
  table,
  untilReady,
  wrk,
} from './lib'
import type { GeneratedManifest } from './generate-events'

const TYPE = 'feature-strategy-update'
/** The generated directory's own admin token is the one used: no INIT_ADMIN_API_TOKENS, so starting writes nothing. */
export const GENERATED_TOKENS = { INIT_ADMIN_API_TOKENS: undefined, LOG_LEVEL: 'info' }

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

/** Every file under `path` with its size; none for a path gone meanwhile (the service renames files as it writes). */
function filesUnder(path: string): { path: string; size: number }[] {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (!stat?.isDirectory()) return stat ? [{ path, size: stat.size }] : []
  return readdirSync(path).flatMap(name => filesUnder(join(path, name)))
}

/**
 * `memory`, on a directory the audit scenario ran on once (its segments written). `--evict` drops
 * the directory's files from the page cache first (`dd iflag=nocache count=0` per file, that is
 * posix_fadvise DONTNEED: only these files), so that the start reads the disk. Then it measures:
 *   - spawn to `/ready`, to the first search answered (exact total), to `searchIndexReady` (the
 *     segments' checksums are read before the index is built: that is when the background check
 *     is done); GET /health p50/p99/max probed sequentially until then;
 *   - RSS at ready, idle, and for each of auditQueries alone under 32 connections (wrk): the peak
 *     (VmHWM, reset before each through /proc/<pid>/clear_refs) and the RSS after.
 * Figures go to standard output as JSON lines.
 */
export async function auditMemory() {
  const none = undefined as string | undefined
  const o = options({ dir: none, seconds: 10, evict: false, only: none })
  const { dir: DIR, manifest, headers } = openGenerated(o.dir)
  const files = filesUnder(DIR).map(file => file.path)
  /** Of the directory's files, the MiB the page cache holds (fincore, util-linux), or NaN without it. */
  const cachedMiB = () => {
    const result = Bun.spawnSync(['fincore', '--bytes', '--noheadings', '--output', 'RES', ...files])
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

  const totals = expectedTotals(DIR, manifest)
  const phrases = phraseTotals(DIR)
  const nice = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[16])
  const date = new Date().toISOString()
  out('setup', { date, commit: gitCommit(), dir: DIR, events: totals.events, load: loadAverage(), nice })
  if (o.evict) {
    const before = cachedMiB()
    for (const file of files) Bun.spawnSync(['dd', `if=${file}`, 'iflag=nocache', 'count=0', 'status=none'])
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

    for (const { name, query, total: expected } of auditQueries(manifest, totals, phrases)) {
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
 * `audit-cold`: the segments under search/ are missing (an upgrade changed their format, or they
 * were deleted) and must be rebuilt from events.jsonl. Run on a COPY of a directory `generate` wrote:
 *   cp -r /tmp/flagstore-10m /tmp/cold-10m && cp /tmp/flagstore-10m.generated.json /tmp/cold-10m.generated.json
 * `--root` runs the server of another checkout (`git archive` of a commit, with node_modules): the
 * same measurement before a change. It measures, from spawning the real server:
 *   - time to `/ready`, and to the first search answered (exact total);
 *   - searches during the rebuild, one after another in turn, each total checked: their latencies
 *     (p50, first and last), and how many were answered;
 *   - the rebuild: from spawn until the server logs `search segments rebuilt` (or, for a server that
 *     answers no search before the rebuild ends, `ready`), with events/s; then the text index;
 *   - GET /health p50/p99/max probed one after another throughout the rebuild, and RSS (peak VmHWM).
 * Figures go to standard output as JSON lines and a table.
 */
export async function auditCold() {
  const o = options({ dir: undefined as string | undefined, root: undefined as string | undefined, limit: 1800 })
  const { dir: DIR, manifest, headers } = openGenerated(o.dir)
  const root = o.root ?? ROOT
  const totals = expectedTotals(DIR, manifest)
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
    const [rare, thousands, most, type] = auditQueries(manifest, totals)
    const everything = { name: 'first page of everything', query: 'limit=50', total: totals.events }
    const kinds = [thousands, rare, type, everything, most]
    const searches: { kind: string; at: number; ms: number; ok: boolean; status: number }[] = []
    let firstSearchMs = NaN
    for (let k = 0; rebuilt() === undefined && since() < o.limit * 1000; k++) {
      const { name: kind, query, total: expected } = kinds[k % kinds.length]
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
      kinds.map(({ name: kind }) => {
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

/** A directory written by bench/generate-events.ts (`--dir`, required) and its manifest, read back. */
export function openGenerated(dir: string | undefined) {
  if (!dir) throw new Error('--dir DIR: a directory written by bench/generate-events.ts')
  const trimmed = dir.replace(/\/+$/, '')
  const manifest = JSON.parse(readFileSync(`${trimmed}.generated.json`, 'utf8')) as GeneratedManifest
  return { dir: trimmed, manifest, headers: { authorization: manifest.adminSecret } }
}

/**
 * The totals a directory written by bench/generate-events.ts must answer: the generator's exact
 * counts for its words and for TYPE, plus those of events appended since (PATCHes of earlier
 * benches), counted from the log's tail with the search's own text (searchableText).
 */
type Totals = ReturnType<typeof expectedTotals>

export function expectedTotals(dir: string, manifest: GeneratedManifest) {
  const words = manifest.words
  const totals = {
    rare: words.rare.total,
    thousands: words.thousands.total,
    most: words.most.total,
    events: manifest.events,
    type: manifest.types[TYPE] ?? 0,
  }
  eachLogEvent(dir, manifest.bytes, (event, text) => {
    totals.events++
    if (event.type === TYPE) totals.type++
    if (text.includes(words.rare.word)) totals.rare++
    if (text.includes(words.thousands.word)) totals.thousands++
    if (text.includes(words.most.word)) totals.most++
  })
  return totals
}

/**
 * The searches the 10M scenarios time, each with the total it must answer: words of the generated
 * vocabulary, a type filter, the last page, and the PHRASES given their totals (phraseTotals).
 */
export function auditQueries(manifest: GeneratedManifest, totals: Totals, phrases: Record<string, number> = {}) {
  const { rare, thousands, most } = manifest.words
  const last = Math.max(0, totals.events - 50)
  return [
    { name: `rare word "${rare.word}"`, query: `query=${rare.word}`, total: totals.rare },
    { name: `~5,000 matches "${thousands.word}"`, query: `query=${thousands.word}`, total: totals.thousands },
    { name: `word in most events "${most.word}"`, query: `query=${most.word}`, total: totals.most },
    { name: `type filter ${TYPE}`, query: `type=IS:${TYPE}`, total: totals.type },
    { name: `last page, offset ${last}`, query: `offset=${last}`, total: totals.events },
    ...Object.entries(phrases).map(([phrase, total]) => {
      return { name: `phrase '${phrase}'`, query: `query=${encodeURIComponent(phrase)}`, total }
    }),
  ]
}

/** Each event of the directory's log from byte `from` on, with the search's own text (searchableText), read 16 MiB at a time. */
export function eachLogEvent(
  dir: string,
  from: number,
  onEvent: (event: EventRecord, text: string) => void,
  wanted: (line: string) => boolean = () => true,
): void {
  const path = join(dir, EVENTS_FILE)
  const size = statSync(path).size
  const fd = openSync(path, 'r')
  const chunk = Buffer.alloc(1 << 24)
  let rest = ''
  try {
    for (let position = from; position < size; ) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, size - position), position)
      position += read
      const lines = (rest + chunk.toString('utf8', 0, read)).split('\n')
      rest = lines.pop()!
      for (const line of lines) {
        if (!line || !wanted(line)) continue
        const event = JSON.parse(line) as EventRecord
        onEvent(event, searchableText(event))
      }
    }
  } finally {
    closeSync(fd)
  }
}

/** Files in the data directory that the service derives from the log (anything not the store's own). */
export function derivedFiles(dir: string): { files: number; bytes: number } {
  const names = readdirSync(dir).filter(name => !DATA_FILES.includes(name))
  const files = names.flatMap(name => filesUnder(join(dir, name)))
  return { files: files.length, bytes: files.reduce((n, file) => n + file.size, 0) }
}

/** Deletes what derivedFiles counts. */
export function removeDerived(dir: string) {
  for (const name of readdirSync(dir))
    if (!DATA_FILES.includes(name)) rmSync(join(dir, name), { recursive: true, force: true })
}
