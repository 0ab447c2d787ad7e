/**
 * Issue 18 item 8 over a real socket: a raw client (not a browser, fetch or curl, whose URL parsers
 * resolve them first) sends "." and ".." path segments, also as %2E, and Bun resolves them in
 * `request.url`. The service answers 400 for every such path, in any parameter of any operation of
 * the OpenAPI document, and changes nothing; the same paths spelled plainly still work.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { tempDir } from '../helpers/files'
import { freePort } from '../helpers/processes'
import { ADMIN_SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
const SPELLINGS = ['..', '.', '%2E%2E', '%2e', '.%2E', '%2e.']

let proc: Subprocess<'ignore', 'pipe', 'pipe'>
let base: string
let port: number
const dir = tempDir('flags-raw-paths-')

beforeAll(async () => {
  port = freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of ['BODY_LIMIT', 'SYNC']) delete env[key]
  proc = Bun.spawn([BUN, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir.path, 'data'),
      INIT_ADMIN_API_TOKENS: ADMIN_SECRET,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  base = `http://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}`)
    const response = await fetch(`${base}/ready`).catch(() => undefined)
    if (response?.status === 200) break
    if (attempt > 600) throw new Error('server did not become ready')
    await Bun.sleep(50)
  }
})

afterAll(async () => {
  if (proc.exitCode === null) {
    proc.kill('SIGTERM')
    await proc.exited
  }
  dir.remove()
})

function api(method: string, path: string, body?: unknown) {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: ADMIN_SECRET, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

/** Sends the request target exactly as given, as a raw client can; answers the status and body. */
function raw(method: string, target: string, body = ''): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const headers = [
        `${method} ${target} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: ${ADMIN_SECRET}`,
        'Connection: close',
      ]
      if (body) headers.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`)
      socket.write(`${headers.join('\r\n')}\r\n\r\n${body}`)
    })
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', chunk => (text += chunk))
    socket.on('error', reject)
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1])
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) })
    })
  })
}

/** Sends `target` raw (a write with an empty JSON body) and expects the 400 that says why. */
async function expectRefused(method: string, target: string) {
  const answer = await raw(method, target, method === 'GET' || method === 'DELETE' ? '' : '{}')
  expect({ target: `${method} ${target}`, status: answer.status }).toEqual({
    target: `${method} ${target}`,
    status: 400,
  })
  // OFREP's routes say it in their own shape (errorDetails).
  const error = JSON.parse(answer.body) as { message?: string; errorDetails?: string }
  expect(error.message ?? error.errorDetails).toContain('"." or ".."')
}

/** The paths of the served OpenAPI document, with their operations. */
async function documentPaths() {
  const document = (await (await fetch(`${base}/swagger/json`)).json()) as {
    paths: Record<string, Record<string, unknown>>
  }
  return document.paths
}

test('a dot segment in any parameter of any operation, sent raw in any spelling, is refused with 400 and changes nothing', async () => {
  expect((await api('POST', '/api/admin/context', { name: 'plan', legalValues: [{ value: 'pro' }] })).status).toBe(201)
  expect((await api('POST', '/api/admin/projects/default/features', { name: 'f' })).status).toBe(201)
  const paths = await documentPaths()
  const stateBefore = await (await api('GET', '/api/admin/context/plan')).text()
  const eventsBefore = ((await (await api('GET', '/api/admin/search/events?limit=1')).json()) as { total: number })
    .total
  let sent = 0
  for (const [template, methods] of Object.entries(paths)) {
    const params = [...template.matchAll(/\{([^}]+)\}/g)].map(match => match[1])
    for (const method of Object.keys(methods).map(name => name.toUpperCase())) {
      for (const param of params) {
        for (const dots of SPELLINGS) {
          const target = template.replace(/\{([^}]+)\}/g, (_, name: string) =>
            name === param ? dots : name === 'contextField' ? 'plan' : name === 'featureName' ? 'f' : 'x',
          )
          await expectRefused(method, target)
          sent++
        }
      }
    }
  }
  expect(sent).toBeGreaterThan(500)
  // The case of the issue: the legal value "..", which no longer deletes the field.
  expect((await raw('DELETE', '/api/admin/context/plan/legal-values/%2E%2E')).status).toBe(400)
  expect(await (await api('GET', '/api/admin/context/plan')).text()).toBe(stateBefore)
  expect(((await (await api('GET', '/api/admin/search/events?limit=1')).json()) as { total: number }).total).toBe(
    eventsBefore,
  )
  // A backslash, which the URL parser reads as "/", is refused alike; plain paths, and values with %2F or %25, still answer.
  expect((await raw('GET', '/api/admin\\context/plan')).status).toBe(400)
  expect((await raw('GET', '/api/admin/context/plan')).status).toBe(200)
  expect((await raw('POST', '/api/admin/context/plan/legal-values', JSON.stringify({ value: 'a/b%' }))).status).toBe(
    200,
  )
  expect((await raw('DELETE', '/api/admin/context/plan/legal-values/a%2Fb%25')).status).toBe(200)
  expect(await (await api('GET', '/api/admin/context/plan')).text()).toBe(stateBefore)
})

test('a path without parameters is routed exactly as sent, and refused once a dot segment is put in it', async () => {
  // Bun's static routes (http/routing.ts exactPaths) take a target only when it is spelled as the
  // route's path; every other spelling still goes through the comparison of its segments.
  const paths = await documentPaths()
  const exact = Object.keys(paths).filter(path => !path.includes('{'))
  expect(exact.length).toBeGreaterThan(30)
  let refused = 0
  for (const path of exact) {
    const method = Object.keys(paths[path]!)[0]!.toUpperCase()
    const segments = path.split('/')
    const last = segments.pop()!
    for (const dots of SPELLINGS) {
      // Resolved, each target is the path itself: "." drops out, ".." takes "x" with it.
      const target = `${segments.join('/')}${decodeURIComponent(dots) === '..' ? '/x' : ''}/${dots}/${last}`
      await expectRefused(method, target)
      refused++
    }
  }
  expect(refused).toBe(exact.length * SPELLINGS.length)
  expect((await raw('GET', '/api/admin/projects')).status).toBe(200)
  expect((await raw('GET', '/health')).body).toBe('{"health":"GOOD"}')
  expect((await raw('POST', '/api/admin/features/validate', JSON.stringify({ name: 'free-name' }))).status).toBe(200)
}, 30_000)
