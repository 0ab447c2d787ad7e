import { events } from '../../domain/events'
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { FlagRecord } from './flags.records'
import type { StateReader, Store, Tx } from '../../storage/store'
import { emptyFlagEnvironment } from '../environments/environments.service'
import { checkLimit, RecordCount } from '../limits'
import { nameProblem } from '../names'
import { flagNotFoundIn } from '../not-found'
import type { NamingPatterns } from '../projects/naming-pattern'
import { actorOf, callerSeesProject, type Caller } from '../tokens/permissions'
import { applyFlagPatch, assertNoVariantOps, type PatchOperation } from './flag-patch'
import {
  archiveFlag,
  changeMetadata,
  deleteArchivedFlag,
  flagInProject,
  liveFlagInProject,
  offEverywhereAfterRevive,
  requireEnvironment,
  setEnvironmentEnabled,
  withStage,
} from './flag-rules'
import { ChildrenIndex, flagView, metadataOf, NEVER_SEEN, type FeatureView, type LastSeenSource } from './flag-view'
import { staleAfter } from '../feature-types/feature-types.service'
import { searchPage, type FlagSearch } from './flag-search'
import { tagFlag } from './relations.service'
import {
  checkDescription,
  tagFilter,
  checkMetadata,
  checkType,
  tagsOf,
  type CreateFlagInput,
  type UpdateFlagInput,
} from './flag-input'

export interface ListFilters {
  /** `type:value` pairs; a flag matches when it has any of them. */
  tag?: string[]
  namePrefix?: string
}

/**
 * Changes to flag lists, counted for the whole process rather than per service: a version then
 * also names the service whose list it is, so a cache of answers that outlives one service (tests
 * serve many from one app) never takes one service's list for another's.
 */
let listChanges = 0

export class FlagsService {
  private readonly children: ChildrenIndex
  /**
   * When each project's list last changed, as a count of changes: a change to a flag or to the
   * project changes that project's list; a change to an environment changes them all.
   */
  private readonly listChangedAt = new Map<string, number>()
  private allListsChangedAt = 0
  private readonly count: RecordCount

  constructor(
    private readonly store: Pick<Store, 'state' | 'reader' | 'transact' | 'watch'>,
    private readonly patterns: NamingPatterns,
    private readonly lastSeen: LastSeenSource = NEVER_SEEN,
  ) {
    this.children = new ChildrenIndex(store)
    this.count = new RecordCount(store, 'flags')
    const listChanged = (projectId: string) => this.listChangedAt.set(projectId, ++listChanges)
    store.watch('flags', (_key, before, after) => {
      if (before) listChanged(before.project)
      if (after) listChanged(after.project)
    })
    store.watch('projects', (key, _before, after) => (after ? listChanged(key) : this.listChangedAt.delete(key)))
    store.watch('environments', () => (this.allListsChangedAt = ++listChanges))
    store.watch('flagTypes', () => (this.allListsChangedAt = ++listChanges))
    // Lists show lastSeenAt: a metrics flush that changes a flag's changes its project's list.
    lastSeen.onLastSeenChange(name => {
      const flag = store.reader.get('flags', name)
      if (flag) listChanged(flag.project)
    })
  }

  /** Whether `flag` is older than its type's lifetime at `now`, as the state `reader` sees the type. */
  private potentiallyStale(reader: StateReader, flag: FlagRecord, now: number): boolean {
    const after = staleAfter(reader, flag.type, flag.createdAt)
    return after !== null && now > after
  }

  /**
   * Until when (ms since the epoch) the project's list stays as it is without a write: the first
   * moment one of its flags becomes potentially stale with age.
   */
  listValidUntil(projectId: string, now = Date.now()): number {
    let until = Number.POSITIVE_INFINITY
    for (const flag of Object.values(this.store.state.flags)) {
      if (flag.project !== projectId || flag.archived) continue
      const after = staleAfter(this.store.reader, flag.type, flag.createdAt)
      if (after !== null && after >= now && after < until) until = after
    }
    return until
  }

