/**
 * Clients that load the server from outside the benchmark's own thread, and the bare server the
 * benchmarks compare the service with:
 * - SSE streams held on raw sockets for the streaming scenarios, in the benchmark's process or in a
 *   holder process of their own at the lowest priority (`clients.ts streams <base URL> <client
 *   token> <count>`, see heldElsewhere);
 * - the page clients of bench/search.ts, run in a Worker on this file;
 * - a bare Bun server returning fixed, pre-serialised bytes (`clients.ts bare <port> <file>`), the
 *   ceiling for a response in the admin, client and metrics scenarios;
 * - SDKs reporting 48 hours of metrics in process, for the usage history's memory (usageMemory).
 */
import { join } from 'node:path'
import { random } from './data'

export const MARKER = 'event: unleash-updated'

export interface Held {
  /** `unleash-updated` messages read so far. */
  updates: number
  connected: boolean
  tail: string
}

/** N SSE streams on raw sockets; `onUpdate(index, count)` when stream `index` reads its count-th update. */
export async function holdStreams(
  base: string,
  secret: string,
  count: number,
  onUpdate: (index: number, updates: number) => void,
) {
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
            open: socket => void socket.write(request),
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
        }).then(socket => sockets.push(socket)),
      )
    }
    await Promise.all(opening)
  }
  await until(() => held.every(state => state.connected), 120_000, 'streams connected')
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
 * `count` idle streams held by holdStreamsProcess (below) at the lowest priority: the SDKs behind idle
 * streams are on other machines, and their reading of heartbeats must not take the cores the
 * server and wrk are measured on.
 */
export async function heldElsewhere(base: string, secret: string, count: number): Promise<{ close(): Promise<void> }> {
  const holder = Bun.spawn(
    ['nice', '-n', '19', process.execPath, join(import.meta.dir, 'clients.ts'), 'streams', base, secret, String(count)],
    { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' },
  )
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

/**
 * Load for bench/search.ts, in its own thread so that receiving the big pages does not delay the
 * thread that times `/health`: `clients` loops, each fetching `limit=1000` pages of the event
 * search at random deep offsets (half of the whole log, half of a two-type filter) until told to
 * stop, then posting how many pages were read and their bytes.
 */
declare const self: Worker

interface Start {
  base: string
  clients: number
  events: number
  headers: Record<string, string>
}

let running = true
function pageClients() {
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
}

/**
 * Holds idle SSE streams in a process of its own, started at the lowest priority (`nice -n 19`):
 * in production the SDKs behind idle streams run on other machines, and here their reading of
 * heartbeats would otherwise take the same two cores as the server and wrk, so that a slower
 * /health with streams open measured the clients as much as the server. Prints `connected <count>`
 * once every stream has its hydration, and closes them all when its standard input ends (the
 * benchmark kills it, or closes the pipe).
 */
async function holdStreamsProcess([base, secret, count]: string[]) {
  const streams = await holdStreams(base!, secret!, Number(count), () => {})
  console.log(`connected ${count}`)
  for await (const _ of Bun.stdin.stream()) {
    // Nothing is sent; the loop ends when the pipe closes.
  }
  streams.close()
  process.exit(0)
}

/** The bare Bun server: every request answered with the bytes of `file`. */
async function bareServer([port, file]: string[]) {
  const body = await Bun.file(file!).bytes()
  const headers = { 'content-type': 'application/json' }
  Bun.serve({
    port: Number(port),
    hostname: '127.0.0.1',
    fetch: () => new Response(body, { headers }),
  })
  console.log('ready')
}

/**
 * The usage history's memory, run by hand (npx bun bench/run.ts usage-memory [--flags 1000]
 * [--environments 3] [--apps 20] [--hours 48]): in this process, a data directory of `flags` flags,
 * then for each of `hours` hours every application reports every flag once in every environment
 * (through MetricsService.report, on an injected clock) and the flush commits the hour. Prints
 * the rows held and the RSS (after a full collection) before and after, and the state file's size
 * after a checkpoint.
 */
export async function usageMemory() {
  const { parseArgs } = await import('node:util')
  const { statSync } = await import('node:fs')
  const { seedDataDir } = await import('./data')
  const { tempDataDir, removeDir, fmt } = await import('./lib')
  const { openStore, createServices, STATE_FILE } = await import('../src/services')
  const { values } = parseArgs({
    options: {
      flags: { type: 'string', default: '1000' },
      environments: { type: 'string', default: '3' },
      apps: { type: 'string', default: '20' },
      hours: { type: 'string', default: '48' },
    },
  })
  const [FLAGS, ENVS, APPS, HOURS] = [values.flags, values.environments, values.apps, values.hours].map(Number)
  const environments = Array.from({ length: ENVS }, (_, i) => `env-${i}`)
  const dir = tempDataDir('bench-usage-')
  const rss = () => {
    Bun.gc(true)
    return process.memoryUsage().rss / 2 ** 20
  }
  try {
    seedDataDir(dir, { events: 1, flags: FLAGS, environments })
    let now = Date.UTC(2026, 0, 1)
    const store = await openStore(dir, { sync: false })
    const services = createServices(store, { metricsFlushMs: 3_600_000, metricsClock: () => new Date(now) })
    const before = rss()
    const toggles: Record<string, { yes: number; no: number; variants: Record<string, number> }> = {}
    for (let f = 0; f < FLAGS; f++) toggles[`flag-${f}`] = { yes: 3, no: 1, variants: {} }
    const started = performance.now()
    for (let hour = 0; hour < HOURS; hour++) {
      now = Date.UTC(2026, 0, 1) + hour * 3_600_000
      for (const environment of environments)
        for (let a = 0; a < APPS; a++)
          services.metrics.report(
            { projects: ['*'], environment },
            { appName: `app-${a}`, instanceId: 'i-1', bucket: { start: 0, stop: 0, toggles } },
            null,
          )
      await services.metrics.flush()
    }
    const seconds = (performance.now() - started) / 1000
    const after = rss()
    const { usageRows } = services.metrics.sizes
    await store.close()
    const stateMiB = statSync(join(dir, STATE_FILE)).size / 2 ** 20
    console.log(
      `${FLAGS} flags × ${ENVS} environments × ${APPS} applications × ${HOURS} hours reported ` +
        `(${FLAGS * ENVS * APPS * HOURS} rows offered) in ${fmt(seconds)} s`,
    )
    console.log(`rows held: ${usageRows}; RSS ${fmt(before, 0)} MiB before, ${fmt(after, 0)} MiB after`)
    console.log(`state.json after the last checkpoint: ${fmt(stateMiB)} MiB`)
  } finally {
    removeDir(dir)
  }
}

if (!Bun.isMainThread) pageClients()
else if (import.meta.main) {
  const [role, ...args] = process.argv.slice(2)
  if (role === 'streams') await holdStreamsProcess(args)
  else if (role === 'bare') await bareServer(args)
  else throw new Error('usage: bun bench/clients.ts streams <base URL> <client token> <count> | bare <port> <file>')
}
