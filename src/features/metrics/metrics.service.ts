/**
 * SDK metrics and registrations (sdk-api-contract §1, §2). SDKs report every few seconds from every
 * instance, so a request only adds to counts held in memory (usage-table.ts, app-registry.ts); a
 * flush, on a timer and when the store closes, commits what changed in one transaction without
 * events. A request therefore never writes to disk nor records an audit event, and the counts a
 * crash can lose are those of the last flush interval at most.
 */
import type { Static } from '@sinclair/typebox'
import { SYSTEM_ACTOR } from '../../domain/events'
import { NotFoundError } from '../../errors'
import type { Store } from '../../storage/store'
import type { LastSeenSource } from '../flags/flag-view'
import type { FlagRecord, LifecycleStage } from '../flags/flags.records'
import { flagNotFound, flagNotFoundIn, projectNotFound } from '../not-found'
import { builtInStrategy } from '../strategy-types/built-in-strategies'
import type { SdkScope } from '../tokens/auth'
import { callerSeesProject, type Caller } from '../tokens/permissions'
import { AppRegistry, APPLICATION_LIMITS, mergedApp, mergedInstance } from './app-registry'
import type {
  Application,
  Applications,
  ClientMetrics,
  ClientRegistration,
  FeatureUsage,
  FeatureUsageHistory,
} from './metrics.model'
import { projectStatus, type ProjectStatus } from './project-status'
import { countStages, currentStage, stagesOf, stageTimes, type StageCount, type StageEntry } from './lifecycle'
import type { LastSeenRecord, UsageRowRecord } from './metrics.records'
import { checkAppName, hoursBackOf, readToggles } from './report-body'
import { hourOf, USAGE_LIMITS, UsageTable } from './usage-table'
import { writeUsage } from './usage-write'
import { logAlways } from '../../log'

/** How often counts and registrations are committed (`METRICS_FLUSH_MS`). */
export const DEFAULT_FLUSH_MS = 10_000

const HOUR_MS = 3_600_000
/** The instance id of an SDK that sends none. */
const DEFAULT_INSTANCE = 'default'

type MetricsBody = Static<typeof ClientMetrics>

interface PendingSeen {
  flagCreatedAt: string
  environments: Map<string, string>
}
type RegistrationBody = Static<typeof ClientRegistration>
const ago = (now: Date, ms: number) => new Date(now.getTime() - ms).toISOString()

function warn(msg: string, error: unknown) {
  logAlways('warn', msg, { error: (error as Error)?.message ?? String(error) })
}

export class MetricsService implements LastSeenSource {
  private readonly usage: UsageTable
  private readonly registry: AppRegistry
  /** Flag name → the flag's createdAt and, by environment, when; committed at the next flush if that flag still exists. */
  private pendingSeen = new Map<string, PendingSeen>()
  /** Flags deleted since the last flush, whose lastSeen record goes with them. */
  private deletedFlags = new Set<string>()
  private readonly seenListeners: ((flagName: string) => void)[] = []
  /** Flushes run one after the other. */
  private flushes: Promise<void> = Promise.resolve()
  private readonly timer: ReturnType<typeof setInterval>

  constructor(
    private readonly store: Pick<Store, 'state' | 'reader' | 'transact' | 'watch' | 'beforeClose'>,
    flushMs = DEFAULT_FLUSH_MS,
    /** What time it is: the hour a report counts in, and what the flush prunes (benchmarks fill 48 hours with it). */
    private readonly now: () => Date = () => new Date(),
  ) {
    const flags = store.state.flags
    this.usage = new UsageTable(name => (Object.hasOwn(flags, name) ? flags[name] : undefined))
    this.registry = new AppRegistry(
      Object.values(store.state.clientApplications),
      Object.entries(store.state.clientInstances),
    )
    // Records stored by any commit (another instance's flush too) are followed; the first call of each loads it.
    store.watch('flagUsage', (key, before, after) => this.usage.followStored(key, before, after))
    store.watch('clientApplications', (name, _before, after) => this.registry.followApp(name, after))
    store.watch('clientInstances', (key, _before, after) => this.registry.followInstance(key, after))
    store.watch('flagLastSeen', key => {
      for (const listener of this.seenListeners) listener(key)
    })
    // What was counted for a flag goes with it at once, flushed or not: a flag made again under the
    // name, in this flush interval or any later, is another flag and starts unseen with no usage.
    store.watch('flags', (key, before, after) => {
      if (!after) {
        this.deletedFlags.add(key)
        this.usage.orphan(key)
        this.pendingSeen.delete(key)
      } else if (!before) {
        this.usage.dropOrphans(key)
      }
    })
    // A flag deleted after the last flush before a crash left its lastSeen record behind (the
    // deletion is flushed with the metrics): found here, removed at the first flush.
    for (const [name, record] of Object.entries(store.state.flagLastSeen)) {
      const flag = Object.hasOwn(store.state.flags, name) ? store.state.flags[name] : undefined
      if (!flag || flag.createdAt !== record.flagCreatedAt) this.deletedFlags.add(name)
    }
    this.timer = setInterval(() => void this.flush(), flushMs)
    this.timer.unref?.()
    store.beforeClose(() => {
      clearInterval(this.timer)
      return this.flush(true)
    })
  }

