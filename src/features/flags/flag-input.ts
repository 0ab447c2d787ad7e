/** The checks of a flag's own properties as a create, PUT or PATCH gives them. */
import type { Static } from '@sinclair/typebox'
import { ValidationError } from '../../errors'
import type { TagRecord } from '../../storage/records'
import { checkLimit } from '../limits'
import { FLAG_TYPES, type FlagMetadata } from './flags.records'
import type { CreateFeature, UpdateFeature } from './flags.model'
import { checkTag } from './relations.service'

export const DESCRIPTION_MAX_LENGTH = 2000

export type CreateFlagInput = Static<typeof CreateFeature>
export type UpdateFlagInput = Static<typeof UpdateFeature>

/** The tags of a create-flag body, checked as POST .../tags checks one; duplicates count once. */
export function tagsOf(inputs: readonly { type?: string; value: string }[]): TagRecord[] {
  const tags: TagRecord[] = []
  inputs.forEach((input, index) => {
    const tag = checkTag(input, `/tags/${index}`)
    if (!tags.some(t => t.type === tag.type && t.value === tag.value)) tags.push(tag)
  })
  checkLimit('tagsPerFlag', tags.length, '/tags')
  return tags
}

export function checkType(type: string, path = '/type') {
  if (!(FLAG_TYPES as readonly string[]).includes(type))
    throw ValidationError.at(path, `Flag type must be one of ${FLAG_TYPES.join(', ')}, got ${JSON.stringify(type)}`)
}

export function checkDescription(description: unknown, path = '/description') {
  if (description === null) return
  if (typeof description !== 'string') throw ValidationError.at(path, 'description must be a string or null')
  if (description.length > DESCRIPTION_MAX_LENGTH)
    throw ValidationError.at(path, `description must be at most ${DESCRIPTION_MAX_LENGTH} characters`)
}

/**
 * Checks a patched or replaced metadata document against the stored flag: every property present
 * with the right type, read-only properties unchanged.
 */
export function checkMetadata(next: Record<string, unknown>, current: FlagMetadata): FlagMetadata {
  const keys = Object.keys(next)
  const unknown = keys.filter(key => !(key in current))
  if (unknown.length > 0) throw ValidationError.at(undefined, `Unknown flag properties: ${unknown.join(', ')}`)
  const description = next.description === undefined ? null : next.description
  checkDescription(description)
  if (typeof next.type !== 'string') throw ValidationError.at('/type', 'type must be a string')
  checkType(next.type)
  for (const key of ['stale', 'impressionData', 'archived'] as const) {
    if (typeof next[key] !== 'boolean')
      throw ValidationError.at(`/${key}`, `${key} must be true or false, got ${JSON.stringify(next[key]) ?? 'nothing'}`)
  }
  for (const key of ['name', 'project', 'createdAt'] as const) {
    if (next[key] !== current[key])
      throw ValidationError.at(`/${key}`, `${key} is read-only and cannot be changed here`)
  }
  return {
    ...current,
    description: description as string | null,
    type: next.type,
    stale: next.stale as boolean,
    impressionData: next.impressionData as boolean,
    archived: next.archived as boolean,
  }
}

/** A list filter `type:value` as the tag it asks for. */
export function tagFilter(filter: string): { type: string; value: string } {
  const colon = filter.indexOf(':')
  if (colon <= 0) throw ValidationError.at('/tag', `tag must look like type:value, got ${JSON.stringify(filter)}`)
  return { type: filter.slice(0, colon), value: filter.slice(colon + 1) }
}
