import type { EventRecord } from '../../../storage/records'

/**
 * The text `query` is matched against: data, preData and tags as JSON, lower-cased. The three are
 * joined by newlines, which JSON text never holds, so a needle with a newline matches nothing.
 */
export function searchableText(event: EventRecord): string {
  return `${JSON.stringify(event.data)}\n${JSON.stringify(event.preData)}\n${JSON.stringify(event.tags)}`.toLowerCase()
}
