/**
 * Writes a realistic data directory with a long event log directly, without the HTTP layer, as if
 * the service had run for years (the `generate` scenario of bench/run.ts):
 * - `state.json`: three environments, `--projects` projects, `--flags` flags with strategies in
 *   every environment, users, API tokens (HMAC under a new `secret.key`, as the service stores them);
 * - `events.jsonl`: the records as the store writes them, less the commit number ending its lines (ids
 *   1…N, `createdAt` of the commit): first what creating that state wrote, then years of changes (see CHANGES);
 * - `state.journal.jsonl`: the last commits, not in the checkpoint yet, so that start-up replays a
 *   journal as it would after a crash; `commitSeq` counts every commit.
 * Descriptions and constraint values hold words of a made-up vocabulary (`qx` and four syllables,
 * all ten letters: no other text holds "qx", so a substring search for one matches exactly the
 * events holding it), drawn with a Zipf law; `<out>.generated.json` names a rare word, one in about
 * 5,000 events and one in most, with their exact totals (bench/audit-log.ts and the tests read it).
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync, rmSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import type { StateDoc } from '../src/storage/records'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../src/storage/files'
import { KEY_FILE, newKey } from '../src/storage/secret-key'
import { SecretHasher } from '../src/features/tokens/secret-hash'
import { hashPassword } from '../src/features/users/passwords'
import type { FlagRecord, StrategyRecord } from '../src/features/flags/flags.records'
import type { ApiTokenRecord } from '../src/features/tokens/tokens.records'
import { emptyStateDoc, random, SYLLABLES } from './data'

/** What generateDataDir wrote (`<out>.generated.json`): `words`, exact totals of queries; `types`, events per type. */
export interface GeneratedManifest {
  events: number
  commits: number
  flags: number
  projects: number
  bytes: number
  adminSecret: string
  words: Record<'rare' | 'thousands' | 'most', { word: string; total: number }>
  types: Record<string, number>
  seconds: number
}

const VOCABULARY = 16 ** 4
/** Word `n` of the search vocabulary: "qx" and four syllables, all ten letters long. */
const vocabularyWord = (n: number) => `qx${[0, 1, 2, 3].map(i => SYLLABLES[Math.floor(n / 16 ** i) % 16]).join('')}`
/** Ordinary words for the rest of a description (none holds "qx"). */
const PROSE = (
  'rollout checkout payment banner search onboarding pricing beta cohort mobile web api latency cache ' +
  'migration dashboard export import legacy experiment holdout region europe americas asia partner ' +
  'invoice billing signup login session recommendation ranking feed notification email push ' +
  'dark mode redesign navigation sidebar footer header widget gradual enable disable cleanup ' +
  'remove after launch owner team ticket incident postmortem follow up temporary permanent kill switch'
).split(' ')
const ENVIRONMENTS = ['development', 'staging', 'production']
const USERS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi']
const CONTEXT = ['userId', 'region', 'appName', 'tenantId', 'email']

/** An event's type, actor, environment, project, flag, data, preData and tags. */
type Event = [string, Actor, string | null, string | null, string | null, unknown, unknown, unknown[]]
// In nearly every event's data or preData ("enabled":false, "stale":false, "disabled":false).
const MOST_WORD = 'false'
type Actor = { name: string; userId: number | null }
export const GENERATED_ADMIN_SECRET = '*:*.generated-audit-admin-0123456789'

/** `journalCommits`: the commits at the end that go to the journal instead of the checkpoint. */
export type GenerateOptions = { events: number; out: string; flags?: number; projects?: number; seed?: number } & {
  journalCommits?: number
  log?: (line: string) => void
}

