/**
 * A flag's lifecycle as Unleash shows it (GET .../features/:featureName/lifecycle): the stages it
 * went through, each with when it entered it. Two sources make it:
 *
 * - the flag's own stage (flags.records.ts `lifecycle`, with when it first went pre-live and live),
 *   which its writes move: created → initial, enabled in an environment → pre-live (live in a
 *   production-type one), complete → completed, archive → archived, revive → initial again;
 * - SDK metrics, as in Unleash: the first report of the flag anywhere → pre-live, the first report
 *   from a production-type environment where the flag is on → live. The metrics flush records these
 *   times in the flag's lastSeen record (`preLiveAt`, `liveAt`).
 *
 * A flag back at initial (revived; or uncompleted while off everywhere) starts over: times of
 * metrics before it are not counted, and the next reports record new ones.
 */
import type { FlagRecord, LifecycleStage } from '../flags/flags.records'
import type { LastSeenRecord } from './metrics.records'

export interface StageEntry {
  stage: LifecycleStage
  enteredStageAt: string
  status?: 'kept' | 'discarded'
}

/** From when metrics count towards the flag's stages: the last time it was (back) at initial. */
export function countsFrom(flag: FlagRecord): string {
  return flag.lifecycle.stage === 'initial' ? flag.lifecycle.enteredStageAt : flag.createdAt
}

const earliest = (a: string | undefined, b: string | undefined) =>
  a === undefined || (b !== undefined && b < a) ? b : a

const ORDER: Record<LifecycleStage, number> = { initial: 0, 'pre-live': 1, live: 2, completed: 3, archived: 4 }

/**
 * The stages the flag went through, in their order; the last is the one it is in. Its own stage
 * decides, as its writes set it (an uncomplete goes back to where the flag is enabled now); SDK
 * metrics only move it further on.
 */
export function stagesOf(flag: FlagRecord, seen: LastSeenRecord | undefined): StageEntry[] {
  const from = countsFrom(flag)
  const own = flag.lifecycle
  const counted = (time: string | undefined) => (time !== undefined && time >= from ? time : undefined)
  const ofThisFlag = seen && seen.flagCreatedAt === flag.createdAt ? seen : undefined
  const metricsLive = counted(ofThisFlag?.liveAt)
  const metricsPreLive = counted(ofThisFlag?.preLiveAt)
  const metricsStage = metricsLive ? 'live' : metricsPreLive ? 'pre-live' : 'initial'
  const current = ORDER[metricsStage] > ORDER[own.stage] ? metricsStage : own.stage
  const live = earliest(metricsLive, own.liveAt ?? (own.stage === 'live' ? own.enteredStageAt : undefined))
  // Unleash records pre-live on the way to live when it was not there before.
  const preLive =
    earliest(metricsPreLive, own.preLiveAt ?? (own.stage === 'pre-live' ? own.enteredStageAt : undefined)) ?? live
  const stages: StageEntry[] = [
    { stage: 'initial', enteredStageAt: own.stage === 'initial' ? own.enteredStageAt : flag.createdAt },
  ]
  if (preLive !== undefined && ORDER[current] >= 1) stages.push({ stage: 'pre-live', enteredStageAt: preLive })
  if (live !== undefined && ORDER[current] >= 2) stages.push({ stage: 'live', enteredStageAt: live })
  if (current === 'completed' || current === 'archived') {
    const last: StageEntry = { stage: current, enteredStageAt: own.enteredStageAt }
    if (current === 'completed' && flag.completion) last.status = flag.completion.status
    stages.push(last)
  }
  // The stage the flag's own writes put it in last is entered when they did (again, after an uncomplete, say).
  const last = stages.at(-1)!
  if (last.stage === own.stage) last.enteredStageAt = own.enteredStageAt
  return stages
}

/** The stage the flag is in, and since when. */
export function currentStage(flag: FlagRecord, seen: LastSeenRecord | undefined): Omit<StageEntry, 'status'> {
  const { stage, enteredStageAt } = stagesOf(flag, seen).at(-1)!
  return { stage, enteredStageAt }
}

/**
 * The stage times a flush records for `flag` (kept: its lastSeen record; seen: environment → time
 * of this flush's reports): a time already counted stays, else the earliest report's, and for
 * live the earliest from a production-type environment where the flag is on.
 */
export function stageTimes(
  flag: FlagRecord,
  kept: LastSeenRecord | undefined,
  seen: ReadonlyMap<string, string>,
  isProduction: (environment: string) => boolean,
): Pick<LastSeenRecord, 'preLiveAt' | 'liveAt'> {
  const from = countsFrom(flag)
  const counted = (time: string | undefined) => (time !== undefined && time >= from ? time : undefined)
  let preLiveAt = counted(kept?.preLiveAt)
  let liveAt = counted(kept?.liveAt)
  for (const [environment, time] of seen) {
    preLiveAt = earliest(preLiveAt, counted(time))
    if (isProduction(environment) && flag.environments[environment]?.enabled) liveAt = earliest(liveAt, counted(time))
  }
  return { ...(preLiveAt ? { preLiveAt } : {}), ...(liveAt ? { liveAt } : {}) }
}

export interface StageCount {
  initial: number
  preLive: number
  live: number
  completed: number
  archived: number
}

/** How many of `flags` are in each stage now (Unleash's featureLifecycleCountSchema). */
export function countStages(
  flags: Iterable<FlagRecord>,
  seenOf: (flag: FlagRecord) => LastSeenRecord | undefined,
): StageCount {
  const count: StageCount = { initial: 0, preLive: 0, live: 0, completed: 0, archived: 0 }
  for (const flag of flags) {
    const { stage } = currentStage(flag, seenOf(flag))
    count[stage === 'pre-live' ? 'preLive' : stage]++
  }
  return count
}
