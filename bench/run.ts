/**
 * The one entry point of the benchmarks, run by hand, never by the test suite:
 *
 *   npx bun bench/run.ts <scenario> [options]     run one scenario (its options below)
 *   npx bun bench/run.ts --help                   list the scenarios
 *
 * Each scenario is a function of a module of bench/ that reads its options from process.argv
 * (`options`, below); the runner hands it the arguments after the scenario's name. Figures and targets are
 * in docs/benchmarks.md. The modules, by what their scenarios measure:
 * - admin paths: admin.ts (admin, console, console-propagation);
 * - SDK paths: sdk.ts (client, metrics, usage-memory), frontend.ts (frontend, frontend-eval, ofrep,
 *   playground), edge.ts; streaming: streaming.ts;
 * - audit log: search.ts (storage, search at 1M events), audit-log.ts and audit-memory.ts (10M
 *   events, on a directory from generate-events.ts; audit-memory.ts also holds what the three share);
 *   PostgreSQL: postgres.ts (with Unleash 8.2 beside it);
 * - memory: memory.ts (rest, soak, addons-waiting); per request: cost.ts (cost, cost-process, tokens).
 * Shared by all: lib.ts (servers, the bare Bun server, load tools, statistics), data.ts (synthetic
 * data directories and flags).
 */
import { parseArgs } from 'node:util'
import { generateDataDir } from './generate-events'

type Option = string | number | boolean | undefined
type Options<T> = { [K in keyof T]: T[K] extends number ? number : T[K] extends boolean ? boolean : T[K] }

/**
 * The scenario's options from process.argv (the runner hands it the arguments after its name):
 * each default gives the option's type (a number, a boolean flag, a string; undefined: a string
 * with no default). An unknown option is an error.
 */
export function options<T extends Record<string, Option>>(defaults: T): Options<T> {
  const spec = Object.fromEntries(
    Object.entries(defaults).map(([name, value]) =>
      typeof value === 'boolean'
        ? [name, { type: 'boolean' as const, default: value }]
        : [name, { type: 'string' as const, ...(value === undefined ? {} : { default: String(value) }) }],
    ),
  )
  const values = parseArgs({ options: spec }).values as Record<string, string | boolean | undefined>
  return Object.fromEntries(
    Object.entries(defaults).map(([name, value]) => [
      name,
      typeof value === 'number' ? Number(values[name]) : values[name],
    ]),
  ) as Options<T>
}

interface Scenario {
  /** The module of bench/ (without .ts) and its function that runs the scenario. */
  module?: string
  fn?: string
  /** In the runner itself, for a scenario without a module of its own. */
  run?: () => Promise<void>
  area: string
  what: string
  options: string
  /** Tools it needs beyond Bun. */
  needs?: string[]
}

/** Writes the 10M-event data directory of the audit-log scenarios (bench/generate-events.ts). */
async function generate() {
  const o = options({ events: 10000000, out: '/tmp/flagstore-10m', flags: 3000, projects: 30, seed: 21 })
  const manifest = await generateDataDir({ ...o, log: line => console.log(line) })
  console.log(JSON.stringify(manifest, null, 2))
  console.log(`\nData directory: ${o.out}  (${(manifest.bytes / manifest.events).toFixed(0)} bytes per event)`)
  console.log(`Admin token: ${manifest.adminSecret}`)
  console.log(`Start it: DATA_DIR=${o.out} npx bun src/main.ts`)
}

