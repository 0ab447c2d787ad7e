/**
 * Bulk changes to the flags of a project: archive, delete, mark stale, tag. Each is one write: every
 * named flag is checked in request order first (the first problem answers and nothing changes), then
 * the single operations' own functions make the changes and record their events, so a bulk change
 * writes exactly the events its single operations would.
 */
import type { Store, Tx } from '../../storage/store'
import { projectNotFound } from '../not-found'
import { actorOf, callerSeesProject, type Caller } from '../tokens/permissions'
import type { TagRecord } from '../../storage/records'
import { ValidationError } from '../../errors'
import { archiveFlag, changeMetadata, deleteArchivedFlag, flagInProject } from './flag-rules'
import { metadataOf } from './flag-view'
import type { FlagRecord } from './flags.records'
import { checkTag, flagByName, hasTag, tagFlag, untagFlag, type TagInput } from './relations.service'

export interface TagChanges {
  addedTags: TagInput[]
  removedTags: TagInput[]
}

/** The checked tags of a request; `path` points at the object holding addedTags and removedTags. */
function checkTagChanges(changes: TagChanges, path: string): { added: TagRecord[]; removed: TagRecord[] } {
  return {
    added: changes.addedTags.map((tag, index) => checkTag(tag, `${path}/addedTags/${index}`)),
    removed: changes.removedTags.map((tag, index) => checkTag(tag, `${path}/removedTags/${index}`, 'value', 'remove')),
  }
}

/** Additions first, then removals, as Unleash applies them; a tag already there (or already gone) is left alone. */
function applyTagChanges(
  tx: Tx,
  flag: FlagRecord,
  changes: { added: TagRecord[]; removed: TagRecord[] },
  path: string,
): FlagRecord {
  let current = flag
  changes.added.forEach((tag, index) => {
    if (!hasTag(current, tag)) current = tagFlag(tx, current, tag, `${path}/addedTags/${index}`)
  })
  for (const tag of changes.removed) if (hasTag(current, tag)) current = untagFlag(tx, current, tag)
  return current
}

export class FlagBulkService {
  constructor(private readonly store: Pick<Store, 'transact'>) {}

  /**
   * The project's flags named, each once, in request order, each checked by `check` as it is found:
   * the first name that is unknown (or of another project: 404) or fails the check answers.
   */
  private flagsOf(
    tx: Tx,
    projectId: string,
    names: readonly string[],
    caller: Caller,
    check: (flag: FlagRecord) => void = () => {},
  ): FlagRecord[] {
    if (!tx.get('projects', projectId) || !callerSeesProject(caller, projectId)) throw projectNotFound(projectId)
    return [...new Set(names)].map(name => {
      const flag = flagInProject(tx, projectId, name)
      check(flag)
      return flag
    })
  }

  async archive(projectId: string, names: string[], caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const flags = this.flagsOf(tx, projectId, names, caller, flag => {
        if (flag.archived) throw ValidationError.at(undefined, `Flag "${flag.name}" is already archived`)
      })
      // Children before parents: a parent archived with its children is no longer a parent of live flags.
      const childrenFirst = [...flags].sort(
        (a, b) => Number(b.dependencies.length > 0) - Number(a.dependencies.length > 0),
      )
      for (const flag of childrenFirst) archiveFlag(tx, tx.get('flags', flag.name)!)
    })
  }

  async delete(projectId: string, names: string[], caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const flags = this.flagsOf(tx, projectId, names, caller, flag => {
        if (!flag.archived)
          throw ValidationError.at(undefined, `Flag "${flag.name}" is not archived; archive it before deleting it`)
      })
      // Read again: deleting a parent rewrites its children's dependencies.
      for (const flag of flags) deleteArchivedFlag(tx, tx.get('flags', flag.name)!)
    })
  }

  async setStale(projectId: string, names: string[], stale: boolean, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      for (const flag of this.flagsOf(tx, projectId, names, caller))
        changeMetadata(tx, flag, { ...metadataOf(flag), stale })
    })
  }

  /** updateTags: one flag's tags, answered with the tags it has afterwards. */
  async updateTags(name: string, changes: TagChanges, caller: Caller): Promise<TagRecord[]> {
    const checked = checkTagChanges(changes, '')
    return this.store.transact(actorOf(caller), tx => {
      const updated = applyTagChanges(tx, flagByName(tx, name), checked, '')
      return updated.tags.map(tag => ({ type: tag.type, value: tag.value }))
    })
  }

  /** addTagToFeatures: the same changes to several flags of a project. */
  async tagFlags(projectId: string, names: string[], changes: TagChanges, caller: Caller): Promise<void> {
    const checked = checkTagChanges(changes, '/tags')
    await this.store.transact(actorOf(caller), tx => {
      for (const flag of this.flagsOf(tx, projectId, names, caller)) applyTagChanges(tx, flag, checked, '/tags')
    })
  }
}
