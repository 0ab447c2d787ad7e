/**
 * What export and import do with tag types and context fields, as Unleash does. The export lists
 * the tag types its tags use and the context fields its strategies and variants name, as defined
 * here. The import creates, through the routes' own writes (with their events), the tag types its
 * tags need and the context fields it brings that are missing here; a field we have must already
 * hold every legal value the imported one lists, else the import is refused (Unleash's
 * isValidField). Fields we have are never changed by an import.
 */
import type { Static } from '@sinclair/typebox'
import type { StateReader } from '../../storage/store'
import type { TagRecord } from '../../storage/records'
import { DEFAULT_TAG_TYPE } from '../tag-types/tag-types.records'
import type { ImportData } from './export-import.model'

type Data = Static<typeof ImportData>
export type TagTypeItem = Data['tagTypes'][number]
export type ContextFieldItem = NonNullable<Data['contextFields']>[number]

/** An item of the import's body with its index there, so that a refusal names its path. */
export interface Indexed<T> {
  item: T
  index: number
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The tag types the exported tags use, as defined here, by name (Unleash's tagTypes). */
export function exportedTagTypes(reader: StateReader, tags: readonly TagRecord[]) {
  return [...new Set(tags.map(tag => tag.type))]
    .sort(byName)
    .map(name => reader.get('tagTypes', name))
    .filter(record => record !== undefined)
    .map(({ name, description, icon, color }) => ({ name, description, icon, color }))
}

/**
 * The context fields the export's constraints, stickiness and variant overrides name, as defined
 * here, by name; names no field is defined for (`default`, a field deleted since) are not listed.
 */
export function exportedContextFields(reader: StateReader, contextNames: ReadonlySet<string>) {
  return [...contextNames]
    .sort(byName)
    .map(name => reader.get('contextFields', name))
    .filter(record => record !== undefined)
    .map(({ name, description, stickiness, sortOrder, legalValues }) => ({
      name,
      description,
      stickiness,
      sortOrder,
      legalValues: legalValues.map(legalValue => ({ ...legalValue })),
    }))
}

/**
 * The imported context fields that clash with ours: a field of the same name exists here and lacks
 * one of the imported legal values (Unleash's rule, so a field here without legal values clashes
 * with an imported one that has some). The import refuses them.
 */
export function clashingContextFields(reader: StateReader, fields: readonly ContextFieldItem[]): string[] {
  const clashing = fields.filter(field => {
    const ours = reader.get('contextFields', field.name)
    if (!ours) return false
    const legal = new Set(ours.legalValues.map(legalValue => legalValue.value))
    return (field.legalValues ?? []).some(legalValue => !legal.has(legalValue.value))
  })
  return [...new Set(clashing.map(field => field.name))]
}

/** The last of the items with each name, in the order the names first appear (a Map's, as Unleash dedupes). */
function lastOfEachName<T extends { name: string }>(items: readonly Indexed<T>[]): Indexed<T>[] {
  return [...new Map(items.map(entry => [entry.item.name, entry])).values()]
}

/**
 * The tag types the import creates: those of `tagTypes` that the imported flags' tags use and that
 * do not exist here. Without `featureTags` the tags are left alone, so none is created (Unleash).
 */
export function tagTypesToCreate(
  reader: StateReader,
  data: Data,
  importing: ReadonlySet<string>,
): Indexed<TagTypeItem>[] {
  const used = new Set(
    (data.featureTags ?? []).filter(tag => importing.has(tag.featureName)).map(tag => tag.tagType ?? DEFAULT_TAG_TYPE),
  )
  const listed = data.tagTypes.map((item, index) => ({ item, index }))
  return lastOfEachName(listed.filter(({ item }) => used.has(item.name) && !reader.get('tagTypes', item.name)))
}

/** The context fields the import creates: those it brings that do not exist here (Unleash creates them all, used or not). */
export function contextFieldsToCreate(reader: StateReader, data: Data): Indexed<ContextFieldItem>[] {
  const listed = (data.contextFields ?? []).map((item, index) => ({ item, index }))
  return lastOfEachName(listed.filter(({ item }) => !reader.get('contextFields', item.name)))
}
