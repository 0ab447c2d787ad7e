/**
 * The frontend API: its benchmark's 1,000 flags (also OFREP's), `frontend` (GET /api/frontend over
 * HTTP) and `frontend-eval` (the evaluation in process, next to the official SDK's engine). Run
 * through bench/run.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { STATE_FILE } from '../src/services'
import type {
  ConstraintRecord,
  DependencyRecord,
  FlagRecord,
  StrategyRecord,
  VariantRecord,
} from '../src/features/flags/flags.records'
import type { SegmentRecord } from '../src/features/segments/segments.records'
import { compileScope, type EvalContext } from '../src/features/evaluation/scope'
import { frontendAnswers, type FrontendEvaluator } from '../src/features/frontend/frontend.answers'
import { compileWithSdk } from '../test/sdk-reference'
import {
  cpuSeconds,
  createToken,
  fmt,
  type Load,
  loadAverage,
  luaScript,
  median,
  options,
  repeat,
  table,
  withDataDir,
  withServer,
  wrk,
} from './lib'

/**
 * The flags of the frontend API benchmark (the frontend, frontend-eval and ofrep scenarios): in
 * `ENVIRONMENT`, every other flag is on, and the strategies cycle through five kinds — a plain
 * default; a flexibleRollout with a segment; a flexibleRollout with two constraints (STR_ENDS_WITH,
 * SEMVER_GT) and two strategy variants with payloads; userWithId then remoteAddress; a
 * gradualRolloutUserId with a NUM_GT and a DATE_AFTER constraint, and three flag variants. Some
 * flags depend on a parent being on, some on a parent being off.
 */
export const FLAGS = 1000
export const SEGMENTS = 20
export const ENVIRONMENT = 'production'

