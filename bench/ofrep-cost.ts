/**
 * The in-process CPU cost of OFREP's requests through `app.handle` (no sockets), beside the frontend
 * API's and the client API's 304, on the frontend benchmark's 1,000 flags. Run by hand:
 *
 *   bun bench/ofrep-cost.ts [--requests 4000] [--rounds 7] [--src src[,other/src]]
 *
 * `--src` takes one or more copies of src/ (`git archive <commit> src | tar -x -C old/`, inside this
 * checkout so that node_modules resolve): their apps are built in this one process and timed in
 * alternating rounds, which is what makes a before/after comparison mean something on a loaded
 * machine. The log is formatted at `info` into a sink that drops the lines. Prints, per copy, the
 * median CPU µs per request of the rounds: the OFREP 304 path (one context, If-None-Match), the
 * OFREP bulk answer and the frontend API's (a new user per request, as bench/ofrep.ts), the client
 * API's 304, and the answers' sizes.
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { addFrontendFlags, ENVIRONMENT, FLAGS } from './frontend-data'
import { median, removeDir, ROOT, SECRET, seedDataDir, tempDataDir } from './lib'

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '7' }, src: { type: 'string', default: 'src' }, only: { type: 'string' } },
})
const REQUESTS = Number(values.requests)
const ROUNDS = Number(values.rounds)

const ALL = ['ofrep304', 'ofrep', 'frontend', 'client304'] as const
type Scenario = (typeof ALL)[number]
/** `--only ofrep,frontend`: some of them (for a profile). */
const SCENARIOS = values.only ? ALL.filter((s) => values.only!.split(',').includes(s)) : ALL

interface Subject {
  name: string
  make: Record<Scenario, (n: number) => Request>
  handle(request: Request): Promise<Response>
  close(): Promise<void>
  results: Record<Scenario, number[]>
  sizes: Partial<Record<Scenario, number>>
}

const dir = tempDataDir()
seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ['development', 'production'] })
addFrontendFlags(dir)

const ofrepBody = (n: number) =>
  JSON.stringify({ context: { targetingKey: `user-${n % 5000}`, sessionId: `session-${n}`, email: `user-${n}@example.com`, appVersion: '1.4.0', region: 'eu-west', age: String(15 + (n % 10)) } })
const frontendBody = (n: number) =>
  JSON.stringify({ context: { userId: `user-${n % 5000}`, sessionId: `session-${n}`, properties: { email: `user-${n}@example.com`, appVersion: '1.4.0', region: 'eu-west', age: String(15 + (n % 10)) } } })

async function subject(name: string): Promise<Subject> {
  const src = resolve(ROOT, name)
  const { createApp } = await import(`${src}/app.ts`)
  const { createServices, initialise, openStore, stopWorkers } = await import(`${src}/services.ts`)
  const { Logger } = await import(`${src}/log.ts`)
  // Each copy reads the same seeded directory, in memory afterwards (sync off, nothing written by the runs).
  const store = await openStore(dir, { sync: false })
  const services = createServices(store)
  await initialise(services, [SECRET])
  await services.events.load()
  const app = createApp(services, { bodyLimit: 102400 }, new Logger('info', () => {}))
  const handle = (request: Request): Promise<Response> => app.handle(request)
  const token = async (type: string) => {
    const response = await handle(
      new Request('http://localhost/api/admin/api-tokens', {
        method: 'POST',
        headers: { authorization: SECRET, 'content-type': 'application/json' },
        body: JSON.stringify({ tokenName: `cost-${type}-${crypto.randomUUID()}`, type, projects: ['*'], environment: ENVIRONMENT }),
      }),
    )
    return ((await response.json()) as { secret: string }).secret
  }
  const frontend = await token('frontend')
  const client = await token('client')
  const post = (path: string, secret: string, body: string, headers: Record<string, string> = {}) =>
    new Request(`http://localhost${path}`, { method: 'POST', headers: { authorization: secret, 'content-type': 'application/json', ...headers }, body })
  const etag = (await handle(post('/ofrep/v1/evaluate/flags', frontend, ofrepBody(1)))).headers.get('etag')!
  const clientEtag = (await handle(new Request('http://localhost/api/client/features', { headers: { authorization: client } }))).headers.get('etag')!
  return {
    name,
    handle,
    make: {
      ofrep304: () => post('/ofrep/v1/evaluate/flags', frontend, ofrepBody(1), { 'if-none-match': etag }),
      ofrep: (n) => post('/ofrep/v1/evaluate/flags', frontend, ofrepBody(n)),
      frontend: (n) => post('/api/frontend', frontend, frontendBody(n)),
      client304: () => new Request('http://localhost/api/client/features', { headers: { authorization: client, 'if-none-match': clientEtag } }),
    },
    close: async () => {
      await store.close()
      stopWorkers(services)
    },
    results: { ofrep304: [], ofrep: [], frontend: [], client304: [] },
    sizes: {},
  }
}

const cpu = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

async function perRequestMicros(subject: Subject, scenario: Scenario, count: number): Promise<number> {
  const make = subject.make[scenario]
  const expected = scenario.endsWith('304') ? 304 : 200
  let bytes = 0
  const started = cpu()
  for (let i = 0; i < count; i++) {
    const response = await subject.handle(make(i))
    if (response.status !== expected) throw new Error(`${subject.name} ${scenario}: status ${response.status}: ${await response.text()}`)
    if (expected === 200) bytes += (await response.arrayBuffer()).byteLength
  }
  const micros = (cpu() - started) / count
  if (expected === 200) subject.sizes[scenario] = Math.round(bytes / count)
  return micros
}

const subjects: Subject[] = []
try {
  for (const name of values.src!.split(',')) subjects.push(await subject(name))
  for (const s of subjects) for (const scenario of SCENARIOS) await perRequestMicros(s, scenario, 500)
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      for (const scenario of SCENARIOS) {
        // The evaluating scenarios cost about ten times a 304: fewer requests keep the rounds alike in length.
        const count = scenario === 'ofrep' || scenario === 'frontend' ? Math.ceil(REQUESTS / 8) : REQUESTS
        s.results[scenario].push(await perRequestMicros(s, scenario, count))
      }
    }
  }
  console.log(`CPU µs per request, median of ${ROUNDS} alternating rounds, ${new Date().toISOString()}, load ${require('node:os').loadavg()[0].toFixed(1)}`)
  for (const s of subjects) {
    const r = s.results
    const m = (scenario: Scenario) => (r[scenario].length ? median(r[scenario]).toFixed(1) : '-')
    console.log(
      `${s.name.padEnd(20)} OFREP 304 ${m('ofrep304')}  OFREP bulk ${m('ofrep')}  frontend ${m('frontend')}  (OFREP/frontend ${(median(r.ofrep) / median(r.frontend)).toFixed(2)})  client 304 ${m('client304')}  sizes ${JSON.stringify(s.sizes)}`,
    )
  }
} finally {
  for (const s of subjects) await s.close()
  removeDir(dir)
}
