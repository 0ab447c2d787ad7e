/**
 * Tag types (Unleash's /api/admin/tag-types): the kinds of tag flags may carry. A tag's type must
 * exist when the tag is added; deleting a type takes its tags off every flag, as Unleash's foreign
 * key cascade does.
 */
import type { Static } from '@sinclair/typebox'
import { events } from '../../domain/events'
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { StateReader, Store, Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import { nameProblem } from '../names'
import { actorOf, type Caller } from '../tokens/permissions'
import type { CreateTagType, TagType, UpdateTagType } from './tag-types.model'
import type { TagTypeRecord } from './tag-types.records'

export type TagTypeView = Static<typeof TagType>
export type CreateTagTypeInput = Static<typeof CreateTagType>
export type UpdateTagTypeInput = Static<typeof UpdateTagType>

/**
 * Throws a 400 at `path` unless a tag type `type` exists. Every way a tag reaches a flag calls it
 * inside its write, so that a type deleted meanwhile is not given to a tag.
 */
export function checkTagType(tx: Pick<StateReader, 'get'>, type: string, path: string): void {
  if (!tx.get('tagTypes', type)) {
    throw ValidationError.at(
      path,
      `There is no tag type "${type}"; create it first (POST /api/admin/tag-types) or use one listed by GET /api/admin/tag-types`,
    )
  }
}

function viewOf(record: TagTypeRecord): TagTypeView {
  return { name: record.name, description: record.description, icon: record.icon, color: record.color }
}

function checkName(name: string): void {
  const problem = nameProblem(name, 'tag type')
  if (problem) throw ValidationError.at('/name', problem)
  if (name.length < 2 || name.length > 50)
    throw ValidationError.at('/name', `A tag type name must be 2 to 50 characters long, got ${name.length}`)
}

function found(tx: Pick<StateReader, 'get'>, name: string): TagTypeRecord {
  const record = tx.get('tagTypes', name)
  if (!record) throw new NotFoundError(`No tag type named "${name}"`)
  return record
}

/**
 * The write of createTagType inside `tx`, with its tag-type-created event: the route and the
 * import (which creates the tag types its tags need) both make tag types through it. Errors name
 * fields relative to the tag type (`/name`).
 */
export function createTagTypeIn(tx: Tx, input: CreateTagTypeInput): TagTypeView {
  checkName(input.name)
  if (tx.get('tagTypes', input.name)) throw new NameExistsError(`There already is a tag type named "${input.name}"`)
  checkLimit('tagTypes', tx.values('tagTypes').length + 1, '/name')
  const record: TagTypeRecord = {
    name: input.name,
    description: input.description ?? '',
    icon: input.icon ?? null,
    color: input.color || null,
    createdAt: tx.now,
  }
  tx.put('tagTypes', record.name, record)
  tx.appendEvent(events.tagTypeCreated(viewOf(record)))
  return viewOf(record)
}

export class TagTypesService {
  constructor(private readonly store: Pick<Store, 'state' | 'reader' | 'transact'>) {}

  list(): TagTypeView[] {
    return Object.values(this.store.state.tagTypes)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map(viewOf)
  }

  get(name: string): TagTypeView {
    return viewOf(found(this.store.reader, name))
  }

  /** The checks of create without creating: name rules (400), taken (409). Answers the type as it would be. */
  validate(input: CreateTagTypeInput): TagTypeView {
    checkName(input.name)
    if (this.store.reader.get('tagTypes', input.name))
      throw new NameExistsError(`There already is a tag type named "${input.name}"`)
    return {
      name: input.name,
      description: input.description ?? '',
      icon: input.icon ?? null,
      color: input.color || null,
    }
  }

  async create(input: CreateTagTypeInput, caller: Caller): Promise<TagTypeView> {
    return this.store.transact(actorOf(caller), tx => createTagTypeIn(tx, input))
  }

  async update(name: string, input: UpdateTagTypeInput, caller: Caller): Promise<TagTypeView> {
    return this.store.transact(actorOf(caller), tx => {
      const before = found(tx, name)
      const record: TagTypeRecord = {
        ...before,
        description: input.description ?? before.description,
        icon: input.icon === undefined ? before.icon : input.icon,
        color: input.color === undefined ? before.color : input.color || null,
      }
      tx.put('tagTypes', name, record)
      tx.appendEvent(events.tagTypeUpdated(viewOf(record), viewOf(before)))
      return viewOf(record)
    })
  }

  /** Deletes the type and takes its tags off every flag, each with its feature-untagged event. */
  async delete(name: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const before = found(tx, name)
      tx.delete('tagTypes', name)
      tx.appendEvent(events.tagTypeDeleted(viewOf(before)))
      for (const flag of tx.values('flags')) {
        const removed = flag.tags.filter(tag => tag.type === name)
        if (removed.length === 0) continue
        const updated = { ...flag, tags: flag.tags.filter(tag => tag.type !== name) }
        tx.put('flags', flag.name, updated)
        for (const tag of removed) tx.appendEvent(events.flagUntagged(updated, tag))
      }
    })
  }
}
