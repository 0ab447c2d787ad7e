/**
 * The frontend API and OFREP on the frontend benchmark's 1,000 flags (bench/data.ts): `frontend`
 * (GET /api/frontend over HTTP), `frontend-eval` (the evaluation in process, next to the official
 * SDK's engine), `ofrep` (OFREP's bulk evaluation next to the frontend API) and `playground` (the
 * admin playground answering for those flags). Run through bench/run.ts.
 */
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { compileScope, type EvalContext } from '../src/features/evaluation/scope'
import { frontendAnswers, type FrontendEvaluator } from '../src/features/frontend/frontend.answers'
import { compileWithSdk } from '../test/sdk-reference'
import {
  addFrontendFlags,
  authHeaders,
  contextFor,
  cpuSeconds,
  createToken,
  fmt,
  fmtMedian,
  FRONTEND_ENVIRONMENT as ENVIRONMENT,
  FRONTEND_FLAGS as FLAGS,
  frontendState,
  type Load,
  loadAverage,
  luaScript,
  median,
  options,
  percentile,
  removeDir,
  repeat,
  seedDataDir,
  startServer,
  table,
  tempDataDir,
  withDataDir,
  withServer,
  wrkCpu,
} from './lib'

/**
 * `frontend`: a frontend token for production reads the flags with wrk (32 connections, 2 threads)
 * through GET /api/frontend, each request for another user (a Lua script varies userId, sessionId
 * and the properties), once with the access log on (the default) and once with LOG_LEVEL=warn.
 * Prints each run's figures with the load average, then medians of runs.
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
      const { load, cpuUs } = await wrkCpu(server.pid, url, { authorization: token }, SECONDS, ['-s', script])
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
    const of = (key: 'rps' | 'p50' | 'p99', digits: number) => fmt(median(runs.map(r => load(r)[key])), digits)
    const errors = runs.reduce((n, r) => n + load(r).errors, 0)
    const medians = `${of('rps', 0)}/s, p50 ${of('p50', 1)} ms, p99 ${of('p99', 1)} ms, `
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
 * `frontend-eval`: the per-flag cost of frontend evaluation, in process (no HTTP). Compiles the benchmark's 1,000 flags (above) once, then evaluates them for a
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

/**
 * `ofrep`: OFREP's bulk evaluation against the frontend API, side by side on one server. One server
 * process per run; in it, wrk (2 threads, 32 connections) posts, in turn, `slices` times each
 * `seconds` long (so that the two APIs share the machine's ups and downs; the figures are the sums):
 *  - POST /api/frontend, each request for another user (the Lua script of `frontend`, as a body);
 *  - POST /ofrep/v1/evaluate/flags with the same contexts (targetingKey for userId);
 *  - the 304 path: POST /ofrep/v1/evaluate/flags with one context and If-None-Match set to its ETag;
 *  - for reference, the client API's 304 path (GET /api/client/features with If-None-Match).
 * Each gets its requests/s, latency and the server's own CPU time per request (/proc/<pid>/stat).
 * The ratio OFREP / frontend is taken within each run, then the median of the runs. The evaluator
 * alone, without HTTP, is the last line of `edge`.
 */
