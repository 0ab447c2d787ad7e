/**
 * The service's own cost per request, in process, run by hand:
 *
 *   npx bun bench/run.ts cost-process [--root DIR] [--batches 40] [--batch 200] [--only metrics,...]
 *
 * This tree's app and, with `--root DIR` (a checkout holding src/ and node_modules), that tree's,
 * each on its own copy of one data directory (`--flags` flags, `--events` events), answer the
 * paths of bench/cost.ts through `app.handle` (no sockets, no access log line, which the server
 * writes). Batches of `--batch` sequential requests alternate between the trees, which goes first
 * turning each time; a batch's figure is the process's CPU (every thread: the search worker too)
 * per request. Prints the median per path and tree, and the ratio of the other tree to this one.
 */
import { existsSync } from 'node:fs'
import type { Store } from '../src/storage/store'
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { metricsBody } from './cost'
import { fmt, median, options, removeDir, SECRET, seedDataDir, table, tempDataDir } from './lib'

interface App {
  handle(request: Request): Promise<Response>
}

/** This tree's or `root`'s app on `dir`, with a client and a frontend token; `close` stops its workers. */
async function openApp(root: string, dir: string) {
  const services = await import(join(root, 'src/services.ts'))
  const { createApp } = await import(join(root, 'src/app.ts'))
  const store = await (await openStoreOf(root))(dir, { sync: true })
  const built = services.createServices(store, { metricsFlushMs: 3_600_000 })
  const app: App = createApp(built, { bodyLimit: 102_400 })
  await services.initialise(built, [SECRET])
  const token = async (type: string) => {
    const body = JSON.stringify({ tokenName: `cost-${type}`, type, projects: ['*'], environment: 'development' })
    const headers = { authorization: SECRET, 'content-type': 'application/json' }
    const request = new Request('http://bench/api/admin/api-tokens', { method: 'POST', headers, body })
    return (await (await app.handle(request)).json()).secret as string
  }
  const secrets = { admin: SECRET, client: await token('client'), frontend: await token('frontend') }
  const close = async () => {
    services.stopWorkers(built)
    await store.close()
  }
  return { app, secrets, close }
}

type Opened = Awaited<ReturnType<typeof openApp>>

const PATHS = {
  validate: { path: '/api/admin/features/validate', body: '{"name":"free-name"}', token: 'admin' },
  metrics: { path: '/api/client/metrics', body: metricsBody(24), token: 'client' },
  'search-type': { path: '/api/admin/search/events?type=IS:feature-tagged&limit=50', token: 'admin' },
  '304': { path: '/api/client/features', token: 'client', etag: true },
  frontend: { path: '/api/frontend?userId=17&sessionId=4', token: 'frontend' },
} as Record<string, { path: string; body?: string; token: 'admin' | 'client' | 'frontend'; etag?: boolean }>

/** `openStore` of the checkout at `root`: in src/open-store.ts, or in src/services.ts in older trees. */
export async function openStoreOf(root: string): Promise<(dir: string, options: { sync: boolean }) => Promise<Store>> {
  const file = existsSync(join(root, 'src/open-store.ts')) ? 'src/open-store.ts' : 'src/services.ts'
  return (await import(join(root, file))).openStore
}

export async function requestCostInProcess() {
  const o = options({ root: '', batches: 40, batch: 200, only: '', flags: 1000, events: 20000 })
  const names = o.only ? o.only.split(',') : Object.keys(PATHS)
  const roots = [join(import.meta.dir, '..'), ...(o.root ? [o.root] : [])]
  const dirs = roots.map(() => tempDataDir('bench-cost-process-'))
  seedDataDir(dirs[0]!, { events: o.events, flags: o.flags })
  for (const dir of dirs.slice(1)) cpSync(dirs[0]!, dir, { recursive: true })
  const apps: Opened[] = []
  try {
    for (const [i, root] of roots.entries()) apps.push(await openApp(root, dirs[i]!))
    const rows: string[][] = []
    for (const name of names) {
      const spec = PATHS[name]!
      const etags = new Map<Opened, string>()
      const request = (opened: Opened) => {
        const headers: Record<string, string> = { authorization: opened.secrets[spec.token] }
        if (spec.body) headers['content-type'] = 'application/json'
        if (spec.etag && etags.has(opened)) headers['if-none-match'] = etags.get(opened)!
        return new Request(`http://bench${spec.path}`, { method: spec.body ? 'POST' : 'GET', headers, body: spec.body })
      }
      for (const opened of apps) {
        const first = await opened.app.handle(request(opened))
        if (first.status >= 300) throw new Error(`${name}: ${first.status} ${await first.text()}`)
        etags.set(opened, first.headers.get('etag') ?? '')
      }
      const batch = async (opened: Opened) => {
        const started = process.cpuUsage()
        for (let i = 0; i < o.batch; i++) {
          const response = await opened.app.handle(request(opened))
          await response.arrayBuffer()
          if (response.status >= 300 && response.status !== 304) throw new Error(`${name}: ${response.status}`)
        }
        const used = process.cpuUsage(started)
        return (used.user + used.system) / o.batch
      }
      for (const opened of apps) for (let i = 0; i < 3; i++) await batch(opened)
      const figures = apps.map(() => [] as number[])
      for (let b = 0; b < o.batches; b++)
        for (let t = 0; t < apps.length; t++) {
          const i = (t + b) % apps.length
          figures[i]!.push(await batch(apps[i]!))
        }
      const medians = figures.map(median)
      rows.push([
        name,
        ...medians.map(us => fmt(us, 1)),
        ...(medians.length > 1 ? [fmt(medians[1]! / medians[0]!, 2)] : []),
      ])
      console.log(rows.at(-1)!.join('  '))
    }
    const headers = ['path', 'this tree µs', ...(o.root ? [`${o.root} µs`, 'other / this'] : [])]
    console.log(
      `\nCPU per request through app.handle, medians of ${o.batches} batches of ${o.batch}\n${table(headers, rows)}`,
    )
  } finally {
    for (const opened of apps) await opened.close()
    for (const dir of dirs) removeDir(dir)
  }
}
