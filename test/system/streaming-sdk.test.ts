/**
 * The official Node SDK (`unleash-client`) against the real process in its two delta modes:
 * streaming (Server-Sent Events) and polling with format delta. Client-specification files 19
 * (a hydration) and 20 (events applied one by one) are made through the admin API, the SDK reads
 * them in each mode, and every test of the files is asserted, while a raw stream checks that the
 * messages have the files' shape. Then what ends a stream: SIGTERM (the process exits while streams
 * are open, and the SDK is told to poll), the cap (the SDK switches to polling), a deleted token,
 * a connection that stalls (the server cuts it off, and the SDK resumes from its last event id).
 */
import { afterAll, afterEach, expect, test } from 'bun:test'
import net from 'node:net'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { createState, ENVIRONMENT, specs, type SpecFile } from '../client-specification'
import { adminCall, freePort, startService, waitFor, withTimeout, type RunningService } from '../helpers/processes'
import { destroySdk, eventOf } from '../helpers/sdk'
import { paths } from '../helpers/service'
import { SseReader } from '../features/streaming/sse'

const ADMIN = '*:*.streaming-test-admin-secret-0123'

/** A test's own server, for a setting the others must not have (or a test that stops it); stopped after the test. */
let service: RunningService | undefined
/**
 * One server for the tests that need no setting of their own: each makes its own project, token and flags.
 * Its settings are those of the quiet-stream and stalled-connection tests (a heartbeat past Bun's idle timeout,
 * a small unsent-bytes cap), which the others neither reach nor depend on.
 */
let shared: Promise<RunningService> | undefined
const sharedService = () =>
  (shared ??= startService(ADMIN, 'flags-stream-', {
    STREAMING_HEARTBEAT_MS: '30000',
    STREAMING_MAX_UNSENT_BYTES: '65536',
  }))
const clients: Unleash[] = []
const readers: SseReader[] = []
const relays: Relay[] = []

afterEach(async () => {
  for (const client of clients.splice(0)) destroySdk(client)
  for (const relay of relays.splice(0)) await relay.close()
  for (const reader of readers.splice(0)) await reader.cancel()
  await service?.stop()
  service = undefined
})
afterAll(async () => {
  await (await shared?.catch(() => undefined))?.stop()
})

async function admin(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await adminCall(base, ADMIN, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

const spec = (file: string): SpecFile => specs.find(entry => entry.file === file)!.spec
const MODES = { streaming: { type: 'streaming' }, 'delta polling': { type: 'polling', format: 'delta' } } as const

function sdk(base: string, secret: string, mode: keyof typeof MODES, problems: string[]): Unleash {
  const client = new Unleash({
    url: `${base}/api`,
    appName: `streaming-${mode.replace(' ', '-')}`,
    customHeaders: { Authorization: secret },
    refreshInterval: 100,
    disableMetrics: true,
    storageProvider: new InMemStorageProvider(),
    experimentalMode: MODES[mode] as any,
  })
  client.on('error', (error: Error) => problems.push(`error: ${error.message}`))
  client.on('warn', (message: unknown) => problems.push(`warn: ${String(message)}`))
  clients.push(client)
  return client
}

/** Resolves once `condition` holds, checked at each change the SDK applies. */
async function sdkSees(client: Unleash, condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the SDK did not see the change')
    await Promise.race([eventOf(client, 'changed', ms), Bun.sleep(50)])
  }
}

async function rawStream(base: string, secret: string): Promise<SseReader> {
  const response = await fetch(`${base}/api/client/streaming`, { headers: { authorization: secret } })
  expect(response.status).toBe(200)
  const reader = new SseReader(response)
  readers.push(reader)
  return reader
}

function runTests(client: Unleash, file: SpecFile, mode: string): string[] {
  const failures: string[] = []
  for (const entry of file.tests ?? []) {
    const actual = client.isEnabled(entry.toggleName, entry.context as any)
    if (actual !== entry.expectedResult) failures.push(`${mode}: ${entry.description}: isEnabled → ${actual}`)
  }
  return failures
}

/** Every key the specification's event has, our event of that type has too (nested flag and segment included). */
function sameShape(ours: any, theirs: any): boolean {
  if (theirs === null || typeof theirs !== 'object')
    return typeof ours === typeof theirs || (theirs === null && ours === null)
  if (Array.isArray(theirs)) return Array.isArray(ours)
  return Object.keys(theirs).every(key => key in ours && (key === 'strategies' || sameShape(ours[key], theirs[key])))
}

test('specification 19 (hydration) passes through the SDK in streaming and in delta polling mode', async () => {
  const { base } = await sharedService()
  const file = spec('19-delta-api-hydration.json')
  const [hydration] = file.state.events as any[]
  const refusals = await createState((method, path, body) => adminCall(base, ADMIN, method, path, body), 'spec-19', {
    ...file,
    state: { features: hydration.features, segments: hydration.segments },
  })
  expect([...refusals]).toEqual([])
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: 'spec-19',
    type: 'client',
    projects: ['spec-19'],
    environment: ENVIRONMENT,
  })
  const failures: string[] = []
  for (const mode of Object.keys(MODES) as (keyof typeof MODES)[]) {
    const problems: string[] = []
    const client = sdk(base, token.secret, mode, problems)
    await eventOf(client, 'synchronized')
    failures.push(...runTests(client, file, mode), ...problems.map(problem => `${mode}: ${problem}`))
  }
  const raw = await rawStream(base, token.secret)
  await raw.until(() => raw.messages.length === 1)
  const [ours] = JSON.parse(raw.messages[0].data).events
  expect(raw.messages[0].event).toBe('unleash-connected')
  expect(sameShape(ours, hydration)).toBe(true)
  expect(failures).toEqual([])
}, 60_000)

