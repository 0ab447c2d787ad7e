/**
 * Registered applications and their instances, held in memory and bounded like the usage table:
 * registrations and metrics mark them seen, the metrics service's flush writes what changed. Maps
 * are kept least recently seen first, so that at a cap the one seen longest ago makes room.
 *
 * Each record belongs to the scope that made it: the projects of the SDK token whose request first
 * named it. A scope's records make room for its own new ones only, so that one token's flood of new
 * names cannot push out the applications of another project. The caps over all scopes are a bound on
 * memory: at one, the scope holding the most makes room, so a scope holding no more than its equal
 * share is never pushed out by another.
 */
import { instanceKey, type ApplicationRecord, type InstanceRecord } from './metrics.records'
import { Owners } from './owners'

export const APPLICATION_LIMITS = {
  /** Applications kept per scope (the token's projects); one more pushes out the scope's least recently seen (with its instances). */
  applicationsPerScope: 1_000,
  /** Applications kept over all scopes; one more pushes out the least recently seen of the scope holding the most. */
  applications: 5_000,
  /** Instances kept per scope, over its applications; one more pushes out the scope's least recently seen. */
  instancesPerScope: 10_000,
  /** Instances kept over all scopes; one more pushes out the least recently seen of the scope holding the most. */
  instances: 20_000,
  /** Strategy names kept per application. */
  strategies: 100,
  /** An instance not seen for this long is dropped. */
  instanceHours: 48,
  /** An application not seen for this long is dropped. */
  applicationDays: 7,
  /**
   * A sighting that changes only `lastSeen` is written at most this often per instance or
   * application (a clean stop writes every one): every instance reports every interval, and
   * rewriting 10,000 instance records at each flush made its journal line 3.3 MiB where the
   * counts took 0.5 (measured in process). Ageing out takes days, so a crash costs nothing
   * but a `lastSeen` up to this much older.
   */
  lastSeenWriteMs: 5 * 60_000,
}

export interface Sighting {
  appName: string
  instanceId: string
  environment: string
  /** The token's projects ('*' for all). */
  projects: readonly string[]
  /** The caller's address; null when unknown, which leaves the one known before. */
  clientIp: string | null
  /** Only from a registration: what the SDK says about itself. */
  registration?: { sdkVersion: string | null; strategies: readonly string[] }
}

interface Changes {
  apps: string[]
  instances: string[]
  removedApps: string[]
  removedInstances: string[]
}

/**
 * Usage by project id. Project ids may be any URL-friendly name, `constructor` and `__proto__`
 * included, so the map has no prototype for such an id to find (or, assigned, to replace).
 */
const projectMap = (): Record<string, string[]> => Object.create(null)

/** The scope a sighting's token gives: its projects, sorted ('*' for all). */
const scopeKey = (projects: Iterable<string>) => JSON.stringify([...projects].sort())

/**
 * One application as this instance has it (`local`) and as stored (`stored`, written by any
 * instance on the same database): the later sighting's fields, the earlier creation, and every
 * project and environment either has seen, so that flushes of several instances add up.
 */
export function mergedApp(stored: ApplicationRecord | undefined, local: ApplicationRecord): ApplicationRecord {
  if (!stored) return local
  const newer = stored.lastSeen > local.lastSeen ? stored : local
  const usage = projectMap()
  for (const [project, environments] of Object.entries(local.usage)) usage[project] = [...environments]
  for (const [project, environments] of Object.entries(stored.usage)) {
    const known = (usage[project] ??= [])
    for (const environment of environments) if (!known.includes(environment)) known.push(environment)
  }
  return {
    ...newer,
    strategies: [...newer.strategies],
    createdAt: stored.createdAt < local.createdAt ? stored.createdAt : local.createdAt,
    usage,
  }
}

