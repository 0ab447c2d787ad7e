/**
 * Server-Sent Events framing (the WHATWG HTML standard, "Server-sent events"), the one place a
 * stream's bytes are put together: the client API's and the console's streams (features/streaming)
 * and OFREP's notices (features/ofrep) all frame their messages here.
 */
const encoder = new TextEncoder()

/** A comment: a heartbeat, or a first byte that sends the headers at once. Ignored by every reader. */
export const COMMENT = encoder.encode(':\n\n')

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // nginx buffers proxied answers unless told not to, which would hold events back.
  'x-accel-buffering': 'no',
}

/** One message's fields; `data` is written as one `data:` line, so it holds no line break (JSON.stringify writes none). */
export interface SseMessage {
  /** The event type (an EventSource's listener name); none: `message`. */
  event?: string
  /** The id the client names in Last-Event-ID when it reconnects. */
  id?: number | string
  /** None: the message only sets the id the client reconnects with, and no event is dispatched. */
  data?: string
}

/** A message as the bytes a stream is sent. */
export function frame(message: SseMessage): Uint8Array<ArrayBuffer> {
  return encoder.encode(frameText(message))
}

/** A message as text, for streams that send several messages in one write. */
export function frameText({ event, id, data }: SseMessage): string {
  let text = ''
  if (event !== undefined) text += `event: ${event}\n`
  if (id !== undefined) text += `id: ${id}\n`
  if (data !== undefined) text += `data: ${data}\n`
  return `${text}\n`
}