  /**
   * The full flag as a single read shows it. Writes build it inside their transaction, so that the
   * answer is this write's result even when later queued writes change the flag again.
   */
  private view(reader: StateReader, name: string, tx?: Tx): FeatureView {
    const flag = reader.get('flags', name)!
    return flagView(flag, this.store.state.environments, {
      details: true,
      children: this.children.of(name, tx),
      lastSeen: this.lastSeen.lastSeenOf(flag),
      stage: this.lastSeen.stageOf?.(flag),
      potentiallyStale: this.potentiallyStale(reader, flag, Date.now()),
    })
  }

  /**
   * A number that changes whenever the project's list (listProject) may have: equal versions, equal
   * lists. Null for an unknown project. Lets the HTTP edge reuse an answer it has already made.
   */
  listVersion(projectId: string): number | null {
    if (!this.store.reader.get('projects', projectId)) return null
    return Math.max(this.listChangedAt.get(projectId) ?? 0, this.allListsChangedAt)
  }

  /** The project's live flags as the list endpoint shows them (contract §5, getFeatures). */
  listProject(projectId: string, filters: ListFilters): FeatureView[] {
    return this.listLive(project => project === projectId, filters)
  }

  /**
   * Live flags of every project the caller sees (getAllToggles, Unleash's deprecated
   * `GET /api/admin/features`), narrowed to `projects` when given; the same filters as listProject.
   */
  listAll(caller: Caller, filters: ListFilters & { project?: string[] }): FeatureView[] {
    const wanted = filters.project !== undefined && filters.project.length > 0 ? new Set(filters.project) : null
    return this.listLive(
      project => callerSeesProject(caller, project) && (wanted === null || wanted.has(project)),
      filters,
    )
  }

  /** One page of the live flags the caller sees (searchFeatures; see flag-search.ts). */
  search(caller: Caller, filters: FlagSearch): { features: FeatureView[]; total: number } {
    const projects = filters.project === undefined ? null : new Set(filters.project)
    const records = this.liveRecords(
      project => callerSeesProject(caller, project) && (projects === null || projects.has(project)),
      {},
    )
    const now = Date.now()
    return searchPage(
      records,
      filters,
      flag => this.lastSeen.lastSeenOf(flag),
      flag => this.listView(flag, now),
    )
  }

  private listView(flag: FlagRecord, now: number): FeatureView {
    return flagView(flag, this.store.state.environments, {
      details: false,
      children: this.children.of(flag.name),
      lastSeen: this.lastSeen.lastSeenOf(flag),
      stage: this.lastSeen.stageOf?.(flag),
      potentiallyStale: this.potentiallyStale(this.store.reader, flag, now),
    })
  }

  private listLive(inScope: (project: string) => boolean, filters: ListFilters): FeatureView[] {
    const now = Date.now()
    return this.liveRecords(inScope, filters).map(flag => this.listView(flag, now))
  }

  /** Live flags in scope that pass the filters, by createdAt then name. */
  private liveRecords(inScope: (project: string) => boolean, filters: ListFilters): FlagRecord[] {
    const tags = filters.tag?.map(tagFilter)
    const state = this.store.state
    const prefix = filters.namePrefix?.toLowerCase()
    const flags = Object.values(state.flags).filter(
      flag =>
        !flag.archived &&
        inScope(flag.project) &&
        (prefix === undefined || flag.name.toLowerCase().startsWith(prefix)) &&
        (tags === undefined ||
          tags.length === 0 ||
          flag.tags.some(t => tags.some(wanted => wanted.type === t.type && wanted.value === t.value))),
    )
    flags.sort((a, b) =>
      a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )
    return flags
  }

