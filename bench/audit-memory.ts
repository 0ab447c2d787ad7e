/**
 * The start and the memory of the audit log at 10M events (issue 21), query kind by query kind,
 * run by hand on a directory that bench/generate-events.ts wrote and bench/audit-log.ts ran on once
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
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { GeneratedManifest } from './generate-events'
import { expectedTotals, loadAverage, percentile, ROOT, spawnServer, wrk, untilReady, phraseTotals } from './lib'

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
const out = (label: string, value: unknown) => console.log(`${label} ${JSON.stringify(value, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`)

/** RSS and its peak (VmHWM), and of the RSS the anonymous part (heaps, buffers) and the file-backed part (mapped segment pages the process touched: the OS may drop them at any time, but RSS counts them). */
function memory(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 }
}

/** The highest anonymous and file-backed RSS sampled every 20 ms while `during` runs. */
async function sampled<T>(pid: number, during: Promise<T>): Promise<{ result: T; anon: number; file: number }> {
  let anon = 0
  let file = 0
  const timer = setInterval(() => {
    const m = memory(pid)
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
    for (const entry of readdirSync(path, { withFileTypes: true })) entry.isDirectory() ? walk(join(path, entry.name)) : files.push(join(path, entry.name))
  }
  walk(DIR)
  const result = Bun.spawnSync(['fincore', '--bytes', '--noheadings', '--output', 'RES', ...files])
  if (result.exitCode !== 0) return NaN
  return result.stdout.toString().trim().split('\n').reduce((n, line) => n + Number(line.trim()), 0) / 2 ** 20
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
out('setup', { date: new Date().toISOString(), commit, dir: DIR, events: totals.events, load: loadAverage(), nice: Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[16]) })
if (values.evict) {
  const before = cachedMiB()
  evict(DIR)
  out('evicted', { cachedMiBBefore: before, cachedMiBAfter: cachedMiB() })
}

const server = spawnServer(DIR, { INIT_ADMIN_API_TOKENS: undefined, LOG_LEVEL: 'info' })
try {
  const readyMs = await untilReady(server)
  const rssAtReady = memory(server.pid).rss
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
  const notices = server.log.filter((line) => line.msg === 'event search').map((line) => line.message)
  out('start', { readyMs, firstSearchMs, indexMs, health: { p50: percentile(health, 50), p99: percentile(health, 99), max: health.at(-1), samples: health.length }, rssAtReady, idle: memory(server.pid), notices })

  const offset = Math.max(0, totals.events - 50)
  const kinds: [string, string, number][] = [
    ['rare word', `query=${manifest.words.rare.word}`, totals.rare],
    ['~5,000 matches', `query=${manifest.words.thousands.word}`, totals.thousands],
    ['word in most events', `query=${manifest.words.most.word}`, totals.most],
    ['type filter', `type=IS:${TYPE}`, totals.type],
    ['last page', `offset=${offset}`, totals.events],
    ...Object.entries(phrases).map(([phrase, n]): [string, string, number] => [`phrase '${phrase}'`, `query=${encodeURIComponent(phrase)}`, n]),
  ]
  for (const [name, query, expected] of kinds) {
    if (values.only && !values.only.split(',').some((part) => name.includes(part))) continue
    const answered = await total(search(query))
    if (answered !== expected) throw new Error(`${name}: total ${answered}, expected ${expected}`)
    // Resets VmHWM to the current RSS: the peak read after is this kind's.
    writeFileSync(`/proc/${server.pid}/clear_refs`, '5')
    const before = memory(server.pid).rss
    const { result: load, anon, file } = await sampled(server.pid, wrk(search(query), headers, SECONDS, ['--timeout', '60s']))
    const { rss, hwm } = memory(server.pid)
    out('kind', { name, rssBefore: before, peak: hwm, anonPeak: anon, filePeak: file, rssAfter: rss, rps: load.rps, p50: load.p50, p99: load.p99, errors: load.errors, load: load.load })
    await Bun.sleep(2000)
  }
  out('end', { ...memory(server.pid), notices: server.log.filter((line) => line.msg === 'event search').length })
} finally {
  await server.stop()
}