test('specification 20 (events) passes through the SDK in streaming and in delta polling mode, the SDKs connected before the writes', async () => {
  const { base } = await sharedService()
  const file = spec('20-delta-api-events.json')
  await admin(base, 'POST', '/api/admin/projects', { id: 'spec-20', name: 'spec-20' })
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: 'spec-20',
    type: 'client',
    projects: ['spec-20'],
    environment: ENVIRONMENT,
  })
  const problems: Record<string, string[]> = {}
  const connected: Record<string, Unleash> = {}
  for (const mode of Object.keys(MODES) as (keyof typeof MODES)[]) {
    connected[mode] = sdk(base, token.secret, mode, (problems[mode] = []))
    await eventOf(connected[mode], 'synchronized')
  }
  const raw = await rawStream(base, token.secret)
  await raw.until(() => raw.messages.length === 1)

  // The file's events, one by one, as admin writes.
  const segmentIds = new Map<number, number>()
  for (const event of file.state.events as any[]) {
    if (event.type === 'feature-updated') {
      const { name, strategies } = event.feature
      await admin(base, 'POST', '/api/admin/projects/spec-20/features', { name })
      for (const strategy of strategies) {
        await admin(base, 'POST', `${paths.flag(name, 'spec-20')}/environments/${ENVIRONMENT}/strategies`, {
          name: strategy.name,
          segments: (strategy.segments ?? []).map((id: number) => segmentIds.get(id)),
        })
      }
      if (event.feature.enabled)
        await admin(base, 'POST', `${paths.flag(name, 'spec-20')}/environments/${ENVIRONMENT}/on`)
    } else if (event.type === 'feature-removed') {
      await admin(base, 'DELETE', paths.flag(event.featureName, 'spec-20'))
    } else if (event.type === 'segment-updated') {
      const created = await admin(base, 'POST', '/api/admin/segments', {
        name: event.segment.name,
        constraints: event.segment.constraints,
      })
      segmentIds.set(event.segment.id, created.id)
    } else throw new Error(`unexpected event in the file: ${event.type}`)
  }
  const last = (file.state.events as any[]).at(-1).feature.name
  const failures: string[] = []
  for (const [mode, client] of Object.entries(connected)) {
    await sdkSees(client, () => client.isEnabled(last, { appName: 'abc' }))
    failures.push(...runTests(client, file, mode), ...problems[mode].map(problem => `${mode}: ${problem}`))
  }
  expect(failures).toEqual([])
  // The raw stream got the file's kinds of events, in its shape, each message with a growing id.
  const messages = raw.messages.slice(1)
  expect(messages.every(message => message.event === 'unleash-updated')).toBe(true)
  const ids = messages.map(message => Number(message.id))
  expect(ids).toEqual([...ids].sort((a, b) => a - b))
  expect(new Set(ids).size).toBe(ids.length)
  const ours = messages.flatMap(message => JSON.parse(message.data).events as any[])
  for (const theirs of file.state.events as any[]) {
    const sameType = ours.filter(event => event.type === theirs.type)
    expect({
      type: theirs.type,
      shaped: sameType.some(event =>
        sameShape(event, { ...theirs, ...(theirs.segment ? { segment: { ...theirs.segment, id: 0 } } : {}) }),
      ),
    }).toEqual({ type: theirs.type, shaped: true })
  }
}, 60_000)

