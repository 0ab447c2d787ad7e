/**
 * The per-flag cost of frontend evaluation, in process (no HTTP), run by hand:
 *
 *   npx bun bench/run.ts frontend-eval [--rounds 2000]
 *
 * Compiles the benchmark's 1,000 flags (bench/frontend-data.ts) once, then evaluates them for a
 * different user each round. Prints the time per answer and per flag looked at (the flags on in the
 * environment; off flags are never evaluated), in CPU time (and wall time), and the time to compile
 * the scope; for our engine and for the official SDK's (test/sdk-reference.ts) on the same flags.
 */
import { parseArgs } from 'node:util'
import { compileScope, type FrontendEvaluator, type EvalContext } from '../src/features/frontend/evaluation'
import { compileWithSdk } from '../test/sdk-reference'
import { contextFor, ENVIRONMENT, frontendState } from './frontend-data'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '2000' } } })
const ROUNDS = Number(values.rounds)
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
  const answers = contexts.slice(0, 200).map((context) => JSON.parse(compiled.evaluate({ ...context })).toggles.length)
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

const ours = measure('ours (src/features/frontend/evaluation.ts)', () => compileScope(state, scope))
const sdk = measure('unleash-client 6.12.1 UnleashClient', () => compileWithSdk(state, scope))
console.log(JSON.stringify(ours))
console.log(JSON.stringify(sdk))
console.log(`date ${new Date().toISOString()}, load ${require('node:fs').readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}: per flag, the SDK's engine costs ${(sdk.perFlagNs / ours.perFlagNs).toFixed(1)} × ours`)