const constraint = (contextName: string, operator: string, values: string[], value?: string): ConstraintRecord => ({
  contextName,
  operator,
  caseInsensitive: operator.startsWith('STR_'),
  inverted: false,
  values,
  ...(value !== undefined ? { value } : {}),
})

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`

/** Strategy `k` of flag `i`. */
function strategy(i: number, k: number, name: string, parameters: Record<string, string>, extra = {}): StrategyRecord {
  const [title, disabled, sortOrder] = [null, false, k]
  return {
    id: uuid(i * 4 + k),
    name,
    title,
    disabled,
    sortOrder,
    segments: [],
    constraints: [],
    variants: [],
    parameters,
    ...extra,
  }
}

/** A strategy variant of half the weight. */
const half = { weight: 500, weightType: 'variable' as const, stickiness: 'default' }

export function strategiesOf(i: number, name: string): StrategyRecord[] {
  const rollout = (percent: number) => ({ rollout: String(percent), stickiness: 'default', groupId: name })
  const userIds = Array.from({ length: 20 }, (_, k) => `user-${(i * 7 + k * 13) % 5000}`).join(',')
  const variants = [
    { ...half, name: 'blue', payload: { type: 'json', value: `{"color":"blue","flag":${i}}` } },
    { ...half, name: 'green', payload: { type: 'string', value: 'green' } },
  ]
  const email = constraint('email', 'STR_ENDS_WITH', ['@example.com', '@example.org'])
  const semver = constraint('appVersion', 'SEMVER_GT', [], '1.2.0')
  const after = constraint('currentTime', 'DATE_AFTER', [], '2020-01-01T00:00:00.000Z')
  const gradual = { percentage: String(i % 101), groupId: name }
  switch (i % 5) {
    case 0:
      return [strategy(i, 0, 'default', {})]
    case 1:
      return [strategy(i, 0, 'flexibleRollout', rollout(i % 101), { segments: [1 + (i % SEGMENTS)] })]
    case 2:
      return [strategy(i, 0, 'flexibleRollout', rollout(60), { constraints: [email, semver], variants })]
    case 3: {
      const addresses = { IPs: '10.0.0.0/8,192.168.1.1' }
      return [strategy(i, 0, 'userWithId', { userIds }), strategy(i, 1, 'remoteAddress', addresses)]
    }
    default: {
      const constraints = [constraint('age', 'NUM_GT', [], '17'), after]
      return [strategy(i, 0, 'gradualRolloutUserId', gradual, { constraints })]
    }
  }
}

export function variantsOf(i: number): VariantRecord[] {
  if (i % 5 !== 4) return []
  return ['a', 'b', 'c'].map((name, k) => ({
    name,
    weight: k === 0 ? 334 : 333,
    weightType: 'variable' as const,
    stickiness: 'default',
    payload: { type: 'string' as const, value: `${name}-${i}` },
    overrides: k === 2 ? [{ contextName: 'userId', values: ['user-1'] }] : [],
  }))
}

export function segmentsFor(createdAt: string): Record<string, SegmentRecord> {
  const segments: Record<string, SegmentRecord> = {}
  for (let id = 1; id <= SEGMENTS; id++) {
    segments[String(id)] = {
      id,
      name: `segment-${id}`,
      description: `Synthetic segment ${id}`,
      project: null,
      constraints: [
        constraint('region', 'IN', ['eu-west', 'eu-north', `region-${id}`]),
        constraint('appVersion', 'SEMVER_GTE', [], `1.${id % 3}.0`),
      ],
      createdAt,
      createdBy: 'admin-bootstrap',
    } as SegmentRecord
  }
  return segments
}

/** Rewrites a data directory written by bench/data.ts seedDataDir (flags `flag-<i>`) with the flags above. */
export function addFrontendFlags(dir: string) {
  const path = join(dir, STATE_FILE)
  const state = JSON.parse(readFileSync(path, 'utf8'))
  const createdAt = new Date(Date.UTC(2025, 0, 1)).toISOString()
  state.segments = segmentsFor(createdAt)
  state.segmentSequence.segments = { lastId: SEGMENTS }
  for (let i = 0; i < FLAGS; i++) {
    const name = `flag-${i}`
    const flag = state.flags[name]
    flag.environments[ENVIRONMENT] = {
      ...flag.environments[ENVIRONMENT],
      enabled: i % 2 === 0,
      strategies: strategiesOf(i, name),
      variants: variantsOf(i),
    }
    flag.dependencies = dependenciesOf(i)
  }
  writeFileSync(path, JSON.stringify(state))
}

/** Parents, one level: some on a parent that is on, some on a parent being off. */
export function dependenciesOf(i: number): DependencyRecord[] {
  if (i % 50 === 48) return [{ feature: `flag-${i - 2}`, enabled: true, variants: [] }]
  if (i % 50 === 22) return [{ feature: `flag-${i - 1}`, enabled: false, variants: [] }]
  return []
}

/** The same flags in memory, for the in-process measurement (project default, one environment). */
export function frontendState(): { flags: Record<string, FlagRecord>; segments: Record<string, SegmentRecord> } {
  const createdAt = new Date(Date.UTC(2025, 0, 1)).toISOString()
  const flags: Record<string, FlagRecord> = {}
  for (let i = 0; i < FLAGS; i++) {
    const name = `flag-${i}`
    flags[name] = {
      name,
      project: 'default',
      type: 'release',
      description: null,
      impressionData: i % 7 === 0,
      stale: false,
      archived: false,
      archivedAt: null,
      createdAt,
      createdBy: { id: -42, name: 'admin-bootstrap', imageUrl: '' },
      environments: {
        [ENVIRONMENT]: {
          enabled: i % 2 === 0,
          strategies: strategiesOf(i, name),
          variants: variantsOf(i),
          lastSeenAt: null,
        },
      },
      tags: [],
      dependencies: dependenciesOf(i),
      lifecycle: { stage: 'initial', enteredStageAt: createdAt },
      completion: null,
    }
  }
  return { flags, segments: segmentsFor(createdAt) }
}

/** The context of the n-th benchmark request: a different user each time. */
export function contextFor(n: number) {
  return {
    userId: `user-${n % 5000}`,
    sessionId: `session-${n}`,
    remoteAddress: '10.1.2.3',
    properties: { email: `user-${n}@example.com`, appVersion: '1.4.0', region: 'eu-west', age: String(15 + (n % 10)) },
  }
}

/**
 * The frontend API, run by hand:
 *
 *   npx bun bench/run.ts frontend [--runs 3] [--seconds 10]
 *
 * 1,000 flags in production (above: half on; default, flexibleRollout with
 * segments, constraints and strategy variants, userWithId + remoteAddress, gradualRolloutUserId with
 * NUM/DATE constraints and flag variants; some parents). A frontend token for production reads them
 * with wrk (32 connections, 2 threads) through GET /api/frontend, each request for another user
 * (a Lua script varies userId, sessionId and the properties), once with the access log on (the
 * default) and once with LOG_LEVEL=warn. Prints each run's figures with the load average, then
 * medians of runs. The per-flag evaluation cost in process is the frontend-eval scenario (below).
 */
export async function frontendApi() {
  const { runs: RUNS, seconds: SECONDS } = options({ runs: 3, seconds: 10 })

  /** Each request another user (5,000 of them), session and e-mail; the same properties contextFor above sends. */
  const SCRIPT = `