test('SIGTERM tells open streams to poll and ends them; the process exits with streams open', async () => {
  service = await startService(ADMIN, 'flags-stream-')
  const base = service.base
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: 'sdk',
    type: 'client',
    environment: ENVIRONMENT,
  })
  const client = sdk(base, token.secret, 'streaming', [])
  await eventOf(client, 'synchronized')
  const repository = (client as any).repository
  expect(repository.getMode()).toBe('streaming')
  const switched = eventOf(repository, 'mode')
  const raw = await rawStream(base, token.secret)
  await raw.until(() => raw.messages.length === 1)
  await withTimeout(service.stop(), 10_000)
  service = undefined
  await raw.until(() => raw.ended)
  expect(raw.messages.at(-1)).toEqual({ event: 'fetch-mode', id: null, data: 'polling' })
  await switched
  expect(repository.getMode()).toBe('polling')
}, 30_000)

test('past STREAMING_MAX_STREAMS the SDK is told to poll, and still sees changes by polling', async () => {
  service = await startService(ADMIN, 'flags-stream-', { STREAMING_MAX_STREAMS: '1' })
  const base = service.base
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: 'sdk',
    type: 'client',
    environment: ENVIRONMENT,
  })
  const holder = await rawStream(base, token.secret)
  await holder.until(() => holder.messages.length === 1)
  const client = sdk(base, token.secret, 'streaming', [])
  const repository = (client as any).repository
  await eventOf(repository, 'mode')
  expect(repository.getMode()).toBe('polling')
  await admin(base, 'POST', '/api/admin/projects/default/features', { name: 'after-cap' })
  await admin(base, 'POST', '/api/admin/projects/default/features/after-cap/environments/development/on')
  await sdkSees(client, () => client.isEnabled('after-cap'))
  // A client that goes away frees its place: the server notices the closed socket.
  await holder.cancel()
  for (let attempt = 0; ; attempt++) {
    const next = await rawStream(base, token.secret)
    await next.until(() => next.messages.length === 1 || next.ended)
    if (next.messages[0]?.event === 'unleash-connected') break
    expect(attempt).toBeLessThan(50)
    await Bun.sleep(100)
  }
}, 30_000)

test('a stream whose token is deleted ends, and the SDK stops on the 401 that follows', async () => {
  const { base } = await sharedService()
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: 'doomed',
    type: 'client',
    environment: ENVIRONMENT,
  })
  const raw = await rawStream(base, token.secret)
  await raw.until(() => raw.messages.length === 1)
  await admin(base, 'DELETE', '/api/admin/api-tokens/doomed')
  await raw.until(() => raw.ended)
  const again = await fetch(`${base}/api/client/streaming`, { headers: { authorization: token.secret } })
  expect(again.status).toBe(401)
  expect(again.headers.get('content-type')).toMatch(/^application\/json/)
  await again.text()
}, 30_000)

test("a quiet stream outlives the server's idle timeout (Bun's 10 s) between heartbeats", async () => {
  const { base } = await sharedService()
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: 'quiet',
    type: 'client',
    environment: ENVIRONMENT,
  })
  const raw = await rawStream(base, token.secret)
  await raw.until(() => raw.messages.length === 1)
  await Bun.sleep(12_000)
  expect(raw.ended).toBe(false)
  await admin(base, 'POST', '/api/admin/projects/default/features', { name: 'after-quiet' })
  await raw.until(() => raw.messages.length === 2)
  expect(raw.messages[1].event).toBe('unleash-updated')
}, 30_000)

interface Relay {
  port: number
  /** Each connection made through it: its request head, and how the server's side ended (null while open). */
  connections: { head: string; serverEnd: string | null; upstream: net.Socket }[]
  /** Stops reading what the server sends, as a client on a stalled network would; `resume` reads again. */
  stall(): void
  resume(): void
  close(): Promise<void>
}

