import type { EventRecord } from '../../../storage/records'

/**
 * The text `query` is matched against: data, preData and tags as JSON, lower-cased. The three are
 * joined by newlines, which JSON text never holds, so a needle with a newline matches nothing.
 */
export function searchableText(event: EventRecord): string {
  return `${JSON.stringify(event.data)}\n${JSON.stringify(event.preData)}\n${JSON.stringify(event.tags)}`.toLowerCase()
}

/** The fields of an event before its data: what columns and filters read. */
export type EventHead = Omit<EventRecord, 'data' | 'preData' | 'tags'>

const DATA = ',"data":'
const PRE_DATA = ',"preData":'
const TAGS = ',"tags":'
const HEAD_FIELDS = 8

/**
 * An event's head and searchable text taken from its line without parsing data, preData and tags:
 * the store writes every record with the same eleven keys in the same order (storage/tx.ts), the
 * eight scalar ones first, and JSON.stringify writes a nested value as it writes it alone, so the
 * three texts are in the line as `searchableText` makes them (a line of the log without its commit
 * member: `withoutCommit` in storage/event-log.ts). Null for a line not laid out so, or
 * where a key's bytes repeat inside the texts (the split would be ambiguous): parse it then.
 */
export function lineParts(line: string): { head: EventHead; text: string } | null {
  if (!line.startsWith('{"id":') || line.charCodeAt(line.length - 1) !== 0x7d) return null
  // Every field before data is a scalar, so its first `,"data":` is the key's.
  const data = line.indexOf(DATA)
  const preData = data === -1 ? -1 : line.indexOf(PRE_DATA, data)
  const tags = preData === -1 ? -1 : line.indexOf(TAGS, preData)
  if (tags === -1 || line.lastIndexOf(PRE_DATA) !== preData || line.lastIndexOf(TAGS) !== tags) return null
  const head = JSON.parse(line.slice(0, data) + '}') as EventHead
  let fields = 0
  for (const _ in head) fields++
  if (fields !== HEAD_FIELDS) return null
  const text = `${line.slice(data + DATA.length, preData)}\n${line.slice(preData + PRE_DATA.length, tags)}\n${line.slice(tags + TAGS.length, line.length - 1)}`
  return { head, text: text.toLowerCase() }
}
