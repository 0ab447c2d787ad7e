/**
 * The shapes persisted in the state document and the event log. They are stored records, not API
 * responses: controllers map them to the response schemas of each feature folder.
 * Values held by the store are deep-frozen; a change is made on a copy and committed through a
 * transaction (see store.ts).
 */

export interface FeatureNaming {
  pattern: string
  example?: string
  description?: string
}

export interface ProjectRecord {
  id: string
  name: string
  description: string
  createdAt: string
  updatedAt: string | null
  /** Names of the environments connected to this project. */
  environments: string[]
  featureNaming: FeatureNaming | null
}

export interface EnvironmentRecord {
  name: string
  type: string
  sortOrder: number
  createdAt: string
}

export interface ConstraintRecord {
  contextName: string
  operator: string
  caseInsensitive: boolean
  inverted: boolean
  values: string[]
  value?: string
}

export interface PayloadRecord {
  type: 'json' | 'csv' | 'string' | 'number'
  value: string
}

export interface StrategyVariantRecord {
  name: string
  weight: number
  weightType: 'variable' | 'fix'
  stickiness: string
  payload?: PayloadRecord
}

export interface StrategyRecord {
  id: string
  name: string
  title: string | null
  disabled: boolean
  sortOrder: number
  segments: number[]
  constraints: ConstraintRecord[]
  variants: StrategyVariantRecord[]
  parameters: Record<string, string>
}

export interface VariantRecord {
  name: string
  weight: number
  weightType: 'variable' | 'fix'
  stickiness: string
  payload?: PayloadRecord
  overrides: { contextName: string; values: string[] }[]
}

export interface FlagEnvironmentRecord {
  enabled: boolean
  strategies: StrategyRecord[]
  variants: VariantRecord[]
  lastSeenAt: string | null
}

export interface TagRecord {
  type: string
  value: string
}

export interface DependencyRecord {
  feature: string
  enabled: boolean
  variants: string[]
}

export const LIFECYCLE_STAGES = ['initial', 'pre-live', 'live', 'completed', 'archived'] as const
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number]

export interface FlagRecord {
  name: string
  project: string
  type: string
  description: string | null
  impressionData: boolean
  stale: boolean
  archived: boolean
  archivedAt: string | null
  createdAt: string
  createdBy: { id: number; name: string; imageUrl: string }
  /** Keyed by environment name; holds exactly the environments connected to the flag's project. */
  environments: Record<string, FlagEnvironmentRecord>
  tags: TagRecord[]
  /** Parents of this flag. Children are derived from the other flags' dependencies. */
  dependencies: DependencyRecord[]
  lifecycle: { stage: LifecycleStage; enteredStageAt: string }
  /** Set by `lifecycle/complete`, cleared by `lifecycle/uncomplete`. */
  completion: { status: 'kept' | 'discarded'; statusValue: string | null } | null
}

export type TokenType = 'admin' | 'client' | 'frontend'
export type TokenRole = 'admin' | 'editor' | 'viewer'

export interface ApiTokenRecord {
  tokenName: string
  type: TokenType
  role: TokenRole
  projects: string[]
  environment: string
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  secretHash: string
  /** The part of the secret before the random part, e.g. `*:*`, safe to show. */
  prefix: string
  userId: number
  createdAt: string
  expiresAt: string | null
}

export interface EventRecord {
  id: number
  createdAt: string
  type: string
  createdBy: string
  createdByUserId: number | null
  environment: string | null
  project: string | null
  featureName: string | null
  data: Record<string, unknown> | null
  preData: Record<string, unknown> | null
  tags: TagRecord[]
}

export interface StateDoc {
  formatVersion: 1
  /** The id of the last event this state includes; events past it were never acknowledged. */
  lastEventId: number
  /** The number of the last commit this state includes (see storage/state-journal.ts). */
  commitSeq: number
  /** Next `createdByUserId` to hand to a new token. */
  nextUserId: number
  projects: Record<string, ProjectRecord>
  environments: Record<string, EnvironmentRecord>
  flags: Record<string, FlagRecord>
  tokens: Record<string, ApiTokenRecord>
}

export type Collection = 'projects' | 'environments' | 'flags' | 'tokens'
export type RecordOf<C extends Collection> = StateDoc[C][string]

export const COLLECTIONS: readonly Collection[] = ['projects', 'environments', 'flags', 'tokens']

/**
 * A collection keyed by user-chosen names has no prototype, so that a flag named `__proto__` or
 * `constructor` is an ordinary key and never reaches Object.prototype.
 */
export function collection<T>(entries: Record<string, T> = {}): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries)
}

export function emptyState(): StateDoc {
  return {
    formatVersion: 1,
    lastEventId: 0,
    commitSeq: 0,
    nextUserId: 1,
    projects: collection(),
    environments: collection(),
    flags: collection(),
    tokens: collection(),
  }
}