  /**
   * Counts one metrics report of an SDK whose token has `scope`, sent from `clientIp` (null: unknown).
   * Flags unknown or outside the scope are dropped.
   */
  report(scope: SdkScope, body: MetricsBody, clientIp: string | null): void {
    checkAppName(body.appName)
    const counts = readToggles(body.bucket?.toggles ?? {})
    const now = this.now()
    const hour = hourOf(now)
    const time = now.toISOString()
    const flags = this.store.state.flags
    const allProjects = scope.projects.includes('*')
    const group = this.usage.group(hour, scope.environment, body.appName)
    for (const [name, entry] of counts) {
      // As in Unleash: unknown flags and empty counts are dropped without an error.
      const flag = Object.hasOwn(flags, name) ? flags[name] : undefined
      if (!flag || (!allProjects && !scope.projects.includes(flag.project)) || (entry.yes === 0 && entry.no === 0))
        continue
      this.usage.add(group, flag, entry)
      let pending = this.pendingSeen.get(name)
      if (!pending || pending.flagCreatedAt !== flag.createdAt)
        this.pendingSeen.set(name, (pending = { flagCreatedAt: flag.createdAt, environments: new Map() }))
      pending.environments.set(scope.environment, time)
    }
    this.registry.seen(
      {
        appName: body.appName,
        instanceId: body.instanceId || DEFAULT_INSTANCE,
        environment: scope.environment,
        projects: scope.projects,
        clientIp,
      },
      time,
    )
  }

  /** Records an SDK's registration, sent from `clientIp`: its application and instance, in the token's environment. */
  register(scope: SdkScope, body: RegistrationBody, clientIp: string | null): void {
    checkAppName(body.appName)
    const registration = { sdkVersion: body.sdkVersion ?? null, strategies: body.strategies ?? [] }
    const sighting = {
      appName: body.appName,
      instanceId: body.instanceId || DEFAULT_INSTANCE,
      environment: scope.environment,
      projects: scope.projects,
      clientIp,
      registration,
    }
    this.registry.seen(sighting, this.now().toISOString())
  }

  /**
   * Commits what changed since the last flush, in one transaction without events. `final` (when
   * the store closes) also writes the instances' and applications' `lastSeen` values that are left
   * for later while they were written recently (APPLICATION_LIMITS.lastSeenWriteMs).
   */
  flush(final = false): Promise<void> {
    this.flushes = this.flushes.then(() => this.write(final))
    return this.flushes
  }