counter = 0
request = function()
  counter = counter + 1
  local path = "/api/frontend?userId=user-" .. (counter % 5000) .. "&sessionId=session-" .. counter ..
    "&properties%5Bemail%5D=user-" .. counter .. "%40example.com&appVersion=1.4.0&region=eu-west&age=" .. (15 + counter % 10)
  return wrk.format("GET", path)
end
`

  const run = (dir: string, script: string, env: Record<string, string>) =>
    withServer(dir, env, async server => {
      const token = await createToken(server.base, 'frontend', ENVIRONMENT)
      const url = `${server.base}/api/frontend`
      // What one answer holds, checked before the load (and warming the compiled scope).
      const sample = await fetch(
        `${url}?userId=user-1&properties%5Bemail%5D=a%40example.com&appVersion=1.4.0&region=eu-west&age=20`,
        { headers: { authorization: token } },
      )
      if (sample.status !== 200) throw new Error(`frontend answered ${sample.status}`)
      const text = await sample.text()
      const cpuBefore = cpuSeconds(server.pid)
      const load = await wrk(url, { authorization: token }, SECONDS, ['-s', script])
      // The server's own CPU time per request: unlike requests/s, not shared with wrk and the other processes on the machine.
      const cpuUs = ((cpuSeconds(server.pid) - cpuBefore) / (load.rps * SECONDS)) * 1e6
      return { listed: JSON.parse(text).toggles.length as number, bytes: text.length, load, cpuUs }
    })

  const seed = { events: 1000, flags: FLAGS, environments: ['development', 'production'] }
  const runs = await withDataDir(seed, async dir => {
    addFrontendFlags(dir)
    const script = luaScript(dir, 'frontend', SCRIPT)
    return repeat(RUNS, async () => {
      const logged = await run(dir, script, {})
      const quiet = await run(dir, script, { LOG_LEVEL: 'warn' })
      const { listed, bytes } = logged
      return {
        logged: logged.load,
        quiet: quiet.load,
        listed,
        bytes,
        loggedCpuUs: logged.cpuUs,
        quietCpuUs: quiet.cpuUs,
      }
    })
  })
  type Run = (typeof runs)[number]
  const row = (name: string, pick: (r: Run) => [Load, number]) => {
    const [load, cpu] = [(r: Run) => pick(r)[0], (r: Run) => pick(r)[1]]
    const each = runs.map(
      r =>
        `${fmt(load(r).rps, 0)}/s, p99 ${fmt(load(r).p99, 1)} ms, ${fmt(cpu(r), 0)} µs CPU/request (load ${fmt(load(r).load, 1)})`,
    )
    const of = (figure: (l: Load) => number) => median(runs.map(r => figure(load(r))))
    const errors = runs.reduce((n, r) => n + load(r).errors, 0)
    const medians = `${fmt(
      of(l => l.rps),
      0,
    )}/s, p50 ${fmt(
      of(l => l.p50),
      1,
    )} ms, p99 ${fmt(
      of(l => l.p99),
      1,
    )} ms, `
    return [name, ...each, `${medians}${fmt(median(runs.map(cpu)), 0)} µs CPU/request, errors ${errors}`]
  }
  console.log(
    `\n${FLAGS} flags (${FLAGS / 2} on in ${ENVIRONMENT}); a sample answer lists ${runs[0].listed} flags in ${runs[0].bytes} bytes\n`,
  )
  const columns = ['GET /api/frontend, varying user (wrk -c32)', ...runs.map((_, i) => `run ${i + 1}`), 'median']
  const rows = [
    row('access log on', r => [r.logged, r.loggedCpuUs]),
    row('LOG_LEVEL=warn', r => [r.quiet, r.quietCpuUs]),
  ]
  console.log(table(columns, rows))
}

/**
 * The per-flag cost of frontend evaluation, in process (no HTTP), run by hand:
 *
 *   npx bun bench/run.ts frontend-eval [--rounds 2000]
 *
 * Compiles the benchmark's 1,000 flags (above) once, then evaluates them for a
 * different user each round. Prints the time per answer and per flag looked at (the flags on in the
 * environment; off flags are never evaluated), in CPU time (and wall time), and the time to compile
 * the scope; for our engine and for the official SDK's (test/sdk-reference.ts) on the same flags.
 */
export async function frontendEval() {
  const { rounds: ROUNDS } = options({ rounds: 2000 })
  const state = frontendState()
  const scope = { projects: ['*'], environment: ENVIRONMENT }
  const contexts: EvalContext[] = Array.from({ length: ROUNDS }, (_, n) => {
    const { properties, ...root } = contextFor(n)
    return { ...root, properties: Object.assign(Object.create(null), properties) }
  })

  const cpuMs = () => {
    const usage = process.cpuUsage()
    return (usage.user + usage.system) / 1000
  }

  function measure(name: string, compile: () => FrontendEvaluator) {
    const compileStarted = performance.now()
    const compiled = compile()
    const compileMs = performance.now() - compileStarted
    for (let n = 0; n < Math.min(300, ROUNDS); n++) compiled.evaluate({ ...contexts[n] })
    let listed = 0
    const started = performance.now()
    const cpuStarted = cpuMs()
    // A fresh object per round: what is parsed from a context is kept for its request only.
    for (const context of contexts) listed += compiled.evaluate({ ...context }).length
    // CPU time as well as wall time: on this shared machine the wall time counts other processes' turns.
    const answerUs = ((cpuMs() - cpuStarted) / ROUNDS) * 1000
    const wallUs = ((performance.now() - started) / ROUNDS) * 1000
    const answers = contexts.slice(0, 200).map(context => JSON.parse(compiled.evaluate({ ...context })).toggles.length)
    return {
      engine: name,
      flags: Object.keys(state.flags).length,
      evaluated: compiled.candidates,
      listedMean: Math.round(answers.reduce((a, b) => a + b, 0) / answers.length),
      answerBytesMean: Math.round(listed / ROUNDS),
      answerCpuUs: Math.round(answerUs * 10) / 10,
      answerWallUs: Math.round(wallUs * 10) / 10,
      perFlagNs: Math.round((answerUs * 1000) / compiled.candidates),
      compileMs: Math.round(compileMs * 10) / 10,
    }
  }

  const ours = measure('ours (src/features/evaluation)', () => frontendAnswers(compileScope(state, scope)))
  const sdk = measure('unleash-client 6.12.1 UnleashClient', () => compileWithSdk(state, scope))
  console.log(JSON.stringify(ours))
  console.log(JSON.stringify(sdk))
  console.log(
    `date ${new Date().toISOString()}, load ${loadAverage()}: per flag, the SDK's engine costs ${(sdk.perFlagNs / ours.perFlagNs).toFixed(1)} × ours`,
  )
}
