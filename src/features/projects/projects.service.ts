import { events } from '../../domain/events'
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { FeatureNaming, ProjectRecord } from './projects.records'
import type { Store, Tx } from '../../storage/store'
import { connectEnvironment } from '../environments/environments.service'
import { checkLimit } from '../limits'
import { assertNotWildcard, assertValidName } from '../names'
import { projectNotFound } from '../not-found'
import { actorOf, callerSeesProject, type Caller } from '../tokens/permissions'
import { checkFeatureNaming } from './naming-pattern'
import type { Static } from '@sinclair/typebox'
import type { CreateProject, Project, UpdateProject } from './projects.model'

export const DEFAULT_PROJECT = 'default'

export type ProjectView = Static<typeof Project>
export type CreateProjectInput = Static<typeof CreateProject>
export type UpdateProjectInput = Static<typeof UpdateProject>

function projectData(project: ProjectRecord) {
  return { id: project.id, name: project.name, description: project.description, featureNaming: project.featureNaming }
}

/**
 * Creates a project inside a transaction, connected to every environment; the one way to make one
 * (start-up seeding uses it too). `featureNaming` must have been checked (checkFeatureNaming).
 */
export function createProject(
  tx: Tx,
  input: Omit<CreateProjectInput, 'featureNaming'> & { featureNaming: FeatureNaming | null },
): ProjectRecord {
  if (tx.get('projects', input.id)) throw new NameExistsError(`A project with id "${input.id}" already exists`)
  checkLimit('projects', tx.values('projects').length + 1, '/id')
  const environments = tx.values('environments').map(environment => environment.name)
  const record: ProjectRecord = {
    id: input.id,
    name: input.name,
    description: input.description ?? '',
    createdAt: tx.now,
    updatedAt: null,
    environments: [],
    featureNaming: input.featureNaming,
  }
  tx.put('projects', record.id, record)
  tx.appendEvent(events.projectCreated(record.id, projectData(record)))
  for (const environment of environments) connectEnvironment(tx, record.id, environment)
  return record
}

export class ProjectsService {
  constructor(private readonly store: Pick<Store, 'state' | 'reader' | 'transact'>) {}

  private view(project: ProjectRecord): ProjectView {
    let featureCount = 0
    for (const flag of Object.values(this.store.state.flags))
      if (flag.project === project.id && !flag.archived) featureCount++
    return {
      id: project.id,
      name: project.name,
      description: project.description,
      createdAt: project.createdAt,
      updatedAt: project.updatedAt,
      featureCount,
      environments: [...project.environments],
      featureNaming: project.featureNaming ? { ...project.featureNaming } : null,
    }
  }

  list(caller: Caller): ProjectView[] {
    return Object.values(this.store.state.projects)
      .filter(project => callerSeesProject(caller, project.id))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
      .map(project => this.view(project))
  }

  /** The caller's project scope is checked before, in features/tokens/auth.ts. */
  get(projectId: string): ProjectView {
    const project = this.store.reader.get('projects', projectId)
    if (!project) throw projectNotFound(projectId)
    return this.view(project)
  }

  async create(input: CreateProjectInput, caller: Caller): Promise<ProjectView> {
    assertValidName(input.id, 'project', '/id')
    assertNotWildcard(input.id, 'project id', '/id')
    const featureNaming = input.featureNaming ? checkFeatureNaming(input.featureNaming) : null
    const project = await this.store.transact(actorOf(caller), tx => createProject(tx, { ...input, featureNaming }))
    return this.get(project.id)
  }

  async update(projectId: string, input: UpdateProjectInput, caller: Caller): Promise<ProjectView> {
    const featureNaming =
      input.featureNaming === undefined
        ? undefined
        : input.featureNaming === null
          ? null
          : checkFeatureNaming(input.featureNaming)
    await this.store.transact(actorOf(caller), tx => {
      const project = tx.get('projects', projectId)
      if (!project) throw new NotFoundError(`Project "${projectId}" does not exist`)
      if (input.id !== undefined && input.id !== projectId) {
        throw ValidationError.at(
          '/id',
          `The body names project "${input.id}" but the path names "${projectId}"; a project cannot be renamed`,
        )
      }
      const updated: ProjectRecord = {
        ...project,
        name: input.name ?? project.name,
        description: input.description === undefined ? project.description : (input.description ?? ''),
        featureNaming: featureNaming === undefined ? project.featureNaming : featureNaming,
        updatedAt: tx.now,
      }
      // Nothing changed: no write and no event, as for flags.
      if (JSON.stringify(projectData(updated)) === JSON.stringify(projectData(project))) return
      tx.put('projects', projectId, updated)
      tx.appendEvent(events.projectUpdated(projectId, projectData(updated), projectData(project)))
    })
    return this.get(projectId)
  }

  async delete(projectId: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const project = tx.get('projects', projectId)
      if (!project) throw new NotFoundError(`Project "${projectId}" does not exist`)
      if (projectId === DEFAULT_PROJECT) throw new ValidationError('The default project cannot be deleted')
      const flags = tx.values('flags').filter(flag => flag.project === projectId)
      if (flags.length > 0) {
        const archived = flags.filter(flag => flag.archived).length
        throw new ValidationError(
          `Project "${projectId}" still has ${flags.length} flag(s)${archived ? ` (${archived} archived)` : ''}; archive and delete them first`,
        )
      }
      // A segment of a deleted project could be used by no flag, and would name a project that is gone.
      const segments = tx.values('segments').filter(segment => segment.project === projectId)
      if (segments.length > 0) {
        const named = segments.map(segment => `"${segment.name}" (${segment.id})`).join(', ')
        throw new ValidationError(
          `Project "${projectId}" still has the segment(s) ${named}; delete them or make them global first`,
        )
      }
      for (const token of tx.values('tokens')) {
        if (token.projects.includes(projectId)) {
          throw new ValidationError(
            `Project "${projectId}" is used by the API token "${token.tokenName}"; delete the token first`,
          )
        }
      }
      tx.delete('projects', projectId)
      tx.appendEvent(events.projectDeleted(projectId, projectData(project)))
    })
  }
}