export async function ofrep() {
  const { runs: RUNS, slices: SLICES, seconds: SECONDS } = options({ runs: 3, slices: 4, seconds: 5 })

  /** The frontend benchmark's contexts, as POST bodies: `userField` names the user (userId, or targetingKey for OFREP). */
  const script = (userField: string, properties: (inner: string) => string) => `
counter = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  counter = counter + 1
  local body = '{"context":{"${userField}":"user-' .. (counter % 5000) .. '","sessionId":"session-' .. counter .. '",' ..
    ${properties(`'"email":"user-' .. counter .. '@example.com","appVersion":"1.4.0","region":"eu-west","age":"' .. (15 + counter % 10) .. '"'`)} .. '}}'
  return wrk.format(nil, nil, nil, body)
end
`
  const properties = { appVersion: '1.4.0', region: 'eu-west', age: '20' }
  const user = { targetingKey: 'user-1', sessionId: 'session-1', email: 'user-1@example.com' }
  const FIXED_BODY = JSON.stringify({ context: { ...user, ...properties } })
  const NOT_MODIFIED_SCRIPT = (etag: string) => `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["If-None-Match"] = ${JSON.stringify(etag)}
wrk.body = ${JSON.stringify(FIXED_BODY)}
`

  interface Measured {
    load: Load
    cpuUs: number
  }

  const measured = (pid: number, url: string, headers: Record<string, string>, scriptPath: string) =>
    wrkCpu(pid, url, headers, SECONDS, ['-s', scriptPath]) as Promise<Measured>

  /** Slices of one scenario as one: requests/s and CPU per request over all of them; the worst p99, the median p50, the highest load. */
  function summed(slices: Measured[]): Measured {
    const requests = slices.map(m => m.load.rps * SECONDS)
    const total = requests.reduce((a, b) => a + b, 0)
    return {
      load: {
        rps: total / (SECONDS * slices.length),
        p50: median(slices.map(m => m.load.p50)),
        p99: Math.max(...slices.map(m => m.load.p99)),
        errors: slices.reduce((n, m) => n + m.load.errors, 0),
        load: Math.max(...slices.map(m => m.load.load)),
      },
      cpuUs: slices.reduce((sum, m, index) => sum + m.cpuUs * requests[index], 0) / total,
    }
  }

  const dir = tempDataDir()
  seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ['development', 'production'] })
  addFrontendFlags(dir)
  const scripts = {
    frontend: luaScript(
      dir,
      'frontend',
      script('userId', inner => `'"properties":{' .. ${inner} .. '}'`),
    ),
    ofrep: luaScript(
      dir,
      'ofrep',
      script('targetingKey', inner => inner),
    ),
    notModified: join(dir, 'not-modified.lua'),
    plain: luaScript(dir, 'plain', ''),
  }
  try {
    type Slices = Record<'frontend' | 'ofrep' | 'notModified' | 'client304', Measured>
    const runs: (Slices & { started: string; sample: { frontend: number; ofrep: number; flags: number } })[] = []
    for (let i = 0; i < RUNS; i++) {
      const server = await startServer(dir)
      try {
        const [secret, clientSecret] = [
          await createToken(server.base, 'frontend', ENVIRONMENT),
          await createToken(server.base, 'client', ENVIRONMENT),
        ]
        const clientEtag = (
          await fetch(`${server.base}/api/client/features`, { headers: { authorization: clientSecret } })
        ).headers.get('etag')!
        const headers = { authorization: secret }
        const post = (path: string, body: string, more = {}) =>
          fetch(server.base + path, { method: 'POST', headers: { ...authHeaders, ...headers, ...more }, body })
        // Warm the compiled scope, check the answers, and take the ETag of the fixed context.
        const frontendContext = { userId: 'user-1', properties: { email: 'a@example.com', ...properties } }
        const frontendSample = await post('/api/frontend', JSON.stringify({ context: frontendContext }))
        const ofrepSample = await post('/ofrep/v1/evaluate/flags', FIXED_BODY)
        if (frontendSample.status !== 200 || ofrepSample.status !== 200)
          throw new Error(`samples answered ${frontendSample.status}, ${ofrepSample.status}`)
        const etag = ofrepSample.headers.get('etag')!
        const ofrepText = await ofrepSample.text()
        writeFileSync(scripts.notModified, NOT_MODIFIED_SCRIPT(etag))
        const check = await post('/ofrep/v1/evaluate/flags', FIXED_BODY, { 'if-none-match': etag })
        if (check.status !== 304) throw new Error(`If-None-Match answered ${check.status}`)
        const started = new Date().toISOString().slice(11, 19)
        const loads: [keyof Slices, string, Record<string, string>, string][] = [
          ['frontend', '/api/frontend', headers, scripts.frontend],
          ['ofrep', '/ofrep/v1/evaluate/flags', headers, scripts.ofrep],
          ['notModified', '/ofrep/v1/evaluate/flags', headers, scripts.notModified],
          [
            'client304',
            '/api/client/features',
            { authorization: clientSecret, 'if-none-match': clientEtag },
            scripts.plain,
          ],
        ]
        const slices = Object.fromEntries(loads.map(([name]) => [name, [] as Measured[]]))
        for (let slice = 0; slice < SLICES; slice++)
          for (const [name, path, pathHeaders, scriptPath] of loads)
            slices[name]!.push(await measured(server.pid, server.base + path, pathHeaders, scriptPath))
        const sums = Object.fromEntries(loads.map(([name]) => [name, summed(slices[name]!)])) as Slices
        const sample = {
          ...{ frontend: (await frontendSample.text()).length, ofrep: ofrepText.length },
          flags: JSON.parse(ofrepText).flags.length,
        }
        const r = { started, ...sums, sample }
        runs.push(r)
        console.log(
          `run ${i + 1} (${started}): frontend ${fmt(r.frontend.load.rps, 0)}/s (load ${fmt(r.frontend.load.load, 1)}), ofrep ${fmt(r.ofrep.load.rps, 0)}/s (load ${fmt(r.ofrep.load.load, 1)}), ` +
            `ratio ${fmt(r.ofrep.load.rps / r.frontend.load.rps, 2)}, 304 ${fmt(r.notModified.load.rps, 0)}/s (load ${fmt(r.notModified.load.load, 1)}), client API 304 ${fmt(r.client304.load.rps, 0)}/s`,
        )
      } finally {
        await server.stop()
      }
    }
    const cell = (m: Measured) =>
      `${fmt(m.load.rps, 0)}/s, p50 ${fmt(m.load.p50, 1)} ms, p99 ${fmt(m.load.p99, 1)} ms, ${fmt(m.cpuUs, 0)} µs CPU/req, load ≤ ${fmt(m.load.load, 1)}, errors ${m.load.errors}`
    console.log(
      `\n${FLAGS} flags (${FLAGS / 2} on in ${ENVIRONMENT}); sample answers: frontend ${runs[0].sample.frontend} bytes, OFREP ${runs[0].sample.ofrep} bytes (${runs[0].sample.flags} flags)\n`,
    )
    const columns = ['run (UTC)', 'POST /api/frontend', 'POST /ofrep/v1/evaluate/flags']
    columns.push('OFREP / frontend (requests/s; CPU per request)', 'OFREP 304 path (If-None-Match)')
    columns.push('client API 304 path', 'OFREP 304 / client 304')
    const rows = runs.map(r => [
      ...[r.started, cell(r.frontend), cell(r.ofrep)],
      `${fmt(r.ofrep.load.rps / r.frontend.load.rps, 2)}; ${fmt(r.ofrep.cpuUs / r.frontend.cpuUs, 2)}`,
      ...[cell(r.notModified), cell(r.client304), fmt(r.notModified.load.rps / r.client304.load.rps, 2)],
    ])
    console.log(table(columns, rows))
    const of = (pick: (r: (typeof runs)[number]) => number, digits: number) => fmt(median(runs.map(pick)), digits)
    console.log(
      `\nmedians: frontend ${of(r => r.frontend.load.rps, 0)}/s, OFREP ${of(r => r.ofrep.load.rps, 0)}/s, ` +
        `ratio ${of(r => r.ofrep.load.rps / r.frontend.load.rps, 2)} (CPU per request ${of(r => r.ofrep.cpuUs / r.frontend.cpuUs, 2)}), 304 path ${of(r => r.notModified.load.rps, 0)}/s, ` +
        `client API 304 ${of(r => r.client304.load.rps, 0)}/s, ratio ${of(r => r.notModified.load.rps / r.client304.load.rps, 2)}`,
    )
  } finally {
    removeDir(dir)
  }
}

