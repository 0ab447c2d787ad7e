/**
 * `edge`: frontend evaluation per core next to Unleash Edge's published figures:
 * Edge's benchmark (unleash-edge docs/benchmarking.md): Edge in Docker with --cpus=1, `hey -z 10s`,
 * a dataset of about 100 kB (350 features, 200 strategies) from Unleash's demo instance; 6,900
 * req/s on GET /api/frontend (about 12.5 kB an answer) and 3,236 req/s on GET /api/client/features.
 *
 * Here: 350 flags of that shape (below), the server pinned to core 0 (`taskset -a -cp 0`), wrk
 * (1 thread, `--connections`) pinned to core 1. Each path runs `--rounds` loads of `--seconds`;
 * the server's CPU (user + system, /proc/<pid>/stat) around each load, divided by the responses
 * wrk received, is its CPU per request, and 1 / that is what one core answers when nothing else
 * runs on it: the per-core figure compared with Edge's, which holds on a busy machine where
 * requests/s does not. Paths: the frontend API (GET, query string) and OFREP's bulk evaluation
 * (POST /ofrep/v1/evaluate/flags), each for a context rotating over `--users` users and sessions
 * and for one identical request; the client API's full answer; and a bare Bun server sending a
 * frontend answer's bytes (the floor of any answer that size). `--quiet`: LOG_LEVEL=warn (no
 * access log); `--profile DIR`: the server writes a CPU profile (Bun's --cpu-prof) there on exit.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { STATE_FILE } from '../src/services'
import { contextFromQuery } from '../src/features/evaluation/context'
import { compileScope } from '../src/features/evaluation/scope'
import { frontendAnswers } from '../src/features/frontend/frontend.answers'
import { BULK_END, ofrepAnswers } from '../src/features/ofrep/ofrep.answers'
import { ofrepContext } from '../src/features/ofrep/ofrep.context'
import type { ConstraintRecord, StrategyRecord, VariantRecord } from '../src/features/flags/flags.records'
import {
  bareServer,
  createToken,
  fmt,
  luaScript,
  median,
  options,
  removeDir,
  seedDataDir,
  spawnServer,
  table,
  tempDataDir,
  untilReady,
  wrkCpu,
} from './lib'

export const EDGE_FLAGS = 350
const ENVIRONMENT = 'production'
const SEGMENTS = 6
/** Edge's published requests/s on one CPU. */
const EDGE = { frontend: 6900, client: 3236 }

const constraint = (contextName: string, operator: string, values: string[], value?: string): ConstraintRecord => ({
  contextName,
  operator,
  caseInsensitive: false,
  inverted: false,
  values,
  ...(value === undefined ? {} : { value }),
})

const WORDS = ['checkout', 'search', 'banner', 'onboarding', 'pricing', 'dashboard', 'export', 'chat', 'billing']
const nameOf = (i: number) => `flag-${i}`

function strategy(i: number, k: number, name: string, parameters: Record<string, string>, extra = {}): StrategyRecord {
  return {
    id: `00000000-0000-4000-8000-${(i * 4 + k).toString(16).padStart(12, '0')}`,
    name,
    title: null,
    disabled: false,
    sortOrder: k,
    segments: [],
    constraints: [],
    variants: [],
    parameters,
    ...extra,
  }
}

/**
 * Flag `i`'s strategies, twelve kinds in turn: five kinds with none (on for everyone when the flag
 * is on), then a default with a constraint, flexibleRollout at 50 % and at 100 % with constraints
 * (IN, STR_CONTAINS), userWithId, flexibleRollout with a segment, flexibleRollout with strategy
 * variants and a NUM_GT, and gradualRolloutSessionId with DATE_AFTER and SEMVER_GTE: about 200 in all.
 */