  /** One environment of a flag with its strategies and variants (getFeatureEnvironment), as GET of the flag shows it. */
  environment(projectId: string, name: string, environment: string): FeatureView['environments'][number] {
    requireEnvironment(flagInProject(this.store.reader, projectId, name), environment)
    return this.get(projectId, name).environments.find(entry => entry.name === environment)!
  }

  /** The caller's project scope is checked before, in features/tokens/auth.ts. */
  get(projectId: string, name: string): FeatureView {
    flagInProject(this.store.reader, projectId, name)
    return this.view(this.store.reader, name)
  }

  listArchived(caller: Caller): FeatureView[] {
    const state = this.store.state
    const now = Date.now()
    return Object.values(state.flags)
      .filter(flag => flag.archived && callerSeesProject(caller, flag.project))
      .sort((a, b) => (a.archivedAt ?? '').localeCompare(b.archivedAt ?? '') || a.name.localeCompare(b.name))
      .map(flag =>
        flagView(flag, state.environments, {
          details: false,
          children: this.children.of(flag.name),
          lastSeen: this.lastSeen.lastSeenOf(flag),
          potentiallyStale: this.potentiallyStale(this.store.reader, flag, now),
        }),
      )
  }

  /**
   * The checks of `POST /api/admin/features/validate` (contract §5): name rules (400), taken by any
   * flag, archived included (409), then the project's naming pattern (400) when the caller may see the project.
   */
  async validateName(name: string, projectId: string | null | undefined, caller: Caller): Promise<void> {
    const problem = nameProblem(name, 'flag')
    if (problem) throw ValidationError.at('/name', problem)
    const existing = this.store.reader.get('flags', name)
    if (existing) {
      throw new NameExistsError(
        existing.archived ? 'An archived flag with that name already exists' : 'A flag with that name already exists',
      )
    }
    // A project the caller may not see has no pattern to check, exactly like an unknown one.
    if (projectId && callerSeesProject(caller, projectId)) this.checkNamingPattern(name, projectId)
  }

  /** 400 when `name` does not fit the project's naming pattern (the import reports it as a finding). */
  checkNamingPattern(name: string, projectId: string) {
    this.patterns.check(name, projectId, this.store.reader.get('projects', projectId)?.featureNaming)
  }

  async create(projectId: string, input: CreateFlagInput, caller: Caller): Promise<FeatureView> {
    return this.store.transact(actorOf(caller), tx => {
      const record = this.createIn(tx, projectId, input, caller)
      return this.view(tx, record.name, tx)
    })
  }

  /**
   * Creates the flag inside `tx` and records its event: the write of `create`, which the import
   * reuses, so that both check the same rules in the same order (name, type, description, taken
   * 409, unknown project 404, naming pattern, limit).
   */
  createIn(tx: Tx, projectId: string, input: CreateFlagInput, caller: Caller): FlagRecord {
    const problem = nameProblem(input.name, 'flag')
    if (problem) throw ValidationError.at('/name', problem)
    const type = input.type ?? 'release'
    checkType(type)
    checkDescription(input.description ?? null)
    const tags = tagsOf(input.tags ?? [])
    const existing = tx.get('flags', input.name)
    if (existing)
      throw new NameExistsError(
        existing.archived ? 'An archived flag with that name already exists' : 'A flag with that name already exists',
      )
    const project = tx.get('projects', projectId)
    if (!project) throw new NotFoundError(`Project "${projectId}" does not exist`)
    this.checkNamingPattern(input.name, projectId)
    checkLimit('flags', this.count.in(tx) + 1, '/name')
    const record: FlagRecord = {
      name: input.name,
      project: projectId,
      type,
      description: input.description ?? null,
      impressionData: input.impressionData ?? false,
      stale: false,
      archived: false,
      archivedAt: null,
      createdAt: tx.now,
      createdBy: { id: caller.userId, name: caller.tokenName, imageUrl: '' },
      environments: Object.fromEntries(project.environments.map(environment => [environment, emptyFlagEnvironment()])),
      tags: [],
      dependencies: [],
      lifecycle: { stage: 'initial', enteredStageAt: tx.now },
      completion: null,
    }
    tx.put('flags', record.name, record)
    tx.appendEvent(events.flagCreated(record, metadataOf(record)))
    // As in Unleash: the flag first, then one feature-tagged per tag, in the same commit.
    return tags.reduce((flag, tag, index) => tagFlag(tx, flag, tag, `/tags/${index}`), record)
  }

