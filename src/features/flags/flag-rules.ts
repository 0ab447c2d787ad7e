/** Rules about flags that several flag services share; all of them work inside a transaction. */
import { events } from '../../domain/events'
import { NotFoundError, ValidationError } from '../../errors'
import { flagNotFound } from '../not-found'
import type { FlagRecord, LifecycleStage, StrategyRecord } from './flags.records'
import type { Tx } from '../../storage/store'
import { checkLimit } from '../limits'

/** The flag of this project, or 404. A flag of another project answers the same, so nothing leaks. */
export function flagInProject(tx: Pick<Tx, 'get'>, projectId: string, name: string): FlagRecord {
  const flag = tx.get('flags', name)
  if (!flag || flag.project !== projectId) throw flagNotFound(name, projectId)
  return flag
}

export function liveFlagInProject(tx: Pick<Tx, 'get'>, projectId: string, name: string): FlagRecord {
  const flag = flagInProject(tx, projectId, name)
  if (flag.archived) throw new ValidationError(`Flag "${name}" is archived; revive it first`)
  return flag
}

export function requireEnvironment(flag: FlagRecord, environment: string) {
  const entry = Object.hasOwn(flag.environments, environment) ? flag.environments[environment] : undefined
  if (!entry) {
    throw new NotFoundError(`Environment "${environment}" is not connected to project "${flag.project}" of flag "${flag.name}"`)
  }
  return entry
}

const STAGE_ORDER: Record<LifecycleStage, number> = { initial: 0, 'pre-live': 1, live: 2, completed: 3, archived: 4 }

/** Moves the lifecycle forward to `stage` if the flag has not been there yet. */
export function advanceLifecycle(flag: FlagRecord, stage: LifecycleStage, now: string): FlagRecord {
  if (STAGE_ORDER[flag.lifecycle.stage] >= STAGE_ORDER[stage]) return flag
  return { ...flag, lifecycle: { stage, enteredStageAt: now } }
}

export function withStage(flag: FlagRecord, stage: LifecycleStage, now: string): FlagRecord {
  return flag.lifecycle.stage === stage ? flag : { ...flag, lifecycle: { stage, enteredStageAt: now } }
}

export function defaultStrategy(flagName: string, sortOrder: number): StrategyRecord {
  return {
    id: crypto.randomUUID(),
    name: 'flexibleRollout',
    title: null,
    disabled: false,
    sortOrder,
    segments: [],
    constraints: [],
    variants: [],
    parameters: { rollout: '100', stickiness: 'default', groupId: flagName },
  }
}

/**
 * Turns a flag on or off in one environment and records what happened. Enabling an environment
 * with no enabled strategy adds a 100 % flexibleRollout, as Unleash does, and moves the lifecycle
 * on. Returns the flag unchanged, with no event, when it was already in that state.
 */
export function setEnvironmentEnabled(tx: Tx, flag: FlagRecord, environment: string, enabled: boolean): FlagRecord {
  const entry = requireEnvironment(flag, environment)
  if (entry.enabled === enabled) return flag
  let strategies = entry.strategies
  if (enabled && !strategies.some((strategy) => !strategy.disabled)) {
    // Only disabled strategies, as many as allowed: the default one would be one too many.
    checkLimit('strategiesPerFlagEnvironment', strategies.length + 1, `/environments/${environment}/strategies`)
    const added = defaultStrategy(flag.name, Math.max(-1, ...strategies.map((s) => s.sortOrder)) + 1)
    strategies = [...strategies, added]
    tx.appendEvent(events.strategyAdded(flag, environment, { ...added, featureName: flag.name }))
  }
  let updated: FlagRecord = { ...flag, environments: { ...flag.environments, [environment]: { ...entry, enabled, strategies } } }
  if (enabled) {
    const production = tx.get('environments', environment)?.type === 'production'
    updated = advanceLifecycle(updated, production ? 'live' : 'pre-live', tx.now)
  }
  tx.put('flags', flag.name, updated)
  tx.appendEvent(events.flagEnvironmentToggled(updated, environment, enabled))
  return updated
}
