/**
 * The client API's stream and delta through the HTTP surface: what a stream starts with (a
 * hydration, or only what was missed), what ends it (its token deleted or expired, the cap, the
 * server stopping), heartbeats, the delta's revision ETag, and bad input answered as the rest of
 * the SDK API answers it.
 */
import { afterEach, expect, setSystemTime, test } from 'bun:test'
import { heapStats } from 'bun:jsc'
import { realFileSystem, type FileSystem } from '../../../src/storage/files'
import { expectError, makeApi, tempDir, tokenFor, waitFor, type Api } from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'
import { applyDelta, emptyCopy, SseReader } from './sse'

const opened: Api[] = []
afterEach(async () => {
  setSystemTime()
  for (const api of opened.splice(0)) await api.close()
})

async function app(options: Parameters<typeof makeApi>[0] = {}): Promise<Api> {
  const api = await makeApi(options)
  opened.push(api)
  return api
}

async function stream(api: Api, secret: string | null, headers: Record<string, string> = {}): Promise<SseReader> {
  const response = await api.app.handle(
    new Request('http://localhost/api/client/streaming', {
      headers: { ...(secret === null ? {} : { authorization: secret }), ...headers },
    }),
  )
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  return new SseReader(response)
}

const events = (reader: SseReader, index: number) => JSON.parse(reader.messages[index].data).events as any[]
const on = (api: Api, flag: string, project = 'default', environment = 'development') =>
  api.post(`/api/admin/projects/${project}/features/${flag}/environments/${environment}/on`)

test('a stream starts with a hydration of the scope, then sends each change as unleash-updated with the revision as id', async () => {
  const api = await app()
  await api.newProject('other')
  const secret = await tokenFor(api, 'sdk', { type: 'client', projects: ['default'], environment: 'development' })
  await api.newFlag('default', 'mine')
  await api.newFlag('other', 'theirs')
  const segment = (
    await api.post<any>('/api/admin/segments', {
      name: 'beta',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
    })
  ).body
  await api.post<any>('/api/admin/segments', { name: 'hidden', project: 'other', constraints: [] })
  const reader = await stream(api, secret)
  await reader.until(() => reader.messages.length === 1)
  const [connected] = reader.messages
  expect(connected.event).toBe('unleash-connected')
  const [hydration] = events(reader, 0)
  expect(hydration).toMatchObject({ type: 'hydration', eventId: Number(connected.id) })
  expect(hydration.features.map((feature: any) => feature.name)).toEqual(['mine'])
  expect(hydration.segments).toEqual([{ id: segment.id, name: 'beta', constraints: segment.constraints }])

  const write = await api.post(`/api/admin/projects/default/features/mine/environments/development/strategies`, {
    name: 'default',
    segments: [segment.id],
  })
  expect(write.status).toBe(200)
  await reader.until(() => reader.messages.length === 2)
  const updated = reader.messages[1]
  expect(updated.event).toBe('unleash-updated')
  expect(Number(updated.id)).toBeGreaterThan(Number(connected.id))
  const feature = (
    await api.get<any>('/api/client/features/mine', { token: secret, headers: { 'unleash-client-spec': '5.2.0' } })
  ).body
  expect(events(reader, 1)).toEqual([{ type: 'feature-updated', eventId: Number(updated.id), feature }])

  // A change outside the scope sends nothing; the next one in scope comes next.
  await on(api, 'theirs', 'other')
  await api.delete('/api/admin/projects/default/features/mine')
  await reader.until(() => reader.messages.length === 3)
  expect(events(reader, 2)).toEqual([
    { type: 'feature-removed', eventId: Number(reader.messages[2].id), featureName: 'mine', project: 'default' },
  ])
  // Deleting the archived flag changes nothing served; then its segment may go.
  expect((await api.delete('/api/admin/archive/mine')).status).toBe(200)
  expect((await api.delete(`/api/admin/segments/${segment.id}`)).status).toBe(204)
  await reader.until(() => reader.messages.length === 4)
  expect(events(reader, 3)).toEqual([
    { type: 'segment-removed', eventId: Number(reader.messages[3].id), segmentId: segment.id },
  ])
  await reader.cancel()
  expect(api.services.streaming.streams).toBe(0)
})

