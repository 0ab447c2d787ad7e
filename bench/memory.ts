/**
 * `rest` and `soak`: memory at rest and over time:
 * `rest` seeds an empty server through its API (flags created, then toggled until the log holds
 * `--events` events), searches the log once (which starts the search worker), serves the console's
 * page and each SDK path once, then lets it settle: RSS (anonymous and file-backed) after the
 * seeding and at rest, and where the anonymous part lies (the server's largest mappings). With
 * `--root DIR` (a checkout holding src/ and node_modules) the other code takes turns with this one,
 * run by run. With `--binary` each tree is first compiled as `npm run build` does (`bun build
 * --compile`), which is what the Docker image runs. With `--restart` the server is restarted on its
 * seeded directory before the calls, so that what is at rest is what a start reads and indexes.
 *
 * `soak` runs mixed load on one server for `--minutes` (an hour unless told) on `--events` synthetic
 * events and `--flags` flags: `--connections` keep-alive clients at `--rate` requests/s in all, one
 * request in 50 a write (PATCH, toggle, tag added or removed), the rest admin lists and flags, SDK
 * polls (two in three with the ETag), SDK metrics from 20 applications and 200 instances, the
 * frontend API for a new user each time, event searches by word and by type, name validations.
 * Prints errors, p99 and RSS each minute. Every write adds an event, which the search keeps (in
 * memory until 65,536 make a segment): about 10 events a second at the default rate. `--readsOnly`
 * leaves the writes out (those requests are reads), so that the log does not grow.
 */
import { Memory } from 'lowdb'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { COLLECTIONS } from '../src/feature-list'
import { createServices } from '../src/services'
import { MemoryEventLog } from '../src/storage/event-log'
import { FilesLog } from '../src/storage/files-log'
import type { StateDoc } from '../src/storage/records'
import { MemoryJournal } from '../src/storage/state-journal'
import { Store } from '../src/storage/store'
import {
  api,
  createToken,
  fmt,
  freePort,
  loadAverage,
  median,
  options,
  processMemory,
  removeDir,
  SECRET,
  seedDataDir,
  table,
  tempDataDir,
  untilReady,
  type SpawnedServer,
} from './lib'

/** A server of this tree or of `root`, from source or compiled, on an empty data directory. */
async function startTree(root: string | undefined, binary: string | undefined, dataDir: string) {
  const port = freePort()
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    INIT_ADMIN_API_TOKENS: SECRET,
  }
  const command = binary ? [binary, 'serve'] : [process.execPath, 'src/main.ts']
  const child = Bun.spawn(command, {
    cwd: root ?? join(import.meta.dir, '..'),
    env,
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const server: SpawnedServer = {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid,
    spawnedAt: performance.now(),
    log: [],
    exited: child.exited,
    stop: () => (child.kill('SIGTERM'), child.exited),
  }
  await untilReady(server)
  return server
}

/** Compiles a tree as `npm run build` does; the executable's path. */
async function compile(root: string, out: string): Promise<string> {
  const entries = ['src/main.ts', 'src/features/events/search/event-search.worker.ts']
  const build = Bun.spawn([process.execPath, 'build', '--compile', '--minify', ...entries, '--outfile', out], {
    cwd: root,
    stdout: 'ignore',
    stderr: 'inherit',
  })
  if ((await build.exited) !== 0) throw new Error(`bun build failed in ${root}`)
  return out
}

/** Runs `count` calls of `call(i)` on `connections` concurrent loops. */
async function inParallel(count: number, connections: number, call: (i: number) => Promise<unknown>) {
  let next = 0
  const loop = async () => {
    for (let i = next++; i < count; i = next++) await call(i)
  }
  await Promise.all(Array.from({ length: connections }, loop))
}

const FEATURES = '/api/admin/projects/default/features'

/** Flags created, then toggled in development until the log holds `events` events; the log's total. */
async function seed(base: string, flags: number, events: number): Promise<number> {
  await inParallel(flags, 8, i => api(base, 'POST', FEATURES, { name: `flag-${i}`, description: `flag ${i}` }))
  const total = async () => (await api(base, 'GET', '/api/admin/search/events?limit=1')).total as number
  const left = events - (await total())
  await inParallel(left, 8, i =>
    api(
      base,
      'POST',
      `${FEATURES}/flag-${i % flags}/environments/development/${Math.floor(i / flags) % 2 ? 'off' : 'on'}`,
    ),
  )
  return total()
}

/** One call of each kind the server answers, so that each path's caches and code are in place. */
async function touchEachPath(base: string, client: string, frontend: string) {
  const auth = (secret: string) => ({ authorization: secret, 'content-type': 'application/json' })
  const toggles = { 'flag-1': { yes: 3, no: 1, variants: {} } }
  const metrics = { appName: 'rest', instanceId: 'i-1', bucket: { start: new Date(), stop: new Date(), toggles } }
  const calls: [string, RequestInit][] = [
    ['/', {}],
    [FEATURES, { headers: auth(SECRET) }],
    ['/api/admin/search/events?type=IS:feature-environment-enabled&limit=50', { headers: auth(SECRET) }],
    ['/api/admin/search/events?query=flag-7&limit=50', { headers: auth(SECRET) }],
    ['/api/client/features', { headers: auth(client) }],
    ['/api/client/metrics', { method: 'POST', headers: auth(client), body: JSON.stringify(metrics) }],
    ['/api/frontend?userId=1', { headers: auth(frontend) }],
  ]
  for (const [path, init] of calls) {
    const response = await fetch(base + path, init)
    await response.arrayBuffer()
    if (response.status >= 300) throw new Error(`${path} → ${response.status}`)
  }
}

/** The largest mappings of a process by resident size (/proc/<pid>/smaps): name (or [anon]) and MiB. */
function largestMappings(pid: number, count = 4): string {
  const resident = new Map<string, number>()
  let name = ''
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) name = line.trim().split(/\s+/)[5] ?? '[anon]'
    else if (line.startsWith('Rss:'))
      resident.set(name, (resident.get(name) ?? 0) + Number(line.split(/\s+/)[1]) / 1024)
  }
  const largest = [...resident].sort((a, b) => b[1] - a[1]).slice(0, count)
  return largest.map(([mapping, mib]) => `${mapping.split('/').at(-1)} ${fmt(mib, 1)}`).join(', ')
}