  private async write(final: boolean): Promise<void> {
    const now = this.now()
    this.usage.prune(hourOf(new Date(now.getTime() - USAGE_LIMITS.hoursKept * HOUR_MS)))
    this.registry.expire(
      ago(now, APPLICATION_LIMITS.instanceHours * HOUR_MS),
      ago(now, APPLICATION_LIMITS.applicationDays * 24 * HOUR_MS),
    )
    if (
      !this.usage.hasChanges &&
      !this.registry.hasChanges(final) &&
      this.pendingSeen.size === 0 &&
      this.deletedFlags.size === 0
    )
      return
    let usage: ReturnType<UsageTable['takeChanges']> | undefined
    let apps: ReturnType<AppRegistry['takeChanges']> | undefined
    let seen = new Map<string, PendingSeen>()
    let deleted: string[] = []
    try {
      await this.store.transact(SYSTEM_ACTOR, tx => {
        // Everything is taken here, at once: reports keep arriving while the transaction waits its
        // turn, and a row committed without the lastSeenAt of the same report would be half there.
        usage = this.usage.takeChanges()
        apps = this.registry.takeChanges(final)
        seen = this.pendingSeen
        this.pendingSeen = new Map()
        deleted = [...this.deletedFlags]
        this.deletedFlags = new Set()
        // First, so that what is seen below (reports since the deletion: it dropped those before) starts afresh.
        for (const name of deleted) if (tx.get('flagLastSeen', name)) tx.delete('flagLastSeen', name)
        // What was counted here is added to the records as stored now: other instances on the same
        // database add theirs to the same records.
        writeUsage(tx, usage)
        for (const name of apps.apps)
          tx.put('clientApplications', name, mergedApp(tx.get('clientApplications', name), this.registry.app(name)!))
        for (const name of apps.removedApps)
          if (tx.get('clientApplications', name)) tx.delete('clientApplications', name)
        for (const key of apps.instances)
          tx.put('clientInstances', key, mergedInstance(tx.get('clientInstances', key), this.registry.instance(key)!))
        for (const key of apps.removedInstances) if (tx.get('clientInstances', key)) tx.delete('clientInstances', key)
        for (const [name, { flagCreatedAt, environments }] of seen) {
          const flag = tx.get('flags', name)
          // Seen as another flag of that name, deleted since.
          if (!flag || flag.createdAt !== flagCreatedAt) continue
          const current = tx.get('flagLastSeen', name)
          const kept = current && current.flagCreatedAt === flag.createdAt ? current : undefined
          const production = (environment: string) => tx.get('environments', environment)?.type === 'production'
          tx.put('flagLastSeen', name, {
            flagCreatedAt: flag.createdAt,
            environments: { ...kept?.environments, ...Object.fromEntries(environments) },
            ...stageTimes(flag, kept, environments, production),
          })
        }
      })
    } catch (error) {
      // Nothing was committed: keep it all for the next flush.
      if (usage) this.usage.restore(usage)
      if (apps) this.registry.restore(apps)
      for (const [name, taken] of seen) {
        const pending = this.pendingSeen.get(name)
        if (!pending) this.pendingSeen.set(name, taken)
        else if (pending.flagCreatedAt === taken.flagCreatedAt) {
          for (const [environment, time] of taken.environments)
            if (!pending.environments.has(environment)) pending.environments.set(environment, time)
        }
      }
      for (const name of deleted) this.deletedFlags.add(name)
      warn('SDK metrics could not be saved; they are kept in memory and tried again at the next flush', error)
    }
  }

  lastSeenOf(flag: FlagRecord): Readonly<Record<string, string>> {
    return this.seenRecord(flag)?.environments ?? {}
  }

  /** The flag's lastSeen record, if it is this flag's. */
  private seenRecord(flag: FlagRecord): LastSeenRecord | undefined {
    // Deleted since the last flush (and maybe made again): the record left is the deleted flag's.
    if (this.deletedFlags.has(flag.name)) return undefined
    const record = this.store.reader.get('flagLastSeen', flag.name)
    return record && record.flagCreatedAt === flag.createdAt ? record : undefined
  }

  /** The stage the flag is in, SDK metrics counted (the flag views show it). */
  stageOf(flag: FlagRecord): { stage: LifecycleStage; enteredStageAt: string } {
    return currentStage(flag, this.seenRecord(flag))
  }

  /** getFeatureLifecycle: the stages the flag of `projectId` went through. */
  lifecycle(projectId: string, featureName: string): StageEntry[] {
    const flag = this.store.reader.get('flags', featureName)
    if (!flag || flag.project !== projectId) throw flagNotFoundIn(this.store.reader, featureName, projectId)
    return stagesOf(flag, this.seenRecord(flag))
  }

  /** getFeatureLifecycleCount: flags per stage, of the projects `caller` may see. */
  lifecycleCount(caller: Caller): StageCount {
    const flags = Object.values(this.store.state.flags).filter(flag => callerSeesProject(caller, flag.project))
    return countStages(flags, flag => this.seenRecord(flag))
  }

  /** getProjectStatus: the project's flags by stage, and its stale and potentially stale ones. */
  projectStatus(projectId: string): ProjectStatus {
    const reader = this.store.reader
    if (!reader.get('projects', projectId)) throw projectNotFound(projectId)
    const flags = Object.values(this.store.state.flags).filter(flag => flag.project === projectId)
    return projectStatus(flags, flag => this.seenRecord(flag), reader, Date.now())
  }

  onLastSeenChange(listener: (flagName: string) => void): void {
    this.seenListeners.push(listener)
  }

