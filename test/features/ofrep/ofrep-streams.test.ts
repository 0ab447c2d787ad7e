/**
 * OFREP's eventStreams, its ETag and 304 answers, and its CORS. The setup shared with
 * ofrep.test.ts is ofrep.setup.ts.
 */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../../src/app'
import { Api, expectOk, makeApi, tempDir, tokenFor, waitFor } from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'
import { SseReader } from '../streaming/sse'
import {
  api,
  useFreshApi,
  ONE,
  BULK,
  type Evaluation,
  type Failure,
  sdkToken,
  evaluate,
  bulk,
  expectFailure,
  flagsOf,
} from './ofrep.setup'

useFreshApi()

describe('eventStreams', () => {
  type Streams = { eventStreams: { type: string; endpoint: { requestUri: string } }[] }
  const channelOf = async (app: Api, token: string, prefix = '') => {
    const answer = await app.post<Streams>(`${prefix}${BULK}`, { context: { targetingKey: 'u' } }, { token })
    expectOk(answer)
    expect(answer.body.eventStreams).toHaveLength(1)
    expect(answer.body.eventStreams[0]).toMatchObject({ type: 'sse' })
    return answer.body.eventStreams[0].endpoint.requestUri
  }
  const open = async (app: Api, path: string) => {
    const response = await app.app.handle(
      new Request(`http://localhost${path}`, { headers: { origin: 'https://shop.example.com' } }),
    )
    expect({
      status: response.status,
      type: response.headers.get('content-type'),
      cors: response.headers.get('access-control-allow-origin'),
    }).toEqual({
      status: 200,
      type: 'text/event-stream; charset=utf-8',
      cors: '*',
    })
    return new SseReader(response)
  }

  test("the bulk answer names its token's channel; a change to the token's flags sends refetchEvaluation, another project's or environment's sends nothing", async () => {
    await api.flagOn('checkout')
    expectOk(await api.post('/api/admin/projects', { id: 'other', name: 'other' }), 201)
    await api.flagOn('elsewhere', { name: 'default' }, 'development', 'other')
    const token = await sdkToken()
    const path = await channelOf(api, token)
    expect(path).toMatch(/^\/ofrep\/v1\/events\?channel=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{24}$/)
    // One channel per token, whatever the context; another token has its own.
    expect(await channelOf(api, token)).toBe(path)
    expect(await channelOf(api, await sdkToken('client'))).not.toBe(path)
    const reader = await open(api, path)
    try {
      await reader.until(() => reader.comments > 0)
      expectOk(await api.toggle('other', 'elsewhere', 'development', false))
      expectOk(await api.toggle('default', 'checkout', 'production', true))
      expectOk(await api.toggle('default', 'checkout', 'development', false))
      await reader.until(() => reader.messages.length > 0)
      await reader.settle()
      expect(reader.messages).toHaveLength(1)
      const [message] = reader.messages
      expect(message.event).toBe('message')
      expect(JSON.parse(message.data)).toEqual({ type: 'refetchEvaluation', etag: message.id })
      // The refetch the provider makes (with the event's etag as a query parameter) sees the change.
      const refetched = await api.post<{ flags: Evaluation[] }>(
        `${BULK}?flagConfigEtag=${message.id}`,
        { context: { targetingKey: 'u' } },
        { token },
      )
      expectOk(refetched)
      expect(flagsOf(refetched).get('checkout')).toMatchObject({ value: false, reason: 'DISABLED' })
    } finally {
      await reader.cancel()
    }
  })

  test('an unknown channel is 401 without a body; a deleted token ends its streams and its channel', async () => {
    for (const path of ['/ofrep/v1/events?channel=no-such-channel', '/ofrep/v1/events']) {
      const unknown = await api.app.handle(new Request(`http://localhost${path}`))
      expect({ path, status: unknown.status, text: await unknown.text() }).toEqual({ path, status: 401, text: '' })
    }
    await api.flagOn('checkout')
    const created = await api.createToken({
      tokenName: 'browser',
      type: 'frontend',
      projects: ['default'],
      environment: 'development',
    })
    expectOk(created, 201)
    const path = await channelOf(api, created.body.secret)
    const reader = await open(api, path)
    expectOk(await api.delete('/api/admin/api-tokens/browser'), 200)
    await reader.until(() => reader.ended)
    const after = await api.app.handle(new Request(`http://localhost${path}`))
    expect({ status: after.status, text: await after.text() }).toEqual({ status: 401, text: '' })
  })

  test("past STREAMING_MAX_STREAMS (the client API's streams count too), and once the server stops, 503 GENERAL with Retry-After; bad query 400", async () => {
    const capped = await makeApi({ streaming: { maxStreams: 2, heartbeatMs: 15_000 } })
    try {
      const token = await tokenFor(capped, 'browser', { type: 'frontend', environment: 'development' })
      const client = await tokenFor(capped, 'sdk', { type: 'client', environment: 'development' })
      const path = await channelOf(capped, token)
      const held = await open(capped, path)
      const sdkStream = await capped.app.handle(
        new Request('http://localhost/api/client/streaming', { headers: { authorization: client } }),
      )
      expect(sdkStream.status).toBe(200)
      const refused = await capped.get(path, { token: null })
      expectFailure(refused, 503, 'GENERAL')
      expect(refused.headers.get('retry-after')).toBe('30')
      expect(capped.services.streaming.streams).toBe(2)
      // A stream that ends makes room.
      await held.cancel()
      const again = await open(capped, path)
      expectFailure(await capped.get(`${path}&since=1`, { token: null }), 400, 'PARSE_ERROR')
      capped.services.streaming.close()
      await again.until(() => again.ended)
      await sdkStream.body?.cancel()
      expectFailure(await capped.get(path, { token: null }), 503, 'GENERAL')
      expect(capped.services.streaming.streams).toBe(0)
    } finally {
      await capped.close()
    }
  })

  test('under a base path, the endpoint the answer names includes it', async () => {
    await api.flagOn('checkout')
    const token = await sdkToken()
    const based = new Api(createApp(api.services, { bodyLimit: 102400, basePath: '/flags' }), api.services, null)
    const path = await channelOf(based, token, '/flags')
    expect(path).toStartWith('/flags/ofrep/v1/events?channel=')
    const reader = await open(based, path)
    await reader.cancel()
  })

  test("a frontend token's channel past STREAMING_MAX_STREAMS_PER_ADDRESS is 503 from that address only, and past STREAMING_MAX_STREAMS_PER_TOKEN from any", async () => {
    const capped = await makeApi({
      streaming: { maxStreams: 100, heartbeatMs: 15_000, maxStreamsPerToken: 3, maxStreamsPerAddress: 2 },
    })
    const bodies: ReadableStream[] = []
    try {
      const behindProxy = new Api(
        createApp(capped.services, { bodyLimit: 102400, trustProxy: true }),
        capped.services,
        null,
      )
      const browser = await channelOf(
        capped,
        await tokenFor(capped, 'browser', { type: 'frontend', environment: 'development' }),
      )
      const server = await channelOf(
        capped,
        await tokenFor(capped, 'server', { type: 'client', environment: 'development' }),
      )
      const from = (address: string) => ({ token: null, headers: { 'x-forwarded-for': address } })
      const hold = async (path: string, address: string) => {
        const response = await behindProxy.app.handle(
          new Request(`http://localhost${path}`, { headers: from(address).headers }),
        )
        expect({ path, address, status: response.status }).toEqual({ path, address, status: 200 })
        bodies.push(response.body!)
      }
      await hold(browser, '203.0.113.1')
      await hold(browser, '203.0.113.1')
      const byAddress = await behindProxy.get(browser, from('203.0.113.1'))
      expectFailure(byAddress, 503, 'GENERAL')
      expect((byAddress.body as Failure).errorDetails).toContain('STREAMING_MAX_STREAMS_PER_ADDRESS')
      // Another address is served, up to the token's own cap.
      await hold(browser, '203.0.113.2')
      const byToken = await behindProxy.get(browser, from('203.0.113.3'))
      expectFailure(byToken, 503, 'GENERAL')
      expect((byToken.body as Failure).errorDetails).toContain('STREAMING_MAX_STREAMS_PER_TOKEN')
      // A client token (a secret, capped as a whole) is not counted by address; the server's cap is far.
      for (let n = 0; n < 3; n++) await hold(server, '203.0.113.1')
      expect(capped.services.streaming.streams).toBe(6)
    } finally {
      for (const body of bodies) await body.cancel()
      await capped.close()
    }
  })

  test('a channel is checked against the data, not memory: another app on the same data takes it; an altered, forged or outdated one is 401', async () => {
    const dir = tempDir('flags-ofrep-channel-')
    try {
      const first = await makeApi({ dataDir: dir.path })
      const path = await channelOf(
        first,
        await tokenFor(first, 'browser', { type: 'frontend', environment: 'development' }),
      )
      await tokenFor(first, 'other', { type: 'frontend', environment: 'development' })
      await first.close()
      const second = await makeApi({ dataDir: dir.path })
      try {
        const reader = await open(second, path)
        await second.flagOn('checkout')
        await reader.until(() => reader.messages.length > 0)
        expect(JSON.parse(reader.messages[0].data)).toMatchObject({ type: 'refetchEvaluation' })
        await reader.cancel()
        const channel = path.slice(path.indexOf('channel=') + 'channel='.length)
        const [name, mac] = channel.split('.')
        const flipped = `${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`
        const forged = [
          `${name}.${flipped}`,
          `${Buffer.from('other').toString('base64url')}.${mac}`,
          `${name}.${mac.slice(0, -1)}`,
          name,
          mac,
          `${name}.`,
        ]
        // The same name made anew (another secret) is another token: the old channel does not stand for it.
        expectOk(await second.delete('/api/admin/api-tokens/browser'), 200)
        const remade = await tokenFor(second, 'browser', { type: 'frontend', environment: 'development' })
        for (const bad of [...forged, channel]) {
          const refused = await second.app.handle(
            new Request(`http://localhost/ofrep/v1/events?channel=${encodeURIComponent(bad)}`),
          )
          expect({ bad, status: refused.status, text: await refused.text() }).toEqual({ bad, status: 401, text: '' })
        }
        const renewed = await channelOf(second, remade)
        expect(renewed).not.toBe(path)
        await (await open(second, renewed)).cancel()
      } finally {
        await second.close()
      }
    } finally {
      dir.remove()
    }
  })

  test.skipIf(!ON_POSTGRES)(
    'on PostgreSQL, a channel named by one instance opens on another, which sends it the changes made on the first',
    async () => {
      const database = await freshDatabase()
      const [a, b] = await Promise.all([makeApi({ database }), makeApi({ database })])
      try {
        const token = await tokenFor(a, 'browser', { type: 'frontend', environment: 'development' })
        const path = await channelOf(a, token)
        await waitFor(() => b.services.store.state.tokens.browser !== undefined, 'the token on B')
        const reader = await open(b, path)
        await a.flagOn('checkout')
        await reader.until(() => reader.messages.length > 0, 10_000)
        expect(JSON.parse(reader.messages[0].data)).toMatchObject({ type: 'refetchEvaluation' })
        await reader.cancel()
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    },
  )
})

describe('ETag and 304', () => {
  test('the bulk answer has an ETag; If-None-Match answers 304 with no body until a flag or the context changes; a change elsewhere keeps it', async () => {
    await api.flagOn('checkout')
    expectOk(await api.createProject('other'), 201)
    const token = await sdkToken()
    const first = await bulk(token, { targetingKey: 'alice' })
    expectOk(first)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^".+"$/)
    expect(first.headers.get('cache-control')).toBe('no-cache')
    const again = await bulk(token, { targetingKey: 'alice' }, { 'if-none-match': etag })
    expect({ status: again.status, text: again.text, etag: again.headers.get('etag') }).toEqual({
      status: 304,
      text: '',
      etag,
    })
    expect((await bulk(token, { targetingKey: 'alice' }, { 'if-none-match': `"other", ${etag}` })).status).toBe(304)
    expect((await bulk(token, { targetingKey: 'alice' }, { 'if-none-match': '*' })).status).toBe(304)
    // Another context: another answer.
    const bob = await bulk(token, { targetingKey: 'bob' }, { 'if-none-match': etag })
    expectOk(bob)
    expect(bob.headers.get('etag')).not.toBe(etag)
    // A flag in another project changes nothing this token reads.
    await api.flagOn('elsewhere', { name: 'default' }, 'development', 'other')
    expect((await bulk(token, { targetingKey: 'alice' }, { 'if-none-match': etag })).status).toBe(304)
    // A change to a flag of the scope: a new answer.
    expectOk(await api.toggle('default', 'checkout', 'development', false))
    const changed = await bulk(token, { targetingKey: 'alice' }, { 'if-none-match': etag })
    expectOk(changed)
    expect(flagsOf(changed).get('checkout')).toMatchObject({ value: false, reason: 'DISABLED' })
    expect(changed.headers.get('etag')).not.toBe(etag)
    // And a new flag too.
    const etag2 = changed.headers.get('etag')!
    expectOk(await api.createFlag('default', 'brand-new'), 201)
    const added = await bulk(token, { targetingKey: 'alice' }, { 'if-none-match': etag2 })
    expectOk(added)
    expect(flagsOf(added).has('brand-new')).toBe(true)
  })

  test('with DATE constraints, the ETag changes when now passes one of their times, so a 304 never keeps an answer past it', async () => {
    const token = await sdkToken()
    // The time must still be ahead after the flag is written and read twice: on a loaded machine
    // (the PostgreSQL run) that took longer than 1.5 s once, so a longer wait is tried then. A time
    // already past stays past, so an earlier attempt's flag changes no later ETag.
    for (const [attempt, margin] of [1500, 5000, 15000].entries()) {
      const name = `launch-${attempt}`
      const soon = new Date(Date.now() + margin).toISOString()
      await api.flagOn(name, {
        name: 'default',
        constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: soon }],
      })
      const before = await bulk(token)
      const etag = before.headers.get('etag')!
      const again = await bulk(token, undefined, { 'if-none-match': etag })
      if (Date.now() >= Date.parse(soon)) continue
      expect(flagsOf(before).get(name)).toMatchObject({ value: false, reason: 'DEFAULT' })
      expect(again.status).toBe(304)
      await Bun.sleep(Date.parse(soon) - Date.now() + 50)
      const after = await bulk(token, undefined, { 'if-none-match': etag })
      expectOk(after)
      expect(flagsOf(after).get(name)).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })
      return
    }
    throw new Error('the machine never wrote and read a flag within 15 s')
  })

  test('the ETag depends on the caller address when the context names none (remoteAddress defaults to it)', async () => {
    await api.flagOn('office', { name: 'remoteAddress', parameters: { IPs: '10.0.0.0/8' } })
    const app = createApp(api.services, { bodyLimit: 102400, trustProxy: true })
    const token = await sdkToken()
    const send = (address: string, etag?: string) =>
      app.handle(
        new Request(`http://localhost${BULK}`, {
          method: 'POST',
          headers: {
            authorization: token,
            'content-type': 'application/json',
            'x-forwarded-for': address,
            ...(etag ? { 'if-none-match': etag } : {}),
          },
          body: JSON.stringify({ context: { targetingKey: 'u' } }),
        }),
      )
    const inside = await send('10.1.2.3')
    expect(JSON.parse(await inside.text()).flags[0]).toMatchObject({ key: 'office', value: true })
    const outside = await send('192.168.0.1', inside.headers.get('etag')!)
    expect(outside.status).toBe(200)
    expect(JSON.parse(await outside.text()).flags[0]).toMatchObject({ key: 'office', value: false })
  })

  test('when no flag names remoteAddress, the address is in the ETag only for a context without a user or session (default stickiness falls to it)', async () => {
    await api.flagOn('half', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'half' },
    })
    const app = createApp(api.services, { bodyLimit: 102400, trustProxy: true })
    const token = await sdkToken()
    const send = (address: string, context: unknown, etag?: string) =>
      app.handle(
        new Request(`http://localhost${BULK}`, {
          method: 'POST',
          headers: {
            authorization: token,
            'content-type': 'application/json',
            'x-forwarded-for': address,
            ...(etag ? { 'if-none-match': etag } : {}),
          },
          body: JSON.stringify({ context }),
        }),
      )
    for (const context of [{ targetingKey: 'u' }, { sessionId: 's' }, { userId: 7 }]) {
      const first = await send('10.0.0.1', context)
      expect(first.status).toBe(200)
      // Another address, the same answer: the ETag does not name the address, and the 304 stands.
      expect((await send('10.0.0.2', context, first.headers.get('etag')!)).status).toBe(304)
    }
    // Without a user or session, the rollout's stickiness reads the address: each address its own ETag, and its own draw.
    const anonymous = await send('10.0.0.1', {})
    expect((await send('10.0.0.2', {}, anonymous.headers.get('etag')!)).status).toBe(200)
    const outcomes = new Set<boolean>()
    for (let n = 0; n < 40; n++) outcomes.add(JSON.parse(await (await send(`10.0.${n}.9`, {})).text()).flags[0].value)
    expect([...outcomes].sort()).toEqual([false, true])
  })
})