/** The seeded draws: picks, vocabulary words (Zipf-distributed), sentences, strategies. */
function draws(seed: number) {
  const rand = random(seed)
  const int = (below: number) => Math.floor(rand() * below)
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]
  // Zipf over the vocabulary: word k (1-based rank) with weight 1/k. A cumulative table and a
  // binary search turn a uniform draw into a word; rank i is mapped to word number through a fixed
  // permutation so frequent words are spread over the vocabulary.
  const cumulative = new Float64Array(VOCABULARY)
  let sum = 0
  for (let k = 0; k < VOCABULARY; k++) cumulative[k] = sum += 1 / (k + 1)
  const word = () => {
    const target = rand() * sum
    let [lo, hi] = [0, VOCABULARY - 1]
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid] < target) lo = mid + 1
      else hi = mid
    }
    return vocabularyWord((lo * 40503) % VOCABULARY)
  }
  const sentence = (words: number, markers: number) => {
    const parts: string[] = []
    for (let i = 0; i < words; i++) parts.push(pick(PROSE))
    for (let i = 0; i < markers; i++) parts.splice(Math.floor(rand() * (parts.length + 1)), 0, word())
    const text = parts.join(' ')
    return text[0].toUpperCase() + text.slice(1)
  }
  let strategyCounter = 0
  const uuid = () => {
    strategyCounter++
    const hex = (strategyCounter * 2654435761 + Math.floor(rand() * 65536)).toString(16).padStart(12, '0').slice(-12)
    return `${(strategyCounter >>> 0).toString(16).padStart(8, '0')}-${hex.slice(0, 4)}-4${hex.slice(4, 7)}-8${hex.slice(7, 10)}-${hex}`
  }
  const strategy = (flag: string, sortOrder: number): StrategyRecord => {
    const rollout = rand() < 0.6
    const constraint = () => ({
      ...{ contextName: pick(CONTEXT), operator: 'IN', caseInsensitive: false, inverted: false },
      values: Array.from({ length: 1 + Math.floor(rand() * 3) }, word),
    })
    return {
      ...{ id: uuid(), name: rollout ? 'flexibleRollout' : 'default', title: rand() < 0.2 ? sentence(3, 0) : null },
      ...{ disabled: false, sortOrder, segments: [], constraints: rand() < 0.5 ? [constraint()] : [], variants: [] },
      parameters: rollout ? { rollout: String(Math.floor(rand() * 101)), stickiness: 'default', groupId: flag } : {},
    }
  }
  return { rand, int, pick, word, sentence, strategy }
}

/**
 * The log of `total` events over three years up to an hour ago, commits spaced evenly on average:
 * each record line as the store writes it (EventRecord's key order; no commit number); counts the commits, the events
 * per type and per vocabulary word (which also reaches later events through preData and tags).
 */
function eventLog(path: string, total: number, rand: () => number) {
  const end = Date.now() - 3_600_000
  let clock = end - 3 * 365 * 86_400_000
  const averageGap = (end - clock) / Math.max(1, total)
  const now = () => new Date(clock).toISOString()
  const fd = openSync(path, 'w', 0o600)
  let buffer: string[] = []
  const counts = { id: 0, commits: 0, bytes: 0, buffered: 0, mostTotal: 0, types: {} as Record<string, number> }
  const wordEvents = new Map<string, number>()
  const flush = () => {
    const text = buffer.join('')
    if (text) writeSync(fd, text)
    ;[counts.bytes, counts.buffered, buffer] = [counts.bytes + Buffer.byteLength(text), 0, []]
  }
  const append = (...[type, actor, environment, project, featureName, data, preData, tags]: Event) => {
    const id = ++counts.id
    const [dataJson, preJson, tagsJson] = [JSON.stringify(data), JSON.stringify(preData), JSON.stringify(tags)]
    const s = (value: string | null) => (value === null ? 'null' : JSON.stringify(value))
    const where = `"environment":${s(environment)},"project":${s(project)},"featureName":${s(featureName)}`
    const who = `"createdBy":${JSON.stringify(actor.name)},"createdByUserId":${actor.userId}`
    const line = `{"id":${id},"createdAt":"${now()}","type":"${type}",${who},${where},"data":${dataJson},"preData":${preJson},"tags":${tagsJson}}`
    buffer.push(line, '\n')
    counts.buffered += line.length
    if (counts.buffered > 8_000_000) flush()
    counts.types[type] = (counts.types[type] ?? 0) + 1
    // The searchable text: data, preData and tags as JSON, lower-cased (contract §5).
    const text = `${dataJson}\n${preJson}\n${tagsJson}`.toLowerCase()
    if (text.includes(MOST_WORD)) counts.mostTotal++
    const words = text.match(/qx[a-z]{8}/g)
    if (words) for (const word of new Set(words)) wordEvents.set(word, (wordEvents.get(word) ?? 0) + 1)
  }
  const commit = () => {
    counts.commits++
    clock += 1 + Math.floor(rand() * 2 * averageGap)
  }
  return Object.assign(counts, { append, commit, now, wordEvents, close: () => (flush(), closeSync(fd)) })
}
type Draws = ReturnType<typeof draws>
type EventLog = ReturnType<typeof eventLog>

const strategyEvent = (flag: string, s: StrategyRecord) => ({ ...s, featureName: flag })
const METADATA = ['name', 'description', 'type', 'project', 'stale', 'impressionData', 'archived', 'createdAt'] as const
const metadata = (flag: FlagRecord) => Object.fromEntries(METADATA.map(key => [key, flag[key]]))
const system: Actor = { name: 'system', userId: -1337 }

