/** One JSON log line per request, and an x-request-id on every answer. */
// Store-independent: about the log line written for each request and its x-request-id, whichever store answers it.
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { ConfigError, readConfig } from '../../src/config'
import { Logger } from '../../src/log'
import { ADMIN_SECRET, BODY_LIMIT, freePort, makeApi, tempDir, type Api, untilReady, waitFor } from '../helpers'

let api: Api | undefined
afterEach(async () => {
  await api?.close()
  api = undefined
})

async function withLog(level: 'info' | 'warn' = 'info') {
  const lines: Record<string, unknown>[] = []
  api = await makeApi({ log: new Logger(level, line => lines.push(JSON.parse(line))) })
  // Requests made while setting up are not what the tests look at.
  lines.length = 0
  return { api, lines }
}

/**
 * The access log is written after the answer is sent: wait until `lines` holds `count` lines (a
 * fixed pause was once too short on a loaded machine). Absence is checked after a pause instead.
 */
const settled = (lines: unknown[], count: number) =>
  waitFor(() => lines.length >= count, `${count} request log lines`, { every: 2 })

test('a request is logged once with method, route pattern, status, duration, request id and token name, and no secret', async () => {
  const { api, lines } = await withLog()
  const response = await api.get('/api/admin/projects/default/features', {
    headers: { 'x-request-id': 'client-abc.123' },
  })
  expect(response.headers.get('x-request-id')).toBe('client-abc.123')
  await settled(lines, 1)
  expect(lines).toHaveLength(1)
  const [line] = lines
  expect(line).toMatchObject({
    level: 'info',
    msg: 'request',
    method: 'GET',
    route: '/api/admin/projects/:projectId/features',
    status: 200,
    requestId: 'client-abc.123',
    tokenName: 'admin-bootstrap',
    // app.handle has no socket, so no address.
    clientAddress: null,
  })
  expect(typeof line.durationMs).toBe('number')
  expect(Date.parse(line.time as string)).not.toBeNaN()
  expect(JSON.stringify(lines)).not.toContain(ADMIN_SECRET)
})

test('without a sensible x-request-id the answer gets a new one, and the log line carries it', async () => {
  const { api, lines } = await withLog()
  for (const [index, sent] of [undefined, 'has spaces', 'x'.repeat(200), 'quote"and\\slash'].entries()) {
    const response = await api.get('/health', { headers: sent === undefined ? {} : { 'x-request-id': sent } })
    const id = response.headers.get('x-request-id')!
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    await settled(lines, index + 1)
    expect(lines.at(-1)).toMatchObject({ route: '/health', status: 200, requestId: id, tokenName: null })
  }
})

test('error answers are logged with their status and carry the request id too', async () => {
  const { api, lines } = await withLog()
  const unknown = await api.get('/no/such/route')
  expect(unknown.status).toBe(404)
  expect(unknown.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  const unauthenticated = await api.get('/api/admin/projects', { token: null })
  expect(unauthenticated.status).toBe(401)
  const invalid = await api.post('/api/admin/projects', { id: 'bad id', name: 'x' })
  expect(invalid.status).toBe(400)
  await settled(lines, 3)
  expect(lines.map(line => [line.status, line.route, line.tokenName])).toEqual([
    [404, null, null],
    [401, '/api/admin/projects', null],
    [400, '/api/admin/projects', 'admin-bootstrap'],
  ])
})

test('LOG_LEVEL=warn leaves request lines out; an unknown LOG_LEVEL stops the start', async () => {
  const { api, lines } = await withLog('warn')
  await api.get('/health')
  await Bun.sleep(50)
  expect(lines).toEqual([])
  expect(readConfig({ LOG_LEVEL: 'WARN' }).logLevel).toBe('warn')
  expect(readConfig({}).logLevel).toBe('info')
  expect(() => readConfig({ LOG_LEVEL: 'loud' })).toThrow(ConfigError)
})

test('X-Forwarded-For is logged only with TRUST_PROXY, and then only its last, well-formed entry', async () => {
  const { api, lines } = await withLog()
  const forwarded = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' }
  await api.get('/health', { headers: forwarded })
  await settled(lines, 1)
  expect(lines.at(-1)).toMatchObject({ route: '/health', clientAddress: null })

  const trusting = createApp(
    api.services,
    { bodyLimit: BODY_LIMIT, trustProxy: true },
    new Logger('info', line => lines.push(JSON.parse(line))),
  )
  const sent: [Record<string, string>, string | null][] = [
    [forwarded, '198.51.100.7'],
    [{ 'x-forwarded-for': '2001:db8::1' }, '2001:db8::1'],
    [{ 'x-forwarded-for': '198.51.100.7, not an address"}' }, null],
    [{}, null],
  ]
  for (const [index, [headers, expected]] of sent.entries()) {
    await trusting.handle(new Request('http://localhost/health', { headers }))
    await settled(lines, index + 2)
    expect(lines.at(-1)).toMatchObject({ route: '/health', clientAddress: expected })
  }
  expect(readConfig({}).trustProxy).toBe(false)
  expect(readConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
  expect(() => readConfig({ TRUST_PROXY: 'maybe' })).toThrow(ConfigError)
})

test('over a real socket the log line carries the client address (or, with TRUST_PROXY, the forwarded one)', async () => {
  const dir = tempDir('request-log-')
  const port = freePort()
  const server = Bun.spawn([process.execPath, join(import.meta.dir, '../../src/main.ts')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir.path,
      INIT_ADMIN_API_TOKENS: ADMIN_SECRET,
      LOG_LEVEL: 'info',
      TRUST_PROXY: 'true',
    },
    stdout: 'pipe',
    stderr: 'ignore',
  })
  try {
    const base = `http://127.0.0.1:${port}`
    await untilReady(base, { process: server })
    await fetch(`${base}/health`, { headers: { 'x-request-id': 'from-the-socket' } })
    await fetch(`${base}/health`, { headers: { 'x-request-id': 'from-a-proxy', 'x-forwarded-for': '198.51.100.7' } })
    // The access log is written after the answer: read until both lines are there, not for a fixed time.
    let stdout = ''
    const reading = (async () => {
      for await (const chunk of server.stdout) stdout += new TextDecoder().decode(chunk)
    })()
    await waitFor(
      () => stdout.includes('"from-the-socket"') && stdout.includes('"from-a-proxy"'),
      'both access log lines',
    )
    server.kill('SIGTERM')
    await server.exited
    await reading
    const lines = stdout
      .split('\n')
      .filter(line => line.startsWith('{'))
      .map(line => JSON.parse(line))
    const byId = (id: string) => lines.find(line => line.requestId === id)
    expect(byId('from-the-socket')).toMatchObject({
      msg: 'request',
      route: '/health',
      status: 200,
      clientAddress: '127.0.0.1',
    })
    expect(byId('from-a-proxy')).toMatchObject({
      msg: 'request',
      route: '/health',
      status: 200,
      clientAddress: '198.51.100.7',
    })
  } finally {
    server.kill('SIGKILL')
    dir.remove()
  }
}, 30_000)