test('a reconnect with Last-Event-ID gets only what it missed while the server holds it, and a hydration otherwise', async () => {
  const api = await app({ streamingBufferChanges: 3 })
  const secret = await tokenFor(api, 'sdk', { type: 'client', environment: 'development' })
  await api.newFlag('default', 'a')
  const first = await stream(api, secret)
  await first.until(() => first.messages.length === 1)
  const copy = emptyCopy()
  applyDelta(copy, JSON.parse(first.messages[0].data))
  const lastId = first.messages[0].id!
  await first.cancel()

  await on(api, 'a')
  await api.newFlag('default', 'b')
  const resumed = await stream(api, secret, { 'last-event-id': lastId })
  await resumed.until(() => resumed.messages.length === 1)
  expect(resumed.messages[0].event).toBe('unleash-connected')
  expect(events(resumed, 0).map(event => event.type)).toEqual(['feature-updated', 'feature-updated'])
  applyDelta(copy, JSON.parse(resumed.messages[0].data))
  const list = (
    await api.get<any>('/api/client/features', { token: secret, headers: { 'unleash-client-spec': '5.2.0' } })
  ).body
  expect([...copy.features.values()]).toEqual(list.features)
  // Nothing missed: an empty resume, not a hydration.
  const current = resumed.messages[0].id!
  await resumed.cancel()
  const again = await stream(api, secret, { 'last-event-id': current })
  await again.until(() => again.messages.length === 1)
  expect(events(again, 0)).toEqual([])
  await again.cancel()

  // More changes than the buffer holds: the old revision is forgotten, so the reconnect hydrates.
  for (const name of ['c', 'd', 'e', 'f']) await api.newFlag('default', name)
  for (const lastEventId of [current, '999999', 'not-a-revision', '']) {
    const hydrated = await stream(api, secret, { 'last-event-id': lastEventId })
    await hydrated.until(() => hydrated.messages.length === 1)
    expect({ lastEventId, types: events(hydrated, 0).map(event => event.type) }).toEqual({
      lastEventId,
      types: ['hydration'],
    })
    expect(events(hydrated, 0)[0].features.map((feature: any) => feature.name)).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
    await hydrated.cancel()
  }
})

test('a stream ends when its token is deleted or expires, and not when another token changes', async () => {
  const api = await app({ streaming: { maxStreams: 100, heartbeatMs: 100 } })
  const secret = await tokenFor(api, 'doomed', { type: 'client', environment: 'development' })
  const other = await tokenFor(api, 'other', { type: 'client', environment: 'development' })
  const expiring = await tokenFor(api, 'expiring', {
    type: 'client',
    environment: 'development',
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  })
  const doomed = await stream(api, secret)
  const kept = await stream(api, other)
  const expires = await stream(api, expiring)
  await api.createToken({ tokenName: 'unrelated', type: 'client', environment: 'development' })
  await api.delete('/api/admin/api-tokens/unrelated')
  expect(await api.delete('/api/admin/api-tokens/doomed')).toMatchObject({ status: 200 })
  await doomed.until(() => doomed.ended)
  // The next request with it is refused, as on every route.
  const refused = await api.app.handle(
    new Request('http://localhost/api/client/streaming', { headers: { authorization: secret } }),
  )
  expect(refused.status).toBe(401)
  setSystemTime(new Date(Date.now() + 2 * 3_600_000))
  await expires.until(() => expires.ended)
  await kept.until(() => kept.comments >= 2)
  expect(kept.ended).toBe(false)
  await kept.cancel()
  expect(api.services.streaming.streams).toBe(0)
})

test('heartbeats are SSE comments written to every idle stream', async () => {
  const api = await app({ streaming: { maxStreams: 100, heartbeatMs: 100 } })
  const secret = await tokenFor(api, 'sdk', { type: 'client', environment: 'development' })
  const readers = [await stream(api, secret), await stream(api, secret)]
  for (const reader of readers) await reader.until(() => reader.comments >= 2)
  for (const reader of readers) {
    expect(reader.messages.map(message => message.event)).toEqual(['unleash-connected'])
    await reader.cancel()
  }
})

