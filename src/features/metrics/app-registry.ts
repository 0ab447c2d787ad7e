/**
 * Registered applications and their instances, held in memory and bounded like the usage table:
 * registrations and metrics mark them seen, the metrics service's flush writes what changed. Maps
 * are kept least recently seen first, so that at a cap the one seen longest ago makes room.
 */
import { instanceKey, type ApplicationRecord, type InstanceRecord } from './metrics.records'

export const APPLICATION_LIMITS = {
  /** Applications kept; one more pushes out the least recently seen (with its instances). */
  applications: 1_000,
  /** Instances kept, over all applications; one more pushes out the least recently seen. */
  instances: 10_000,
  /** Strategy names kept per application. */
  strategies: 100,
  /** An instance not seen for this long is dropped. */
  instanceHours: 48,
  /** An application not seen for this long is dropped. */
  applicationDays: 7,
}

export interface Sighting {
  appName: string
  instanceId: string
  environment: string
  /** The token's projects ('*' for all). */
  projects: readonly string[]
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

export class AppRegistry {
  private readonly apps = new Map<string, ApplicationRecord>()
  private readonly instances = new Map<string, InstanceRecord>()
  /** Instance keys by appName, so that removing an application costs its own instances only. */
  private readonly instancesByApp = new Map<string, Set<string>>()
  private changedApps = new Set<string>()
  private changedInstances = new Set<string>()
  private removedApps = new Set<string>()
  private removedInstances = new Set<string>()

  constructor(apps: Iterable<ApplicationRecord>, instances: Iterable<InstanceRecord>) {
    const byLastSeen = <T extends { lastSeen: string }>(records: Iterable<T>) => [...records].sort((a, b) => a.lastSeen.localeCompare(b.lastSeen))
    for (const app of byLastSeen(apps)) {
      const usage = projectMap()
      for (const [project, environments] of Object.entries(app.usage)) usage[project] = [...environments]
      this.apps.set(app.appName, { ...app, strategies: [...app.strategies], usage })
    }
    for (const instance of byLastSeen(instances)) this.addInstance(instanceKey(instance.appName, instance.instanceId), { ...instance })
  }

  get sizes(): { applications: number; instances: number } {
    return { applications: this.apps.size, instances: this.instances.size }
  }

  get hasChanges(): boolean {
    return this.changedApps.size + this.changedInstances.size + this.removedApps.size + this.removedInstances.size > 0
  }

  seen(sighting: Sighting, now: string): void {
    const { appName, instanceId, environment } = sighting
    let app = this.apps.get(appName)
    if (app) {
      this.apps.delete(appName)
    } else {
      app = { appName, createdAt: now, lastSeen: now, strategies: [], sdkVersion: null, usage: projectMap() }
      this.removedApps.delete(appName)
    }
    this.apps.set(appName, app)
    app.lastSeen = now
    for (const project of sighting.projects) {
      const environments = (app.usage[project] ??= [])
      if (!environments.includes(environment)) environments.push(environment)
    }
    if (sighting.registration) {
      app.sdkVersion = sighting.registration.sdkVersion
      app.strategies = [...new Set(sighting.registration.strategies)].slice(0, APPLICATION_LIMITS.strategies)
    }
    this.changedApps.add(appName)

    const key = instanceKey(appName, instanceId)
    let instance = this.instances.get(key)
    if (instance) {
      this.instances.delete(key)
    } else {
      instance = { appName, instanceId, sdkVersion: null, environment, createdAt: now, lastSeen: now }
      this.removedInstances.delete(key)
    }
    this.addInstance(key, instance)
    instance.lastSeen = now
    instance.environment = environment
    if (sighting.registration) instance.sdkVersion = sighting.registration.sdkVersion
    this.changedInstances.add(key)

    while (this.apps.size > APPLICATION_LIMITS.applications) this.removeApp(this.apps.keys().next().value!)
    while (this.instances.size > APPLICATION_LIMITS.instances) this.removeInstance(this.instances.keys().next().value!)
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

  /** Adds, or moves to the most recently seen end. */
  private addInstance(key: string, instance: InstanceRecord): void {
    this.instances.set(key, instance)
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
    this.changedInstances.delete(key)
    this.removedInstances.add(key)
  }

  private removeApp(appName: string): void {
    this.apps.delete(appName)
    this.changedApps.delete(appName)
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
    return [...(this.instancesByApp.get(appName) ?? [])].map((key) => this.instances.get(key)!)
  }

  instance(key: string): InstanceRecord | undefined {
    return this.instances.get(key)
  }

  takeChanges(): Changes {
    const changes = {
      apps: [...this.changedApps],
      instances: [...this.changedInstances],
      removedApps: [...this.removedApps].filter((name) => !this.apps.has(name)),
      removedInstances: [...this.removedInstances].filter((key) => !this.instances.has(key)),
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
