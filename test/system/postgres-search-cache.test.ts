/**
 * SEARCH_CACHE_DIR with the real process on PostgreSQL: the `ready` log line says how many events
 * the event search found in its local copy and how many it read from the database; a restart after
 * SIGTERM reads none but those written meanwhile, and a second instance given the same directory
 * keeps its own copy beside it while writes cross between them. A database of the test process's
 * private cluster; runs wherever PostgreSQL is installed.
 */
import { afterAll, afterEach, expect } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/files'
import { freePort, untilReady, waitFor } from '../helpers/processes'
import { needs, TOOLS } from '../tools'
import { testCluster } from '../test-store'

const ROOT = join(import.meta.dir, '../..')
const SECRET = '*:*.search-cache-admin-secret-01'
const dir = tempDir('pg-search-cache-')
const running: Server[] = []
afterEach(async () => {
  for (const server of running.splice(0)) {
    server.proc.kill('SIGKILL')
    await server.proc.exited
  }
})
afterAll(() => dir.remove())

interface Server {
  proc: ReturnType<typeof Bun.spawn>
  base: string
  lines: Record<string, unknown>[]
}

async function collect(stream: ReadableStream<Uint8Array>, lines: Record<string, unknown>[]) {
  let rest = ''
  const decoder = new TextDecoder()
  for await (const chunk of stream) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n')
    rest = parts.pop()!
    for (const part of parts) if (part.startsWith('{')) lines.push(JSON.parse(part))
  }
}

async function serve(url: string): Promise<Server> {
  const port = freePort()
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATABASE_URL: url,
    SEARCH_CACHE_DIR: join(dir.path, 'cache'),
    DATA_DIR: join(dir.path, 'unused'),
    INIT_ADMIN_API_TOKENS: SECRET,
  }
  for (const key of Object.keys(env)) if (key.startsWith('DATABASE_') && key !== 'DATABASE_URL') delete env[key]
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const server = { proc, base: `http://127.0.0.1:${port}`, lines: [] }
  running.push(server)
  void collect(proc.stdout as ReadableStream<Uint8Array>, server.lines)
  void collect(proc.stderr as ReadableStream<Uint8Array>, server.lines)
  await untilReady(server.base, { process: proc, ms: 60_000 })
  return server
}

/** The `ready` line: logged once the event search holds the whole log. */
async function readyLine(server: Server): Promise<Record<string, unknown>> {
  await waitFor(() => server.lines.some(line => line.msg === 'ready'), 'the ready log line', { ms: 60_000 })
  return server.lines.find(line => line.msg === 'ready')!
}

const api = (server: Server, path: string, init: RequestInit = {}) =>
  fetch(`${server.base}${path}`, { ...init, headers: { authorization: SECRET, 'content-type': 'application/json' } })
const found = async (server: Server, query: string) =>
  ((await (await api(server, `/api/admin/search/events?query=${query}`)).json()) as { total: number }).total

needs(TOOLS.postgres).test(
  'a restarted process reads from the database only the events written since it stopped; two share a SEARCH_CACHE_DIR',
  async () => {
    const pg = await testCluster()
    const url = await pg.createDatabase(`search_cache_${process.pid}`)
    const first = await serve(url)
    const seeded = await readyLine(first)
    expect(seeded).toMatchObject({ fromCopy: 0, fromDatabase: seeded.events })
    for (let i = 0; i < 100; i++)
      expect(
        (
          await api(first, '/api/admin/projects/default/features', {
            method: 'POST',
            body: JSON.stringify({ name: `cached-${i}` }),
          })
        ).status,
      ).toBe(201)
    expect(await found(first, 'cached-99')).toBe(1)
    const events = (seeded.events as number) + 100
    first.proc.kill('SIGTERM')
    expect(await first.proc.exited).toBe(0)

    const again = await serve(url)
    expect(await readyLine(again)).toMatchObject({ events, fromCopy: events, fromDatabase: 0 })
    // A second instance beside it takes a directory of its own in SEARCH_CACHE_DIR; its writes are found on the first.
    const beside = await serve(url)
    expect(readdirSync(join(dir.path, 'cache')).sort()).toEqual(['0', '1'])
    expect(await readyLine(beside)).toMatchObject({ events, fromCopy: 0, fromDatabase: events })
    expect(
      (
        await api(beside, '/api/admin/projects/default/features', {
          method: 'POST',
          body: JSON.stringify({ name: 'written-beside' }),
        })
      ).status,
    ).toBe(201)
    await waitFor(
      async () => (await found(again, 'written-beside')) === 1,
      'the write of the second instance found on the first',
    )
    expect(await found(again, 'cached-')).toBe(100)
  },
  120_000,
)