  /** PUT: the given properties replace the stored ones; missing ones are left alone. */
  async update(projectId: string, name: string, input: UpdateFlagInput, caller: Caller): Promise<FeatureView> {
    return this.store.transact(actorOf(caller), tx => {
      this.updateIn(tx, flagInProject(tx, projectId, name), input)
      return this.view(tx, name, tx)
    })
  }

  /** The write of `update` inside `tx`, which the import reuses: events only when something changed. */
  updateIn(tx: Tx, flag: FlagRecord, input: UpdateFlagInput): void {
    const current = metadataOf(flag)
    const next: Record<string, unknown> = { ...current }
    for (const [key, value] of Object.entries(input)) if (value !== undefined) next[key] = value
    changeMetadata(tx, flag, checkMetadata(next, current))
  }

  /** PATCH with JSON Patch, in the contract's order of checks (§5). */
  async patch(projectId: string, name: string, operations: PatchOperation[], caller: Caller): Promise<FeatureView> {
    return this.store.transact(actorOf(caller), tx => {
      const flag = tx.get('flags', name)
      if (!flag) throw flagNotFoundIn(tx, name, projectId)
      assertNoVariantOps(operations)
      flagInProject(tx, projectId, name)
      const current = metadataOf(flag)
      changeMetadata(tx, flag, checkMetadata(applyFlagPatch(current, operations), current))
      return this.view(tx, name, tx)
    })
  }

  async archive(projectId: string, name: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      archiveFlag(tx, flagInProject(tx, projectId, name))
    })
  }

  async revive(projectId: string, names: string[], caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      for (const name of new Set(names)) {
        const flag = flagInProject(tx, projectId, name)
        if (!flag.archived) throw ValidationError.at(undefined, `Flag "${name}" is not archived`)
        const updated = withStage({ ...flag, archived: false, archivedAt: null }, 'initial', tx.now)
        tx.put('flags', name, updated)
        tx.appendEvent(events.flagRevived(updated, { data: metadataOf(updated), preData: metadataOf(flag) }))
        offEverywhereAfterRevive(tx, updated)
      }
    })
  }

  /** Deletes an archived flag for good, which frees its name. */
  async deleteArchived(name: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const flag = tx.get('flags', name)
      if (!flag || !callerSeesProject(caller, flag.project))
        throw new NotFoundError(`Could not find archived flag "${name}"`)
      deleteArchivedFlag(tx, flag)
    })
  }

  async setEnabled(
    projectId: string,
    name: string,
    environment: string,
    enabled: boolean,
    caller: Caller,
  ): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      setEnvironmentEnabled(tx, liveFlagInProject(tx, projectId, name), environment, enabled)
    })
  }

  /**
   * Bulk on/off (contract §5): all or nothing. Every name is checked in request order first, and
   * the first problem answers; then one transaction switches the flags, so the request costs one
   * durable write and records an event per flag that actually changed.
   */
  async setEnabledBulk(
    projectId: string,
    environment: string,
    names: string[],
    enabled: boolean,
    caller: Caller,
  ): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const project = tx.get('projects', projectId)
      if (!project || !callerSeesProject(caller, projectId))
        throw new NotFoundError(`Project "${projectId}" does not exist`)
      const flags = [...new Set(names)].map(name => {
        const flag = liveFlagInProject(tx, projectId, name)
        requireEnvironment(flag, environment)
        return flag
      })
      for (const flag of flags) setEnvironmentEnabled(tx, flag, environment, enabled)
    })
  }
}