/** The least a held direct stream can be: a source whose methods are its class's, written to once. */
class BareSource {
  readonly type = 'direct'
  pull(sink: { write(chunk: string): void; flush(): void }): void {
    sink.write(':\n\n')
    sink.flush()
  }
  cancel(): void {}
}

/** Objects of each type left on the heap per stream while `count` streams opened by `open` are held, each read once. */
async function heldPerStream(open: () => Promise<Response>, count: number): Promise<Record<string, number>> {
  const readOnce = async () => {
    const reader = (await open()).body!.getReader()
    await reader.read()
    return reader
  }
  // Warm: what the first streams make once (compiled code, caches) is not per stream.
  for (let i = 0; i < 20; i++) await (await readOnce()).cancel()
  Bun.gc(true)
  const before = heapStats().objectTypeCounts as Record<string, number>
  const readers: ReadableStreamDefaultReader<Uint8Array>[] = []
  for (let i = 0; i < count; i++) readers.push(await readOnce())
  Bun.gc(true)
  const after = heapStats().objectTypeCounts as Record<string, number>
  for (const reader of readers) await reader.cancel()
  return Object.fromEntries(
    [...new Set([...Object.keys(before), ...Object.keys(after)])].map(type => [
      type,
      ((after[type] ?? 0) - (before[type] ?? 0)) / count,
    ]),
  )
}

test('an idle stream holds no closure, promise or listener of its own, beyond what a bare direct stream holds', async () => {
  // Every major collection marks what the held streams keep, and at 10,000 streams closures, an
  // awaiting pull and an abort listener each made it markedly longer (docs/realtime.md). Counted
  // against a bare direct stream read the same way, so that what Bun itself keeps does not count.
  const api = await app({ streaming: { maxStreams: 2000, heartbeatMs: 60_000 } })
  const secret = await tokenFor(api, 'sdk', { type: 'client', environment: 'development' })
  const count = 1000
  const types = ['Function', 'Promise', 'FullPromiseReaction', 'AsyncFunctionGenerator', 'AbortSignal', 'Array']
  // The heap is the whole test process's: what other work (a database pool's, another file's
  // timers) leaves on it meanwhile only ever adds objects, to either measurement: so the least of
  // up to three differences is taken, and it must be at most 0 (what other work added to the bare
  // measurement makes it negative); what a held stream keeps shows in every one.
  const least: Record<string, number> = Object.fromEntries(types.map(type => [type, Infinity]))
  for (let attempt = 0; attempt < 3 && Object.values(least).some(extra => extra > 0); attempt++) {
    const bare = await heldPerStream(
      async () => new Response(new ReadableStream(new BareSource() as unknown as UnderlyingDefaultSource<Uint8Array>)),
      count,
    )
    const ours = await heldPerStream(
      () =>
        api.app.handle(new Request('http://localhost/api/client/streaming', { headers: { authorization: secret } })),
      count,
    )
    expect(api.services.streaming.streams).toBe(0)
    for (const type of types)
      least[type] = Math.min(least[type], Math.round(((ours[type] ?? 0) - (bare[type] ?? 0)) * 10) / 10)
  }
  const beyondBare = Object.fromEntries(types.map(type => [type, Math.max(0, least[type])]))
  expect(beyondBare).toEqual({
    Function: 0,
    Promise: 0,
    FullPromiseReaction: 0,
    AsyncFunctionGenerator: 0,
    AbortSignal: 0,
    Array: 0,
  })
})

test('past the cap, and once the server is stopping, a stream says fetch-mode polling and ends', async () => {
  const api = await app({ streaming: { maxStreams: 2, heartbeatMs: 15_000 } })
  const secret = await tokenFor(api, 'sdk', { type: 'client', environment: 'development' })
  const held = [await stream(api, secret), await stream(api, secret)]
  const refused = await stream(api, secret)
  await refused.until(() => refused.ended)
  expect(refused.messages).toEqual([{ event: 'fetch-mode', id: null, data: 'polling' }])
  expect(api.services.streaming.streams).toBe(2)
  // A stream that ends makes room.
  await held[0].cancel()
  const third = await stream(api, secret)
  await third.until(() => third.messages.length === 1)
  expect(third.messages[0].event).toBe('unleash-connected')

  api.services.streaming.close()
  for (const reader of [held[1], third]) {
    await reader.until(() => reader.ended)
    expect(reader.messages.at(-1)).toEqual({ event: 'fetch-mode', id: null, data: 'polling' })
  }
  expect(api.services.streaming.streams).toBe(0)
  const late = await stream(api, secret)
  await late.until(() => late.ended)
  expect(late.messages).toEqual([{ event: 'fetch-mode', id: null, data: 'polling' }])
})

