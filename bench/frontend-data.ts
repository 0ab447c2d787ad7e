/**
 * The flags of the frontend API benchmark (bench/frontend.ts, bench/frontend-eval.ts): in
 * `ENVIRONMENT`, every other flag is on, and the strategies cycle through five kinds — a plain
 * default; a flexibleRollout with a segment; a flexibleRollout with two constraints (STR_ENDS_WITH,
 * SEMVER_GT) and two strategy variants with payloads; userWithId then remoteAddress; a
 * gradualRolloutUserId with a NUM_GT and a DATE_AFTER constraint, and three flag variants. Some
 * flags depend on a parent being on, some on a parent being off.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { STATE_FILE } from '../src/services'
import type { ConstraintRecord, DependencyRecord, FlagRecord, StrategyRecord, VariantRecord } from '../src/features/flags/flags.records'
import type { SegmentRecord } from '../src/features/segments/segments.records'

export const FLAGS = 1000
export const SEGMENTS = 20
export const ENVIRONMENT = 'production'

const constraint = (contextName: string, operator: string, values: string[], value?: string): ConstraintRecord => ({
  contextName,
  operator,
  caseInsensitive: operator.startsWith('STR_'),
  inverted: false,
  values,
  ...(value !== undefined ? { value } : {}),
})

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`

function strategy(i: number, k: number, name: string, parameters: Record<string, string>, extra: Partial<StrategyRecord> = {}): StrategyRecord {
  return { id: uuid(i * 4 + k), name, title: null, disabled: false, sortOrder: k, segments: [], constraints: [], variants: [], parameters, ...extra }
}

export function strategiesOf(i: number, name: string): StrategyRecord[] {
  switch (i % 5) {
    case 0:
      return [strategy(i, 0, 'default', {})]
    case 1:
      return [strategy(i, 0, 'flexibleRollout', { rollout: String(i % 101), stickiness: 'default', groupId: name }, { segments: [1 + (i % SEGMENTS)] })]
    case 2:
      return [
        strategy(i, 0, 'flexibleRollout', { rollout: '60', stickiness: 'default', groupId: name }, {
          constraints: [constraint('email', 'STR_ENDS_WITH', ['@example.com', '@example.org']), constraint('appVersion', 'SEMVER_GT', [], '1.2.0')],
          variants: [
            { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: `{"color":"blue","flag":${i}}` } },
            { name: 'green', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'green' } },
          ],
        }),
      ]
    case 3:
      return [
        strategy(i, 0, 'userWithId', { userIds: Array.from({ length: 20 }, (_, k) => `user-${(i * 7 + k * 13) % 5000}`).join(',') }),
        strategy(i, 1, 'remoteAddress', { IPs: '10.0.0.0/8,192.168.1.1' }),
      ]
    default:
      return [
        strategy(i, 0, 'gradualRolloutUserId', { percentage: String(i % 101), groupId: name }, {
          constraints: [constraint('age', 'NUM_GT', [], '17'), constraint('currentTime', 'DATE_AFTER', [], '2020-01-01T00:00:00.000Z')],
        }),
      ]
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
  for (let id = 1; id <= SEGMENTS; id++) {
    segments[String(id)] = {
      id,
      name: `segment-${id}`,
      description: `Synthetic segment ${id}`,
      project: null,
      constraints: [constraint('region', 'IN', ['eu-west', 'eu-north', `region-${id}`]), constraint('appVersion', 'SEMVER_GTE', [], `1.${id % 3}.0`)],
      createdAt,
      createdBy: 'admin-bootstrap',
    } as SegmentRecord
  }
  return segments
}

/** Rewrites a data directory written by bench/lib.ts seedDataDir (flags `flag-<i>`) with the flags above. */
export function addFrontendFlags(dir: string) {
  const path = join(dir, STATE_FILE)
  const state = JSON.parse(readFileSync(path, 'utf8'))
  const createdAt = new Date(Date.UTC(2025, 0, 1)).toISOString()
  state.segments = segmentsFor(createdAt)
  state.segmentSequence.segments = { lastId: SEGMENTS }
  for (let i = 0; i < FLAGS; i++) {
    const name = `flag-${i}`
    const flag = state.flags[name]
    flag.environments[ENVIRONMENT] = { ...flag.environments[ENVIRONMENT], enabled: i % 2 === 0, strategies: strategiesOf(i, name), variants: variantsOf(i) }
    flag.dependencies = dependenciesOf(i)
  }
  writeFileSync(path, JSON.stringify(state))
}

/** Parents, one level: some on a parent that is on, some on a parent being off. */
export function dependenciesOf(i: number): DependencyRecord[] {
  if (i % 50 === 48) return [{ feature: `flag-${i - 2}`, enabled: true, variants: [] }]
  if (i % 50 === 22) return [{ feature: `flag-${i - 1}`, enabled: false, variants: [] }]
  return []
}

/** The same flags in memory, for the in-process measurement (project default, one environment). */
export function frontendState(): { flags: Record<string, FlagRecord>; segments: Record<string, SegmentRecord> } {
  const createdAt = new Date(Date.UTC(2025, 0, 1)).toISOString()
  const flags: Record<string, FlagRecord> = {}
  for (let i = 0; i < FLAGS; i++) {
    const name = `flag-${i}`
    flags[name] = {
      name,
      project: 'default',
      type: 'release',
      description: null,
      impressionData: i % 7 === 0,
      stale: false,
      archived: false,
      archivedAt: null,
      createdAt,
      createdBy: { id: -42, name: 'admin-bootstrap', imageUrl: '' },
      environments: { [ENVIRONMENT]: { enabled: i % 2 === 0, strategies: strategiesOf(i, name), variants: variantsOf(i), lastSeenAt: null } },
      tags: [],
      dependencies: dependenciesOf(i),
      lifecycle: { stage: 'initial', enteredStageAt: createdAt },
      completion: null,
    }
  }
  return { flags, segments: segmentsFor(createdAt) }
}

/** The context of the n-th benchmark request: a different user each time. */
export function contextFor(n: number) {
  return { userId: `user-${n % 5000}`, sessionId: `session-${n}`, remoteAddress: '10.1.2.3', properties: { email: `user-${n}@example.com`, appVersion: '1.4.0', region: 'eu-west', age: String(15 + (n % 10)) } }
}
