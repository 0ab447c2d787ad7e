import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { compileScope, type EvalContext } from '../src/features/evaluation/scope'
import { frontendAnswers } from '../src/features/frontend/frontend.answers'
import { BULK_END, ofrepAnswers } from '../src/features/ofrep/ofrep.answers'
import { addFrontendFlags, contextFor, ENVIRONMENT, FLAGS, frontendState } from './frontend'
import {
  authHeaders,
  cpuSeconds,
  fmt,
  type Load,
  median,
  removeDir,
  seedDataDir,
  startServer,
  table,
  tempDataDir,
  wrk,
} from './lib'

/**
 * OFREP's bulk evaluation against the frontend API, side by side on one server, run by hand:
 *
 *   npx bun bench/run.ts ofrep [--runs 3] [--slices 4] [--seconds 5]
 *
 * The frontend benchmark's 1,000 flags (bench/frontend.ts, half on in production). One server
 * process per run; in it, wrk (2 threads, 32 connections) posts, in turn, `slices` times each
 * `seconds` long (so that the two APIs share the machine's ups and downs; the figures are the sums):
 *  - POST /api/frontend, each request for another user (the Lua script of bench/frontend.ts, as a body);
 *  - POST /ofrep/v1/evaluate/flags with the same contexts (targetingKey for userId);
 *  - the 304 path: POST /ofrep/v1/evaluate/flags with one context and If-None-Match set to its ETag;
 *  - for reference, the client API's 304 path (GET /api/client/features with If-None-Match), the
 *    cheapest SDK request there is, measured at about 21,500/s on a quiet machine (docs/benchmarks.md).
 * Each gets its requests/s, latency and the server's own CPU time per request (/proc/<pid>/stat).
 * The ratio OFREP / frontend is taken within each run, then the median of the runs. Before the HTTP
 * runs, the same flags are compiled in process and each answer is timed without HTTP (CPU time).
 * Figures: docs/ofrep.md.
 */
