/**
 * Misbehaving clients on a real socket: truncated, slow and oversized bodies, and too many headers.
 * The server answers what it can with a JSON error, never crashes, and goes on serving.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { freePort, tempDir, untilReady, waitFor } from '../helpers'
import { LATE_WHOLE_BYTES } from '../../src/http/plugins'

const ROOT = join(import.meta.dir, '../..')
const SECRET = '*:*.transport-test-secret-0123'
const dir = tempDir('transport-')
const port = freePort()
let server: ReturnType<typeof Bun.spawn>

beforeAll(async () => {
  server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir.path, INIT_ADMIN_API_TOKENS: SECRET },
    stdout: 'ignore',
    stderr: 'ignore',
  })
  await untilReady(`http://127.0.0.1:${port}`, { process: server })
})

afterAll(async () => {
  server.kill('SIGTERM')
  await server.exited
  dir.remove()
})

/** Whether `received` holds a whole HTTP response: its head and all of its body (by Content-Length or chunked). */
function wholeResponse(received: string): boolean {
  const end = received.indexOf('\r\n\r\n')
  if (end === -1) return false
  const head = received.slice(0, end).toLowerCase()
  const body = received.slice(end + 4)
  const length = /\r\ncontent-length: *(\d+)/.exec(head)
  if (length) return Buffer.byteLength(body, 'latin1') >= Number(length[1])
  if (/\r\ntransfer-encoding: *chunked/.test(head)) return body.endsWith('0\r\n\r\n')
  return false
}

/**
 * Sends raw bytes (in pieces, with pauses) and returns what came back once a whole response came or
 * the server closed (waiting as long as a loaded machine needs), or, with `hangUpAfterMs`, whatever
 * came before the client hangs up that long after sending.
 */
async function raw(pieces: (string | number)[], options: { hangUpAfterMs?: number } = {}): Promise<string> {
  const socket: Socket = connect(port, '127.0.0.1')
  let received = ''
  let closed = false
  socket.on('data', data => (received += data.toString('latin1')))
  socket.on('close', () => (closed = true))
  socket.on('error', () => {})
  await new Promise<void>(resolve => socket.on('connect', () => resolve()))
  for (const piece of pieces) {
    if (typeof piece === 'number') await Bun.sleep(piece)
    else socket.write(piece)
  }
  if (options.hangUpAfterMs !== undefined) await Bun.sleep(options.hangUpAfterMs)
  else await waitFor(() => closed || wholeResponse(received), 'a whole response or the server closing', { every: 5 })
  socket.destroy()
  return received
}

function head(method: string, path: string, extra: Record<string, string | number>) {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: ${SECRET}`]
  for (const [name, value] of Object.entries(extra)) lines.push(`${name}: ${value}`)
  return lines.join('\r\n') + '\r\n\r\n'
}

async function healthy() {
  const response = await fetch(`http://127.0.0.1:${port}/health`)
  expect(response.status).toBe(200)
}

test('a body announced as 10 MB gets a JSON 413 at once, before any of it is sent', async () => {
  const answer = await raw([
    head('POST', '/api/admin/features/validate', { 'Content-Type': 'application/json', 'Content-Length': 10_000_000 }),
  ])
  expect(answer).toStartWith('HTTP/1.1 413')
  expect(answer).toContain('"name":"ContentTooLarge"')
  await healthy()
})

test('a body cut short (the client hangs up mid-body) leaves the server serving and changes nothing', async () => {
  const before = await Bun.file(join(dir.path, 'events.jsonl')).text()
  await raw(
    [
      head('POST', '/api/admin/projects/default/features', {
        'Content-Type': 'application/json',
        'Content-Length': 200,
      }),
      '{"name":"cut-',
    ],
    { hangUpAfterMs: 300 },
  )
  await healthy()
  expect(await Bun.file(join(dir.path, 'events.jsonl')).text()).toBe(before)
  const flags = await fetch(`http://127.0.0.1:${port}/api/admin/projects/default/features`, {
    headers: { authorization: SECRET },
  })
  expect((await flags.json()).features).toEqual([])
})

test('a body sent slowly, in pieces with pauses, is answered normally', async () => {
  const body = '{"name":"slow-but-fine"}'
  const pieces: (string | number)[] = [
    head('POST', '/api/admin/features/validate', {
      'Content-Type': 'application/json',
      'Content-Length': body.length,
      Connection: 'close',
    }),
  ]
  for (const chunk of body.match(/.{1,6}/g)!) pieces.push(chunk, 150)
  const answer = await raw(pieces)
  expect(answer).toStartWith('HTTP/1.1 200')
})

