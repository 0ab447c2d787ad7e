/**
 * The README's API tour works as printed: start the real server the way the tour says (on a free
 * port and a temp directory), run every shell block of the tour with bash, and fail on any HTTP
 * error (curl is wrapped with --fail-with-body).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, freePort, untilReady } from '../helpers'

const ROOT = join(import.meta.dir, '../..')
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const tour = readme.slice(readme.indexOf('## A tour of the API'), readme.indexOf('### Operations'))
const blocks = [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1])
const secret = /INIT_ADMIN_API_TOKENS='([^']+)'/.exec(tour)?.[1]

const dir = tempDir('readme-')
const port = freePort()
let server: ReturnType<typeof Bun.spawn> | undefined

beforeAll(async () => {
  server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir.path, INIT_ADMIN_API_TOKENS: secret },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  await untilReady(`http://127.0.0.1:${port}`, { path: '/health', process: server })
})

afterAll(async () => {
  server?.kill('SIGTERM')
  await server?.exited
  dir.remove()
})

test('the tour starts the service with a known admin secret', () => {
  expect(secret).toBeDefined()
  expect(blocks[0]).toContain('npm start')
  expect(blocks.length).toBeGreaterThan(4)
})

test('every command of the README tour answers without an HTTP error', () => {
  // Block 0 starts the server (done above); the rest run in one shell so exports carry over.
  const script = ['set -euo pipefail', 'curl() { command curl --fail-with-body "$@"; echo; }', ...blocks.slice(1)]
    .join('\n')
    .replace('export URL=http://localhost:4242', `export URL=http://127.0.0.1:${port}`)
  const result = Bun.spawnSync(['bash', '-c', script], { cwd: ROOT })
  const output = result.stdout.toString() + result.stderr.toString()
  expect({ exitCode: result.exitCode, output: result.exitCode === 0 ? '' : output }).toEqual({ exitCode: 0, output: '' })
  expect(output).toContain('"name":"checkout.new-flow"')
  expect(output).toContain('"tokenName":"ci-reader"')
})
