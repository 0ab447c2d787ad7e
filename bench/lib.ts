/**
 * Shared pieces of the benchmarks: synthetic data directories, starting the real server, load
 * loops and statistics. Benchmarks are run by hand (`bun bench/<name>.ts`), never by the test suite.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync, writeSync, closeSync, readSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { emptyState, type EventRecord } from '../src/storage/records'
import { COLLECTIONS } from '../src/services'
import { type FlagRecord } from '../src/features/flags/flags.records'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../src/services'
import { searchableText } from '../src/features/events/search/searchable-text'
import type { GeneratedManifest } from './generate-events'

export const ROOT = join(import.meta.dir, '..')
export const SECRET = '*:*.benchmark-admin-secret-0123456789'

/** A small deterministic random source. */
export function random(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'po', 'da', 'fu', 'gi', 'ho', 'ja', 'be']
/** A pronounceable word per number: 16^3 = 4096 three-syllable words, more with four. */
export function word(n: number): string {
  let text = ''
  do {
    text += SYLLABLES[n % 16]
    n = Math.floor(n / 16)
  } while (n > 0)
  return text
}

export const RARE_WORDS = 200_000
export const EVENT_TYPES = ['feature-created', 'feature-metadata-updated', 'feature-environment-enabled', 'feature-strategy-add', 'feature-tagged']

/**
 * One synthetic event with about 400 characters of payload. Every event's description holds
 * `common` (so a query for it matches every event), one of 200,000 rare words (each in about five
 * events of a million) and `often` in one event of ten.
 */
export function syntheticEvent(id: number, rand: () => number, flags: number, createdAt: string): EventRecord {
  const flag = `flag-${Math.floor(rand() * flags)}`
  const rare = word(Math.floor(rand() * RARE_WORDS) + 4096)
  const type = EVENT_TYPES[Math.floor(rand() * EVENT_TYPES.length)]
  return {
    id,
    createdAt,
    type,
    createdBy: rand() < 0.5 ? 'admin-bootstrap' : 'ci-pipeline',
    createdByUserId: rand() < 0.5 ? -42 : 7,
    environment: type.includes('environment') || type.includes('strategy') ? (rand() < 0.5 ? 'development' : 'production') : null,
    project: 'default',
    featureName: flag,
    data: {
      name: flag,
      description: `common ${rare} ${rand() < 0.1 ? 'often' : 'seldom'} change of ${flag} made by the release train number ${id % 997}`,
      type: 'release',
      project: 'default',
      stale: false,
      impressionData: false,
      archived: false,
      createdAt,
    },
    preData: { name: flag, description: `earlier text ${word(Math.floor(rand() * 4096))}`, stale: false },
    tags: [{ type: 'simple', value: `team-${Math.floor(rand() * 40)}` }],
  }
}

function syntheticFlag(index: number, environments: string[], createdAt: string): FlagRecord {
  return {
    name: `flag-${index}`,
    project: 'default',
    type: 'release',
    description: `Synthetic flag ${index}`,
    impressionData: false,
    stale: false,
    archived: false,
    archivedAt: null,
    createdAt,
    createdBy: { id: -42, name: 'admin-bootstrap', imageUrl: '' },
    environments: Object.fromEntries(
      environments.map((environment, i) => [
        environment,
        { enabled: (index + i) % 2 === 0, strategies: [], variants: [], lastSeenAt: null },
      ]),
    ),
    tags: [],
    dependencies: [],
    lifecycle: { stage: 'initial', enteredStageAt: createdAt },
    completion: null,
  }
}

/**
 * Writes a data directory with `events` synthetic events and `flags` flags in project default,
 * in the service's own format, as if the service had written it.
 */
export function seedDataDir(dir: string, options: { events: number; flags: number; environments?: string[] }) {
  mkdirSync(dir, { recursive: true })
  const fd = openSync(join(dir, EVENTS_FILE), 'w')
  let buffer = ''
  for (const line of seededEventLines(options)) {
    buffer += line + '\n'
    if (buffer.length > 4_000_000) {
      writeSync(fd, buffer)
      buffer = ''
    }
  }
  writeSync(fd, buffer)
  closeSync(fd)
  writeFileSync(join(dir, STATE_FILE), JSON.stringify(seededState(options)))
  writeFileSync(join(dir, JOURNAL_FILE), '')
}