export async function rest() {
  const o = options({ flags: 1000, events: 20000, runs: 2, root: '', binary: false, settle: 10, restart: false })
  const trees: { name: string; root?: string; binary?: string }[] = [{ name: 'this tree' }]
  if (o.root) trees.push({ name: o.root, root: o.root })
  if (o.binary) {
    for (const [i, tree] of trees.entries())
      tree.binary = await compile(tree.root ?? join(import.meta.dir, '..'), `/tmp/flagstore-rest-${process.pid}-${i}`)
  }
  const rows: (string | number)[][] = []
  const atRest = new Map<string, number[]>()
  for (let run = 0; run < o.runs; run++)
    for (const tree of run % 2 ? [...trees].reverse() : trees) {
      const dir = tempDataDir('bench-rest-')
      let server = await startTree(tree.root, tree.binary, dir)
      try {
        const started = processMemory(server.pid)
        const events = await seed(server.base, o.flags, o.events)
        const seeded = processMemory(server.pid)
        if (o.restart) {
          await server.stop()
          server = await startTree(tree.root, tree.binary, dir)
        }
        const client = await createToken(server.base, 'client', 'development')
        const frontend = await createToken(server.base, 'frontend', 'development')
        await touchEachPath(server.base, client, frontend)
        await Bun.sleep(o.settle * 1000)
        const memory = processMemory(server.pid)
        atRest.set(tree.name, [...(atRest.get(tree.name) ?? []), memory.rss])
        rows.push([
          run + 1,
          tree.name,
          events,
          fmt(started.rss, 0),
          fmt(seeded.rss, 0),
          `${fmt(memory.rss, 0)} (${fmt(memory.anon, 0)} + ${fmt(memory.file, 0)})`,
          fmt(memory.hwm, 0),
          largestMappings(server.pid),
        ])
        console.log(rows.at(-1)!.join('  '))
      } finally {
        await server.stop()
        removeDir(dir)
      }
    }
  for (const tree of trees) if (tree.binary) removeDir(tree.binary)
  const headers = ['run', 'tree', 'events', 'RSS started', 'seeded', 'at rest (anon + file)', 'peak', 'largest (MiB)']
  console.log(`\n${table(headers, rows)}`)
  for (const [name, values] of atRest) console.log(`${name}: RSS at rest, median ${fmt(median(values), 1)} MiB`)
  console.log(`load average ${loadAverage()}`)
}

/** One request of the soak's mix: method, path, body, and which secret it authenticates with. */
type Call = [method: string, path: string, body: unknown, secret: 'admin' | 'client' | 'frontend']