export async function ofrep() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      slices: { type: 'string', default: '4' },
      seconds: { type: 'string', default: '5' },
    },
  })
  const RUNS = Number(values.runs)
  const SLICES = Number(values.slices)
  const SECONDS = Number(values.seconds)

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
  const FRONTEND_SCRIPT = script('userId', inner => `'"properties":{' .. ${inner} .. '}'`)
  const OFREP_SCRIPT = script('targetingKey', inner => inner)

  const FIXED_BODY = JSON.stringify({
    context: {
      targetingKey: 'user-1',
      sessionId: 'session-1',
      email: 'user-1@example.com',
      appVersion: '1.4.0',
      region: 'eu-west',
      age: '20',
    },
  })
  const NOT_MODIFIED_SCRIPT = (etag: string) => `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["If-None-Match"] = ${JSON.stringify(etag)}
wrk.body = ${JSON.stringify(FIXED_BODY)}
`

  const encoder = new TextEncoder()

  /** Per answer, in process: CPU µs of the frontend API's text and of OFREP's, for the same contexts, alternating blocks. */
  async function inProcess(rounds = 2000) {
    const compiled = compileScope(frontendState(), { projects: ['*'], environment: ENVIRONMENT })
    const frontendApi = frontendAnswers(compiled)
    const ofrepApi = ofrepAnswers(compiled)
    const contexts: EvalContext[] = Array.from({ length: rounds }, (_, n) => {
      const { properties, ...root } = contextFor(n)
      return { ...root, properties: Object.assign(Object.create(null), properties) }
    })
    const cpu = () => {
      const usage = process.cpuUsage()
      return (usage.user + usage.system) / 1000
    }
    const time = (evaluate: (context: EvalContext) => unknown) => {
      const started = cpu()
      for (const context of contexts) evaluate({ ...context })
      return ((cpu() - started) / rounds) * 1000
    }
    // The frontend API's text is hashed and encoded for its answer; OFREP's answer is a Response of bytes already.
    const frontendAnswer = (context: EvalContext) => {
      const text = frontendApi.evaluate(context)
      Bun.hash(text)
      return encoder.encode(text)
    }
    const ofrepAnswer = (context: EvalContext) => ofrepApi.bulk(context, BULK_END, {})
    const sample = contexts.slice(0, 100)
    const sizes = { frontend: 0, ofrep: 0 }
    for (const context of sample) {
      sizes.frontend += frontendAnswer({ ...context }).length / sample.length
      sizes.ofrep += (await ofrepAnswer({ ...context }).arrayBuffer()).byteLength / sample.length
    }
    for (let n = 0; n < 300; n++) frontendAnswer({ ...contexts[n] }), ofrepAnswer({ ...contexts[n] })
    const frontend: number[] = []
    const ofrep: number[] = []
    for (let block = 0; block < 3; block++) {
      frontend.push(time(frontendAnswer))
      ofrep.push(time(ofrepAnswer))
    }
    return { frontendUs: median(frontend), ofrepUs: median(ofrep), sizes }
  }

  async function token(base: string, type: 'frontend' | 'client'): Promise<string> {
    const created = await fetch(`${base}/api/admin/api-tokens`, {
      method: 'POST',
      headers: authHeaders,
      body: JSON.stringify({
        tokenName: `bench-ofrep-${crypto.randomUUID()}`,
        type,
        projects: ['*'],
        environment: ENVIRONMENT,
      }),
    })
    if (created.status !== 201) throw new Error(`token creation answered ${created.status}`)
    return (await created.json()).secret as string
  }

  interface Measured {
    load: Load
    cpuUs: number
  }

  async function measured(
    pid: number,
    url: string,
    headers: Record<string, string>,
    scriptPath: string,
  ): Promise<Measured> {
    const before = cpuSeconds(pid)
    const load = await wrk(url, headers, SECONDS, ['-s', scriptPath])
    return { load, cpuUs: ((cpuSeconds(pid) - before) / (load.rps * SECONDS)) * 1e6 }
  }

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
    frontend: join(dir, 'frontend.lua'),
    ofrep: join(dir, 'ofrep.lua'),
    notModified: join(dir, 'not-modified.lua'),
    plain: join(dir, 'plain.lua'),
  }
  writeFileSync(scripts.plain, '')
  writeFileSync(scripts.frontend, FRONTEND_SCRIPT)
  writeFileSync(scripts.ofrep, OFREP_SCRIPT)
  try {
    const own = await inProcess()
    console.log(
      `in process (${new Date().toISOString()}): ${JSON.stringify(own, (_, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}`,
    )
    const runs: {
      started: string
      frontend: Measured
      ofrep: Measured
      notModified: Measured
      client304: Measured
      sample: { frontend: number; ofrep: number; flags: number }
    }[] = []
    for (let i = 0; i < RUNS; i++) {
      const server = await startServer(dir)
      try {
        const secret = await token(server.base, 'frontend')
        const clientSecret = await token(server.base, 'client')
        const clientEtag = (
          await fetch(`${server.base}/api/client/features`, { headers: { authorization: clientSecret } })
        ).headers.get('etag')!
        const headers = { authorization: secret }
        // Warm the compiled scope, check the answers, and take the ETag of the fixed context.
        const frontendSample = await fetch(`${server.base}/api/frontend`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({
            context: {
              userId: 'user-1',
              properties: { email: 'a@example.com', appVersion: '1.4.0', region: 'eu-west', age: '20' },
            },
          }),
        })
        const ofrepSample = await fetch(`${server.base}/ofrep/v1/evaluate/flags`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: FIXED_BODY,
        })
        if (frontendSample.status !== 200 || ofrepSample.status !== 200)
          throw new Error(`samples answered ${frontendSample.status}, ${ofrepSample.status}`)
        const etag = ofrepSample.headers.get('etag')!
        const ofrepText = await ofrepSample.text()
        writeFileSync(scripts.notModified, NOT_MODIFIED_SCRIPT(etag))
        const check = await fetch(`${server.base}/ofrep/v1/evaluate/flags`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'if-none-match': etag },
          body: FIXED_BODY,
        })
        if (check.status !== 304) throw new Error(`If-None-Match answered ${check.status}`)
        const started = new Date().toISOString().slice(11, 19)
        const slices: Record<'frontend' | 'ofrep' | 'notModified' | 'client304', Measured[]> = {
          frontend: [],
          ofrep: [],
          notModified: [],
          client304: [],
        }
        for (let slice = 0; slice < SLICES; slice++) {
          slices.frontend.push(await measured(server.pid, `${server.base}/api/frontend`, headers, scripts.frontend))
          slices.ofrep.push(
            await measured(server.pid, `${server.base}/ofrep/v1/evaluate/flags`, headers, scripts.ofrep),
          )
          slices.notModified.push(
            await measured(server.pid, `${server.base}/ofrep/v1/evaluate/flags`, headers, scripts.notModified),
          )
          slices.client304.push(
            await measured(
              server.pid,
              `${server.base}/api/client/features`,
              { authorization: clientSecret, 'if-none-match': clientEtag },
              scripts.plain,
            ),
          )
        }
        const [frontend, ofrep, notModified, client304] = [
          slices.frontend,
          slices.ofrep,
          slices.notModified,
          slices.client304,
        ].map(summed)
        runs.push({
          started,
          frontend,
          ofrep,
          notModified,
          client304,
          sample: {
            frontend: (await frontendSample.text()).length,
            ofrep: ofrepText.length,
            flags: JSON.parse(ofrepText).flags.length,
          },
        })
        const r = runs.at(-1)!
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
    console.log(
      table(
        [
          'run (UTC)',
          'POST /api/frontend',
          'POST /ofrep/v1/evaluate/flags',
          'OFREP / frontend (requests/s; CPU per request)',
          'OFREP 304 path (If-None-Match)',
          'client API 304 path',
          'OFREP 304 / client 304',
        ],
        runs.map(r => [
          r.started,
          cell(r.frontend),
          cell(r.ofrep),
          `${fmt(r.ofrep.load.rps / r.frontend.load.rps, 2)}; ${fmt(r.ofrep.cpuUs / r.frontend.cpuUs, 2)}`,
          cell(r.notModified),
          cell(r.client304),
          fmt(r.notModified.load.rps / r.client304.load.rps, 2),
        ]),
      ),
    )
    console.log(
      `\nmedians: frontend ${fmt(median(runs.map(r => r.frontend.load.rps)), 0)}/s, OFREP ${fmt(median(runs.map(r => r.ofrep.load.rps)), 0)}/s, ` +
        `ratio ${fmt(median(runs.map(r => r.ofrep.load.rps / r.frontend.load.rps)), 2)} (CPU per request ${fmt(median(runs.map(r => r.ofrep.cpuUs / r.frontend.cpuUs)), 2)}), 304 path ${fmt(median(runs.map(r => r.notModified.load.rps)), 0)}/s, ` +
        `client API 304 ${fmt(median(runs.map(r => r.client304.load.rps)), 0)}/s, ratio ${fmt(median(runs.map(r => r.notModified.load.rps / r.client304.load.rps)), 2)}`,
    )
  } finally {
    removeDir(dir)
  }
}