test('the delta answers a hydration with the revision as ETag, then the changes since, and 304 while nothing in scope changed', async () => {
  const api = await app()
  await api.newProject('other')
  const secret = await tokenFor(api, 'sdk', { type: 'client', projects: ['default'], environment: 'development' })
  await api.newFlag('default', 'a')
  await api.newFlag('other', 'b')
  const first = await api.get<any>('/api/client/delta', { token: secret })
  expect(first.status).toBe(200)
  const etag = first.headers.get('etag')!
  expect(etag).toMatch(/^"\d+"$/)
  expect(first.body.events).toHaveLength(1)
  expect(first.body.events[0]).toMatchObject({ type: 'hydration', eventId: Number(etag.slice(1, -1)) })

  expect((await api.get('/api/client/delta', { token: secret, headers: { 'if-none-match': etag } })).status).toBe(304)
  await on(api, 'b', 'other')
  const unchanged = await api.get('/api/client/delta', { token: secret, headers: { 'if-none-match': etag } })
  expect({ status: unchanged.status, etag: unchanged.headers.get('etag'), text: unchanged.text }).toEqual({
    status: 304,
    etag,
    text: '',
  })

  await on(api, 'a')
  const changed = await api.get<any>('/api/client/delta', { token: secret, headers: { 'if-none-match': `W/${etag}` } })
  expect(changed.status).toBe(200)
  expect(changed.body.events.map((event: any) => [event.type, event.feature?.name, event.feature?.enabled])).toEqual([
    ['feature-updated', 'a', true],
  ])
  expect(Number(changed.headers.get('etag')!.slice(1, -1))).toBeGreaterThan(Number(etag.slice(1, -1)))
  for (const unknown of ['"99999"', '"abc"', '*']) {
    const hydrated = await api.get<any>('/api/client/delta', { token: secret, headers: { 'if-none-match': unknown } })
    expect({ unknown, types: hydrated.body.events.map((event: any) => event.type) }).toEqual({
      unknown,
      types: ['hydration'],
    })
  }
})

test('without a token 401, with another type of token 403, a bad query 400, as on /api/client/features; nothing is left open', async () => {
  const api = await app()
  const frontend = await tokenFor(api, 'browser', { type: 'frontend', environment: 'development' })
  for (const path of ['/api/client/streaming', '/api/client/delta']) {
    expectError(await api.get(path, { token: null }), 401, 'AuthenticationRequired')
    expectError(await api.get(path, { token: 'default:development.not-a-token' }), 401, 'AuthenticationRequired')
    expectError(await api.get(path, { token: frontend }), 403, 'NoAccessError')
    expectError(await api.get(path), 403, 'NoAccessError')
    expectError(
      await api.get(`${path}?unknown=1`, {
        token: await tokenFor(api, `sdk-${path.length}`, { type: 'client', environment: 'development' }),
      }),
      400,
      'ValidationError',
    )
  }
  expect(api.services.streaming.streams).toBe(0)
})