/** The soak's n-th request: one in 50 a write (none without `withWrites`), the rest admin reads, SDK polls and metrics, frontend, searches. */
function soakCall(n: number, flags: number, withWrites = true): { call: Call; etag: boolean } {
  const flag = `flag-${(n * 7919) % flags}`
  const write = Math.floor(n / 50)
  if (withWrites && n % 50 === 49) {
    const target = `flag-${Math.floor(write / 3) % flags}`
    const tagged = Math.floor(write / (3 * flags)) % 2 === 0
    const writes: Call[] = [
      ['PATCH', `${FEATURES}/${flag}`, [{ op: 'replace', path: '/description', value: `soak ${n}` }], 'admin'],
      ['POST', `${FEATURES}/${flag}/environments/development/${write % 2 === 0 ? 'on' : 'off'}`, undefined, 'admin'],
      tagged
        ? ['POST', `/api/admin/features/${target}/tags`, { value: 'soak-tag', type: 'simple' }, 'admin']
        : ['DELETE', `/api/admin/features/${target}/tags/simple/soak-tag`, undefined, 'admin'],
    ]
    return { call: writes[write % 3]!, etag: false }
  }
  const toggles = { [flag]: { yes: 2, no: 1, variants: {} }, 'flag-1': { yes: 1, no: 0, variants: {} } }
  const bucket = { start: new Date().toISOString(), stop: new Date().toISOString(), toggles }
  const reads: Call[] = [
    ['GET', FEATURES, undefined, 'admin'],
    ['GET', `${FEATURES}/${flag}`, undefined, 'admin'],
    ['GET', '/api/client/features', undefined, 'client'],
    ['GET', '/api/client/features', undefined, 'client'],
    ['GET', '/api/client/features', undefined, 'client'],
    ['POST', '/api/client/metrics', { appName: `app-${n % 20}`, instanceId: `i-${n % 200}`, bucket }, 'client'],
    ['GET', `/api/frontend?userId=${n}&sessionId=${n % 1000}`, undefined, 'frontend'],
    [
      'GET',
      `/api/admin/search/events?query=${['often', 'kalomi', 'soak', 'flag-7'][n % 4]}&limit=20`,
      undefined,
      'admin',
    ],
    ['GET', '/api/admin/search/events?type=IS:feature-tagged&limit=50', undefined, 'admin'],
    ['POST', '/api/admin/features/validate', { name: `free-${n}` }, 'admin'],
  ]
  // Two client polls in three carry the ETag, as an SDK's do.
  return { call: reads[n % reads.length]!, etag: n % reads.length === 3 || n % reads.length === 4 }
}

export async function soak() {
  const o = options({
    minutes: 60,
    root: '',
    binary: false,
    flags: 1000,
    events: 20000,
    rate: 500,
    connections: 16,
    readsOnly: false,
  })
  const root = o.root || undefined
  const binary = o.binary
    ? await compile(root ?? join(import.meta.dir, '..'), `/tmp/flagstore-soak-${process.pid}`)
    : undefined
  const dir = tempDataDir('bench-soak-')
  seedDataDir(dir, { events: o.events, flags: o.flags })
  const server = await startTree(root, binary, dir)
  try {
    const secrets = {
      admin: SECRET,
      client: await createToken(server.base, 'client', 'development'),
      frontend: await createToken(server.base, 'frontend', 'development'),
    }
    const poll = await fetch(`${server.base}/api/client/features`, { headers: { authorization: secrets.client } })
    const etag = poll.headers.get('etag') ?? ''
    let counter = 0
    const rows: (string | number)[][] = []
    const first = processMemory(server.pid)
    console.log(`seeded ${o.events} events, ${o.flags} flags; RSS at the start ${fmt(first.rss, 1)} MiB`)
    for (let minute = 1; minute <= o.minutes; minute++) {
      const stats = { requests: 0, errors: 0, latencies: [] as number[], examples: [] as string[] }
      const stopAt = performance.now() + 60_000
      const client = async () => {
        while (performance.now() < stopAt) {
          const started = performance.now()
          const { call, etag: withEtag } = soakCall(counter++, o.flags, !o.readsOnly)
          const [method, path, body, secret] = call
          const headers: Record<string, string> = { authorization: secrets[secret] }
          if (body !== undefined) headers['content-type'] = 'application/json'
          if (withEtag) headers['if-none-match'] = etag
          const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }
          const status = await fetch(server.base + path, init)
            .then(async response => (await response.arrayBuffer(), response.status))
            .catch(String)
          if (typeof status !== 'number' || status >= 400) {
            stats.errors++
            if (stats.examples.length < 5) stats.examples.push(`${method} ${path} → ${status}`)
          }
          stats.requests++
          stats.latencies.push(performance.now() - started)
          const pause = (o.connections * 1000) / o.rate - (performance.now() - started)
          if (pause > 0) await Bun.sleep(pause)
        }
      }
      await Promise.all(Array.from({ length: o.connections }, client))
      const memory = processMemory(server.pid)
      stats.latencies.sort((a, b) => a - b)
      const p99 = stats.latencies[Math.floor(stats.latencies.length * 0.99)] ?? NaN
      rows.push([minute, stats.requests, stats.errors, fmt(p99, 1), fmt(memory.rss, 1), fmt(memory.anon, 1)])
      console.log(
        `minute ${minute}: ${rows.at(-1)!.slice(1).join('  ')}${stats.examples.length ? `  ${stats.examples.join('; ')}` : ''}`,
      )
    }
    const headers = ['minute', 'requests', 'errors', 'p99 ms', 'RSS MiB', 'anonymous MiB']
    console.log(`\n${table(headers, rows)}`)
    const rss = rows.map(row => Number(row[4]))
    const errors = rows.reduce((n, row) => n + Number(row[2]), 0)
    const change = (rss.at(-1)! / rss[0]! - 1) * 100
    console.log(
      `${errors} errors; RSS after the last minute ${fmt(change, 1)} % from after the first, peak ${fmt(processMemory(server.pid).hwm, 0)} MiB`,
    )
  } finally {
    await server.stop()
    removeDir(dir)
    if (binary) removeDir(binary)
  }
}