export const SCENARIOS: Record<string, Scenario> = {
  admin: {
    module: 'admin',
    fn: 'adminPaths',
    area: 'admin paths',
    what: 'project flag list, name validation, /health, bulk off of 1,000 flags, next to a bare Bun server',
    options: '[--runs 3] [--seconds 10]',
    needs: ['wrk'],
  },
  storage: {
    module: 'search',
    fn: 'storage',
    area: 'admin paths',
    what: 'PATCH on a long log against a short one, durable writes, start-up, memory',
    options: '[--events 1000000] [--flags 10000] [--runs 3]',
  },
  search: {
    module: 'search',
    fn: 'eventSearch',
    area: 'audit log',
    what: 'event search at 1,000,000 events, /health under heavy searches and deep pages',
    options: '[--events 1000000] [--runs 3] [--only pages] [--clients 50] [--seconds 10]',
  },
  generate: {
    run: generate,
    area: 'audit log at scale',
    what: 'writes the data directory of the 10M scenarios (and <out>.generated.json)',
    options: '[--events 10000000] [--out DIR] [--flags 3000] [--projects 30] [--seed 21]',
  },
  audit: {
    module: 'audit-log',
    fn: 'auditLog',
    area: 'audit log at scale',
    what: 'restart, search, memory and writes at ten million events (a directory from `generate`)',
    options: '--dir DIR [--runs 2] [--seconds 10] [--cold] [--patch-seconds 30] [--no-load]',
    needs: ['wrk'],
  },
  'audit-cold': {
    module: 'audit-memory',
    fn: 'auditCold',
    area: 'audit log at scale',
    what: 'a start without search segments: searches and /health during the rebuild (deletes DIR/search)',
    options: '--dir DIR [--root DIR] [--limit 1800]',
  },
  memory: {
    module: 'audit-memory',
    fn: 'auditMemory',
    area: 'memory',
    what: 'resident memory at 10M events by kind of query, optionally with the files evicted from the page cache',
    options: '--dir DIR [--evict] [--seconds 10]',
    needs: ['wrk'],
  },
  rest: {
    module: 'memory',
    fn: 'rest',
    area: 'memory',
    what: 'RSS at rest after seeding flags and events through the API, optionally next to another tree',
    options: '[--flags 1000] [--events 20000] [--runs 2] [--root DIR] [--binary] [--settle 10]',
  },
  soak: {
    module: 'memory',
    fn: 'soak',
    area: 'memory',
    what: 'mixed admin, SDK, frontend and search load for minutes: errors, latency, RSS per minute',
    options: '[--minutes 60] [--rate 500] [--connections 16] [--events 20000] [--flags 1000] [--root DIR] [--binary]',
  },
  cost: {
    module: 'cost',
    fn: 'requestCost',
    area: 'per request',
    what: 'server CPU per request of the hot paths next to a bare Bun server, optionally next to another tree',
    options:
      '[--rounds 5] [--seconds 4] [--root DIR] [--bareWork US] [--only 304,client,validate,metrics,search-type,frontend,health]',
    needs: ['wrk'],
  },
  'cost-process': {
    module: 'cost',
    fn: 'requestCostInProcess',
    area: 'per request',
    what: "the service's CPU per request through app.handle, in batches taking turns with another tree",
    options: '[--root DIR] [--batches 40] [--batch 200] [--only validate,metrics,search-type,304,frontend]',
  },
  playground: {
    module: 'frontend',
    fn: 'playgroundAnswer',
    area: 'admin paths',
    what: 'POST /api/admin/playground and /advanced answering 1,000 flags, one request after another',
    options: '[--runs 3] [--requests 200]',
  },
  client: {
    module: 'sdk',
    fn: 'clientApi',
    area: 'SDK paths',
    what: 'GET /api/client/features next to a bare Bun server, time from a write until it is visible',
    options: '[--runs 3] [--seconds 10] [--writes 50]',
    needs: ['wrk'],
  },
  metrics: {
    module: 'sdk',
    fn: 'sdkMetrics',
    area: 'SDK paths',
    what: 'POST /api/client/metrics throughput and exact counts',
    options: '[--runs 3] [--seconds 10] [--amount 100000]',
    needs: ['wrk'],
  },
  'usage-memory': {
    module: 'sdk',
    fn: 'usageMemory',
    area: 'SDK paths',
    what: 'RSS with 48 hours of usage history (in process, on an injected clock)',
    options: '[--flags 1000] [--environments 3] [--apps 20] [--hours 48]',
  },
  frontend: {
    module: 'frontend',
    fn: 'frontendApi',
    area: 'SDK paths',
    what: 'GET /api/frontend, 1,000 flags, a new user each request',
    options: '[--runs 3] [--seconds 10]',
    needs: ['wrk'],
  },
  'frontend-eval': {
    module: 'frontend',
    fn: 'frontendEval',
    area: 'SDK paths',
    what: 'evaluation cost per flag in process, next to the official SDK engine',
    options: '[--rounds 2000]',
  },
  tokens: {
    module: 'cost',
    fn: 'tokenCount',
    area: 'SDK paths',
    what: 'request cost with 5,000 tokens against 1, in process and over HTTP',
    options: '[--tokens 5000] [--requests 20000] [--rounds 7] [--http-runs 5] [--seconds 5]',
  },
  streaming: {
    module: 'streaming',
    fn: 'streaming',
    area: 'streaming',
    what: 'a change delivered to 1,000 and 10,000 streams, memory per stream, the cost of idle streams',
    options:
      '[--streams 1000,10000] [--writes 20] [--sdk-writes 50] [--idle 10000] [--idle-rounds 3] [--seconds 10] [--runs 1]',
    needs: ['wrk'],
  },

  edge: {
    module: 'edge',
    fn: 'edge',
    area: 'SDK paths',
    what: "frontend API, OFREP bulk and client API on one pinned core, Unleash Edge's dataset shape (350 flags)",
    options: '[--seconds 5] [--rounds 3] [--connections 16] [--users 10000] [--quiet] [--profile DIR]',
    needs: ['wrk', 'taskset'],
  },
  ofrep: {
    module: 'frontend',
    fn: 'ofrep',
    area: 'OFREP',
    what: 'OFREP bulk evaluation next to the frontend API, the OFREP and client API 304 paths',
    options: '[--runs 3] [--slices 4] [--seconds 5]',
    needs: ['wrk'],
  },
  postgres: {
    module: 'postgres',
    fn: 'postgres',
    area: 'PostgreSQL',
    what: 'the PostgreSQL store next to the file store and Unleash 8.2: writes, reads, propagation, start-up',
    options: '[--unleash DIR] [--runs 3] [--only throughput,propagation,startup] [--fill restore]',
  },
  console: {
    module: 'admin',
    fn: 'consolePage',
    area: 'admin paths',
    what: 'sign-in cost, the console assets, the project page of 10,000 flags in Chromium',
    options: '[--runs 3]',
  },

  'addons-waiting': {
    module: 'memory',
    fn: 'addonsWaiting',
    area: 'integrations',
    what: 'memory and state bytes of 100,000 waiting deliveries, in process',
    options: '[--waiting 100000]',
  },
  'console-propagation': {
    module: 'admin',
    fn: 'consolePropagation',
    area: 'admin paths',
    what: 'a toggle in the console until an SDK sees it',
    options: '[--toggles 20] [--interval 1000]',
  },
}