function strategiesOf(i: number): StrategyRecord[] {
  const groupId = nameOf(i)
  const rollout = (percent: number) => ({ rollout: String(percent), stickiness: 'default', groupId })
  switch (i % 12) {
    case 5:
      return [strategy(i, 0, 'default', {}, { constraints: [constraint('appName', 'IN', ['web', 'ios', 'android'])] })]
    case 6:
      return [strategy(i, 0, 'flexibleRollout', rollout(50))]
    case 7: {
      const constraints = [
        constraint('region', 'NOT_IN', ['cn-north', 'ru-central']),
        constraint('email', 'STR_CONTAINS', ['@example.']),
      ]
      return [strategy(i, 0, 'flexibleRollout', rollout(100), { constraints })]
    }
    case 8: {
      const userIds = Array.from({ length: 30 }, (_, k) => `user-${(i * 31 + k * 97) % 10000}`).join(',')
      return [strategy(i, 0, 'userWithId', { userIds })]
    }
    case 9:
      return [strategy(i, 0, 'flexibleRollout', rollout(30), { segments: [1 + (i % SEGMENTS)] })]
    case 10: {
      const half = { weight: 500, weightType: 'variable', stickiness: 'default' }
      const variants = [
        { ...half, name: 'control', payload: { type: 'string', value: 'control' } },
        { ...half, name: 'treatment', payload: { type: 'json', value: `{"layout":"compact","flag":${i}}` } },
      ]
      const constraints = [constraint('age', 'NUM_GT', [], '17')]
      return [strategy(i, 0, 'flexibleRollout', rollout(80), { constraints, variants })]
    }
    case 11: {
      const constraints = [
        constraint('currentTime', 'DATE_AFTER', [], '2024-01-01T00:00:00.000Z'),
        constraint('appVersion', 'SEMVER_GTE', [], '2.0.0'),
      ]
      return [strategy(i, 0, 'gradualRolloutSessionId', { percentage: '40', groupId }, { constraints })]
    }
    default:
      return []
  }
}

/** Flag variants on one kind in six: three with payloads, one with an override. */
function variantsOf(i: number): VariantRecord[] {
  if (i % 6 !== 1) return []
  return ['red', 'green', 'blue'].map((name, k) => ({
    name,
    weight: k === 0 ? 334 : 333,
    weightType: 'variable' as const,
    stickiness: 'default',
    payload: { type: 'string' as const, value: `${name}-${i}` },
    overrides: k === 2 ? [{ contextName: 'userId', values: ['user-1', 'user-2'] }] : [],
  }))
}

/** Rewrites a data directory of seedDataDir (flags `flag-<i>`) with the flags above, two in seven on in production. */
export function edgeFlags(dir: string) {
  const path = join(dir, STATE_FILE)
  const state = JSON.parse(readFileSync(path, 'utf8'))
  const createdAt = new Date(Date.UTC(2025, 0, 1)).toISOString()
  for (let id = 1; id <= SEGMENTS; id++)
    state.segments[String(id)] = {
      id,
      name: `segment-${id}`,
      description: `Customers of tier ${id}`,
      project: null,
      constraints: [
        constraint('region', 'IN', ['eu-west', 'eu-north', `region-${id}`]),
        constraint('plan', 'IN', ['pro', 'enterprise']),
      ],
      createdAt,
      createdBy: 'admin-bootstrap',
    }
  state.segmentSequence.segments = { lastId: SEGMENTS }
  for (let i = 0; i < EDGE_FLAGS; i++) {
    const flag = state.flags[nameOf(i)]
    flag.description = i % 4 === 0 ? `The ${WORDS[i % WORDS.length]} experience` : null
    flag.impressionData = i % 9 === 0
    flag.environments[ENVIRONMENT] = {
      ...flag.environments[ENVIRONMENT],
      enabled: i % 7 < 2,
      strategies: strategiesOf(i),
      variants: variantsOf(i),
    }
  }
  writeFileSync(path, JSON.stringify(state))
}

/** Rotates over `users` users and sessions, with the properties the flags read. */
const rotating = (users: number, method: 'GET' | 'POST') => `
counter = 0
${method === 'POST' ? 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"' : ''}
request = function()
  counter = counter + 1
  local n = counter % ${users}
  local region = (n % 5 == 0) and "eu-north" or "eu-west"
  local plan = (n % 3 == 0) and "pro" or "free"
${
  method === 'GET'
    ? `  local path = "/api/frontend?appName=web&userId=user-" .. n .. "&sessionId=session-" .. n ..
    "&properties%5Bemail%5D=user-" .. n .. "%40example.com&region=" .. region .. "&plan=" .. plan ..
    "&age=" .. (15 + n % 30) .. "&appVersion=2." .. (n % 4) .. ".0"
  return wrk.format(nil, path)`
    : `  local body = '{"context":{"targetingKey":"user-' .. n .. '","sessionId":"session-' .. n ..
    '","appName":"web","email":"user-' .. n .. '@example.com","region":"' .. region .. '","plan":"' .. plan ..
    '","age":"' .. (15 + n % 30) .. '","appVersion":"2.' .. (n % 4) .. '.0"}}'
  return wrk.format(nil, nil, nil, body)`
}
end
`
const IDENTICAL_QUERY =
  '/api/frontend?appName=web&userId=user-7&sessionId=session-7&properties%5Bemail%5D=user-7%40example.com&region=eu-west&plan=pro&age=30&appVersion=2.1.0'
