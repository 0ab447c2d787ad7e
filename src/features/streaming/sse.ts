/** The client API's Server-Sent Events, made once per message and shared by every stream it goes to (framing: http/sse.ts). */
import { frame } from '../../http/sse'
import type { DeltaEvent } from './delta'

export const GO_POLLING = frame({ event: 'fetch-mode', data: 'polling' })

export function message(
  event: 'unleash-connected' | 'unleash-updated',
  revision: number,
  events: readonly DeltaEvent[],
): Uint8Array {
  return frame({ event, id: revision, data: JSON.stringify({ events }) })
}

/** The revision an If-None-Match or Last-Event-ID names: `"12"`, `W/"12"` or `12`; null for anything else. */
export function revisionOf(header: string | null): number | null {
  if (header === null) return null
  for (const part of header.split(',')) {
    const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(part)
    if (match) return Number(match[1])
  }
  return null
}