function help(): string {
  const width = Math.max(...Object.keys(SCENARIOS).map(name => name.length))
  const lines = Object.entries(SCENARIOS).map(
    ([name, s]) =>
      `  ${name.padEnd(width)}  ${s.area}: ${s.what}\n  ${' '.repeat(width)}  ${s.options}${s.needs ? `  (needs ${s.needs.join(', ')})` : ''}`,
  )
  return `Usage: npx bun bench/run.ts <scenario> [options]\n\nScenarios (figures in docs/benchmarks.md):\n${lines.join('\n')}\n`
}

/** Runs the scenario named on the command line (the module only lists them when imported). */
async function main() {
  const [name, ...args] = process.argv.slice(2)
  if (!name || name === '--help' || name === '-h') {
    console.log(help())
    process.exit(name ? 0 : 1)
  }
  const scenario = SCENARIOS[name]
  if (!scenario) {
    console.error(`Unknown scenario "${name}".\n\n${help()}`)
    process.exit(1)
  }
  if (args.includes('--help')) {
    console.log(`npx bun bench/run.ts ${name} ${scenario.options}\n\n${scenario.area}: ${scenario.what}`)
    process.exit(0)
  }
  for (const tool of scenario.needs ?? []) {
    if (!Bun.which(tool)) {
      console.error(`The ${name} scenario needs ${tool} (Debian: apt-get install ${tool}).`)
      process.exit(1)
    }
  }
  // The scenario reads process.argv (options) as if it had been started on its own.
  process.argv = [process.argv[0]!, `${import.meta.dir}/run.ts`, ...args]
  if (scenario.run) await scenario.run()
  else {
    const module = (await import(`./${scenario.module}.ts`)) as Record<string, () => Promise<void>>
    await module[scenario.fn!]!()
  }
}

if (import.meta.main) await main()