/** The state seedDataDir writes beside its events: `flags` flags in project default, at commit 1, holding `events` events. */
export function seededState(options: { events: number; flags: number; environments?: string[] }) {
  const environments = options.environments ?? ['development', 'production']
  const state = emptyState(COLLECTIONS)
  const created = new Date(Date.UTC(2025, 0, 1)).toISOString()
  state.lastEventId = options.events
  state.commitSeq = 1
  environments.forEach((name, i) => (state.environments[name] = { name, type: i === environments.length - 1 ? 'production' : 'development', sortOrder: (i + 1) * 100, createdAt: created }))
  state.projects.default = { id: 'default', name: 'Default', description: '', createdAt: created, updatedAt: null, environments, featureNaming: null }
  for (let i = 0; i < options.flags; i++) state.flags[`flag-${i}`] = syntheticFlag(i, environments, created)
  return state
}

/** The events seedDataDir writes, one JSON line at a time, for another store to take. */
export function* seededEventLines(options: { events: number; flags: number }): Generator<string> {
  const start = Date.UTC(2025, 0, 1)
  const step = Math.max(1, Math.floor((365 * 86_400_000) / Math.max(1, options.events)))
  const rand = random(42)
  for (let id = 1; id <= options.events; id++) yield JSON.stringify(syntheticEvent(id, rand, options.flags, new Date(start + id * step).toISOString()))
}

/**
 * Adds segments and strategies to a data directory written by seedDataDir, for the SDK API benches:
 * in `environment` every other flag gets a flexibleRollout with two constraints and one of the
 * segments, the others a default strategy.
 */
