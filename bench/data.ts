/**
 * The benchmarks' synthetic data: data directories in the service's format (a seeded state and
 * event log), the client API's strategies, and the flags of the frontend and OFREP benchmarks.
 * Imports nothing from the other bench modules.
 */
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type {
  ConstraintRecord,
  DependencyRecord,
  FlagRecord,
  StrategyRecord,
  VariantRecord,
} from '../src/features/flags/flags.records'
import type { SegmentRecord } from '../src/features/segments/segments.records'
import { COLLECTIONS } from '../src/feature-list'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../src/storage/files'
import { emptyState, type EventRecord } from '../src/storage/records'

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

export const SYLLABLES = 'ka lo mi ne ru sa to vi ze po da fu gi ho ja be'.split(' ')
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

/** A state document with every feature's collection, all empty, at commit 0. */
export const emptyStateDoc = () => emptyState(COLLECTIONS)

/** The state seedDataDir writes beside its events: `flags` flags in project default, at commit 1, holding `events` events. */
export function seededState(options: { events: number; flags: number; environments?: string[] }) {
  const environments = options.environments ?? ['development', 'production']
  const state = emptyStateDoc()
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

/**
 * The flags of the frontend API benchmark (the frontend, frontend-eval and ofrep scenarios): in
 * `FRONTEND_ENVIRONMENT`, every other flag is on, and the strategies cycle through five kinds — a plain
 * default; a flexibleRollout with a segment; a flexibleRollout with two constraints (STR_ENDS_WITH,
 * SEMVER_GT) and two strategy variants with payloads; userWithId then remoteAddress; a
 * gradualRolloutUserId with a NUM_GT and a DATE_AFTER constraint, and three flag variants. Some
 * flags depend on a parent being on, some on a parent being off.
 */
export const FRONTEND_FLAGS = 1000
export const FRONTEND_SEGMENTS = 20
export const FRONTEND_ENVIRONMENT = 'production'

const constraint = (contextName: string, operator: string, values: string[], value?: string): ConstraintRecord => ({
  contextName,
  operator,
  caseInsensitive: operator.startsWith('STR_'),
  inverted: false,
  values,
  ...(value !== undefined ? { value } : {}),
})

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`

/** Strategy `k` of flag `i`. */
function strategy(i: number, k: number, name: string, parameters: Record<string, string>, extra = {}): StrategyRecord {
  const [title, disabled, sortOrder] = [null, false, k]
  return {
    id: uuid(i * 4 + k),
    name,
    title,
    disabled,
    sortOrder,
    segments: [],
    constraints: [],
    variants: [],
    parameters,
    ...extra,
  }
}

/** A strategy variant of half the weight. */
const half = { weight: 500, weightType: 'variable' as const, stickiness: 'default' }

export function strategiesOf(i: number, name: string): StrategyRecord[] {
  const rollout = (percent: number) => ({ rollout: String(percent), stickiness: 'default', groupId: name })
  const userIds = Array.from({ length: 20 }, (_, k) => `user-${(i * 7 + k * 13) % 5000}`).join(',')
  const variants = [
    { ...half, name: 'blue', payload: { type: 'json', value: `{"color":"blue","flag":${i}}` } },
    { ...half, name: 'green', payload: { type: 'string', value: 'green' } },
  ]
  const email = constraint('email', 'STR_ENDS_WITH', ['@example.com', '@example.org'])
  const semver = constraint('appVersion', 'SEMVER_GT', [], '1.2.0')
  const after = constraint('currentTime', 'DATE_AFTER', [], '2020-01-01T00:00:00.000Z')
  const gradual = { percentage: String(i % 101), groupId: name }
  switch (i % 5) {
    case 0:
      return [strategy(i, 0, 'default', {})]
    case 1:
      return [strategy(i, 0, 'flexibleRollout', rollout(i % 101), { segments: [1 + (i % FRONTEND_SEGMENTS)] })]
    case 2:
      return [strategy(i, 0, 'flexibleRollout', rollout(60), { constraints: [email, semver], variants })]
    case 3: {
      const addresses = { IPs: '10.0.0.0/8,192.168.1.1' }
      return [strategy(i, 0, 'userWithId', { userIds }), strategy(i, 1, 'remoteAddress', addresses)]
    }
    default: {
      const constraints = [constraint('age', 'NUM_GT', [], '17'), after]
      return [strategy(i, 0, 'gradualRolloutUserId', gradual, { constraints })]
    }
  }
}

export function variantsOf(i: number): VariantRecord[] {
  if (i % 5 !== 4) return []
  return ['a', 'b', 'c'].map((name, k) => ({
    name,
    weight: k === 0 ? 334 : 333,
    weightType: 'variable' as const,
    stickiness: 'default',
    payload: { type: 'string' as const, value: `${name}-${i}` },
    overrides: k === 2 ? [{ contextName: 'userId', values: ['user-1'] }] : [],
  }))
}

export function segmentsFor(createdAt: string): Record<string, SegmentRecord> {
  const segments: Record<string, SegmentRecord> = {}
  for (let id = 1; id <= FRONTEND_SEGMENTS; id++) {
    segments[String(id)] = {
      id,
      name: `segment-${id}`,
      description: `Synthetic segment ${id}`,
      project: null,
      constraints: [
        constraint('region', 'IN', ['eu-west', 'eu-north', `region-${id}`]),
        constraint('appVersion', 'SEMVER_GTE', [], `1.${id % 3}.0`),
      ],
      createdAt,
      createdBy: 'admin-bootstrap',
    } as SegmentRecord
  }
  return segments
}

/** Rewrites a data directory written by seedDataDir (flags `flag-<i>`) with the flags above. */
export function addFrontendFlags(dir: string) {
  const path = join(dir, STATE_FILE)
  writeFileSync(path, JSON.stringify(withFrontendFlags(JSON.parse(readFileSync(path, 'utf8')))))
}

/** A state of seededState's given the flags above, its segments and its parents. */
function withFrontendFlags<S extends ReturnType<typeof seededState>>(state: S): S {
  state.segments = segmentsFor(new Date(Date.UTC(2025, 0, 1)).toISOString())
  state.segmentSequence.segments = { lastId: FRONTEND_SEGMENTS }
  for (let i = 0; i < FRONTEND_FLAGS; i++) {
    const name = `flag-${i}`
    const flag = state.flags[name]!
    flag.environments[FRONTEND_ENVIRONMENT] = {
      ...flag.environments[FRONTEND_ENVIRONMENT]!,
      enabled: i % 2 === 0,
      strategies: strategiesOf(i, name),
      variants: variantsOf(i),
    }
    flag.dependencies = dependenciesOf(i)
  }
  return state
}

/** Parents, one level: some on a parent that is on, some on a parent being off. */
export function dependenciesOf(i: number): DependencyRecord[] {
  if (i % 50 === 48) return [{ feature: `flag-${i - 2}`, enabled: true, variants: [] }]
  if (i % 50 === 22) return [{ feature: `flag-${i - 1}`, enabled: false, variants: [] }]
  return []
}

/** The same flags in memory, for the in-process measurement (project default, one environment). */
export function frontendState(): { flags: Record<string, FlagRecord>; segments: Record<string, SegmentRecord> } {
  const state = withFrontendFlags(
    seededState({ events: 0, flags: FRONTEND_FLAGS, environments: [FRONTEND_ENVIRONMENT] }),
  )
  for (const [i, flag] of Object.values(state.flags).entries())
    Object.assign(flag, { description: null, impressionData: i % 7 === 0 })
  return { flags: state.flags, segments: state.segments }
}

/** An SDK's metrics report of `flags` flags (yes 1, no 0 each, a variant on every fourth): about 1.2 KB for 24. */
export function metricsBody(flags: number, appName = 'cost'): string {
  const toggles: Record<string, unknown> = {}
  for (let i = 0; i < flags; i++) toggles[`flag-${i}`] = { yes: 1, no: 0, variants: i % 4 === 0 ? { blue: 1 } : {} }
  const now = new Date().toISOString()
  const bucket = { start: now, stop: now, toggles }
  return JSON.stringify({ appName, instanceId: `${appName}-1`, environment: 'development', bucket })
}

/** The context of the n-th benchmark request: a different user each time. */
export function contextFor(n: number) {
  return {
    userId: `user-${n % 5000}`,
    sessionId: `session-${n}`,
    remoteAddress: '10.1.2.3',
    properties: { email: `user-${n}@example.com`, appVersion: '1.4.0', region: 'eu-west', age: String(15 + (n % 10)) },
  }
}