/** One instance as here and as stored: the later sighting's fields and address, the earlier creation. */
export function mergedInstance(stored: InstanceRecord | undefined, local: InstanceRecord): InstanceRecord {
  if (!stored) return local
  const newer = stored.lastSeen > local.lastSeen ? stored : local
  const older = newer === stored ? local : stored
  return {
    ...newer,
    clientIp: newer.clientIp ?? older.clientIp ?? null,
    createdAt: stored.createdAt < local.createdAt ? stored.createdAt : local.createdAt,
  }
}

export class AppRegistry {
  private readonly apps = new Map<string, ApplicationRecord>()
  private readonly instances = new Map<string, InstanceRecord>()
  /** Instance keys by appName, so that removing an application costs its own instances only. */
  private readonly instancesByApp = new Map<string, Set<string>>()
  private changedApps = new Set<string>()
  private changedInstances = new Set<string>()
  private removedApps = new Set<string>()
  private removedInstances = new Set<string>()
  /** Seen again since written, with only `lastSeen` changed and written recently: left for a later flush. */
  private laggingApps = new Set<string>()
  private laggingInstances = new Set<string>()
  /** The `lastSeen` last handed to a flush (or loaded), in ms, by appName and by instance key. */
  private readonly writtenApps = new Map<string, number>()
  private readonly writtenInstances = new Map<string, number>()
  private readonly appOwners = new Owners()
  private readonly instanceOwners = new Owners()

  /** `instances` as stored, by key: a key of the older form (without the environment) is rewritten at the next flush. */
  constructor(apps: Iterable<ApplicationRecord>, instances: Iterable<[string, InstanceRecord]>) {
    const byLastSeen = <T extends { lastSeen: string }>(records: Iterable<T>) =>
      [...records].sort((a, b) => a.lastSeen.localeCompare(b.lastSeen))
    for (const app of byLastSeen(apps)) {
      const usage = projectMap()
      for (const [project, environments] of Object.entries(app.usage)) usage[project] = [...environments]
      this.apps.set(app.appName, { ...app, strategies: [...app.strategies], usage })
      this.writtenApps.set(app.appName, Date.parse(app.lastSeen))
      // Who made it is not stored: the projects it was used with stand for it.
      this.appOwners.seen(app.appName, scopeKey(Object.keys(usage)))
    }
    const stored = [...instances].map(([key, instance]) => ({ key, lastSeen: instance.lastSeen, instance }))
    for (const { key: storedKey, instance } of byLastSeen(stored)) {
      const key = instanceKey(instance.appName, instance.instanceId, instance.environment)
      const app = this.apps.get(instance.appName)
      this.addInstance(
        key,
        { ...instance, clientIp: instance.clientIp ?? null },
        scopeKey(app ? Object.keys(app.usage) : []),
      )
      this.writtenInstances.set(key, Date.parse(instance.lastSeen))
      if (storedKey !== key) {
        this.removedInstances.add(storedKey)
        this.changedInstances.add(key)
      }
    }
  }

  get sizes(): { applications: number; instances: number } {
    return { applications: this.apps.size, instances: this.instances.size }
  }

  /** Whether a flush has something to write; with `all`, `lastSeen` values left for later count. */
  hasChanges(all = false): boolean {
    const lagging = all ? this.laggingApps.size + this.laggingInstances.size : 0
    return (
      this.changedApps.size +
        this.changedInstances.size +
        this.removedApps.size +
        this.removedInstances.size +
        lagging >
      0
    )
  }

  /** Marks a record changed, or, when only its `lastSeen` moved and it was written recently, lagging. */
  private mark(
    key: string,
    material: boolean,
    now: string,
    changed: Set<string>,
    lagging: Set<string>,
    written: Map<string, number>,
  ) {
    const last = written.get(key)
    if (material || last === undefined || Date.parse(now) - last >= APPLICATION_LIMITS.lastSeenWriteMs) {
      changed.add(key)
      lagging.delete(key)
    } else if (!changed.has(key)) {
      lagging.add(key)
    }
  }