/**
 * The initial state as the service would make it: environments and projects in one commit; then a
 * commit each for every token, user, flag and first strategy. The actors (CI first) and the flags.
 */
async function setUp(d: Draws, events: EventLog, state: StateDoc, key: Buffer, projects: number, flags: number) {
  const { now, commit } = events
  const hasher = new SecretHasher(key)
  let nextUserId = 1
  for (const [i, name] of ENVIRONMENTS.entries()) {
    const type = name === 'production' ? 'production' : 'development'
    state.environments[name] = { name, type, sortOrder: (i + 1) * 100, createdAt: now() }
    events.append('environment-created', system, name, null, null, state.environments[name], null, [])
  }
  const projectIds = Array.from({ length: projects }, (_, i) => (i === 0 ? 'default' : `${d.pick(PROSE)}-${i}`))
  for (const id of projectIds) {
    const [name, description] = [id === 'default' ? 'Default' : id, d.sentence(6, 0)]
    const project = { id, name, description, createdAt: now(), updatedAt: null, environments: ENVIRONMENTS }
    state.projects[id] = { ...project, featureNaming: null }
    events.append('project-created', system, null, id, null, { id, name, description, featureNaming: null }, null, [])
    for (const environment of ENVIRONMENTS)
      events.append('project-environment-added', system, environment, id, null, { environment }, null, [])
  }
  commit()
  const token = (tokenName: string, type: string, role: string, environment: string, secret: string, userId = 0) => {
    const scope = { projects: ['*'], environment, secretHash: hasher.hash(secret), prefix: `*:${environment}` }
    return { tokenName, type, role, ...scope, userId, createdAt: now(), expiresAt: null } as ApiTokenRecord
  }
  const tokens = [token('admin-bootstrap', 'admin', 'admin', '*', GENERATED_ADMIN_SECRET, -42)]
  for (let i = 0; i < 24; i++) {
    const [environment, type] = [d.pick(ENVIRONMENTS), i % 3 === 0 ? 'frontend' : 'client']
    const secret = () => `*:${environment}.generated-${i}-${Math.floor(d.rand() * 1e12)}`
    tokens.push(token(`${type}-${d.pick(PROSE)}-${i}`, type, 'viewer', environment, secret(), nextUserId++))
  }
  tokens.push(token('ci-pipeline', 'admin', 'admin', '*', '*:*.generated-ci-pipeline-secret', nextUserId++))
  for (const made of tokens) {
    state.tokens[made.tokenName] = made
    const { secretHash: _hidden, prefix: _prefix, userId: _userId, ...shown } = made
    const by = made.tokenName === 'admin-bootstrap' ? system : { name: 'admin', userId: 1 }
    events.append('api-token-created', by, null, null, null, shown, null, [])
    commit()
  }
  const passwordHash = await hashPassword('generated-password-0123')
  const actors: Actor[] = [
    { name: 'ci-pipeline', userId: state.tokens['ci-pipeline'].userId },
    { name: 'admin-bootstrap', userId: -42 },
  ]
  for (const username of ['admin', ...USERS]) {
    const [id, createdAt] = [nextUserId++, now()]
    const email = username === 'admin' ? null : `${username}@example.com`
    const rootRole = username === 'admin' ? 'admin' : 'editor'
    state.users[String(id)] = { id, username, email, name: null, rootRole, passwordHash, createdAt }
    const shown = { id, username, email, name: null, rootRole: 1, createdAt, isAPI: false }
    events.append('user-created', system, null, null, null, shown, null, [])
    commit()
    actors.push({ name: username, userId: id })
  }
  const off = () => ({ enabled: false, strategies: [], variants: [], lastSeenAt: null })
  const types = ['release', 'release', 'release', 'experiment', 'operational', 'kill-switch', 'permission']
  for (let i = 0; i < flags; i++) {
    const project = i < flags / 4 ? 'default' : d.pick(projectIds)
    const name = `${d.pick(PROSE)}-${d.pick(PROSE)}-${i}`
    const [who, createdAt] = [d.pick(actors.slice(2)), now()]
    const flag: FlagRecord = {
      ...{ name, project, type: d.pick(types), description: d.sentence(5 + Math.floor(d.rand() * 8), 1) },
      ...{ impressionData: false, stale: false, archived: false, archivedAt: null, createdAt },
      createdBy: { id: who.userId ?? 0, name: who.name, imageUrl: '' },
      environments: Object.fromEntries(ENVIRONMENTS.map(environment => [environment, off()])),
      ...{ tags: [], dependencies: [], lifecycle: { stage: 'initial', enteredStageAt: createdAt }, completion: null },
    }
    events.append('feature-created', who, null, project, name, metadata(flag), null, [])
    commit()
    for (const environment of ENVIRONMENTS)
      for (let k = 0, count = 1 + d.int(2); k < count; k++) {
        const s = d.strategy(name, k)
        flag.environments[environment].strategies.push(s)
        events.append('feature-strategy-add', who, environment, project, name, strategyEvent(name, s), null, [])
        commit()
      }
    state.flags[name] = flag
  }
  return { actors, flagNames: Object.keys(state.flags), nextUserId }
}

