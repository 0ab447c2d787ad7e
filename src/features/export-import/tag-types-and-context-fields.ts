/**
 * What export and import do with tag types and context fields, kept apart because those features
 * are being added on another branch: until they are wired in here, the export derives tag types
 * from the flags' tags and lists no context fields, and the import creates neither (it checks
 * nothing about them either). When the tagTypes and contextFields collections exist, these four
 * functions are the only ones to change: read them from `reader`, and create the missing ones
 * inside the import's transaction through their services' transaction functions, which record
 * their events.
 */
import type { StateReader, Tx } from '../../storage/store'
import type { TagRecord } from '../../storage/records'

export interface TagTypeItem {
  name: string
  description?: string | null
  icon?: string | null
}

export interface ContextFieldItem {
  name: string
  description?: string | null
  stickiness?: boolean
  sortOrder?: number
  legalValues?: { value: string; description?: string }[]
  project?: string | null
}

/** Unleash's one built-in tag type, as its export describes it. */
const SIMPLE: TagTypeItem = { name: 'simple', description: 'Used to simplify filtering of features', icon: '#' }

/** The tag types the exported tags use, sorted by name. */
export function exportedTagTypes(_reader: StateReader, tags: readonly TagRecord[]): TagTypeItem[] {
  const names = [...new Set(tags.map((tag) => tag.type))].sort()
  return names.map((name) => (name === SIMPLE.name ? { ...SIMPLE } : { name, description: '', icon: null }))
}

/** The context fields the exported strategies and variants use: none until context fields exist here. */
export function exportedContextFields(_reader: StateReader, _contextNames: ReadonlySet<string>): ContextFieldItem[] {
  return []
}

/**
 * The imported context fields that clash with ours (same name, other legal values): the import
 * refuses them, as Unleash does. None until context fields exist here.
 */
export function clashingContextFields(_reader: StateReader, _fields: readonly ContextFieldItem[]): string[] {
  return []
}

/**
 * Creates the imported tag types and context fields that do not exist yet. Until those features
 * exist here, unknown and built-in ones alike are ignored: a tag's type is stored as given.
 */
export function importTagTypesAndContextFields(_tx: Tx, _tagTypes: readonly TagTypeItem[], _contextFields: readonly ContextFieldItem[]): void {}