/**
 * `playground`, over the frontend benchmark's 1,000 flags (bench/data.ts): in each run a server answers POST /api/admin/
 * playground, then /advanced (production), one request after another, each for another user. Prints
 * per run the answer's size, p50 and p95 to the whole answer and the server's CPU per answer; medians.
 */
export async function playgroundAnswer() {
  const { runs: RUNS, requests: REQUESTS } = options({ runs: 3, requests: 200 })
  const ask = async (base: string, path: string, body: object) => {
    const started = performance.now()
    const response = await fetch(base + path, { method: 'POST', headers: authHeaders, body: JSON.stringify(body) })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 300)}`)
    return { ms: performance.now() - started, text }
  }
  const measure = async ({ base, pid }: { base: string; pid: number }, suffix: string, where: object) => {
    const [path, bodyOf] = [`/api/admin/playground${suffix}`, (n: number) => ({ ...where, context: contextFor(n) })]
    const sample = await ask(base, path, bodyOf(0))
    const flags = JSON.parse(sample.text).features.length
    if (flags !== FLAGS) throw new Error(`${path} answered ${flags} flags, not ${FLAGS}`)
    for (let n = 1; n <= 20; n++) await ask(base, path, bodyOf(n))
    const [cpuBefore, times] = [cpuSeconds(pid), [] as number[]]
    for (let n = 0; n < REQUESTS; n++) times.push((await ask(base, path, bodyOf(1000 + n))).ms)
    const cpuMs = ((cpuSeconds(pid) - cpuBefore) / REQUESTS) * 1000
    times.sort((a, b) => a - b)
    return { flags, kB: sample.text.length / 1024, p50: percentile(times, 50), p95: percentile(times, 95), cpuMs }
  }
  const seed = { events: 1000, flags: FLAGS, environments: ['development', 'production'] }
  const runs = await withDataDir(seed, async dir => {
    addFrontendFlags(dir)
    return repeat(RUNS, () =>
      withServer(dir, {}, async server => ({
        playground: await measure(server, '', { environment: ENVIRONMENT }),
        advanced: await measure(server, '/advanced', { environments: [ENVIRONMENT] }),
      })),
    )
  })
  for (const route of ['playground', 'advanced'] as const) {
    const [p50, p95, cpu] = (['p50', 'p95', 'cpuMs'] as const).map(k => fmtMedian(runs, 1, r => r[route][k]))
    const load = loadAverage()
    console.log(`${route}: median of runs p50 ${p50} ms, p95 ${p95} ms, server CPU ${cpu} ms per answer (load ${load})`)
  }
}