  seen(sighting: Sighting, now: string): void {
    const { appName, instanceId, environment } = sighting
    const scope = scopeKey(sighting.projects)
    let app = this.apps.get(appName)
    let appChanged = !app
    if (app) {
      this.apps.delete(appName)
    } else {
      app = { appName, createdAt: now, lastSeen: now, strategies: [], sdkVersion: null, usage: projectMap() }
      this.removedApps.delete(appName)
    }
    this.apps.set(appName, app)
    this.appOwners.seen(appName, scope)
    app.lastSeen = now
    for (const project of sighting.projects) {
      const environments = (app.usage[project] ??= [])
      if (!environments.includes(environment)) {
        environments.push(environment)
        appChanged = true
      }
    }
    if (sighting.registration) {
      const strategies = [...new Set(sighting.registration.strategies)].slice(0, APPLICATION_LIMITS.strategies)
      if (app.sdkVersion !== sighting.registration.sdkVersion || strategies.join('\n') !== app.strategies.join('\n'))
        appChanged = true
      app.sdkVersion = sighting.registration.sdkVersion
      app.strategies = strategies
    }
    this.mark(appName, appChanged, now, this.changedApps, this.laggingApps, this.writtenApps)

    const key = instanceKey(appName, instanceId, environment)
    let instance = this.instances.get(key)
    let instanceChanged = !instance
    if (instance) {
      this.instances.delete(key)
    } else {
      instance = { appName, instanceId, sdkVersion: null, environment, clientIp: null, createdAt: now, lastSeen: now }
      this.removedInstances.delete(key)
    }
    this.addInstance(key, instance, scope)
    instance.lastSeen = now
    // The environment is part of the key: an instance seen in another environment is another instance.
    if (sighting.clientIp !== null && instance.clientIp !== sighting.clientIp) {
      instanceChanged = true
      instance.clientIp = sighting.clientIp
    }
    if (sighting.registration && instance.sdkVersion !== sighting.registration.sdkVersion) {
      instanceChanged = true
      instance.sdkVersion = sighting.registration.sdkVersion
    }
    this.mark(key, instanceChanged, now, this.changedInstances, this.laggingInstances, this.writtenInstances)

    for (
      let victim;
      (victim = this.appOwners.victim(
        appName,
        APPLICATION_LIMITS.applicationsPerScope,
        APPLICATION_LIMITS.applications,
        this.apps.size,
      )) !== undefined;
    ) {
      this.removeApp(victim)
    }
    // The application just seen may have gone with its last instance's room: then so is the instance.
    if (!this.instances.has(key)) return
    for (
      let victim;
      (victim = this.instanceOwners.victim(
        key,
        APPLICATION_LIMITS.instancesPerScope,
        APPLICATION_LIMITS.instances,
        this.instances.size,
      )) !== undefined;
    ) {
      this.removeInstance(victim)
    }
  }

  /** Drops instances and applications not seen since the given times (ISO strings). */
  expire(instancesBefore: string, appsBefore: string): void {
    for (const [key, instance] of this.instances) {
      if (instance.lastSeen >= instancesBefore) break
      this.removeInstance(key)
    }
    for (const [name, app] of this.apps) {
      if (app.lastSeen >= appsBefore) break
      this.removeApp(name)
    }
  }

  /** Adds, or moves to the most recently seen end; a new instance becomes `scope`'s. */
  private addInstance(key: string, instance: InstanceRecord, scope: string): void {
    this.instances.set(key, instance)
    this.instanceOwners.seen(key, scope)
    let keys = this.instancesByApp.get(instance.appName)
    if (!keys) this.instancesByApp.set(instance.appName, (keys = new Set()))
    keys.add(key)
  }

  private removeInstance(key: string): void {
    const appName = this.instances.get(key)?.appName
    const keys = appName === undefined ? undefined : this.instancesByApp.get(appName)
    keys?.delete(key)
    if (keys?.size === 0) this.instancesByApp.delete(appName!)
    this.instances.delete(key)
    this.instanceOwners.forget(key)
    this.changedInstances.delete(key)
    this.laggingInstances.delete(key)
    this.writtenInstances.delete(key)
    this.removedInstances.add(key)
  }