/**
 * `addons-waiting`: what 100,000 waiting deliveries cost, in process: memory (the events of the
 * in-memory log included), their bytes in the state, and making the checkpoint's JSON.
 */
export async function addonsWaiting() {
  const opts = options({ waiting: 100_000 })
  const store = await Store.open(
    new FilesLog({ checkpoint: new Memory<StateDoc>(), journal: new MemoryJournal(), events: new MemoryEventLog() }),
    { collections: COLLECTIONS },
  )
  // A receiver that never answers within the deadline: every delivery stays waiting.
  const services = createServices(store, { addons: { timeoutMs: 3_600_000 } })
  const hang = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Promise<Response>(() => {}) })
  const actor = { name: 'bench', userId: null }
  await store.transact(actor, tx =>
    tx.put('addons', '1', {
      id: 1,
      provider: 'webhook',
      enabled: true,
      description: '',
      parameters: { url: `http://127.0.0.1:${hang.port}/`, signingSecret: 'x' },
      events: ['feature-metadata-updated'],
      projects: [],
      environments: [],
      createdAt: tx.now,
    }),
  )
  Bun.gc(true)
  const before = process.memoryUsage()
  for (let made = 0; made < opts.waiting; made += 1000)
    await store.transact(actor, tx => {
      for (let i = 0; i < 1000; i++)
        tx.appendEvent({
          type: 'feature-metadata-updated',
          project: 'default',
          featureName: `f-${(made + i) % 500}`,
          data: { description: `change ${made + i}` },
          preData: { description: '' },
        })
    })
  Bun.gc(true)
  const after = process.memoryUsage()
  const bytes = Buffer.byteLength(JSON.stringify(store.state.addonDeliveries))
  const started = performance.now()
  const stateBytes = Buffer.byteLength(JSON.stringify(store.state))
  const checkpointMs = performance.now() - started
  const waiting = services.addons.deliveryLog('1').waitingCount
  services.addonDispatcher.close()
  hang.stop(true)
  console.log(
    table(
      [
        'waiting deliveries',
        'heap added',
        'RSS added',
        'their bytes in state.json',
        'per delivery',
        'state.json made (JSON)',
      ],
      [
        [
          waiting,
          `${fmt((after.heapUsed - before.heapUsed) / 2 ** 20, 1)} MiB`,
          `${fmt((after.rss - before.rss) / 2 ** 20, 1)} MiB`,
          `${fmt(bytes / 2 ** 20, 1)} MiB`,
          `${fmt(bytes / waiting, 0)} B`,
          `${fmt(stateBytes / 2 ** 20, 1)} MiB in ${fmt(checkpointMs, 0)} ms`,
        ],
      ],
    ),
  )
  process.exit(0)
}
