/**
 * What a project's overview shows, without its flag list: Unleash's project status
 * (GET /api/admin/projects/:projectId/status) for the lifecycle summary and the stale count, with
 * the names of the first flags of each stage and of the stale and potentially stale ones beside it.
 */
import type { Static } from '@sinclair/typebox'
import type { StateReader } from '../../storage/store'
import { staleAfter } from '../feature-types/feature-types.service'
import type { FlagRecord, LifecycleStage } from '../flags/flags.records'
import type { ProjectStatus as ProjectStatusSchema } from './metrics.model'
import type { LastSeenRecord } from './metrics.records'
import { stagesOf } from './lifecycle'

/** Names listed per group at most; `total` counts them all. */
export const NAMES_SHOWN = 20

const DAY_MS = 86_400_000
const KEYS: Record<LifecycleStage, 'initial' | 'preLive' | 'live' | 'completed' | 'archived'> = {
  initial: 'initial',
  'pre-live': 'preLive',
  live: 'live',
  completed: 'completed',
  archived: 'archived',
}

export type ProjectStatus = Static<typeof ProjectStatusSchema>

/**
 * `flags`: the project's, archived ones included; potentially stale: outlived its type's expected
 * lifetime (as `reader` has the type) at `now`. A stage's averageDays is the mean of the whole days the flags
 * that entered it spent there (until the next stage, or now), null when none did.
 */
export function projectStatus(
  flags: FlagRecord[],
  seenOf: (flag: FlagRecord) => LastSeenRecord | undefined,
  reader: Pick<StateReader, 'get'>,
  now: number,
): ProjectStatus {
  const sorted = [...flags].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const empty = () => ({ currentFlags: 0, averageDays: null as number | null, flags: [] as string[] })
  const summary: ProjectStatus['lifecycleSummary'] = {
    initial: empty(),
    preLive: empty(),
    live: empty(),
    completed: empty(),
    archived: { ...empty(), last30Days: 0 },
  }
  const days = new Map<string, number[]>()
  const stale: string[] = []
  const potentially: string[] = []
  for (const flag of sorted) {
    const stages = stagesOf(flag, seenOf(flag))
    stages.forEach((entry, index) => {
      const left = index + 1 < stages.length ? Date.parse(stages[index + 1].enteredStageAt) : now
      const list = days.get(entry.stage) ?? []
      days.set(entry.stage, [...list, Math.max(0, left - Date.parse(entry.enteredStageAt)) / DAY_MS])
    })
    const current = stages.at(-1)!
    const stage = summary[KEYS[current.stage]]
    stage.currentFlags++
    if (stage.flags.length < NAMES_SHOWN) stage.flags.push(flag.name)
    if (current.stage === 'archived' && Date.parse(current.enteredStageAt) >= now - 30 * DAY_MS)
      summary.archived.last30Days++
    if (flag.archived) continue
    if (flag.stale) stale.push(flag.name)
    const after = staleAfter(reader, flag.type, flag.createdAt)
    if (!flag.stale && after !== null && now > after) potentially.push(flag.name)
  }
  for (const [stage, spent] of days)
    summary[KEYS[stage as LifecycleStage]].averageDays = Math.round(spent.reduce((a, b) => a + b, 0) / spent.length)
  const names = (all: string[]) => ({ total: all.length, flags: all.slice(0, NAMES_SHOWN) })
  return { lifecycleSummary: summary, staleFlags: names(stale), potentiallyStaleFlags: names(potentially) }
}
