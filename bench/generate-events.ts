/**
 * Writes a realistic data directory with a long event log directly, without the HTTP layer, as if
 * the service had run for years (issue 21, "The audit log at ten million events"):
 *
 *   npx bun bench/run.ts generate [--events 10000000] [--out DIR] [--flags 3000] [--projects 30] [--seed 21]
 *
 * - `state.json`: environments development/staging/production, `--projects` projects, `--flags`
 *   flags with strategies in every environment, an admin user, API tokens (the admin token's
 *   secret is printed at the end), stored as HMAC under a new `secret.key` as the service does;
 * - `events.jsonl`: the records exactly as the store writes them (key order, `createdAt` of the
 *   commit, ids 1…N): first what creating that state wrote (environments, projects, tokens, the
 *   user, flags and their first strategies), then years of changes: CI toggling environments on and
 *   off, strategy edits, metadata updates (some with long descriptions), tags, stale marks;
 * - `state.journal.jsonl`: the last commits, which the checkpoint does not include yet, so that
 *   start-up replays a journal as it would after a crash; `commitSeq` counts every commit.
 *
 * Search words: descriptions and constraint values hold words of a made-up vocabulary, each `qx`
 * followed by four syllables (no other text holds "qx", and they all have the same length, so a
 * substring search for one matches exactly the events holding it), drawn with a Zipf law. The
 * generator counts, per word, the events holding it, and `generated.json` (written next to the
 * data directory, `<out>.generated.json`) names a rare word, one with about 5,000 matches and one
 * in most events, with their exact totals; bench/audit-log.ts and the system test read it.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync, rmSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { emptyState, type StateDoc } from '../src/storage/records'
import { COLLECTIONS, EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../src/services'
import { KEY_FILE, newKey } from '../src/storage/secret-key'
import { SecretHasher } from '../src/features/tokens/secret-hash'
import { hashPassword } from '../src/features/users/passwords'
import type { FlagRecord, StrategyRecord } from '../src/features/flags/flags.records'
import type { ApiTokenRecord } from '../src/features/tokens/tokens.records'
import { type GeneratedManifest, random, SYLLABLES } from './data'

export type { GeneratedManifest }

const VOCABULARY = 16 ** 4
/** Word `n` of the search vocabulary: "qx" and four syllables, all ten letters long. */
function vocabularyWord(n: number): string {
  let text = 'qx'
  for (let i = 0; i < 4; i++) {
    text += SYLLABLES[n % 16]
    n = Math.floor(n / 16)
  }
  return text
}

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

/** Event types with their share of the changes after the initial state, in percent. */
const MIX = (
  'enabled 40,disabled 40,strategy-update 6,metadata-updated 6,strategy-add 2.5,strategy-remove 1.5,tagged 1.5,' +
  'stale-on 1,stale-off 1,environment-variants-updated 0.5'
)
  .split(',')
  .map(entry => entry.split(' '))
  .map(([kind, share]): [string, number] => [
    `feature-${/abled$/.test(kind) ? 'environment-' : ''}${kind}`,
    Number(share),
  ])

/** An event's type, actor, environment, project, flag, data, preData and tags. */
type Event = [string, Actor, string | null, string | null, string | null, unknown, unknown, unknown[]]

interface Actor {
  name: string
  userId: number | null
}

export const GENERATED_ADMIN_SECRET = '*:*.generated-audit-admin-0123456789'

export interface GenerateOptions {
  events: number
  out: string
  flags?: number
  projects?: number
  seed?: number
  /** Commits at the end that go to the journal instead of the checkpoint. */
  journalCommits?: number
  log?: (line: string) => void
}