  /** getFeatureUsageSummary: the flag's last hour, per environment and application. */
  featureUsage(featureName: string): Static<typeof FeatureUsage> {
    // A flag of a project the caller may not see answers the same 404 (features/tokens/auth.ts).
    if (!this.store.reader.get('flags', featureName)) throw flagNotFound(featureName)
    const now = this.now()
    const seenApplications = [
      ...new Set(this.usage.rowsOf(featureName, ago(now, 24 * HOUR_MS)).map(row => row.appName)),
    ].sort()
    const lastHourUsage = this.rowsSince(featureName, ago(now, HOUR_MS))
    return { version: 1, maturity: 'stable', featureName, lastHourUsage, seenApplications }
  }

  /**
   * getRawFeatureMetrics: the flag's hourly counts per environment and application, of the hours
   * that started in the last `hoursBack` hours (a string as the query gives it; 1 to 48, default 1).
   */
  featureHistory(featureName: string, hoursBack: string | undefined): Static<typeof FeatureUsageHistory> {
    const hours = hoursBackOf(hoursBack, USAGE_LIMITS.hoursKept)
    if (!this.store.reader.get('flags', featureName)) throw flagNotFound(featureName)
    return {
      version: 1,
      maturity: 'stable',
      featureName,
      data: this.rowsSince(featureName, ago(this.now(), hours * HOUR_MS)),
    }
  }

  /** Copies of the flag's rows from `sinceHour` on, by hour, environment and application. */
  private rowsSince(featureName: string, sinceHour: string): Omit<UsageRowRecord, 'flagCreatedAt'>[] {
    return this.usage
      .rowsOf(featureName, sinceHour)
      .sort(
        (a, b) =>
          a.timestamp.localeCompare(b.timestamp) ||
          a.environment.localeCompare(b.environment) ||
          a.appName.localeCompare(b.appName),
      )
  }

  /** Usage of `app` that `caller` may see: all of it, or its projects' and the all-projects ('*') part. */
  private visibleUsage(usage: Readonly<Record<string, readonly string[]>>, caller: Caller) {
    return Object.entries(usage)
      .filter(([project]) => project === '*' || callerSeesProject(caller, project))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([project, environments]) => ({ project, environments: [...environments].sort() }))
  }

  applications(caller: Caller): Static<typeof Applications> {
    const applications = this.registry
      .allApps()
      .map(app => ({ app, usage: this.visibleUsage(app.usage, caller) }))
      .filter(({ usage }) => caller.projects.includes('*') || usage.length > 0)
      .sort((a, b) => a.app.appName.localeCompare(b.app.appName))
      .map(({ app, usage }) => ({
        appName: app.appName,
        ...(app.sdkVersion ? { sdkVersion: app.sdkVersion } : {}),
        strategies: [...app.strategies],
        usage,
      }))
    return { applications, total: applications.length }
  }

  /** `basePath`: BASE_URI_PATH, which the application's link (its own route) starts with. */
  application(appName: string, caller: Caller, basePath = ''): Static<typeof Application> {
    const app = this.registry.app(appName)
    if (!app || (!caller.projects.includes('*') && this.visibleUsage(app.usage, caller).length === 0)) {
      throw new NotFoundError(`Could not find application with appName ${appName}`)
    }
    const state = this.store.state
    const strategies = app.strategies.map(name =>
      builtInStrategy(name) || Object.hasOwn(state.strategyTypes, name) ? { name } : { name, notFound: true },
    )
    type SeenToggle = Static<typeof Application>['seenToggles'][number]
    const seenToggles = this.usage
      .flagsOf(appName, ago(this.now(), 24 * HOUR_MS))
      .flatMap(([name, exists]): SeenToggle[] => {
        const flag = Object.hasOwn(state.flags, name) ? state.flags[name] : undefined
        // A flag of the name made after the reported one was deleted is not what the application reported.
        if (!exists) return flag ? [] : [{ name, notFound: true }]
        return flag && callerSeesProject(caller, flag.project) ? [{ name, project: flag.project, type: flag.type }] : []
      })
    const instances = this.registry
      .instancesOf(appName)
      .sort((a, b) => b.lastSeen.localeCompare(a.lastSeen))
      .map(instance => ({ ...instance, clientIp: instance.clientIp ?? null }))
    return {
      appName,
      createdAt: app.createdAt,
      strategies,
      instances,
      seenToggles,
      links: { self: `${basePath}/api/admin/metrics/applications/${encodeURIComponent(appName)}` },
    }
  }

  /** What is held in memory, for tests of the caps. */
  get sizes() {
    return {
      usageRows: this.usage.sizes.rows,
      usageSeries: this.usage.sizes.series,
      variantCounters: this.usage.sizes.variants,
      ...this.registry.sizes,
    }
  }
}
