/**
 * SSE streams held on raw sockets for the streaming benchmark (bench/streaming.ts), in its own
 * process or in a holder process of their own (bench/stream-holder.ts).
 */
import { join } from 'node:path'

export const MARKER = 'event: unleash-updated'

export interface Held {
  /** `unleash-updated` messages read so far. */
  updates: number
  connected: boolean
  tail: string
}

/** N SSE streams on raw sockets; `onUpdate(index, count)` when stream `index` reads its count-th update. */
export async function holdStreams(base: string, secret: string, count: number, onUpdate: (index: number, updates: number) => void) {
  const url = new URL(base)
  const request = `GET /api/client/streaming HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${secret}\r\nAccept: text/event-stream\r\n\r\n`
  const held: Held[] = []
  const sockets: { end(): void }[] = []
  const batch = 200
  for (let start = 0; start < count; start += batch) {
    const opening: Promise<unknown>[] = []
    for (let index = start; index < Math.min(count, start + batch); index++) {
      const state: Held = { updates: 0, connected: false, tail: '' }
      held.push(state)
      opening.push(
        Bun.connect({
          hostname: url.hostname,
          port: Number(url.port),
          socket: {
            open: (socket) => void socket.write(request),
            data: (_socket, chunk) => {
              const text = state.tail + chunk.toString('latin1')
              if (!state.connected && text.includes('unleash-connected')) state.connected = true
              let at = text.indexOf(MARKER)
              while (at >= 0) {
                state.updates++
                onUpdate(index, state.updates)
                at = text.indexOf(MARKER, at + MARKER.length)
              }
              state.tail = text.slice(-MARKER.length)
            },
          },
        }).then((socket) => sockets.push(socket)),
      )
    }
    await Promise.all(opening)
  }
  await until(() => held.every((state) => state.connected), 120_000, 'streams connected')
  return {
    held,
    close: () => {
      for (const socket of sockets) socket.end()
    },
  }
}

export async function until(condition: () => boolean, ms: number, what: string) {
  const deadline = performance.now() + ms
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(2)
  }
}

/**
 * `count` idle streams held by bench/stream-holder.ts at the lowest priority: the SDKs behind idle
 * streams are on other machines, and their reading of heartbeats must not take the cores the
 * server and wrk are measured on.
 */
export async function heldElsewhere(base: string, secret: string, count: number): Promise<{ close(): Promise<void> }> {
  const holder = Bun.spawn(['nice', '-n', '19', process.execPath, join(import.meta.dir, 'stream-holder.ts'), base, secret, String(count)], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
  const reader = (holder.stdout as ReadableStream<Uint8Array>).getReader()
  let said = ''
  while (!said.includes('connected')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the stream holder exited before its streams connected (${await holder.exited})`)
    said += new TextDecoder().decode(value)
  }
  return {
    async close() {
      holder.stdin.end()
      await holder.exited
    },
  }
}