export async function generateDataDir(options: GenerateOptions): Promise<GeneratedManifest> {
  const started = performance.now()
  const log = options.log ?? (() => {})
  const N = options.events
  const FLAGS = options.flags ?? 3000
  const PROJECTS = options.projects ?? 30
  const JOURNAL_COMMITS = options.journalCommits ?? 50
  const rand = random(options.seed ?? 21)
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]
  const dir = options.out
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true, mode: 0o700 })

  // Zipf over the vocabulary: word k (1-based rank) with weight 1/k. A cumulative table and a
  // binary search turn a uniform draw into a word; rank i is mapped to word number through a fixed
  // permutation so frequent words are spread over the vocabulary.
  const cumulative = new Float64Array(VOCABULARY)
  let sum = 0
  for (let k = 0; k < VOCABULARY; k++) cumulative[k] = sum += 1 / (k + 1)
  const zipfWord = () => {
    const target = rand() * sum
    let lo = 0
    let hi = VOCABULARY - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid] < target) lo = mid + 1
      else hi = mid
    }
    return (lo * 40503) % VOCABULARY
  }
  // Events per vocabulary word, counted from each event's searchable text: a word also reaches
  // later events through preData (the description or strategy an event replaces) and tags.
  const wordEvents = new Map<string, number>()
  const VOCABULARY_WORD = /qx[a-z]{8}/g
  const sentence = (words: number, markers: number) => {
    const parts: string[] = []
    for (let i = 0; i < words; i++) parts.push(pick(PROSE))
    for (let i = 0; i < markers; i++)
      parts.splice(Math.floor(rand() * (parts.length + 1)), 0, vocabularyWord(zipfWord()))
    const text = parts.join(' ')
    return text[0].toUpperCase() + text.slice(1)
  }

  // Time: the log spans three years up to an hour ago, commits spaced evenly on average.
  const end = Date.now() - 3_600_000
  let clock = end - 3 * 365 * 86_400_000
  const averageGap = (end - clock) / Math.max(1, N)
  const tick = () => (clock += 1 + Math.floor(rand() * 2 * averageGap))
  const now = () => new Date(clock).toISOString()

  const state: StateDoc = emptyState(COLLECTIONS)
  const key = newKey()
  const hasher = new SecretHasher(key)
  let nextUserId = 1

  const fd = openSync(join(dir, EVENTS_FILE), 'w', 0o600)
  let buffer: string[] = []
  let buffered = 0
  let bytes = 0
  let id = 0
  let commits = 0
  const types: Record<string, number> = {}
  // In nearly every event's data or preData ("enabled":false, "stale":false, "disabled":false).
  const mostWord = 'false'
  let mostTotal = 0

  const flush = () => {
    if (buffer.length === 0) return
    const text = buffer.join('')
    writeSync(fd, text)
    bytes += Buffer.byteLength(text)
    buffer = []
    buffered = 0
  }
  /** Appends one event of the current commit; counts the words its searchable text holds. */
  const append = (...[type, actor, environment, project, featureName, data, preData, tags]: Event) => {
    id++
    const dataJson = JSON.stringify(data)
    const preJson = JSON.stringify(preData)
    const tagsJson = JSON.stringify(tags)
    // The record line exactly as the store writes it: the keys in EventRecord's order.
    const s = (value: string | null) => (value === null ? 'null' : JSON.stringify(value))
    const where = `"environment":${s(environment)},"project":${s(project)},"featureName":${s(featureName)}`
    const who = `"createdBy":${JSON.stringify(actor.name)},"createdByUserId":${actor.userId}`
    const line = `{"id":${id},"createdAt":"${now()}","type":"${type}",${who},${where},"data":${dataJson},"preData":${preJson},"tags":${tagsJson}}`
    buffer.push(line, '\n')
    buffered += line.length
    if (buffered > 8_000_000) flush()
    types[type] = (types[type] ?? 0) + 1
    // The searchable text: data, preData and tags as JSON, lower-cased (contract §5).
    const text = `${dataJson}\n${preJson}\n${tagsJson}`.toLowerCase()
    if (text.includes(mostWord)) mostTotal++
    const words = text.match(VOCABULARY_WORD)
    if (words) for (const word of new Set(words)) wordEvents.set(word, (wordEvents.get(word) ?? 0) + 1)
  }
  /** Ends a commit of the initial state (which the checkpoint includes). */
  const commit = () => {
    commits++
    tick()
  }

  // The initial state, made as the service would: environments, projects, tokens, a user, flags.
  const system: Actor = { name: 'system', userId: -1337 }
  for (const [i, name] of ENVIRONMENTS.entries()) {
    const environment = {
      name,
      type: name === 'production' ? 'production' : 'development',
      sortOrder: (i + 1) * 100,
      createdAt: now(),
    }
    state.environments[name] = environment
    append('environment-created', system, name, null, null, environment, null, [])
  }
  const projectIds = Array.from({ length: PROJECTS }, (_, i) => (i === 0 ? 'default' : `${pick(PROSE)}-${i}`))
  for (const projectId of projectIds) {
    const project = {
      id: projectId,
      name: projectId === 'default' ? 'Default' : projectId,
      description: sentence(6, 0),
      createdAt: now(),
      updatedAt: null,
      environments: ENVIRONMENTS,
      featureNaming: null,
    }
    state.projects[projectId] = project
    const created = { id: project.id, name: project.name, description: project.description, featureNaming: null }
    append('project-created', system, null, projectId, null, created, null, [])
    for (const environment of ENVIRONMENTS)
      append('project-environment-added', system, environment, projectId, null, { environment }, null, [])
  }
  commit()
  const token = (
    tokenName: string,
    type: string,
    role: string,
    environment: string,
    secret: string,
    userId: number,
  ) => {
    const scope = { projects: ['*'], environment, secretHash: hasher.hash(secret), prefix: `*:${environment}` }
    return { tokenName, type, role, ...scope, userId, createdAt: now(), expiresAt: null } as ApiTokenRecord
  }
  const tokens = [token('admin-bootstrap', 'admin', 'admin', '*', GENERATED_ADMIN_SECRET, -42)]
  for (let i = 0; i < 24; i++) {
    const environment = pick(ENVIRONMENTS)
    const type = i % 3 === 0 ? 'frontend' : 'client'
    const secret = () => `*:${environment}.generated-${i}-${Math.floor(rand() * 1e12)}`
    tokens.push(token(`${type}-${pick(PROSE)}-${i}`, type, 'viewer', environment, secret(), nextUserId++))
  }
  tokens.push(token('ci-pipeline', 'admin', 'admin', '*', '*:*.generated-ci-pipeline-secret', nextUserId++))
  for (const made of tokens) {
    state.tokens[made.tokenName] = made
    const { secretHash: _hidden, prefix: _prefix, userId: _userId, ...shown } = made
    const by = made.tokenName === 'admin-bootstrap' ? system : { name: 'admin', userId: 1 }
    append('api-token-created', by, null, null, null, shown, null, [])
    commit()
  }
  const passwordHash = await hashPassword('generated-password-0123')
  const actors: Actor[] = [
    { name: 'ci-pipeline', userId: state.tokens['ci-pipeline'].userId },
    { name: 'admin-bootstrap', userId: -42 },
  ]
  for (const username of ['admin', ...USERS]) {
    const user = {
      id: nextUserId++,
      username,
      email: username === 'admin' ? null : `${username}@example.com`,
      name: null,
      rootRole: username === 'admin' ? 'admin' : 'editor',
      passwordHash,
      createdAt: now(),
    } as const
    state.users[String(user.id)] = user
    const { id, email, createdAt } = user
    append(
      'user-created',
      system,
      null,
      null,
      null,
      { id, username, email, name: null, rootRole: 1, createdAt, isAPI: false },
      null,
      [],
    )
    commit()
    actors.push({ name: username, userId: user.id })
  }
  // CI does most of the toggling; people do the rest.
  const actor = (type: string) =>
    type.startsWith('feature-environment-e') || type.startsWith('feature-environment-d')
      ? rand() < 0.7
        ? actors[0]
        : pick(actors)
      : pick(actors.slice(1))

  let strategyCounter = 0
  const uuid = () => {
    strategyCounter++
    const hex = (strategyCounter * 2654435761 + Math.floor(rand() * 65536)).toString(16).padStart(12, '0').slice(-12)
    return `${(strategyCounter >>> 0).toString(16).padStart(8, '0')}-${hex.slice(0, 4)}-4${hex.slice(4, 7)}-8${hex.slice(7, 10)}-${hex}`
  }
  const strategy = (flag: string, sortOrder: number): StrategyRecord => {
    const rollout = rand() < 0.6
    return {
      id: uuid(),
      name: rollout ? 'flexibleRollout' : 'default',
      title: rand() < 0.2 ? sentence(3, 0) : null,
      disabled: false,
      sortOrder,
      segments: [],
      constraints:
        rand() < 0.5
          ? [
              {
                contextName: pick(CONTEXT),
                operator: 'IN',
                caseInsensitive: false,
                inverted: false,
                values: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => vocabularyWord(zipfWord())),
              },
            ]
          : [],
      variants: [],
      parameters: rollout ? { rollout: String(Math.floor(rand() * 101)), stickiness: 'default', groupId: flag } : {},
    }
  }
  const strategyEvent = (flag: string, s: StrategyRecord) => ({ ...s, featureName: flag })
  const metadata = ({ name, description, type, project, stale, impressionData, archived, createdAt }: FlagRecord) => ({
    ...{ name, description, type, project, stale, impressionData, archived, createdAt },
  })
  const flagNames: string[] = []
  const off = () => ({ enabled: false, strategies: [], variants: [], lastSeenAt: null })
  for (let i = 0; i < FLAGS; i++) {
    const project = i < FLAGS / 4 ? 'default' : pick(projectIds)
    const name = `${pick(PROSE)}-${pick(PROSE)}-${i}`
    const who = pick(actors.slice(2))
    const createdAt = now()
    const flag: FlagRecord = {
      name,
      project,
      type: pick(['release', 'release', 'release', 'experiment', 'operational', 'kill-switch', 'permission']),
      description: sentence(5 + Math.floor(rand() * 8), 1),
      ...{ impressionData: false, stale: false, archived: false, archivedAt: null, createdAt },
      createdBy: { id: who.userId ?? 0, name: who.name, imageUrl: '' },
      environments: Object.fromEntries(ENVIRONMENTS.map(environment => [environment, off()])),
      ...{ tags: [], dependencies: [], lifecycle: { stage: 'initial', enteredStageAt: createdAt }, completion: null },
    }
    append('feature-created', who, null, project, name, metadata(flag), null, [])
    commit()
    for (const environment of ENVIRONMENTS) {
      const count = 1 + Math.floor(rand() * 2)
      for (let k = 0; k < count; k++) {
        const s = strategy(name, k)
        flag.environments[environment].strategies.push(s)
        append('feature-strategy-add', who, environment, project, name, strategyEvent(name, s), null, [])
        commit()
      }
    }
    state.flags[name] = flag
    flagNames.push(name)
  }
  const initialEvents = id
  if (initialEvents > N)
    throw new Error(`${FLAGS} flags and ${PROJECTS} projects take ${initialEvents} events, more than --events ${N}`)
  log(`initial state: ${initialEvents} events`)

  // Years of changes. A commit is mostly one event; CI toggles a flag in several environments at
  // once (one commit, one createdAt, as a bulk toggle writes them).
  const weights = MIX.map(([, w]) => w)
  const total = weights.reduce((a, b) => a + b, 0)
  const drawType = () => {
    let r = rand() * total
    for (const [type, w] of MIX) if ((r -= w) < 0) return type
    return MIX[0][0]
  }
  // The last commits are journalled, the rest is in the checkpoint: each commit's flag and last event id.
  let lastReport = performance.now()
  const recent: { flag: string; firstEventId: number; lastEventId: number }[] = []
  while (id < N) {
    const startId = id
    const type = drawType()
    const name = pick(flagNames)
    const flag = state.flags[name] as FlagRecord
    const who = actor(type)
    const project = flag.project
    if (type === 'feature-environment-enabled' || type === 'feature-environment-disabled') {
      const on = type === 'feature-environment-enabled'
      const environments =
        rand() < 0.15 ? ENVIRONMENTS.slice(0, Math.min(N - id, 2 + Math.floor(rand() * 2))) : [pick(ENVIRONMENTS)]
      for (const environment of environments) {
        flag.environments[environment].enabled = on
        append(type, who, environment, project, name, { enabled: on }, { enabled: !on }, flag.tags)
      }
    } else if (type === 'feature-strategy-update') {
      const environment = pick(ENVIRONMENTS)
      const list = flag.environments[environment].strategies
      if (list.length === 0) continue
      const index = Math.floor(rand() * list.length)
      const before = list[index]
      const after = strategy(name, before.sortOrder)
      after.id = before.id
      list[index] = after
      append(type, who, environment, project, name, strategyEvent(name, after), strategyEvent(name, before), flag.tags)
    } else if (type === 'feature-strategy-add') {
      const environment = pick(ENVIRONMENTS)
      const list = flag.environments[environment].strategies
      if (list.length >= 4) continue
      const s = strategy(name, list.length)
      list.push(s)
      append(type, who, environment, project, name, strategyEvent(name, s), null, flag.tags)
    } else if (type === 'feature-strategy-remove') {
      const environment = pick(ENVIRONMENTS)
      const list = flag.environments[environment].strategies
      if (list.length <= 1) continue
      const [removed] = list.splice(Math.floor(rand() * list.length), 1)
      append(type, who, environment, project, name, null, strategyEvent(name, removed), flag.tags)
    } else if (type === 'feature-metadata-updated') {
      const before = metadata(flag)
      // One update in thirty pastes a long text (release notes, an incident summary).
      flag.description =
        rand() < 0.033 ? sentence(60 + Math.floor(rand() * 140), 3) : sentence(5 + Math.floor(rand() * 10), 1)
      append(type, who, null, project, name, metadata(flag), before, flag.tags)
    } else if (type === 'feature-tagged') {
      // Most flags carry a team tag; every tag is repeated in each later event of its flag.
      if (flag.tags.length >= 1) continue
      const tag = { type: 'simple', value: `team-${pick(PROSE)}` }
      if (flag.tags.some(t => t.value === tag.value)) continue
      flag.tags.push(tag)
      append(type, who, null, project, name, tag, null, flag.tags)
    } else if (type === 'feature-stale-on' || type === 'feature-stale-off') {
      const stale = type === 'feature-stale-on'
      if (flag.stale === stale) continue
      flag.stale = stale
      append(type, who, null, project, name, { stale }, { stale: !stale }, flag.tags)
    } else {
      const environment = pick(ENVIRONMENTS)
      const before = flag.environments[environment].variants
      const half = { weight: 500, weightType: 'variable' as const, stickiness: 'default', overrides: [] }
      const after =
        rand() < 0.5
          ? []
          : [
              { name: 'on', ...half },
              { name: 'off', ...half },
            ]
      flag.environments[environment].variants = after
      append(type, who, environment, project, name, { variants: after }, { variants: before }, flag.tags)
    }
    recent.push({ flag: name, firstEventId: startId + 1, lastEventId: id })
    if (recent.length > JOURNAL_COMMITS) recent.shift()
    commits++
    tick()
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now()
      const [mib, seconds] = [
        ((bytes + buffered) / 2 ** 20).toFixed(0),
        ((performance.now() - started) / 1000).toFixed(0),
      ]
      log(`${id.toLocaleString('en')} events, ${mib} MiB, ${seconds} s`)
    }
  }
  flush()
  closeSync(fd)

  // The journal holds the last commits; the checkpoint includes everything before them. Each entry
  // puts its flag as it stands at the end (the generator keeps no history of records), so the
  // replayed state is the final one, and names its commit's last event id, as the store does.
  const journalled = recent.length
  let seq = commits - journalled
  const lines = recent.map(({ flag, lastEventId }) =>
    JSON.stringify({ seq: ++seq, lastEventId, nextUserId, changes: [['flags', flag, state.flags[flag]]] }),
  )
  state.commitSeq = commits - journalled
  state.lastEventId = journalled > 0 ? recent[0].firstEventId - 1 : id
  state.nextUserId = nextUserId
  writeFileSync(join(dir, STATE_FILE), JSON.stringify(state), { mode: 0o600 })
  writeFileSync(join(dir, JOURNAL_FILE), lines.map(line => line + '\n').join(''), { mode: 0o600 })
  writeFileSync(join(dir, KEY_FILE), key.toString('hex') + '\n', { mode: 0o600 })

  // The words for the benchmarks: a rare one (a handful of events), the one nearest 5,000 events.
  let rare: [string, number] = ['', Infinity]
  let thousands: [string, number] = ['', Infinity]
  for (const [word, count] of [...wordEvents].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (Math.abs(count - 5) < Math.abs(rare[1] - 5)) rare = [word, count]
    if (Math.abs(count - 5000) < Math.abs(thousands[1] - 5000)) thousands = [word, count]
  }
  const word = ([word, total]: [string, number]) => ({ word, total })
  const words = { rare: word(rare), thousands: word(thousands), most: word([mostWord, mostTotal]) }
  const manifest: GeneratedManifest = {
    ...{ events: id, commits, flags: FLAGS, projects: PROJECTS, bytes, adminSecret: GENERATED_ADMIN_SECRET },
    ...{ words, types, seconds: (performance.now() - started) / 1000 },
  }
  writeFileSync(`${dir.replace(/\/+$/, '')}.generated.json`, JSON.stringify(manifest, null, 2) + '\n')
  return manifest
}
