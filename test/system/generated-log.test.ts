/**
 * The benchmarks' data directory generator (bench/generate-events.ts) writes what the service
 * itself would: the real process opens a generated directory without a warning, replays its
 * journal, takes the admin secret the generator printed, and its searches through the HTTP API
 * give exactly what a brute-force scan of events.jsonl gives (totals, pages, order). The totals
 * the generator reports for its search words are checked too, since the benchmarks rely on them.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateDataDir, type GeneratedManifest } from '../../bench/generate-events'
import type { EventRecord } from '../../src/storage/records'
import { tempDir } from '../helpers/files'
import { freePort, untilReady, waitFor } from '../helpers/processes'

const ROOT = join(import.meta.dir, '../..')
const EVENTS = 20_000
const dir = tempDir('generated-log-')
const dataDir = join(dir.path, 'data')
let manifest: GeneratedManifest
let events: EventRecord[]
let server: ReturnType<typeof Bun.spawn>
let base: string
let stderr = ''
const stdout: string[] = []

beforeAll(async () => {
  manifest = await generateDataDir({ events: EVENTS, out: dataDir, flags: 300, projects: 5 })
  events = readFileSync(join(dataDir, 'events.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map(line => JSON.parse(line))
  const port = freePort()
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
  }
  delete env.INIT_ADMIN_API_TOKENS
  server = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  void new Response(server.stderr as ReadableStream).text().then(text => (stderr = text))
  void (async () => {
    for await (const chunk of server.stdout as ReadableStream<Uint8Array>) stdout.push(new TextDecoder().decode(chunk))
  })()
  base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: server })
})

afterAll(async () => {
  server?.kill('SIGTERM')
  await server?.exited
  dir.remove()
})

async function search(params: Record<string, string>) {
  const response = await fetch(`${base}/api/admin/search/events?${new URLSearchParams(params)}`, {
    headers: { authorization: manifest.adminSecret },
  })
  expect(response.status).toBe(200)
  const body = (await response.json()) as { events: EventRecord[]; total: number }
  return { ids: body.events.map(event => event.id), total: body.total }
}

/** The contract's semantics written out plainly: filters, free text over data/preData/tags, newest first. */
function bruteForce(params: Record<string, string>) {
  const query = params.query?.toLowerCase()
  const type = params.type?.slice('IS:'.length)
  const project = params.project?.slice('IS:'.length)
  const matches = events.filter(
    event =>
      (!type || event.type === type) &&
      (!project || event.project === project) &&
      (!query ||
        [event.data, event.preData, event.tags].some(part => JSON.stringify(part).toLowerCase().includes(query))),
  )
  matches.sort((a, b) => b.id - a.id)
  const offset = Number(params.offset ?? 0)
  const limit = Number(params.limit ?? 50)
  return { ids: matches.slice(offset, offset + limit).map(event => event.id), total: matches.length }
}

test('the generated directory holds the events asked for, in the record format, ids 1…N, times increasing', () => {
  expect(events.length).toBe(EVENTS)
  expect(manifest.events).toBe(EVENTS)
  events.forEach((event, i) => expect(event.id).toBe(i + 1))
  expect(events.every((event, i) => i === 0 || event.createdAt >= events[i - 1].createdAt)).toBe(true)
  expect(Object.keys(events[0])).toEqual([
    'id',
    'createdAt',
    'type',
    'createdBy',
    'createdByUserId',
    'environment',
    'project',
    'featureName',
    'data',
    'preData',
    'tags',
  ])
  // Realistic proportions: toggles dominate, then strategy and metadata changes.
  const share = (type: string) => events.filter(event => event.type === type).length / EVENTS
  expect(share('feature-environment-enabled') + share('feature-environment-disabled')).toBeGreaterThan(0.5)
  expect(share('feature-metadata-updated')).toBeGreaterThan(0.03)
  expect(share('feature-strategy-update')).toBeGreaterThan(0.03)
})

test('the service opens it without a warning, replays its journal and takes the generated admin secret', async () => {
  const logLines = () =>
    stdout
      .join('')
      .split('\n')
      .filter(Boolean)
      .map(line => JSON.parse(line))
  // `/ready` may answer before the event log is loaded (the search loads it behind): its line comes then.
  await waitFor(() => logLines().some(line => line.msg === 'ready'), 'the "ready" log line')
  expect(logLines().filter(line => line.level !== 'info')).toEqual([])
  expect(stderr).toBe('')
  const ready = logLines().find(line => line.msg === 'ready')
  expect(ready.events).toBe(EVENTS)
  // The last journal entry's flag, as the journal puts it, is what the API shows.
  const journal = readFileSync(join(dataDir, 'state.journal.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map(line => JSON.parse(line))
  expect(journal.length).toBeGreaterThan(0)
  const [, name, flag] = journal.at(-1).changes[0]
  const response = await fetch(`${base}/api/admin/projects/${flag.project}/features/${name}`, {
    headers: { authorization: manifest.adminSecret },
  })
  expect(response.status).toBe(200)
  expect((await response.json()).description).toBe(flag.description)
  const projects = await (
    await fetch(`${base}/api/admin/projects`, { headers: { authorization: manifest.adminSecret } })
  ).json()
  expect(projects.projects.length).toBe(5)
})

test('searches through the API equal a brute-force scan, and the generator reports the exact totals of its words', async () => {
  const { rare, thousands, most } = manifest.words
  for (const { word, total } of [rare, thousands, most]) expect(bruteForce({ query: word }).total).toBe(total)
  const cases: Record<string, string>[] = [
    { query: rare.word },
    { query: thousands.word },
    { query: most.word },
    { query: most.word.toUpperCase(), limit: '1000', offset: String(most.total - 500) },
    { query: thousands.word.slice(2, 8) },
    { query: 'release notes' },
    { query: 'switch kill' },
    { type: 'IS:feature-strategy-update' },
    { type: 'IS:feature-metadata-updated', query: thousands.word, limit: '10' },
    { project: 'IS:default', query: 'checkout' },
    { offset: String(EVENTS - 50) },
    { offset: String(EVENTS - 7), limit: '20' },
  ]
  for (const params of cases) expect({ params, ...(await search(params)) }).toEqual({ params, ...bruteForce(params) })
})