/** Appends an event of the change being made; a change returns false when it does not apply to the flag now. */
type Add = (environment: string | null, data: unknown, preData: unknown) => void
type Change = (d: Draws, flag: FlagRecord, add: Add, type: string, left: number) => false | undefined | void
const strategiesIn = (d: Draws, flag: FlagRecord) =>
  ((environment: string) => [environment, flag.environments[environment].strategies] as const)(d.pick(ENVIRONMENTS))

const toggle: Change = (d, flag, add, type, left) => {
  const on = type === 'feature-environment-enabled'
  const environments = d.rand() < 0.15 ? ENVIRONMENTS.slice(0, Math.min(left, 2 + d.int(2))) : [d.pick(ENVIRONMENTS)]
  for (const environment of environments) {
    flag.environments[environment].enabled = on
    add(environment, { enabled: on }, { enabled: !on })
  }
}
const stale: Change = (_, flag, add, type) => {
  const on = type === 'feature-stale-on'
  if (flag.stale === on) return false
  flag.stale = on
  add(null, { stale: on }, { stale: !on })
}
const updateStrategy: Change = (d, flag, add) => {
  const [environment, list] = strategiesIn(d, flag)
  if (list.length === 0) return false
  const index = Math.floor(d.rand() * list.length)
  const before = list[index]
  list[index] = { ...d.strategy(flag.name, before.sortOrder), id: before.id }
  add(environment, strategyEvent(flag.name, list[index]), strategyEvent(flag.name, before))
}
const addStrategy: Change = (d, flag, add) => {
  const [environment, list] = strategiesIn(d, flag)
  if (list.length >= 4) return false
  list.push(d.strategy(flag.name, list.length))
  add(environment, strategyEvent(flag.name, list.at(-1)!), null)
}
const removeStrategy: Change = (d, flag, add) => {
  const [environment, list] = strategiesIn(d, flag)
  if (list.length <= 1) return false
  add(environment, null, strategyEvent(flag.name, list.splice(Math.floor(d.rand() * list.length), 1)[0]))
}
const updateMetadata: Change = (d, flag, add) => {
  const before = metadata(flag)
  // One update in thirty pastes a long text (release notes, an incident summary).
  flag.description = d.rand() < 0.033 ? d.sentence(60 + d.int(140), 3) : d.sentence(5 + d.int(10), 1)
  add(null, metadata(flag), before)
}
const tag: Change = (d, flag, add) => {
  // Most flags carry a team tag; every tag is repeated in each later event of its flag.
  if (flag.tags.length >= 1) return false
  flag.tags.push({ type: 'simple', value: `team-${d.pick(PROSE)}` })
  add(null, flag.tags[0], null)
}
const updateVariants: Change = (d, flag, add) => {
  const environment = d.pick(ENVIRONMENTS)
  const before = flag.environments[environment].variants
  const half = { weight: 500, weightType: 'variable' as const, stickiness: 'default', overrides: [] }
  flag.environments[environment].variants = d.rand() < 0.5 ? [] : ['on', 'off'].map(name => ({ name, ...half }))
  add(environment, { variants: flag.environments[environment].variants }, { variants: before })
}

/** The changes after the initial state by event type, each with its share of them in percent. */
const CHANGES: Record<string, [number, Change]> = {
  'feature-environment-enabled': [40, toggle],
  'feature-environment-disabled': [40, toggle],
  'feature-strategy-update': [6, updateStrategy],
  'feature-metadata-updated': [6, updateMetadata],
  'feature-strategy-add': [2.5, addStrategy],
  'feature-strategy-remove': [1.5, removeStrategy],
  'feature-tagged': [1.5, tag],
  'feature-stale-on': [1, stale],
  'feature-stale-off': [1, stale],
  'feature-environment-variants-updated': [0.5, updateVariants],
}
const MIX = Object.entries(CHANGES).map(([type, [share]]) => [type, share] as const)