test('a delta or a stream made while a commit is being made durable names the last durable revision, so that commit still comes', async () => {
  // Writes wait at fsync while the gate is shut: the state already holds the commit, the feed has not published it.
  let gate: Promise<void> | null = null
  let release = () => {}
  const gated: FileSystem = {
    ...realFileSystem,
    open: async (path, flags) => {
      const file = await realFileSystem.open(path, flags)
      return {
        write: (...args) => file.write(...args),
        stat: () => file.stat(),
        close: () => file.close(),
        sync: () => file.sync(),
        datasync: async () => {
          await gate
          return file.datasync()
        },
      }
    },
  }
  const dir = tempDir('flags-stream-')
  try {
    const api = await app({ dataDir: dir.path, fs: gated })
    const secret = await tokenFor(api, 'sdk', { type: 'client', environment: 'development' })
    await api.newFlag('default', 'a')
    const first = await api.get<any>('/api/client/delta', { token: secret })
    const copy = emptyCopy()
    applyDelta(copy, first.body)
    await api.newFlag('default', 'b')
    gate = new Promise(resolve => (release = resolve))
    const store = api.services.store
    const before = store.state.commitSeq
    const write = on(api, 'a')
    while (store.state.commitSeq === before) await new Promise(resolve => setTimeout(resolve, 1))
    // The commit is in the state, not yet durable: what is answered now must not claim its revision.
    const during = await api.get<any>('/api/client/delta', {
      token: secret,
      headers: { 'if-none-match': first.headers.get('etag')! },
    })
    expect(during.status).toBe(200)
    applyDelta(copy, during.body)
    const reader = await stream(api, secret, { 'last-event-id': first.headers.get('etag')!.slice(1, -1) })
    await reader.until(() => reader.messages.length === 1)
    expect(Number(reader.messages[0].id)).toBe(before)
    release()
    gate = null
    expect((await write).status).toBe(200)
    const after = await api.get<any>('/api/client/delta', {
      token: secret,
      headers: { 'if-none-match': during.headers.get('etag')! },
    })
    expect(after.status).toBe(200)
    applyDelta(copy, after.body)
    const list = (
      await api.get<any>('/api/client/features', { token: secret, headers: { 'unleash-client-spec': '5.2.0' } })
    ).body
    expect([...copy.features.values()].sort((x, y) => (x.name < y.name ? -1 : 1))).toEqual(list.features)
    await reader.until(() => reader.messages.length === 2)
    expect(events(reader, 1).map(event => [event.type, event.feature.name, event.feature.enabled])).toEqual([
      ['feature-updated', 'a', true],
    ])
    await reader.cancel()
    await api.close()
    opened.splice(opened.indexOf(api), 1)
  } finally {
    release()
    dir.remove()
  }
})

test("one token's streams past STREAMING_MAX_STREAMS_PER_TOKEN are told to poll, while another token is still served", async () => {
  const api = await app({ streaming: { maxStreams: 10, heartbeatMs: 15_000, maxStreamsPerToken: 3 } })
  const greedy = await tokenFor(api, 'greedy', { type: 'client', environment: 'development' })
  const other = await tokenFor(api, 'other', { type: 'client', environment: 'development' })
  const held = [await stream(api, greedy), await stream(api, greedy), await stream(api, greedy)]
  for (const reader of held) await reader.until(() => reader.messages.length === 1)
  const refused = await stream(api, greedy)
  await refused.until(() => refused.ended)
  expect(refused.messages).toEqual([{ event: 'fetch-mode', id: null, data: 'polling' }])
  expect(api.services.streaming.streams).toBe(3)
  // Well below the server's cap, another token is served; and the refused SDK still polls.
  const served = await stream(api, other)
  await served.until(() => served.messages.length === 1)
  expect(served.messages[0].event).toBe('unleash-connected')
  expect((await api.get('/api/client/features', { token: greedy })).status).toBe(200)
  // One of its streams ending makes room for the token again.
  await held[0].cancel()
  const again = await stream(api, greedy)
  await again.until(() => again.messages.length === 1)
  expect(again.messages[0].event).toBe('unleash-connected')
  for (const reader of [...held, served, again]) await reader.cancel()
  expect(api.services.streaming.streams).toBe(0)
})

/** Values for a constraint: 250 of them make a flag's view about 10 kB. */
const bulky = (tag: string) =>
  Array.from({ length: 250 }, (_, i) => `${tag}-user-${String(i).padStart(4, '0')}-${'x'.repeat(24)}`)

