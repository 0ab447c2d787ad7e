/** Rules about flags that several flag services share; all of them work inside a transaction. */
import { events } from '../../domain/events'
import { NotFoundError, ValidationError } from '../../errors'
import { flagNotFoundIn } from '../not-found'
import type { FlagMetadata, FlagRecord, LifecycleStage, StrategyRecord } from './flags.records'
import type { Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import { metadataOf } from './flag-view'

/** The flag of this project, or 404. A flag of another project answers the same, so nothing leaks. */
export function flagInProject(tx: Pick<Tx, 'get'>, projectId: string, name: string): FlagRecord {
  const flag = tx.get('flags', name)
  if (!flag || flag.project !== projectId) throw flagNotFoundIn(tx, name, projectId)
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
    throw new NotFoundError(
      `Environment "${environment}" is not connected to project "${flag.project}" of flag "${flag.name}"`,
    )
  }
  return entry
}

const STAGE_ORDER: Record<LifecycleStage, number> = { initial: 0, 'pre-live': 1, live: 2, completed: 3, archived: 4 }

/** Moves the lifecycle forward to `stage` if the flag has not been there yet. */
export function advanceLifecycle(flag: FlagRecord, stage: LifecycleStage, now: string): FlagRecord {
  if (STAGE_ORDER[flag.lifecycle.stage] >= STAGE_ORDER[stage]) return flag
  return withStage(flag, stage, now)
}

/** Puts the flag in `stage` from `now`, noting when it first went pre-live and live; back at initial it starts over. */
export function withStage(flag: FlagRecord, stage: LifecycleStage, now: string): FlagRecord {
  if (flag.lifecycle.stage === stage) return flag
  if (stage === 'initial') return { ...flag, lifecycle: { stage, enteredStageAt: now } }
  const lifecycle = { ...flag.lifecycle, stage, enteredStageAt: now }
  if (stage === 'pre-live' || stage === 'live') lifecycle.preLiveAt ??= now
  if (stage === 'live') lifecycle.liveAt ??= now
  return { ...flag, lifecycle }
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
  if (enabled && !strategies.some(strategy => !strategy.disabled)) {
    // Only disabled strategies, as many as allowed: the default one would be one too many.
    checkLimit('strategiesPerFlagEnvironment', strategies.length + 1, `/environments/${environment}/strategies`)
    const added = defaultStrategy(flag.name, Math.max(-1, ...strategies.map(s => s.sortOrder)) + 1)
    strategies = [...strategies, added]
    tx.appendEvent(events.strategyAdded(flag, environment, { ...added, featureName: flag.name }))
  }
  let updated: FlagRecord = {
    ...flag,
    environments: { ...flag.environments, [environment]: { ...entry, enabled, strategies } },
  }
  if (enabled) {
    const production = tx.get('environments', environment)?.type === 'production'
    updated = advanceLifecycle(updated, production ? 'live' : 'pre-live', tx.now)
  }
  tx.put('flags', flag.name, updated)
  tx.appendEvent(events.flagEnvironmentToggled(updated, environment, enabled))
  return updated
}

/**
 * What every revive does after the flag is out of the archive: as Unleash 6 does
 * (disableAllEnvironmentsForFeatures), the flag comes back off in every environment, so that a
 * revive never serves a flag again by itself; each environment that was on records its
 * feature-environment-disabled (Unleash records feature-revived only).
 */
export function offEverywhereAfterRevive(tx: Tx, flag: FlagRecord): FlagRecord {
  let updated = flag
  for (const environment of Object.keys(flag.environments))
    updated = setEnvironmentEnabled(tx, updated, environment, false)
  return updated
}

/**
 * Stores new metadata and records its events (PATCH, PUT and bulk stale share it); does nothing
 * when nothing changed.
 */
export function changeMetadata(tx: Tx, flag: FlagRecord, next: FlagMetadata): FlagRecord {
  const before = metadataOf(flag)
  const changed = (Object.keys(before) as (keyof FlagMetadata)[]).some(key => before[key] !== next[key])
  if (!changed) return flag
  if (next.archived && !flag.archived) assertNoLiveChildren(tx, flag)
  let updated: FlagRecord = {
    ...flag,
    description: next.description,
    type: next.type,
    stale: next.stale,
    impressionData: next.impressionData,
    archived: next.archived,
  }
  if (next.archived !== flag.archived) {
    updated = next.archived
      ? withStage({ ...updated, archivedAt: tx.now }, 'archived', tx.now)
      : withStage({ ...updated, archivedAt: null }, 'initial', tx.now)
  }
  tx.put('flags', flag.name, updated)
  tx.appendEvent(events.flagMetadataUpdated(updated, metadataOf(updated), before))
  if (next.stale !== before.stale) tx.appendEvent(events.flagStale(updated, next.stale))
  if (next.archived === before.archived) return updated
  tx.appendEvent(next.archived ? events.flagArchived(updated) : events.flagRevived(updated))
  return next.archived ? updated : offEverywhereAfterRevive(tx, updated)
}

/** Reads the flags as staged in `tx`, so children archived earlier in the same write no longer count. */
export function assertNoLiveChildren(tx: Pick<Tx, 'values'>, flag: FlagRecord) {
  const children = tx
    .values('flags')
    .filter(other => !other.archived && other.dependencies.some(d => d.feature === flag.name))
  if (children.length > 0) {
    throw ValidationError.at(
      undefined,
      `Flag "${flag.name}" is a parent of ${children.map(c => `"${c.name}"`).join(', ')}; archive or unlink them first`,
    )
  }
}

/** Archives a live flag (DELETE of a flag, bulk archive). */
export function archiveFlag(tx: Tx, flag: FlagRecord): void {
  if (flag.archived) throw ValidationError.at(undefined, `Flag "${flag.name}" is already archived`)
  assertNoLiveChildren(tx, flag)
  const updated = withStage({ ...flag, archived: true, archivedAt: tx.now }, 'archived', tx.now)
  tx.put('flags', flag.name, updated)
  tx.appendEvent(events.flagArchived(updated, { data: metadataOf(updated), preData: metadataOf(flag) }))
}

/** Deletes an archived flag for good, which frees its name, and drops the dependencies on it. */
export function deleteArchivedFlag(tx: Tx, flag: FlagRecord): void {
  if (!flag.archived)
    throw ValidationError.at(undefined, `Flag "${flag.name}" is not archived; archive it before deleting it`)
  tx.delete('flags', flag.name)
  for (const child of tx.values('flags')) {
    if (child.dependencies.some(dependency => dependency.feature === flag.name)) {
      tx.put('flags', child.name, {
        ...child,
        dependencies: child.dependencies.filter(dependency => dependency.feature !== flag.name),
      })
    }
  }
  tx.appendEvent(events.flagDeleted(flag, metadataOf(flag)))
}