export async function generateDataDir(options: GenerateOptions): Promise<GeneratedManifest> {
  const started = performance.now()
  const { events: N, flags: FLAGS = 3000, projects: PROJECTS = 30, out: dir, log = () => {} } = options
  const d = draws(options.seed ?? 21)
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const key = newKey()
  const events = eventLog(join(dir, EVENTS_FILE), N, d.rand)
  const state = emptyStateDoc()
  const { actors, flagNames, nextUserId } = await setUp(d, events, state, key, PROJECTS, FLAGS)
  if (events.id > N)
    throw new Error(`${FLAGS} flags and ${PROJECTS} projects take ${events.id} events, more than --events ${N}`)
  log(`initial state: ${events.id} events`)

  // Years of changes. A commit is mostly one event; CI toggles a flag in several environments at
  // once (one commit, one createdAt, as a bulk toggle writes them); CI does most of the toggling.
  const total = MIX.reduce((a, [, w]) => a + w, 0)
  const drawType = () => {
    let r = d.rand() * total
    for (const [type, w] of MIX) if ((r -= w) < 0) return type
    return MIX[0][0]
  }
  const actor = (type: string) => {
    if (!/^feature-environment-(en|dis)abled$/.test(type)) return d.pick(actors.slice(1))
    return d.rand() < 0.7 ? actors[0] : d.pick(actors)
  }
  // The last commits are journalled, the rest is in the checkpoint: each commit's flag and last event id.
  let lastReport = performance.now()
  const recent: { flag: string; firstEventId: number; lastEventId: number }[] = []
  while (events.id < N) {
    const startId = events.id
    const type = drawType()
    const flag = state.flags[d.pick(flagNames)] as FlagRecord
    const who = actor(type)
    const add = (environment: string | null, data: unknown, preData: unknown) =>
      events.append(type, who, environment, flag.project, flag.name, data, preData, flag.tags)
    if (CHANGES[type][1](d, flag, add, type, N - events.id) === false) continue
    recent.push({ flag: flag.name, firstEventId: startId + 1, lastEventId: events.id })
    if (recent.length > (options.journalCommits ?? 50)) recent.shift()
    events.commit()
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now()
      const mib = ((events.bytes + events.buffered) / 2 ** 20).toFixed(0)
      log(`${events.id.toLocaleString('en')} events, ${mib} MiB, ${((lastReport - started) / 1000).toFixed(0)} s`)
    }
  }
  events.close()

  // The journal holds the last commits, the checkpoint everything before. Each entry puts its flag as it
  // stands at the end (no history of records is kept) and names its commit's last event id.
  const journalled = recent.length
  let seq = events.commits - journalled
  const lines = recent.map(({ flag, lastEventId }) =>
    JSON.stringify({ seq: ++seq, lastEventId, nextUserId, changes: [['flags', flag, state.flags[flag]]] }),
  )
  state.commitSeq = events.commits - journalled
  state.lastEventId = journalled > 0 ? recent[0].firstEventId - 1 : events.id
  state.nextUserId = nextUserId
  writeFileSync(join(dir, STATE_FILE), JSON.stringify(state), { mode: 0o600 })
  writeFileSync(join(dir, JOURNAL_FILE), lines.map(line => line + '\n').join(''), { mode: 0o600 })
  writeFileSync(join(dir, KEY_FILE), key.toString('hex') + '\n', { mode: 0o600 })

  // The words for the benchmarks: a rare one (a handful of events), the one nearest 5,000 events.
  const sorted = [...events.wordEvents].sort(([a], [b]) => (a < b ? -1 : 1))
  const nearest = (n: number, [word, total]: [string, number] = ['', Infinity]) => {
    for (const [w, count] of sorted) if (Math.abs(count - n) < Math.abs(total - n)) [word, total] = [w, count]
    return { word, total }
  }
  const words = { rare: nearest(5), thousands: nearest(5000), most: { word: MOST_WORD, total: events.mostTotal } }
  const manifest: GeneratedManifest = {
    ...{ events: events.id, commits: events.commits, flags: FLAGS, projects: PROJECTS, bytes: events.bytes },
    adminSecret: GENERATED_ADMIN_SECRET,
    ...{ words, types: events.types, seconds: (performance.now() - started) / 1000 },
  }
  writeFileSync(`${dir.replace(/\/+$/, '')}.generated.json`, JSON.stringify(manifest, null, 2) + '\n')
  return manifest
}