const IDENTICAL_BODY = JSON.stringify({
  context: {
    targetingKey: 'user-7',
    sessionId: 'session-7',
    appName: 'web',
    email: 'user-7@example.com',
    region: 'eu-west',
    plan: 'pro',
    age: '30',
    appVersion: '2.1.0',
  },
})

/**
 * The evaluator's own share, in process: CPU µs per answer from the request's text (query string, or
 * parsed body) to the answer's bytes and its Response, rotating over `users` users, no HTTP.
 */
function inProcess(dir: string, users: number) {
  const state = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8'))
  const scope = compileScope(state, { projects: ['*'], environment: ENVIRONMENT })
  const frontend = frontendAnswers(scope)
  const ofrep = ofrepAnswers(scope)
  const query = (n: number) =>
    `http://bench/api/frontend?appName=web&userId=user-${n}&sessionId=session-${n}&properties%5Bemail%5D=user-${n}%40example.com&region=eu-west&plan=free&age=${15 + (n % 30)}&appVersion=2.${n % 4}.0`
  const urls = Array.from({ length: users }, (_, n) => query(n))
  const bodies = urls.map(url => {
    const { properties, userId, remoteAddress, ...root } = contextFromQuery(url, null)
    return JSON.stringify({ context: { ...root, targetingKey: userId, ...properties } })
  })
  const time = (answer: (n: number) => unknown, rounds = 20000) => {
    for (let n = 0; n < 2000; n++) answer(n % users)
    const started = process.cpuUsage()
    for (let n = 0; n < rounds; n++) answer(n % users)
    const used = process.cpuUsage(started)
    return (used.user + used.system) / rounds
  }
  return {
    frontend: time(n => new Response(frontend.answer(contextFromQuery(urls[n]!, '127.0.0.1')))),
    ofrep: time(n => ofrep.bulk(ofrepContext(JSON.parse(bodies[n]!).context, '127.0.0.1'), BULK_END, {})),
  }
}

interface Path {
  name: string
  url: string
  token: 'frontend' | 'client'
  script: string
  edge: number
  /** Another process (the bare Bun server) measured instead of ours. */
  pid?: number
  base?: string
}

function pin(pid: number, core: number) {
  const done = Bun.spawnSync(['taskset', '-a', '-cp', String(core), String(pid)])
  if (done.exitCode !== 0) throw new Error(`taskset: ${done.stderr.toString()}`)
}