  private removeApp(appName: string): void {
    this.apps.delete(appName)
    this.appOwners.forget(appName)
    this.changedApps.delete(appName)
    this.laggingApps.delete(appName)
    this.writtenApps.delete(appName)
    this.removedApps.add(appName)
    for (const key of [...(this.instancesByApp.get(appName) ?? [])]) this.removeInstance(key)
  }

  app(appName: string): ApplicationRecord | undefined {
    return this.apps.get(appName)
  }

  allApps(): ApplicationRecord[] {
    return [...this.apps.values()]
  }

  instancesOf(appName: string): InstanceRecord[] {
    return [...(this.instancesByApp.get(appName) ?? [])].map(key => this.instances.get(key)!)
  }

  instance(key: string): InstanceRecord | undefined {
    return this.instances.get(key)
  }

  /**
   * A stored application changed (a flush here or by another instance on the same database): this
   * registry has it merged with what it saw itself. One removed there (expired) goes here too,
   * unless seen here since.
   */
  followApp(appName: string, after: ApplicationRecord | undefined): void {
    const local = this.apps.get(appName)
    if (!after) {
      if (local && !this.changedApps.has(appName) && !this.laggingApps.has(appName)) {
        this.removeApp(appName)
        this.removedApps.delete(appName)
      }
      return
    }
    const merged = mergedApp(after, local ?? after)
    this.apps.set(appName, {
      ...merged,
      strategies: [...merged.strategies],
      usage: Object.assign(projectMap(), merged.usage),
    })
    if (!local) this.appOwners.seen(appName, scopeKey(Object.keys(merged.usage)))
  }

  /** As `followApp`, for an instance. */
  followInstance(key: string, after: InstanceRecord | undefined): void {
    // A record under an earlier version's key is re-keyed by this registry (see the constructor).
    if (after && key !== instanceKey(after.appName, after.instanceId, after.environment)) return
    const local = this.instances.get(key)
    if (!after) {
      if (local && !this.changedInstances.has(key) && !this.laggingInstances.has(key)) {
        this.removeInstance(key)
        this.removedInstances.delete(key)
      }
      return
    }
    const merged = {
      ...mergedInstance(after, local ?? after),
      clientIp: (local ?? after).clientIp ?? after.clientIp ?? null,
    }
    if (local) this.instances.set(key, merged)
    else {
      const app = this.apps.get(after.appName)
      this.addInstance(key, merged, scopeKey(app ? Object.keys(app.usage) : []))
    }
  }

  /** What changed since the last call, for a flush; with `all` (the last flush), `lastSeen` values left for later too. */
  takeChanges(all = false): Changes {
    if (all) {
      for (const name of this.laggingApps) this.changedApps.add(name)
      for (const key of this.laggingInstances) this.changedInstances.add(key)
      this.laggingApps = new Set()
      this.laggingInstances = new Set()
    }
    for (const name of this.changedApps) this.writtenApps.set(name, Date.parse(this.apps.get(name)!.lastSeen))
    for (const key of this.changedInstances)
      this.writtenInstances.set(key, Date.parse(this.instances.get(key)!.lastSeen))
    const changes = {
      apps: [...this.changedApps],
      instances: [...this.changedInstances],
      removedApps: [...this.removedApps].filter(name => !this.apps.has(name)),
      removedInstances: [...this.removedInstances].filter(key => !this.instances.has(key)),
    }
    this.changedApps = new Set()
    this.changedInstances = new Set()
    this.removedApps = new Set()
    this.removedInstances = new Set()
    return changes
  }

  restore(changes: Changes): void {
    for (const name of changes.apps) if (this.apps.has(name)) this.changedApps.add(name)
    for (const key of changes.instances) if (this.instances.has(key)) this.changedInstances.add(key)
    for (const name of changes.removedApps) if (!this.apps.has(name)) this.removedApps.add(name)
    for (const key of changes.removedInstances) if (!this.instances.has(key)) this.removedInstances.add(key)
  }
}