test('a stream whose client stops reading is cut off once its unsent bytes pass STREAMING_MAX_UNSENT_BYTES, and resumes from its last event id', async () => {
  const bound = 64 * 1024
  const api = await app({ streaming: { maxStreams: 10, heartbeatMs: 55_000, maxUnsentBytes: bound } })
  const secret = await tokenFor(api, 'slow', { type: 'client', environment: 'development' })
  await api.newFlag('default', 'big')
  const constraints = ['a', 'b', 'c', 'd'].map(tag => ({ contextName: 'userId', operator: 'IN', values: bulky(tag) }))
  expect(
    (
      await api.post(`/api/admin/projects/default/features/big/environments/development/strategies`, {
        name: 'default',
        constraints,
      })
    ).status,
  ).toBe(200)
  const response = await api.app.handle(
    new Request('http://localhost/api/client/streaming', { headers: { authorization: secret } }),
  )
  const reader = response.body!.getReader()
  // Read the hydration, then stop reading.
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('\n\n')) text += decoder.decode((await reader.read()).value, { stream: true })
  const lastId = /^id: (\d+)$/m.exec(text)![1]
  const message = (
    await api.get<any>('/api/client/features/big', { token: secret, headers: { 'unleash-client-spec': '5.2.0' } })
  ).text.length
  expect(message).toBeGreaterThan(bound / 8)
  // Each toggle sends the whole flag (about 40 kB): far more than the bound in all.
  for (let write = 0; write < 12; write++) {
    expect((await on(api, 'big', 'default', 'development')).status).toBe(200)
    expect((await api.post('/api/admin/projects/default/features/big/environments/development/off')).status).toBe(200)
  }
  await new Promise(resolve => setImmediate(resolve))
  expect(api.services.streaming.streams).toBe(0)
  // What the server kept for it is dropped with the connection, not delivered later.
  let kept = 0
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      kept += value.length
    }
  } catch {
    // Reset: nothing more to read.
  }
  expect(kept).toBeLessThanOrEqual(bound + 2 * message)

  // The SDK reconnects with the last id it read and gets only what it missed.
  const copy = emptyCopy()
  applyDelta(copy, JSON.parse(/^data: (.*)$/m.exec(text)![1]))
  const resumed = await stream(api, secret, { 'last-event-id': lastId })
  await resumed.until(() => resumed.messages.length === 1)
  expect(resumed.messages[0].event).toBe('unleash-connected')
  expect(new Set(applyDelta(copy, JSON.parse(resumed.messages[0].data)))).toEqual(new Set(['feature-updated']))
  const list = (
    await api.get<any>('/api/client/features', { token: secret, headers: { 'unleash-client-spec': '5.2.0' } })
  ).body
  expect([...copy.features.values()]).toEqual(list.features)
  await resumed.cancel()
})

test('a stream of a token that expires is closed at its expiry, not a heartbeat later, and gets no change made after it', async () => {
  // Heartbeats 55 s apart: the once-per-interval check alone would leave the stream open for the whole test.
  const api = await app({ streaming: { maxStreams: 10, heartbeatMs: 55_000 } })
  await api.newFlag('default', 'a')
  const expiresAt = Date.now() + 1500
  const secret = await tokenFor(api, 'brief', {
    type: 'client',
    environment: 'development',
    expiresAt: new Date(expiresAt).toISOString(),
  })
  const reader = await stream(api, secret)
  await reader.until(() => reader.messages.length === 1)
  // Nothing is written meanwhile: the stream is ended by its token's expiry alone.
  await reader.until(() => reader.ended, 10_000)
  expect(Date.now()).toBeGreaterThanOrEqual(expiresAt)
  expect(api.services.streaming.streams).toBe(0)
  expect((await on(api, 'a')).status).toBe(200)
  await reader.settle()
  expect(reader.messages.map(message => message.event)).toEqual(['unleash-connected'])
  expect((await api.get('/api/client/delta', { token: secret })).status).toBe(401)
})

test.skipIf(!ON_POSTGRES)(
  'on PostgreSQL, a token deleted through one instance ends its streams on another',
  async () => {
    const database = await freshDatabase()
    const [a, b] = await Promise.all([app({ database }), app({ database })])
    const secret = await tokenFor(a, 'shared', { type: 'client', environment: 'development' })
    await waitFor(() => b.services.store.state.tokens.shared !== undefined, 'the token on B')
    const reader = await stream(b, secret)
    await reader.until(() => reader.messages.length === 1)
    expect((await a.delete('/api/admin/api-tokens/shared')).status).toBe(200)
    await reader.until(() => reader.ended, 10_000)
    expect(b.services.streaming.streams).toBe(0)
  },
)
