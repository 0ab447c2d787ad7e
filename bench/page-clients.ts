/**
 * Load for bench/search.ts, in its own thread so that receiving the big pages does not delay the
 * thread that times `/health`: `clients` loops, each fetching `limit=1000` pages of the event
 * search at random deep offsets (half of the whole log, half of a two-type filter) until told to
 * stop, then posting how many pages were read and their bytes.
 */
import { random } from './lib'

declare const self: Worker

interface Start {
  base: string
  clients: number
  events: number
  headers: Record<string, string>
}

let running = true
self.onmessage = async (message: MessageEvent<Start | 'stop'>) => {
  if (message.data === 'stop') {
    running = false
    return
  }
  const { base, clients, events, headers } = message.data
  let pages = 0
  let bytes = 0
  let failures = 0
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      const rand = random(client + 1)
      for (let n = 0; running; n++) {
        // Deep: the last tenth of each list, 1,000 events before its end at most.
        const filtered = n % 2 === 1
        const span = filtered ? Math.floor(events * 0.4) : events
        const offset = Math.floor(span * (0.9 + rand() * 0.1)) - 1000
        const query = `${filtered ? 'type=IS_ANY_OF:feature-tagged,feature-created&' : ''}offset=${Math.max(0, offset)}&limit=1000`
        const response = await fetch(`${base}/api/admin/search/events?${query}`, { headers })
        const body = await response.arrayBuffer()
        if (response.ok) pages++
        else failures++
        bytes += body.byteLength
      }
    }),
  )
  self.postMessage({ pages, bytes, failures })
}
