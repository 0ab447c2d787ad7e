/**
 * Clients that load the server from outside the benchmark's own thread, and the servers the
 * benchmarks compare the service with:
 * - SSE streams held on raw sockets for the streaming scenarios, in the benchmark's process or in a
 *   holder process of their own at the lowest priority (`clients.ts streams <base URL> <client
 *   token> <count>`, see heldElsewhere);
 * - the page clients of bench/search.ts, run in a Worker on this file;
 * - a bare Bun server returning fixed, pre-serialised bytes (`clients.ts bare <port> <file>`, see
 *   bareServer), the ceiling for a response in the admin, client and metrics scenarios;
 * - the official SDK (`unleash-client`) in this process, and Unleash 8.2 itself (the postgres scenario).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { random } from './data'
import { api, freePort } from './lib'

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

/** The bare Bun server answering every request with `bytes`; `path` is added to its URL. */
export async function bareServer(bytes: Uint8Array | string, path = '') {
  const dir = mkdtempSync(join(tmpdir(), 'bare-'))
  writeFileSync(join(dir, 'body'), bytes)
  const port = freePort()
  const child = Bun.spawn(
    [process.execPath, join(import.meta.dir, 'clients.ts'), 'bare', String(port), join(dir, 'body')],
    {
      stdout: 'pipe',
    },
  )
  await child.stdout.getReader().read()
  return {
    url: `http://127.0.0.1:${port}${path}`,
    pid: child.pid,
    async stop() {
      child.kill()
      await child.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The official SDK for `secret`, polling every `refreshInterval` ms or streaming; resolves once synchronised. */
export async function officialSdk(
  base: string,
  secret: string,
  mode: 'polling' | 'streaming',
  refreshInterval?: number,
) {
  const client = new Unleash({
    url: `${base}/api`,
    appName: `bench-${mode}`,
    customHeaders: { Authorization: secret },
    disableMetrics: true,
    refreshInterval,
    storageProvider: new InMemStorageProvider(),
    ...(mode === 'streaming' ? { experimentalMode: { type: 'streaming' } as any } : {}),
  })
  await new Promise(resolve => client.once('synchronized', resolve))
  return client
}

/** Resolves with the time (performance.now()) the SDK's copy holds `flag` as `enabled`. */
export function holds(client: Unleash, flag: string, enabled: boolean) {
  return new Promise<number>(resolve => {
    const repository = (client as any).repository
    const check = () => {
      if (repository.getToggle(flag)?.enabled === enabled) {
        repository.off('changed', check)
        resolve(performance.now())
      }
    }
    repository.on('changed', check)
    check()
  })
}

/**
 * Sequential toggles of `flag` in `environment` through `writer`'s admin API, starting from
 * `enabled`; after each answer `reader`'s /api/client/features is polled (with `headers` and the
 * previous ETag) until a 200 holds the change, visible once its body has arrived. The times from
 * each write's answer and from its sending, and the polls each took.
 */
export async function writeToVisible(o: {
  writer: string
  reader: string
  headers: Record<string, string>
  flag: string
  environment: string
  writes: number
  enabled: boolean
  etag?: string
  secret?: string
}) {
  const times = { fromAnswer: [] as number[], fromSend: [] as number[], polls: [] as number[] }
  let [enabled, etag] = [o.enabled, o.etag ?? '']
  for (let i = 0; i < o.writes; i++) {
    enabled = !enabled
    const path = `/api/admin/projects/default/features/${o.flag}/environments/${o.environment}/${enabled ? 'on' : 'off'}`
    const sent = performance.now()
    await api(o.writer, 'POST', path, undefined, o.secret)
    const answered = performance.now()
    for (let polls = 1; ; polls++) {
      if (performance.now() - answered > 30_000) throw new Error(`write ${i} not visible within 30 s`)
      const headers = { ...o.headers, ...(etag ? { 'if-none-match': etag } : {}) }
      const response = await fetch(`${o.reader}/api/client/features`, { headers })
      const body = await response.arrayBuffer()
      if (response.status === 304) continue
      if (response.status !== 200) throw new Error(`client features answered ${response.status}`)
      // Checking the answer is the benchmark's own work, not timed.
      const visible = performance.now()
      etag = response.headers.get('etag') ?? ''
      const seen = JSON.parse(new TextDecoder().decode(body)) as { features: { name: string; enabled: boolean }[] }
      if (seen.features.find(f => f.name === o.flag)?.enabled !== enabled) continue
      times.fromAnswer.push(visible - answered)
      times.fromSend.push(visible - sent)
      times.polls.push(polls)
      break
    }
  }
  return times
}

/**
 * Unleash 8.2 with Node, from `dir` (where `npm install unleash-server@8.2.0` was run), on the
 * PostgreSQL at `pgPort`, database `database`, with `secret` as its admin token. Its SDK and token
 * rate limits (20,000 a minute by default) are raised: they would cap the load tool, not the server.
 */
export async function unleashServer(dir: string, pgPort: number, database: string, secret: string) {
  writeFileSync(
    join(dir, 'bench-start.mjs'),
    `import { start } from 'unleash-server'
await start({
  db: { host: '127.0.0.1', port: Number(process.env.PGPORT), user: 'postgres', password: '', database: process.env.PGDATABASE, ssl: false },
  server: { port: Number(process.env.PORT), host: '127.0.0.1' },
  authentication: { initApiTokens: [{ environment: '*', projects: ['*'], secret: ${JSON.stringify(secret)}, type: 'admin', tokenName: 'bench-admin' }] },
  versionCheck: { enable: false },
  telemetry: false,
})
`,
  )
  const port = freePort()
  const limits = { SDK_API_RATE_LIMIT_PER_MINUTE: '100000000', TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: '100000000' }
  const child = Bun.spawn(['node', 'bench-start.mjs'], {
    cwd: dir,
    env: {
      ...process.env,
      PGPORT: String(pgPort),
      PGDATABASE: database,
      PORT: String(port),
      LOG_LEVEL: 'error',
      SEND_TELEMETRY: 'false',
      ...limits,
    },
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`Unleash exited with ${child.exitCode}`)
    if (i > 1200) throw new Error('Unleash did not answer within 120 s')
    const answer = await fetch(`${base}/api/admin/projects`, { headers: { authorization: secret } }).catch(() => null)
    if (answer?.ok) break
    await Bun.sleep(100)
  }
  return { base, pid: child.pid, stop: async () => (child.kill('SIGTERM'), await child.exited) }
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
async function serveBare([port, file]: string[]) {
  const body = await Bun.file(file!).bytes()
  const headers = { 'content-type': 'application/json' }
  Bun.serve({
    port: Number(port),
    hostname: '127.0.0.1',
    fetch: () => new Response(body, { headers }),
  })
  console.log('ready')
}

if (!Bun.isMainThread) pageClients()
else if (import.meta.main) {
  const [role, ...args] = process.argv.slice(2)
  if (role === 'streams') await holdStreamsProcess(args)
  else if (role === 'bare') await serveBare(args)
  else throw new Error('usage: bun bench/clients.ts streams <base URL> <client token> <count> | bare <port> <file>')
}
