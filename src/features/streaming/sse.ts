/** The bytes of Server-Sent Events the streams are sent, made once per message and shared by every stream it goes to. */
import type { DeltaEvent } from './delta'

const encoder = new TextEncoder()
export const HEARTBEAT = encoder.encode(':\n\n')
export const GO_POLLING = encoder.encode('event: fetch-mode\ndata: polling\n\n')

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // nginx buffers proxied answers unless told not to, which would hold events back.
  'x-accel-buffering': 'no',
}

/**
 * OFREP's change notification (ADR-0008, `refetchEvaluation`): the web provider refetches its bulk
 * evaluation, which answers 200 only if what the context sees changed (its ETag names the compiled
 * flags). It carries no flag, so the channel that receives it reveals only that something changed.
 */
export function refetch(revision: number): Uint8Array {
  return encoder.encode(`id: ${revision}\ndata: {"type":"refetchEvaluation","etag":"${revision}"}\n\n`)
}

export function message(
  event: 'unleash-connected' | 'unleash-updated',
  revision: number,
  events: readonly DeltaEvent[],
): Uint8Array {
  // JSON.stringify writes no line breaks, so the data fits one `data:` line.
  return encoder.encode(`event: ${event}\nid: ${revision}\ndata: ${JSON.stringify({ events })}\n\n`)
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
