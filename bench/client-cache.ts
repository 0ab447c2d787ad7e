/**
 * What one client token's varied queries cost the others (issue 18 item 13), in process through
 * `app.handle` (no sockets), run by hand:
 *
 *   bun bench/client-cache.ts [--requests 50] [--between 70] [--rounds 5] [--flood none|all] [--src src[,other/src]]
 *
 * 1,000 flags as in bench/client.ts. Token `steady` (all projects, production) asks the plain
 * list; token `flooder` (all projects, production: another token, the same scope) asks
 * `?namePrefix=x<i>` with a new i each time: a query that serves nothing, cheap to ask and to
 * answer, but new every time (`--flood all`: `?project=default&project=p<i>`, which serves all
 * 1,000 flags, the costliest new query). Per copy of src/ (`--src`, as in bench/request-cost.ts: an older
 * commit's copy unpacked inside this checkout), the median over rounds of the µs per request of:
 * - steady alone (its answer kept);
 * - steady while flooded: `--between` flood requests (more than the 64 scopes kept) before each
 *   of its own, steady's timed only;
 * - a flood request (what the flooder's own requests cost).
 * Copies alternate within each round, so they see the same load.
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { addClientStrategies, fmt, median, removeDir, ROOT, SECRET, seedDataDir, table, tempDataDir } from './lib'

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50' },
    between: { type: 'string', default: '70' },
    rounds: { type: 'string', default: '5' },
    flood: { type: 'string', default: 'none' },
    src: { type: 'string', default: 'src' },
  },
})
const REQUESTS = Number(values.requests)
const BETWEEN = Number(values.between)
const ROUNDS = Number(values.rounds)
const FLAGS = 1000
const ENVIRONMENT = 'production'

interface Subject {
  name: string
  app: { handle(request: Request): Promise<Response> }
  steady: Record<string, string>
  flooder: Record<string, string>
  close(): Promise<void>
  results: Record<'alone' | 'flooded' | 'flood', number[]>
}

async function subject(name: string, dir: string): Promise<Subject> {
  const src = resolve(ROOT, name)
  const { createApp } = await import(`${src}/app.ts`)
  const { createServices, initialise, openStore, stopWorkers } = await import(`${src}/services.ts`)
  const store = await openStore(dir, { sync: false })
  const services = createServices(store, { metricsFlushMs: 3_600_000 })
  await initialise(services, [SECRET])
  const app = createApp(services, { bodyLimit: 102400 })
  const token = async (tokenName: string) => {
    const response = await app.handle(
      new Request('http://localhost/api/admin/api-tokens', {
        method: 'POST',
        headers: { authorization: SECRET, 'content-type': 'application/json' },
        body: JSON.stringify({ tokenName, type: 'client', projects: ['*'], environment: ENVIRONMENT }),
      }),
    )
    if (response.status !== 201) throw new Error(`${name}: token creation answered ${response.status}`)
    return { authorization: (await response.json()).secret as string, 'unleash-client-spec': '5.2.0' }
  }
  return {
    name,
    app,
    steady: await token(`steady-${Math.random()}`),
    flooder: await token(`flooder-${Math.random()}`),
    close: async () => {
      await store.close()
      stopWorkers(services)
    },
    results: { alone: [], flooded: [], flood: [] },
  }
}

let floods = 0
async function get(subject: Subject, headers: Record<string, string>, query = ''): Promise<number> {
  const started = performance.now()
  const response = await subject.app.handle(new Request(`http://localhost/api/client/features${query}`, { headers }))
  const body = await response.arrayBuffer()
  const ms = performance.now() - started
  if (response.status !== 200 || (query === '' && body.byteLength < 100_000)) throw new Error(`${subject.name}: status ${response.status}`)
  return ms
}
const floodQuery = values.flood === 'all' ? () => `?project=default&project=p${floods++}` : () => `?namePrefix=x${floods++}`
const micros = (total: number, requests: number) => (total * 1000) / requests

async function round(subject: Subject) {
  await get(subject, subject.steady)
  let alone = 0
  for (let i = 0; i < REQUESTS; i++) alone += await get(subject, subject.steady)
  let flooded = 0
  let flood = 0
  for (let i = 0; i < REQUESTS; i++) {
    for (let k = 0; k < BETWEEN; k++) flood += await get(subject, subject.flooder, floodQuery())
    flooded += await get(subject, subject.steady)
  }
  subject.results.alone.push(micros(alone, REQUESTS))
  subject.results.flooded.push(micros(flooded, REQUESTS))
  subject.results.flood.push(micros(flood, REQUESTS * BETWEEN))
}

const dirs: string[] = []
const subjects: Subject[] = []
try {
  for (const name of values.src.split(',')) {
    const dir = tempDataDir('bench-client-cache-')
    dirs.push(dir)
    seedDataDir(dir, { events: 100, flags: FLAGS, environments: ['development', ENVIRONMENT] })
    addClientStrategies(dir, { flags: FLAGS, segments: 20, environment: ENVIRONMENT })
    subjects.push(await subject(name, dir))
  }
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? subjects : [...subjects].reverse()
    for (const s of order) await round(s)
  }
  const rows = subjects.map((s) => {
    const alone = median(s.results.alone)
    const flooded = median(s.results.flooded)
    return [s.name, fmt(alone, 0), fmt(flooded, 0), fmt(flooded / alone, 1), fmt(median(s.results.flood), 0)]
  })
  console.log(`${FLAGS} flags, ${REQUESTS} steady requests per measure, ${BETWEEN} flood requests (${floodQuery()}) before each, median of ${ROUNDS} rounds (µs per request)`)
  console.log(table(['src', 'steady alone', 'steady while flooded', 'ratio', 'a flood request'], rows))
} finally {
  for (const s of subjects) await s.close()
  for (const dir of dirs) removeDir(dir)
}
