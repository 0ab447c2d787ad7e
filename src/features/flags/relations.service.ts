/** Tags, parent dependencies and the lifecycle of a flag. */
import { events } from '../../domain/events'
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { FlagRecord } from './flags.records'
import type { TagRecord } from '../../storage/records'
import type { Store, Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import { flagNotFound } from '../not-found'
import { dotSegmentProblem } from '../names'
import { actorOf, type Caller } from '../tokens/permissions'
import { flagInProject, liveFlagInProject, withStage } from './flag-rules'
import { checkTagType } from '../tag-types/tag-types.service'
import { DEFAULT_TAG_TYPE } from '../tag-types/tag-types.records'

export const TAG_TYPE_DEFAULT = DEFAULT_TAG_TYPE

/**
 * The flag of that name, or 404. Inside a write (`Tx`), a flag of a project outside the caller's
 * scope answers the same 404 (tokens/scope-guard.ts), whatever the state was when the request
 * arrived (features/tokens/auth.ts answers that one first).
 */
export function flagByName(tx: Pick<Tx, 'get'> & Partial<Pick<Tx, 'guardRecord'>>, name: string): FlagRecord {
  const flag = tx.get('flags', name)
  if (!flag) throw flagNotFound(name)
  tx.guardRecord?.('flags', name, flag)
  return flag
}

export interface TagInput {
  type?: string
  value: string
}

/**
 * A tag as a request gives it, with its default type and trimmed value checked (400 at
 * `<path>/<valueKey>`). A tag to remove may be one an older data directory holds, which a tag
 * added now could not be ("..").
 */
export function checkTag(
  input: TagInput,
  path: string,
  valueKey = 'value',
  purpose: 'add' | 'remove' = 'add',
): TagRecord {
  const tag = { type: input.type ?? TAG_TYPE_DEFAULT, value: input.value.trim() }
  if (tag.value.length < 2 || tag.value.length > 50)
    throw ValidationError.at(`${path}/${valueKey}`, 'A tag value must be 2 to 50 characters long')
  const dots = purpose === 'add' ? dotSegmentProblem(tag.value, 'A tag value') : null
  if (dots) throw ValidationError.at(`${path}/${valueKey}`, dots)
  return tag
}

export function hasTag(flag: FlagRecord, tag: TagRecord): boolean {
  return flag.tags.some(t => t.type === tag.type && t.value === tag.value)
}

/**
 * Adds a tag the flag does not have yet (addTag, updateTags, addTagToFeatures), with its event.
 * `path` points at the tag in the request, for the limit's 400.
 */
export function tagFlag(tx: Tx, flag: FlagRecord, tag: TagRecord, path: string): FlagRecord {
  checkTagType(tx, tag.type, `${path}/type`)
  checkLimit('tagsPerFlag', flag.tags.length + 1, `${path}/value`)
  const updated = { ...flag, tags: [...flag.tags, { type: tag.type, value: tag.value }] }
  tx.put('flags', flag.name, updated)
  tx.appendEvent(events.flagTagged(updated, tag))
  return updated
}

/** Removes a tag the flag has, with its event. */
export function untagFlag(tx: Tx, flag: FlagRecord, tag: TagRecord): FlagRecord {
  const updated = { ...flag, tags: flag.tags.filter(t => !(t.type === tag.type && t.value === tag.value)) }
  tx.put('flags', flag.name, updated)
  tx.appendEvent(events.flagUntagged(updated, { type: tag.type, value: tag.value }))
  return updated
}

export interface DependencyInput {
  feature: string
  enabled?: boolean
  variants?: string[]
}

export class RelationsService {
  constructor(private readonly store: Pick<Store, 'reader' | 'transact'>) {}

  tags(name: string): TagRecord[] {
    const flag = flagByName(this.store.reader, name)
    return flag.tags.map(tag => ({ type: tag.type, value: tag.value }))
  }

  async addTag(name: string, input: TagInput, caller: Caller): Promise<TagRecord> {
    const tag = checkTag(input, '')
    return this.store.transact(actorOf(caller), tx => {
      this.addTagIn(tx, flagByName(tx, name), tag)
      return tag
    })
  }

  /** The write of `addTag` inside `tx` with a tag made by `checkTag`; the import reuses it. */
  addTagIn(tx: Tx, flag: FlagRecord, tag: TagRecord): FlagRecord {
    if (hasTag(flag, tag)) throw new NameExistsError(`Flag "${flag.name}" already has the tag ${tag.type}:${tag.value}`)
    return tagFlag(tx, flag, tag, '')
  }

  async removeTag(name: string, type: string, value: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      this.removeTagIn(tx, flagByName(tx, name), { type, value })
    })
  }

  /** The write of `removeTag` inside `tx`; the import reuses it. */
  removeTagIn(tx: Tx, flag: FlagRecord, tag: TagRecord): FlagRecord {
    if (!hasTag(flag, tag)) throw new NotFoundError(`Flag "${flag.name}" has no tag ${tag.type}:${tag.value}`)
    return untagFlag(tx, flag, tag)
  }

  /**
   * Adds or replaces the dependency of `child` on a parent of the same project. One level only:
   * a parent may not have parents of its own, and a flag with children may not get a parent,
   * which also rules out cycles.
   */
  async addDependency(projectId: string, childName: string, input: DependencyInput, caller: Caller) {
    await this.store.transact(actorOf(caller), tx => this.addDependencyIn(tx, projectId, childName, input))
  }

  /** The write of `addDependency` inside `tx`; the import reuses it. */
  addDependencyIn(tx: Tx, projectId: string, childName: string, input: DependencyInput): void {
    const enabled = input.enabled ?? true
    const variants = [...new Set(input.variants ?? [])]
    const child = liveFlagInProject(tx, projectId, childName)
    if (!enabled && variants.length > 0)
      throw ValidationError.at('/variants', 'variants can only be given when the parent must be enabled')
    if (input.feature === childName) throw ValidationError.at('/feature', 'A flag cannot depend on itself')
    const parent = tx.get('flags', input.feature)
    if (!parent || parent.project !== projectId)
      throw ValidationError.at('/feature', `Parent flag "${input.feature}" does not exist in project "${projectId}"`)
    if (parent.archived) throw ValidationError.at('/feature', `Parent flag "${input.feature}" is archived`)
    if (parent.dependencies.length > 0)
      throw ValidationError.at('/feature', `"${input.feature}" depends on other flags itself and cannot be a parent`)
    if (tx.values('flags').some(flag => flag.dependencies.some(d => d.feature === childName))) {
      throw ValidationError.at(
        '/feature',
        `"${childName}" is a parent of other flags and cannot depend on another flag`,
      )
    }
    const dependency = { feature: input.feature, enabled, variants }
    const others = child.dependencies.filter(d => d.feature !== input.feature)
    checkLimit('dependenciesPerFlag', others.length + 1, '/feature')
    const updated = { ...child, dependencies: [...others, dependency] }
    tx.put('flags', childName, updated)
    tx.appendEvent(events.dependencyAdded(updated, dependency))
  }

  async removeDependency(projectId: string, childName: string, parentName: string, caller: Caller) {
    await this.store.transact(actorOf(caller), tx => this.removeDependencyIn(tx, projectId, childName, parentName))
  }

  /** The write of `removeDependency` inside `tx`, which change requests reuse. */
  removeDependencyIn(tx: Tx, projectId: string, childName: string, parentName: string): void {
    const child = flagInProject(tx, projectId, childName)
    const dependency = child.dependencies.find(d => d.feature === parentName)
    if (!dependency) throw new NotFoundError(`Flag "${childName}" does not depend on "${parentName}"`)
    const updated = { ...child, dependencies: child.dependencies.filter(d => d.feature !== parentName) }
    tx.put('flags', childName, updated)
    tx.appendEvent(events.dependencyRemoved(updated, dependency))
  }

  /** Removes every dependency of the flag; records an event only when there were some. */
  async removeDependencies(projectId: string, childName: string, caller: Caller) {
    await this.store.transact(actorOf(caller), tx => {
      const child = flagInProject(tx, projectId, childName)
      if (child.dependencies.length === 0) return
      const updated = { ...child, dependencies: [] }
      tx.put('flags', childName, updated)
      tx.appendEvent(events.dependenciesRemoved(updated, child.dependencies))
    })
  }

  async complete(
    projectId: string,
    name: string,
    input: { status: 'kept' | 'discarded'; statusValue?: string },
    caller: Caller,
  ) {
    await this.store.transact(actorOf(caller), tx => {
      const flag = liveFlagInProject(tx, projectId, name)
      const completion = { status: input.status, statusValue: input.statusValue ?? null }
      const updated = withStage({ ...flag, completion }, 'completed', tx.now)
      tx.put('flags', name, updated)
      tx.appendEvent(events.flagCompleted(updated, completion, { stage: flag.lifecycle.stage }))
    })
  }

  /** Leaves `completed` for the stage the flag's environments show now: live, pre-live or initial. */
  async uncomplete(projectId: string, name: string, caller: Caller) {
    await this.store.transact(actorOf(caller), tx => {
      const flag = liveFlagInProject(tx, projectId, name)
      if (flag.lifecycle.stage !== 'completed') throw ValidationError.at(undefined, `Flag "${name}" is not completed`)
      const enabledIn = Object.entries(flag.environments)
        .filter(([, entry]) => entry.enabled)
        .map(([environment]) => environment)
      const stage = enabledIn.some(environment => tx.get('environments', environment)?.type === 'production')
        ? 'live'
        : enabledIn.length > 0
          ? 'pre-live'
          : 'initial'
      const updated = withStage({ ...flag, completion: null }, stage, tx.now)
      tx.put('flags', name, updated)
      tx.appendEvent(events.flagUncompleted(updated, { stage }, flag.completion))
    })
  }
}