export async function edge() {
  const o = options({ seconds: 5, rounds: 3, connections: 16, users: 10000, quiet: false, profile: '' })
  const dir = tempDataDir('bench-edge-')
  seedDataDir(dir, { events: 100, flags: EDGE_FLAGS, environments: ['development', ENVIRONMENT] })
  edgeFlags(dir)
  const args = o.profile ? ['--cpu-prof', `--cpu-prof-dir=${o.profile}`] : []
  const server = spawnServer(dir, o.quiet ? { LOG_LEVEL: 'warn' } : {}, { args })
  let bare: Awaited<ReturnType<typeof bareServer>> | undefined
  try {
    await untilReady(server)
    pin(server.pid, 0)
    // This process and what it spawns from now on (wrk) on the other core.
    pin(process.pid, 1)
    const secrets = {
      frontend: await createToken(server.base, 'frontend', ENVIRONMENT),
      client: await createToken(server.base, 'client', ENVIRONMENT),
    }
    const lua = (name: string, text: string) => luaScript(dir, name, text)
    const postIdentical = `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(IDENTICAL_BODY)}\n`
    const paths: Path[] = [
      {
        name: `GET /api/frontend, ${o.users} users`,
        url: '/api/frontend',
        token: 'frontend',
        script: lua('frontend', rotating(o.users, 'GET')),
        edge: EDGE.frontend,
      },
      {
        name: 'GET /api/frontend, identical',
        url: IDENTICAL_QUERY,
        token: 'frontend',
        script: lua('plain', ''),
        edge: EDGE.frontend,
      },
      {
        name: `POST /ofrep/v1/evaluate/flags, ${o.users} users`,
        url: '/ofrep/v1/evaluate/flags',
        token: 'frontend',
        script: lua('ofrep', rotating(o.users, 'POST')),
        edge: EDGE.frontend,
      },
      {
        name: 'POST /ofrep/v1/evaluate/flags, identical',
        url: '/ofrep/v1/evaluate/flags',
        token: 'frontend',
        script: lua('ofrep-identical', postIdentical),
        edge: EDGE.frontend,
      },
      {
        name: 'GET /api/client/features',
        url: '/api/client/features',
        token: 'client',
        script: lua('plain', ''),
        edge: EDGE.client,
      },
    ]
    // What the answers weigh.
    const get = (path: string, token: string) => fetch(server.base + path, { headers: { authorization: token } })
    const client = await (await get('/api/client/features', secrets.client)).text()
    const parsed = JSON.parse(client)
    const strategies = parsed.features.reduce((n: number, f: { strategies: unknown[] }) => n + f.strategies.length, 0)
    const sizes: number[] = []
    const listed: number[] = []
    for (let n = 0; n < 200; n++) {
      const query = `/api/frontend?appName=web&userId=user-${n * 37}&sessionId=session-${n * 37}&properties%5Bemail%5D=user-${n}%40example.com&region=eu-west&plan=free&age=${15 + (n % 30)}&appVersion=2.${n % 4}.0`
      const text = await (await get(query, secrets.frontend)).text()
      sizes.push(text.length)
      listed.push(JSON.parse(text).toggles.length)
    }
    console.log(
      `${parsed.features.length} flags, ${strategies} strategies, ${SEGMENTS} segments; client features ${fmt(client.length / 1024, 1)} kB; ` +
        `a frontend answer lists ${median(listed)} flags in ${fmt(median(sizes) / 1024, 1)} kB (medians of 200 users)`,
    )
    // The floor: a bare Bun server sending a frontend answer's bytes, pinned like ours.
    const typical = await (await get(IDENTICAL_QUERY, secrets.frontend)).text()
    bare = await bareServer(typical)
    pin(bare.pid, 0)
    paths.push({
      name: `bare Bun, the same ${fmt(typical.length / 1024, 1)} kB`,
      url: '/',
      token: 'frontend',
      script: lua('plain', ''),
      edge: EDGE.frontend,
      pid: bare.pid,
      base: bare.url,
    })
    const own = [inProcess(dir, o.users), inProcess(dir, o.users), inProcess(dir, o.users)]
    const evaluator = { frontend: median(own.map(f => f.frontend)), ofrep: median(own.map(f => f.ofrep)) }
    const figures = new Map<string, { us: number; rps: number }[]>()
    const run = async (path: Path, seconds: number) => {
      const headers = { authorization: secrets[path.token] }
      const url = (path.base ?? server.base) + path.url
      const extra = ['-s', path.script, `-c${o.connections}`, '-t1']
      const { load, cpuUs } = await wrkCpu(path.pid ?? server.pid, url, headers, seconds, extra)
      if (load.errors > 0 || !load.requests) throw new Error(`${path.name}: ${load.errors} errors`)
      return { us: cpuUs, rps: load.rps }
    }
    for (const path of paths) await run(path, 1)
    for (let round = 0; round < o.rounds; round++) {
      for (const path of paths) figures.set(path.name, [...(figures.get(path.name) ?? []), await run(path, o.seconds)])
      console.log(
        `round ${round + 1} of ${o.rounds}: ${paths.map(p => fmt(figures.get(p.name)!.at(-1)!.us, 1)).join(', ')} µs`,
      )
    }
    const rows = paths.map(path => {
      const us = median(figures.get(path.name)!.map(f => f.us))
      const rps = median(figures.get(path.name)!.map(f => f.rps))
      return [path.name, fmt(rps, 0), fmt(us, 1), fmt(1e6 / us, 0), fmt(path.edge, 0), fmt(1e6 / us / path.edge, 2)]
    })
    const headers = ['path', 'req/s (wall)', 'server CPU µs/request', 'per core (1/CPU)', 'Edge, 1 CPU', '× Edge']
    console.log(
      `\nMedians of ${o.rounds} loads of ${o.seconds} s, wrk -t1 -c${o.connections} on core 1, server on core 0`,
    )
    console.log(table(headers, rows))
    console.log(
      `\nThe evaluator alone, in process (request text to Response, no HTTP; medians of 3 × 20,000): ` +
        `frontend API ${fmt(evaluator.frontend, 1)} µs (${fmt(1e6 / evaluator.frontend, 0)}/s per core), ` +
        `OFREP bulk ${fmt(evaluator.ofrep, 1)} µs (${fmt(1e6 / evaluator.ofrep, 0)}/s per core)`,
    )
  } finally {
    await bare?.stop()
    await server.stop()
    removeDir(dir)
  }
}
