/**
 * The in-process cost of one request through `app.handle` (no sockets), and of the metrics'
 * share of it: what the access log and the metrics add to every request. Run by hand:
 *
 *   bun bench/request-cost.ts [--requests 20000] [--rounds 9] [--src src[,other/src]]
 *
 * `--src` takes one or more copies of src/ (say, an older commit's, from
 * `git archive <commit> src | tar -x -C /some/dir`, inside this checkout so that node_modules
 * resolve): their apps are built in this one process and timed in alternating rounds, which is
 * what makes a comparison mean something on a noisy machine. The log is formatted at `info` into a
 * sink that drops the lines (the cost of the line, not of the pipe behind it). Prints, per copy,
 * the median µs of the rounds for POST /api/admin/features/validate, GET /health, and
 * `Metrics.observeRequest` alone.
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { median, ROOT, SECRET } from './lib'

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '9' }, src: { type: 'string', default: 'src' } },
})
const REQUESTS = Number(values.requests)
const ROUNDS = Number(values.rounds)

interface Subject {
  name: string
  app: { handle(request: Request): Promise<Response> }
  metrics: { observeRequest(method: string, route: string | null, status: number, seconds: number): void }
  close(): Promise<void>
  logged: () => number
  results: Record<'validate' | 'health' | 'observe', number[]>
}

async function subject(name: string): Promise<Subject> {
  const src = resolve(ROOT, name)
  const { createApp } = await import(`${src}/app.ts`)
  const { createServices, initialise, openStore, stopWorkers } = await import(`${src}/services.ts`)
  const { Logger } = await import(`${src}/log.ts`)
  const { Metrics } = await import(`${src}/http/metrics.ts`)
  const store = await openStore(null, { sync: false })
  const services = createServices(store)
  await initialise(services, [SECRET])
  await services.events.load()
  let logged = 0
  const app = createApp(services, { bodyLimit: 102400 }, new Logger('info', () => logged++))
  return {
    name,
    app,
    metrics: new Metrics(store),
    logged: () => logged,
    close: async () => {
      await store.close()
      stopWorkers(services)
    },
    results: { validate: [], health: [], observe: [] },
  }
}

const validate = () =>
  new Request('http://localhost/api/admin/features/validate', {
    method: 'POST',
    headers: { authorization: SECRET, 'content-type': 'application/json' },
    body: '{"name":"checkout.new-flow"}',
  })
const health = () => new Request('http://localhost/health')

async function perRequestMicros(subject: Subject, make: () => Request): Promise<number> {
  const started = performance.now()
  for (let i = 0; i < REQUESTS; i++) {
    const response = await subject.app.handle(make())
    if (response.status !== 200) throw new Error(`${subject.name}: status ${response.status}: ${await response.text()}`)
  }
  return ((performance.now() - started) * 1000) / REQUESTS
}

function observeMicros(subject: Subject): number {
  const routes = ['/health', '/api/admin/features/validate', '/api/admin/projects/:projectId/features', null]
  const started = performance.now()
  for (let i = 0; i < REQUESTS * 10; i++) subject.metrics.observeRequest('GET', routes[i & 3], 200, 0.0003)
  return ((performance.now() - started) * 1000) / (REQUESTS * 10)
}

const subjects: Subject[] = []
for (const name of values.src!.split(',')) subjects.push(await subject(name))
for (const s of subjects) {
  await perRequestMicros(s, validate) // warm-up
  await perRequestMicros(s, health)
  observeMicros(s)
}
for (let round = 0; round < ROUNDS; round++) {
  for (const s of round % 2 === 0 ? subjects : [...subjects].reverse()) {
    s.results.validate.push(await perRequestMicros(s, validate))
    s.results.health.push(await perRequestMicros(s, health))
    s.results.observe.push(observeMicros(s))
  }
}
await Bun.sleep(10)
console.log(`median of ${ROUNDS} alternating rounds of ${REQUESTS} requests (observeRequest: ${REQUESTS * 10} calls), ${new Date().toISOString()}`)
for (const s of subjects) {
  if (s.logged() < REQUESTS) throw new Error(`${s.name}: only ${s.logged()} log lines were made`)
  const { validate, health, observe } = s.results
  console.log(`${s.name.padEnd(24)} validate ${median(validate).toFixed(2)} µs  /health ${median(health).toFixed(2)} µs  observeRequest ${median(observe).toFixed(3)} µs`)
  await s.close()
}
