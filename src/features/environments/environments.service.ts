import { events } from '../../domain/events'
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { EnvironmentRecord } from './environments.records'
import type { RecordOf } from '../../storage/records'
import type { Store, Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import { assertNotWildcard, assertValidName } from '../names'
import { actorOf, type Caller } from '../tokens/permissions'
import type { Static } from '@sinclair/typebox'
import type { Environment } from './environments.model'

export type EnvironmentView = Static<typeof Environment>

/** A flag's state in an environment just connected to its project (typed from the flags collection, which storage knows). */
export function emptyFlagEnvironment(): RecordOf<'flags'>['environments'][string] {
  return { enabled: false, strategies: [], variants: [], lastSeenAt: null }
}

/** Environments in display order: by sortOrder, then name. */
export function compareEnvironments(
  a: Pick<EnvironmentRecord, 'sortOrder' | 'name'>,
  b: Pick<EnvironmentRecord, 'sortOrder' | 'name'>,
) {
  return a.sortOrder - b.sortOrder || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

/** Connects an environment to a project inside a transaction: every flag of the project gets it, disabled. */
export function connectEnvironment(tx: Tx, projectId: string, environment: string): void {
  const project = tx.get('projects', projectId)!
  tx.put('projects', projectId, { ...project, environments: [...project.environments, environment] })
  for (const flag of tx.values('flags')) {
    if (flag.project !== projectId || Object.hasOwn(flag.environments, environment)) continue
    tx.put('flags', flag.name, {
      ...flag,
      environments: { ...flag.environments, [environment]: emptyFlagEnvironment() },
    })
  }
  tx.appendEvent(events.projectEnvironmentAdded(projectId, environment))
}

/** Creates an environment inside a transaction; the one way to make one (start-up seeding uses it too). */
export function createEnvironment(tx: Tx, input: { name: string; type: string; sortOrder?: number }): void {
  if (tx.get('environments', input.name))
    throw new NameExistsError(`An environment named "${input.name}" already exists`)
  checkLimit('environments', tx.values('environments').length + 1, '/name')
  const sortOrder = input.sortOrder ?? Math.max(0, ...tx.values('environments').map(e => e.sortOrder)) + 100
  const environment: EnvironmentRecord = { name: input.name, type: input.type, sortOrder, createdAt: tx.now }
  tx.put('environments', input.name, environment)
  tx.appendEvent(events.environmentCreated(input.name, environment))
}

export class EnvironmentsService {
  constructor(private readonly store: Pick<Store, 'state' | 'transact'>) {}

  list(): EnvironmentView[] {
    const projects = Object.values(this.store.state.projects)
    return Object.values(this.store.state.environments)
      .map(environment => ({
        name: environment.name,
        type: environment.type,
        sortOrder: environment.sortOrder,
        enabled: true,
        protected: false,
        createdAt: environment.createdAt,
        projectCount: projects.filter(project => project.environments.includes(environment.name)).length,
      }))
      .sort(compareEnvironments)
  }

  async create(input: { name: string; type: string; sortOrder?: number }, caller: Caller): Promise<EnvironmentView> {
    assertValidName(input.name, 'environment')
    assertNotWildcard(input.name, 'environment name', '/name')
    assertValidName(input.type, 'environment type', '/type')
    await this.store.transact(actorOf(caller), tx => createEnvironment(tx, input))
    return this.list().find(environment => environment.name === input.name)!
  }

  async addToProject(projectId: string, environment: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const project = tx.get('projects', projectId)
      if (!project) throw new NotFoundError(`Project "${projectId}" does not exist`)
      if (!tx.get('environments', environment)) throw new NotFoundError(`Environment "${environment}" does not exist`)
      if (project.environments.includes(environment)) {
        throw new NameExistsError(`Environment "${environment}" is already connected to project "${projectId}"`)
      }
      connectEnvironment(tx, projectId, environment)
    })
  }

  async removeFromProject(projectId: string, environment: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const project = tx.get('projects', projectId)
      if (!project) throw new NotFoundError(`Project "${projectId}" does not exist`)
      if (!project.environments.includes(environment)) {
        throw new NotFoundError(`Environment "${environment}" is not connected to project "${projectId}"`)
      }
      if (project.environments.length === 1) {
        throw new ValidationError(
          `"${environment}" is the last environment of project "${projectId}"; a project needs at least one`,
        )
      }
      tx.put('projects', projectId, {
        ...project,
        environments: project.environments.filter(name => name !== environment),
      })
      for (const flag of tx.values('flags')) {
        if (flag.project !== projectId || !Object.hasOwn(flag.environments, environment)) continue
        const { [environment]: _removed, ...rest } = flag.environments
        tx.put('flags', flag.name, { ...flag, environments: rest })
      }
      tx.appendEvent(events.projectEnvironmentRemoved(projectId, environment))
    })
  }
}