test('thousands of headers are refused by the runtime (431) and the server goes on serving', async () => {
  const many: Record<string, string> = {}
  for (let i = 0; i < 5000; i++) many[`X-Header-${i}`] = 'v'
  const answer = await raw([head('GET', '/health', many)])
  expect(answer).toStartWith('HTTP/1.1 431')
  await healthy()
})

test('a chunked body that grows past the limit gets a JSON 413', async () => {
  const chunk = 'a'.repeat(50_000)
  const pieces = [
    head('POST', '/api/admin/features/validate', {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
    }),
  ]
  for (let i = 0; i < 4; i++) pieces.push(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
  const answer = await raw(pieces)
  expect(answer).toStartWith('HTTP/1.1 413')
  expect(answer).toContain('"name":"ContentTooLarge"')
  await healthy()
})

test('a GET with a Content-Type but no body is answered at once (no body is waited for)', async () => {
  const answer = await raw([head('GET', '/api/admin/search/events?limit=1', { 'Content-Type': 'application/json' })])
  expect(answer).toStartWith('HTTP/1.1 200')
})

test('a POST with neither Content-Length nor Transfer-Encoding has no body: a 400 at once, not a wait', async () => {
  const answer = await raw([head('POST', '/api/admin/features/validate', { 'Content-Type': 'application/json' })])
  expect(answer).toStartWith('HTTP/1.1 400')
})

/** The body of a raw 200 answer sent chunked, in one chunk of more than 14 KiB, as UTF-8 text. */
function oneChunk(answer: string): string {
  const end = answer.indexOf('\r\n\r\n')
  const head = answer.slice(0, end).toLowerCase()
  expect(head).toStartWith('http/1.1 200')
  expect(head).toContain('\r\ntransfer-encoding: chunked')
  expect(head).not.toContain('content-length')
  // One chunk: its size in hexadecimal, the JSON, then the chunked encoding's end.
  const [size, ...rest] = answer.slice(end + 4).split('\r\n')
  const json = rest.join('\r\n').slice(0, -'\r\n0\r\n\r\n'.length)
  expect(Number.parseInt(size!, 16)).toBe(Buffer.byteLength(json, 'latin1'))
  expect(Buffer.byteLength(json, 'latin1')).toBeGreaterThan(LATE_WHOLE_BYTES)
  return Buffer.from(json, 'latin1').toString('utf8')
}

test('answers over 14 KiB made after a worker, a commit or a turn of the loop come chunked and whole', async () => {
  // Bun sends a large response finished after its request's turn uncorked, one header piece a
  // segment (http/plugins.ts lateResponse): the event search waits for its worker, the
  // export for its event's commit.
  const description = 'd'.repeat(900)
  for (let i = 0; i < 24; i++) {
    const created = await fetch(`http://127.0.0.1:${port}/api/admin/projects/default/features`, {
      method: 'POST',
      headers: { authorization: SECRET, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `late-answer-${i}`, description }),
    })
    expect(created.status).toBe(201)
  }
  const names = Array.from({ length: 24 }, (_, i) => `late-answer-${i}`)
  const search = (limit: number) =>
    raw([head('GET', `/api/admin/search/events?type=IS:feature-created&limit=${limit}`, {})])
  const page = JSON.parse(oneChunk(await search(24)))
  expect(page.total).toBe(24)
  expect(page.events.map((event: { featureName: string }) => event.featureName)).toEqual(names.toReversed())
  const small = await search(1)
  expect(small).toMatch(/\r\ncontent-length: \d+\r\n/i)
  expect(JSON.parse(small.slice(small.indexOf('\r\n\r\n') + 4)).events).toHaveLength(1)

  const body = JSON.stringify({ environment: 'development', features: names })
  const exportHead = head('POST', '/api/admin/features-batch/export', {
    'Content-Type': 'application/json',
    'Content-Length': body.length,
  })
  const exported = JSON.parse(oneChunk(await raw([exportHead + body])))
  expect(exported.features.map((flag: { name: string }) => flag.name).toSorted()).toEqual(names.toSorted())
  // The scrape measures the event loop's lag first; with the series of a few more routes it passes 14 KiB.
  for (const path of ['projects', 'environments', 'tag-types', 'segments', 'context', 'strategies'])
    expect(
      (await fetch(`http://127.0.0.1:${port}/api/admin/${path}`, { headers: { authorization: SECRET } })).status,
    ).toBe(200)
  const scrape = oneChunk(await raw([head('GET', '/internal-backstage/prometheus', {})]))
  expect(scrape).toContain('\nhttp_requests_total{')
  await healthy()
})