export function addClientStrategies(dir: string, { flags: FLAGS, segments: SEGMENTS, environment: ENVIRONMENT }: { flags: number; segments: number; environment: string }) {
  const path = join(dir, STATE_FILE)
  const state = JSON.parse(readFileSync(path, 'utf8'))
  const createdAt = new Date(Date.UTC(2025, 0, 1)).toISOString()
  for (let id = 1; id <= SEGMENTS; id++) {
    state.segments[String(id)] = {
      id,
      name: `segment-${id}`,
      description: `Synthetic segment ${id}`,
      project: null,
      constraints: [
        { contextName: 'region', operator: 'IN', caseInsensitive: false, inverted: false, values: ['eu-west', 'eu-north', `region-${id}`] },
        { contextName: 'appVersion', operator: 'SEMVER_GT', caseInsensitive: false, inverted: false, values: [], value: `1.${id}.0` },
      ],
      createdAt,
      createdBy: 'admin-bootstrap',
    }
  }
  state.segmentSequence.segments = { lastId: SEGMENTS }
  for (let i = 0; i < FLAGS; i++) {
    const name = `flag-${i}`
    const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`
    state.flags[name].environments[ENVIRONMENT].strategies =
      i % 2 === 0
        ? [{
            id: uuid(i),
            name: 'flexibleRollout',
            title: null,
            disabled: false,
            sortOrder: 0,
            segments: [1 + (i % SEGMENTS)],
            constraints: [
              { contextName: 'userId', operator: 'IN', caseInsensitive: false, inverted: false, values: Array.from({ length: 5 }, (_, k) => `user-${i * 5 + k}`) },
              { contextName: 'email', operator: 'STR_ENDS_WITH', caseInsensitive: true, inverted: false, values: ['@example.com'] },
            ],
            variants: [],
            parameters: { rollout: String(i % 101), stickiness: 'default', groupId: name },
          }]
        : [{ id: uuid(i), name: 'default', title: null, disabled: false, sortOrder: 0, segments: [], constraints: [], variants: [], parameters: {} }]
  }
  writeFileSync(path, JSON.stringify(state))
}

export function tempDataDir(prefix = 'bench-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true })
}

export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

export interface RunningServer {
  base: string
  pid: number
  /** The server's JSON log lines so far. */
  log: Record<string, unknown>[]
  /** Milliseconds from spawn until /ready answered 200. */
  readyMs: number
  stop(): Promise<void>
}

export interface SpawnedServer {
  base: string
  pid: number
  /** performance.now() at the spawn. */
  spawnedAt: number
  /** The server's JSON log lines so far (request lines left out), each with `at`: ms since the spawn. */
  log: Record<string, unknown>[]
  exited: Promise<number>
  stop(): Promise<number>
}

/**
 * Spawns the server on `dataDir` (a free port, the admin secret SECRET unless `env` says otherwise;
 * a variable set to undefined in `env` is left out) without waiting for it. `SRC=other/src` in the
 * bench's own environment runs another copy of src/ (with a package.json beside it), for a before/after.
 */
export function spawnServer(dataDir: string, env: Record<string, string | undefined> = {}, runtimeArgs: string[] = []): SpawnedServer {
  const port = freePort()
  const childEnv: Record<string, string | undefined> = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, INIT_ADMIN_API_TOKENS: SECRET, ...env }
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key]
  const spawnedAt = performance.now()
  const child = Bun.spawn([process.execPath, ...runtimeArgs, `${process.env.SRC ?? 'src'}/main.ts`], { cwd: ROOT, env: childEnv, stdout: 'pipe', stderr: 'inherit' })
  const log: Record<string, unknown>[] = []
  void (async () => {
    let carry = ''
    for await (const chunk of child.stdout as ReadableStream<Uint8Array>) {
      const lines = (carry + new TextDecoder().decode(chunk)).split('\n')
      carry = lines.pop()!
      for (const line of lines) {
        // Request lines are many (one per request) and never read: parsing them would take CPU from the server measured.
        if (line.includes('"msg":"request"')) continue
        try {
          log.push({ at: Math.round(performance.now() - spawnedAt), ...JSON.parse(line) })
        } catch {}
      }
    }
  })()
  return {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid,
    spawnedAt,
    log,
    exited: child.exited,
    async stop() {
      child.kill('SIGTERM')
      return child.exited
    },
  }
}

/** Waits until a spawned server's /ready answers 200; the ms since its spawn. */
export async function untilReady(server: SpawnedServer): Promise<number> {
  for (;;) {
    try {
      if ((await fetch(`${server.base}/ready`)).ok) return performance.now() - server.spawnedAt
    } catch {}
    const code = await Promise.race([server.exited, Bun.sleep(5).then(() => null)])
    if (code !== null) throw new Error(`server exited with ${code} before it was ready`)
  }
}

/** Spawns the server (see spawnServer) and waits until /ready answers 200. */
export async function startServer(dataDir: string, env: Record<string, string | undefined> = {}, runtimeArgs: string[] = []): Promise<RunningServer> {
  const server = spawnServer(dataDir, env, runtimeArgs)
  const readyMs = await untilReady(server)
  return {
    base: server.base,
    pid: server.pid,
    log: server.log,
    readyMs,
    async stop() {
      await server.stop()
    },
  }
}

/** Waits until the server's search index is built: the steady state the figures are about. */
export async function waitForSearchIndex(base: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    const ready = await (await fetch(`${base}/ready`)).json()
    if (ready.searchIndexReady) return performance.now() - started
    await Bun.sleep(100)
  }
}

/** A process's user and system CPU seconds so far and its minor page faults (/proc/<pid>/stat, Linux). */
export function processStat(pid: number): { user: number; system: number; faults: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100, faults: Number(fields[7]) }
}

/** CPU seconds (user and system) a process has used so far (Linux). */
export function cpuSeconds(pid: number): number {
  const { user, system } = processStat(pid)
  return user + system
}

/** Resident set size of a process in MiB (Linux). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

export function sha256(text: string) {
  return createHash('sha256').update(text).digest('hex')
}

export const authHeaders = { authorization: SECRET, 'content-type': 'application/json' }

/** Formats a markdown table. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const lines = [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`]
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`)
  return lines.join('\n')
}

export const fmt = (value: number, digits = 1) => value.toFixed(digits)

export interface Load {
  rps: number
  p50: number
  p99: number
  errors: number
  /** The 1-minute load average when wrk started. */
  load: number
  /** Responses received in all (wrk's "N requests in"; not set by every runner). */
  requests?: number
}

export const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])

/** wrk with 2 threads and 32 connections; parses its latency distribution. `extra`: more wrk arguments (`-s post.lua`). */
export async function wrk(url: string, headers: Record<string, string>, seconds: number, extra: string[] = []): Promise<Load> {
  const load = loadAverage()
  const args = ['wrk', '-t2', '-c32', `-d${seconds}s`, '--latency', ...extra, ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url]
  const child = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' })
  const output = await new Response(child.stdout).text()
  await child.exited
  const ms = (text: string | undefined) => {
    const match = /([\d.]+)(us|ms|s)/.exec(text ?? '')
    if (!match) return NaN
    return Number(match[1]) * (match[2] === 'us' ? 0.001 : match[2] === 's' ? 1000 : 1)
  }
  // wrk counts only statuses ≥ 400 here, so the 304s are not errors.
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? '0'
  const socketErrors = [...(/Socket errors: (.*)/.exec(output)?.[1] ?? '').matchAll(/(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0)
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]),
    p50: ms(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
    p99: ms(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
    errors: Number(errors) + socketErrors,
    load,
    requests: Number(/(\d+) requests in/.exec(output)?.[1]),
  }
}

/**
 * The columns every HTTP table shows for one scenario, medians over `runs`: requests/s, p50, p99
 * and, with a ceiling (a bare Bun server run beside it), its requests/s and the ratio of the two.
 */
export function loadColumns<R>(runs: R[], load: (run: R) => Load, ceiling?: ((run: R) => Load) | null): string[] {
  const m = (pick: (run: R) => number) => median(runs.map(pick))
  return [
    fmt(m((r) => load(r).rps), 0),
    `${fmt(m((r) => load(r).p50), 2)} ms`,
    `${fmt(m((r) => load(r).p99), 2)} ms`,
    ceiling ? fmt(m((r) => ceiling(r).rps), 0) : '',
    ceiling ? fmt(m((r) => load(r).rps / ceiling(r).rps), 2) : '',
  ]
}

/** Errors summed over the runs, and each run's load average, as table cells. */
export const errorsOf = <R>(runs: R[], load: (run: R) => Load) => String(runs.reduce((n, r) => n + load(r).errors, 0))
export const loadsOf = <R>(runs: R[], load: (run: R) => number) => runs.map((r) => fmt(load(r), 2)).join(', ')

/**
 * The totals a directory written by bench/generate-events.ts must answer: the generator's exact
 * counts for its words and for `type`, plus those of events appended since (PATCHes of earlier
 * benches), counted from the log's tail with the search's own text (searchableText).
 */
export function expectedTotals(dir: string, manifest: GeneratedManifest, type: string) {
  const words = manifest.words
  const totals = { rare: words.rare.total, thousands: words.thousands.total, most: words.most.total, events: manifest.events, type: manifest.types[type] ?? 0 }
  eachLogEvent(dir, manifest.bytes, (event, text) => {
    totals.events++
    if (event.type === type) totals.type++
    if (text.includes(words.rare.word)) totals.rare++
    if (text.includes(words.thousands.word)) totals.thousands++
    if (text.includes(words.most.word)) totals.most++
  })
  return totals
}

/** Each event of the directory's log from byte `from` on, with the search's own text (searchableText), read 16 MiB at a time. */
function eachLogEvent(dir: string, from: number, onEvent: (event: EventRecord, text: string) => void, wanted: (line: string) => boolean = () => true): void {
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

/**
 * Queries of several words or with separators, which the words alone do not decide: a common word
 * before the start of the rare vocabulary words, two common words adjacent (in most events), words
 * joined by '-' and by '.', and two common words never adjacent; then separators alone (`;;`, a
 * quote in every event, `":"`, a space), which the gaps' event lists decide (format 3).
 */
export const PHRASES = ['dashboard qx', 'enabled":true', 'europe-legacy', 'example.com', 'true false', ';;', '"', '":"', ' ']

/**
 * The PHRASES' exact totals in the directory's log, by a scan with the search's own text, cached in
 * `<dir>.phrases.json` with the log's size: events appended since (PATCHes of earlier benches) are
 * counted from the log's tail only.
 */
export function phraseTotals(dir: string): Record<string, number> {
  const size = statSync(join(dir, EVENTS_FILE)).size
  const cache = `${dir}.phrases.json`
  const cached = existsSync(cache) ? (JSON.parse(readFileSync(cache, 'utf8')) as { size: number; totals: Record<string, number> }) : null
  const usable = cached !== null && cached.size <= size && PHRASES.every((phrase) => phrase in cached.totals)
  if (usable && cached.size === size) return cached.totals
  const totals: Record<string, number> = usable ? cached.totals : Object.fromEntries(PHRASES.map((phrase) => [phrase, 0]))
  eachLogEvent(
    dir,
    usable ? cached.size : 0,
    (_, text) => {
      for (const phrase of PHRASES) if (text.includes(phrase)) totals[phrase]++
    },
    // Lines holding none of the phrases anywhere are not parsed.
    (line) => {
      const lower = line.toLowerCase()
      return PHRASES.some((phrase) => lower.includes(phrase))
    },
  )
  writeFileSync(cache, JSON.stringify({ size, totals }))
  return totals
}
