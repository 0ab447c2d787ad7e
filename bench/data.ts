/**
 * The benchmarks' synthetic data: data directories in the service's format (a seeded state and
 * event log, client strategies), and the exact totals a directory written by
 * bench/generate-events.ts must answer.
 * Imports nothing from the other bench modules.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import { readSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { emptyState, type EventRecord } from '../src/storage/records'
import { COLLECTIONS, EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../src/services'
import { DATA_FILES } from '../src/open-store'
import type { FlagRecord } from '../src/features/flags/flags.records'
import { searchableText } from '../src/features/events/search/searchable-text'

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

export const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'to',
  'vi',
  'ze',
  'po',
  'da',
  'fu',
  'gi',
  'ho',
  'ja',
  'be',
]
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
export const EVENT_TYPES = [
  'feature-created',
  'feature-metadata-updated',
  'feature-environment-enabled',
  'feature-strategy-add',
  'feature-tagged',
]

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
    environment:
      type.includes('environment') || type.includes('strategy') ? (rand() < 0.5 ? 'development' : 'production') : null,
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
  environments.forEach(
    (name, i) =>
      (state.environments[name] = {
        name,
        type: i === environments.length - 1 ? 'production' : 'development',
        sortOrder: (i + 1) * 100,
        createdAt: created,
      }),
  )
  state.projects.default = {
    id: 'default',
    name: 'Default',
    description: '',
    createdAt: created,
    updatedAt: null,
    environments,
    featureNaming: null,
  }
  for (let i = 0; i < options.flags; i++) state.flags[`flag-${i}`] = syntheticFlag(i, environments, created)
  return state
}

/** The events seedDataDir writes, one JSON line at a time, for another store to take. */
export function* seededEventLines(options: { events: number; flags: number }): Generator<string> {
  const start = Date.UTC(2025, 0, 1)
  const step = Math.max(1, Math.floor((365 * 86_400_000) / Math.max(1, options.events)))
  const rand = random(42)
  for (let id = 1; id <= options.events; id++)
    yield JSON.stringify(syntheticEvent(id, rand, options.flags, new Date(start + id * step).toISOString()))
}

/**
 * Adds segments and strategies to a data directory written by seedDataDir, for the SDK API benches:
 * in `environment` every other flag gets a flexibleRollout with two constraints and one of the
 * segments, the others a default strategy.
 */
export function addClientStrategies(dir: string, o: { flags: number; segments: number; environment: string }) {
  const path = join(dir, STATE_FILE)
  const state = JSON.parse(readFileSync(path, 'utf8'))
  const createdAt = new Date(Date.UTC(2025, 0, 1)).toISOString()
  const constraint = (contextName: string, operator: string, values: string[], more = {}) => ({
    ...{ contextName, operator, caseInsensitive: false, inverted: false, values },
    ...more,
  })
  for (let id = 1; id <= o.segments; id++) {
    const constraints = [
      constraint('region', 'IN', ['eu-west', 'eu-north', `region-${id}`]),
      constraint('appVersion', 'SEMVER_GT', [], { value: `1.${id}.0` }),
    ]
    const [name, description] = [`segment-${id}`, `Synthetic segment ${id}`]
    state.segments[String(id)] = {
      id,
      name,
      description,
      project: null,
      constraints,
      createdAt,
      createdBy: 'admin-bootstrap',
    }
  }
  state.segmentSequence.segments = { lastId: o.segments }
  for (let i = 0; i < o.flags; i++) {
    const name = `flag-${i}`
    const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`
    const users = Array.from({ length: 5 }, (_, k) => `user-${i * 5 + k}`)
    const email = constraint('email', 'STR_ENDS_WITH', ['@example.com'], { caseInsensitive: true })
    const rollout = {
      ...{ id, name: 'flexibleRollout', title: null, disabled: false, sortOrder: 0, segments: [1 + (i % o.segments)] },
      ...{ constraints: [constraint('userId', 'IN', users), email], variants: [] },
      parameters: { rollout: String(i % 101), stickiness: 'default', groupId: name },
    }
    const plain = {
      id,
      name: 'default',
      title: null,
      disabled: false,
      sortOrder: 0,
      segments: [],
      constraints: [],
      variants: [],
    }
    state.flags[name].environments[o.environment].strategies = [i % 2 === 0 ? rollout : { ...plain, parameters: {} }]
  }
  writeFileSync(path, JSON.stringify(state))
}

/** What bench/generate-events.ts wrote, read back from `<dir>.generated.json`. */
export interface GeneratedManifest {
  events: number
  commits: number
  flags: number
  projects: number
  bytes: number
  adminSecret: string
  /** Exact totals of free-text queries over the whole log. */
  words: {
    rare: { word: string; total: number }
    thousands: { word: string; total: number }
    most: { word: string; total: number }
  }
  /** Events per type. */
  types: Record<string, number>
  seconds: number
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
 * counts for its words and for `type`, plus those of events appended since (PATCHes of earlier
 * benches), counted from the log's tail with the search's own text (searchableText).
 */
export function expectedTotals(dir: string, manifest: GeneratedManifest, type: string) {
  const words = manifest.words
  const totals = {
    rare: words.rare.total,
    thousands: words.thousands.total,
    most: words.most.total,
    events: manifest.events,
    type: manifest.types[type] ?? 0,
  }
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
function eachLogEvent(
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
  let files = 0
  let bytes = 0
  const walk = (path: string, top: boolean) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (top && DATA_FILES.includes(entry.name)) continue
      const full = join(path, entry.name)
      if (entry.isDirectory()) walk(full, false)
      else {
        files++
        try {
          bytes += statSync(full).size
        } catch {}
      }
    }
  }
  walk(dir, true)
  return { files, bytes }
}

/** Deletes what derivedFiles counts. */
export function removeDerived(dir: string) {
  for (const name of readdirSync(dir))
    if (!DATA_FILES.includes(name)) rmSync(join(dir, name), { recursive: true, force: true })
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