/** A TCP relay on a free loopback port to the server on `target`. */
async function relayTo(target: number): Promise<Relay> {
  const port = freePort()
  const connections: Relay['connections'] = []
  let stalled = false
  const server = net.createServer(client => {
    const upstream = net.connect(target, '127.0.0.1')
    const connection = { head: '', serverEnd: null as string | null, upstream }
    connections.push(connection)
    if (stalled) upstream.pause()
    client.on('data', chunk => {
      if (connection.head.length < 4096) connection.head += chunk.toString('latin1')
      upstream.write(chunk)
    })
    upstream.on('data', chunk => client.write(chunk))
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      connection.serverEnd ??= error.code ?? error.message
      client.destroy()
    })
    upstream.on('end', () => {
      connection.serverEnd ??= 'end'
      client.end()
    })
    client.on('error', () => upstream.destroy())
    client.on('close', () => upstream.destroy())
  })
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  const relay: Relay = {
    port,
    connections,
    stall() {
      stalled = true
      for (const connection of connections) connection.upstream.pause()
    },
    resume() {
      stalled = false
      for (const connection of connections) connection.upstream.resume()
    },
    close: () =>
      new Promise<void>(resolve => {
        for (const connection of connections) connection.upstream.destroy()
        server.close(() => resolve())
      }),
  }
  relays.push(relay)
  return relay
}

/** 250 values of 40 characters: a constraint of about 11 kB. */
const bulky = (tag: string) =>
  Array.from({ length: 250 }, (_, i) => `${tag}-user-${String(i).padStart(4, '0')}-${'x'.repeat(24)}`)

test('an SDK whose connection stalls is cut off once STREAMING_MAX_UNSENT_BYTES wait for it, and resumes from its last event id', async () => {
  const { base } = await sharedService()
  const relay = await relayTo(Number(new URL(base).port))
  const token = await admin(base, 'POST', '/api/admin/api-tokens', {
    tokenName: 'stalled',
    type: 'client',
    environment: ENVIRONMENT,
  })
  await admin(base, 'POST', '/api/admin/projects/default/features', { name: 'big' })
  // Four strategies of eight such constraints: every change of the flag sends about 360 kB.
  for (const part of ['a', 'b', 'c', 'd']) {
    const constraints = Array.from({ length: 8 }, (_, n) => ({
      contextName: 'userId',
      operator: 'IN',
      values: bulky(`${part}${n}`),
    }))
    await admin(base, 'POST', '/api/admin/projects/default/features/big/environments/development/strategies', {
      name: 'default',
      constraints,
    })
  }
  const problems: string[] = []
  const client = sdk(`http://127.0.0.1:${relay.port}`, token.secret, 'streaming', problems)
  await eventOf(client, 'synchronized')
  const bigEnabled = () => client.getFeatureToggleDefinition('big')?.enabled
  expect(bigEnabled()).toBe(false)

  relay.stall()
  // About 20 MB sent while it reads nothing: more than the kernel's buffers on both sides hold.
  for (let change = 0; change < 28; change++) {
    await admin(base, 'POST', '/api/admin/projects/default/features/big/environments/development/on')
    await admin(base, 'POST', '/api/admin/projects/default/features/big/environments/development/off')
  }
  await admin(base, 'POST', '/api/admin/projects/default/features/big/environments/development/on')
  await admin(base, 'POST', '/api/admin/projects/default/features', { name: 'marker' })
  await admin(base, 'POST', '/api/admin/projects/default/features/marker/environments/development/on')
  relay.resume()

  const streams = () => relay.connections.filter(connection => connection.head.startsWith('GET /api/client/streaming'))
  await waitFor(() => streams()[0].serverEnd !== null, 'the stalled stream ended by the server')
  await waitFor(() => streams().length >= 2, 'the SDK reconnected')
  await sdkSees(client, () => client.isEnabled('marker') && bigEnabled() === true, 30_000)
  const [stalled, resumed] = streams()
  expect(stalled.serverEnd).toBe('ECONNRESET')
  // The reconnect named the last revision the SDK read, and it still streams.
  expect(resumed?.head).toMatch(/\r\nlast-event-id: \d+\r\n/i)
  expect((client as any).repository.getMode()).toBe('streaming')
}, 60_000)