describe('CORS', () => {
  test('as the frontend API: a preflight is 204 without a token and allows X-API-Key; answers and errors carry the origin and expose the ETag', async () => {
    await api.flagOn('checkout')
    const token = await sdkToken()
    for (const path of [BULK, ONE('checkout')]) {
      const preflight = await api.request('OPTIONS', path, {
        token: null,
        headers: {
          origin: 'https://shop.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-api-key, content-type',
        },
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
      expect(preflight.headers.get('access-control-allow-headers')).toContain('X-API-Key')
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST')
    }
    const answer = await bulk(token, { targetingKey: 'u' }, { origin: 'https://shop.example.com' })
    expect(answer.headers.get('access-control-allow-origin')).toBe('*')
    expect(answer.headers.get('access-control-expose-headers')).toBe('ETag')
    const failure = await evaluate(token, 'missing', { targetingKey: 'u' }, { origin: 'https://shop.example.com' })
    expect(failure.status).toBe(404)
    expect(failure.headers.get('access-control-allow-origin')).toBe('*')
    const denied = await api.post(
      BULK,
      { context: {} },
      { token: null, headers: { origin: 'https://shop.example.com' } },
    )
    expect(denied.status).toBe(401)
    expect(denied.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('with FRONTEND_CORS_ORIGINS, only the listed origins', async () => {
    const own = new Api(
      createApp(api.services, { bodyLimit: 102400, frontendCorsOrigins: ['https://shop.example.com'] }),
      api.services,
      null,
    )
    const token = await sdkToken()
    const allowed = await own.post(BULK, { context: {} }, { token, headers: { origin: 'https://shop.example.com' } })
    expectOk(allowed)
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example.com')
    expect(allowed.headers.get('vary')).toBe('Origin')
    const other = await own.post(BULK, { context: {} }, { token, headers: { origin: 'https://evil.example.com' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })
})
