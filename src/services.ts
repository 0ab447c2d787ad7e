/** The composition root: one store, the services over it, and first-start seeding. */
import { join } from 'node:path'
import { Memory } from 'lowdb'
import { JsonLinesEventLog, MemoryEventLog } from './storage/event-log'
import { AtomicJsonFile, EVENTS_FILE, JOURNAL_FILE, probeDataDir, realFileSystem, STATE_FILE, type FileSystem } from './storage/files'
import { JsonLinesJournal, MemoryJournal } from './storage/state-journal'
import type { StateDoc } from './storage/records'
import { Store } from './storage/store'
import { SYSTEM_ACTOR } from './domain/events'
import { createEnvironment, EnvironmentsService } from './features/environments/environments.service'
import { EventsService } from './features/events/events.service'
import { FlagsService } from './features/flags/flags.service'
import { RelationsService } from './features/flags/relations.service'
import { StrategiesService } from './features/flags/strategies.service'
import { NamingPatterns } from './features/projects/naming-pattern'
import { createProject, DEFAULT_PROJECT, ProjectsService } from './features/projects/projects.service'
import { TokensService } from './features/tokens/tokens.service'

export interface Services {
  store: Store
  patterns: NamingPatterns
  tokens: TokensService
  projects: ProjectsService
  environments: EnvironmentsService
  flags: FlagsService
  strategies: StrategiesService
  relations: RelationsService
  events: EventsService
}

export { EVENTS_FILE, JOURNAL_FILE, STATE_FILE }

export interface StoreOptions {
  sync: boolean
  /** Bytes of journal after which a new checkpoint is written (tests make it small). */
  checkpointAfterBytes?: number
  /** The file operations of the data files; tests inject a full disk here. */
  fs?: FileSystem
}

/** Opens the store on `dataDir`, or in memory when `dataDir` is null (tests, throwaway runs). */
export async function openStore(dataDir: string | null, options: StoreOptions = { sync: true }): Promise<Store> {
  if (dataDir === null) {
    return Store.open({ checkpoint: new Memory<StateDoc>(), journal: new MemoryJournal(), events: new MemoryEventLog() })
  }
  const checkpointPath = join(dataDir, STATE_FILE)
  const fs = options.fs ?? realFileSystem
  return Store.open(
    {
      checkpoint: new AtomicJsonFile<StateDoc>(checkpointPath, options.sync, fs),
      journal: new JsonLinesJournal(join(dataDir, JOURNAL_FILE), options.sync, fs),
      events: new JsonLinesEventLog(join(dataDir, EVENTS_FILE), options.sync, fs),
      checkpointName: checkpointPath,
      dataDir,
      probe: (bytes) => probeDataDir(dataDir, fs, bytes),
    },
    { checkpointAfterBytes: options.checkpointAfterBytes },
  )
}

export function createServices(store: Store): Services {
  const patterns = new NamingPatterns(store)
  return {
    store,
    patterns,
    tokens: new TokensService(store),
    projects: new ProjectsService(store),
    environments: new EnvironmentsService(store),
    flags: new FlagsService(store, patterns),
    strategies: new StrategiesService(store),
    relations: new RelationsService(store),
    events: new EventsService(store),
  }
}

/** Stops the workers; the store is closed separately (see Store.close). */
export function stopWorkers(services: Pick<Services, 'events'>): void {
  services.events.close()
}

/**
 * On an empty store: environments development and production, and project default connected to
 * both. Then the admin tokens (see TokensService.bootstrap). Returns a generated secret to print once.
 */
export async function initialise(services: Services, initAdminTokens: readonly string[]): Promise<string | null> {
  const { store } = services
  if (store.state.lastEventId === 0 && Object.keys(store.state.projects).length === 0) {
    // One commit, so that a crash leaves either all of it or nothing (and the next start seeds again).
    await store.transact(SYSTEM_ACTOR, (tx) => {
      createEnvironment(tx, { name: 'development', type: 'development', sortOrder: 100 })
      createEnvironment(tx, { name: 'production', type: 'production', sortOrder: 200 })
      createProject(tx, { id: DEFAULT_PROJECT, name: 'Default', description: 'Default project', featureNaming: null })
    })
  }
  return services.tokens.bootstrap(initAdminTokens)
}
