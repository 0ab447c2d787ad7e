import autocannon from 'autocannon'
import { SQL } from 'bun'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type PostgresCluster, startPostgres } from '../test/postgres-cluster'
import {
  fmt,
  freePort,
  loadAverage,
  median,
  percentile,
  removeDir,
  ROOT,
  rssMiB,
  SECRET,
  fillDirectly,
  seedDataDir,
  startServer,
  table,
  tempDataDir,
  waitForSearchIndex,
} from './lib'

/**
 * The PostgreSQL store beside the file store and Unleash 8.2, all on one private PostgreSQL
 * (test/postgres-cluster.ts, fsync on) on this machine. Run by hand:
 *
 *   npx bun bench/run.ts postgres --unleash /tmp/unleash82
 *
 * where /tmp/unleash82 holds `npm install unleash-server@8.2.0` (outside the repository; Unleash
 * is run with `node`). Without --unleash, Unleash's columns are left out.
 *
 * 1. HTTP throughput with autocannon (the same tool, connections and duration for every target):
 *    durable PATCH of a flag's description, the project's flag list and `/api/client/features`,
 *    with `--flags` flags (every other one on in development).
 * 2. Write on instance A to visible on instance B's `/api/client/features`: two instances on one
 *    database; each write turns one flag on or off on A, B is polled (If-None-Match) until it
 *    serves the new state; from the write's answer and from its sending.
 * 3. Start-up of an instance joining a database holding `--events` events and 10,000 flags: the
 *    state and events of bench/data.ts seedDataDir written straight into the tables (`--fill
 *    restore`: through `flagstore backup` and `flagstore restore` instead, the moving-in path); the
 *    file store is started on that same data directory in the same run. The PostgreSQL instance is
 *    started twice on one SEARCH_CACHE_DIR: cold (the directory empty: the whole log is read from
 *    the database and copied) and warm (restarted on that copy): time to /ready, to the answer of a
 *    search made at /ready, to the complete text index, and RSS at ready, indexed and at its peak.
 *
 * `--only throughput,propagation,startup` picks sections.
 */
export async function postgres() {
  const { values } = parseArgs({
    options: {
      flags: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '32' },
      writes: { type: 'string', default: '1000' },
      'unleash-writes': { type: 'string', default: '100' },
      events: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '1' },
      unleash: { type: 'string' },
      fill: { type: 'string', default: 'direct' },
      only: { type: 'string', default: 'throughput,propagation,startup' },
    },
  })
  const FLAGS = Number(values.flags)
  const SECONDS = Number(values.seconds)
  const CONNECTIONS = Number(values.connections)
  const WRITES = Number(values.writes)
  const UNLEASH_WRITES = Number(values['unleash-writes'])
  const EVENTS = Number(values.events)
  const RUNS = Number(values.runs)
  const ONLY = new Set(values.only!.split(','))
  const UNLEASH_SECRET = '*:*.unleash-bench-admin-secret-0123456789'

  type Target = { name: string; base: string; pid: number; admin: string; stop(): Promise<void> }

  async function flagstore(name: string, env: Record<string, string>): Promise<Target> {
    const dataDir = tempDataDir('bench-pg-')
    const server = await startServer(dataDir, { LOG_LEVEL: 'warn', ...env })
    if (env.DATABASE_URL) {
      // The figures must be the PostgreSQL store's: its tables hold the start's events.
      const sql = new SQL(env.DATABASE_URL, { max: 1 })
      const [{ count }] = await sql`SELECT count(*)::int AS count FROM flagstore_events`
      await sql.close()
      if (!(count > 0)) throw new Error(`${name}: the database holds no events; is the PostgreSQL store selected?`)
    }
    return {
      name,
      base: server.base,
      pid: server.pid,
      admin: SECRET,
      async stop() {
        await server.stop()
        removeDir(dataDir)
      },
    }
  }

  /** Unleash 8.2 with Node, from `dir` (where unleash-server is installed), on `database` (made when missing). */
  async function unleash(dir: string, pg: PostgresCluster, database: string, name = 'Unleash 8.2'): Promise<Target> {
    await pg.createDatabase(database).catch((error: Error) => {
      if (!/already exists/.test(error.message)) throw error
    })
    writeFileSync(
      join(dir, 'bench-start.mjs'),
      `import { start } from 'unleash-server'
await start({
  db: { host: '127.0.0.1', port: Number(process.env.PGPORT), user: 'postgres', password: '', database: process.env.PGDATABASE, ssl: false },
  server: { port: Number(process.env.PORT), host: '127.0.0.1' },
  authentication: { initApiTokens: [{ environment: '*', projects: ['*'], secret: ${JSON.stringify(UNLEASH_SECRET)}, type: 'admin', tokenName: 'bench-admin' }] },
  versionCheck: { enable: false },
  telemetry: false,
})
`,
    )
    const port = freePort()
    // Unleash's SDK and token rate limits (20,000 a minute by default) would cap the load tool, not the server.
    const child = Bun.spawn(['node', 'bench-start.mjs'], {
      cwd: dir,
      env: {
        ...process.env,
        PGPORT: String(pg.port),
        PGDATABASE: database,
        PORT: String(port),
        LOG_LEVEL: 'error',
        SEND_TELEMETRY: 'false',
        SDK_API_RATE_LIMIT_PER_MINUTE: '100000000',
        TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: '100000000',
      },
      stdout: 'ignore',
      stderr: 'ignore',
    })
    const base = `http://127.0.0.1:${port}`
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`Unleash exited with ${child.exitCode}`)
      if (i > 1200) throw new Error('Unleash did not answer within 120 s')
      const ok = await fetch(`${base}/api/admin/projects`, { headers: { authorization: UNLEASH_SECRET } }).then(
        r => r.ok,
        () => false,
      )
      if (ok) break
      await Bun.sleep(100)
    }
    return {
      name,
      base,
      pid: child.pid,
      admin: UNLEASH_SECRET,
      async stop() {
        child.kill('SIGTERM')
        await child.exited
      },
    }
  }

  async function call(
    target: Target,
    method: string,
    path: string,
    body?: unknown,
    secret = target.admin,
  ): Promise<any> {
    const response = await fetch(target.base + path, {
      method,
      headers: { authorization: secret, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (response.status >= 300)
      throw new Error(`${target.name}: ${method} ${path} → ${response.status} ${text.slice(0, 300)}`)
    return text ? JSON.parse(text) : undefined
  }

  /** `--flags` flags in project default, every other one on in development; returns a client token for development. */
  async function seed(target: Target): Promise<string> {
    let next = 0
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < FLAGS; i = next++) {
          await call(target, 'POST', '/api/admin/projects/default/features', {
            name: `flag-${i}`,
            description: 'seeded',
          })
          if (i % 2 === 0)
            await call(target, 'POST', `/api/admin/projects/default/features/flag-${i}/environments/development/on`)
        }
      }),
    )
    return (
      await call(target, 'POST', '/api/admin/api-tokens', {
        tokenName: `bench-${Date.now()}`,
        type: 'client',
        projects: ['*'],
        environment: 'development',
      })
    ).secret
  }

  type Load = { rps: number; p50: number; p99: number; errors: number; load: number }

  async function load(
    target: Target,
    request: () => { method: string; path: string; headers: Record<string, string>; body?: string },
  ): Promise<Load> {
    const before = loadAverage()
    const result = await autocannon({
      url: target.base,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [{ setupRequest: (r: any) => ({ ...r, ...request() }) }],
    })
    return {
      rps: result['2xx'] / SECONDS,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.non2xx + result.timeouts,
      load: before,
    }
  }

  async function throughput(target: Target, clientToken: string) {
    let counter = 0
    const patch = await load(target, () => {
      const i = counter++
      return {
        method: 'PATCH',
        path: `/api/admin/projects/default/features/flag-${i % FLAGS}`,
        headers: { authorization: target.admin, 'content-type': 'application/json' },
        body: JSON.stringify([{ op: 'replace', path: '/description', value: `throughput ${i}` }]),
      }
    })
    const list = await load(target, () => ({
      method: 'GET',
      path: '/api/admin/projects/default/features',
      headers: { authorization: target.admin },
    }))
    const client = await load(target, () => ({
      method: 'GET',
      path: '/api/client/features',
      headers: { authorization: clientToken },
    }))
    return { patch, list, client }
  }

  /** Sequential writes on A; after each answer B is polled until it serves the flag's new state. */
  async function propagation(a: Target, b: Target, clientToken: string, writes: number) {
    const fromAnswer: number[] = []
    const fromSend: number[] = []
    let etag = ''
    const flag = 'flag-1'
    for (let i = 0; i < writes; i++) {
      const on = i % 2 === 0
      const sent = performance.now()
      await call(
        a,
        'POST',
        `/api/admin/projects/default/features/${flag}/environments/development/${on ? 'on' : 'off'}`,
      )
      const answered = performance.now()
      for (;;) {
        if (performance.now() - answered > 30_000)
          throw new Error(`${b.name} did not serve write ${i} of ${a.name} within 30 s`)
        const response = await fetch(`${b.base}/api/client/features`, {
          headers: { authorization: clientToken, ...(etag ? { 'if-none-match': etag } : {}) },
        })
        if (response.status === 304) continue
        etag = response.headers.get('etag') ?? ''
        const body = (await response.json()) as { features: { name: string; enabled: boolean }[] }
        if (body.features.find(f => f.name === flag)?.enabled === on) break
      }
      const visible = performance.now()
      fromAnswer.push(visible - answered)
      fromSend.push(visible - sent)
    }
    const stats = (values: number[]) => {
      const sorted = [...values].sort((x, y) => x - y)
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)! }
    }
    return { writes, fromAnswer: stats(fromAnswer), fromSend: stats(fromSend) }
  }

  async function runCommand(args: string[], env: Record<string, string>): Promise<number> {
    const started = performance.now()
    const child = Bun.spawn([process.execPath, 'src/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    if (code !== 0) throw new Error(`flagstore ${args.join(' ')} failed (${code}): ${err.trim() || out.trim()}`)
    return performance.now() - started
  }

  async function startupOnce(env: Record<string, string>, dataDir: string) {
    const server = await startServer(dataDir, { LOG_LEVEL: 'warn', ...env })
    try {
      const readyRss = rssMiB(server.pid)
      let peakRss = readyRss
      const sampler = setInterval(() => {
        try {
          peakRss = Math.max(peakRss, rssMiB(server.pid))
        } catch {}
      }, 100)
      // A search made the moment /ready answers: it waits for the log to be read (not for the text index).
      const asked = performance.now()
      const first = await fetch(`${server.base}/api/admin/search/events?query=flag&limit=10`, {
        headers: { authorization: SECRET },
      })
      if (first.status !== 200) throw new Error(`first search answered ${first.status}`)
      const firstSearchMs = performance.now() - asked
      const indexMs = firstSearchMs + (await waitForSearchIndex(server.base).finally(() => clearInterval(sampler)))
      return {
        readyMs: server.readyMs,
        readyRss,
        firstSearchMs,
        indexMs,
        indexedRss: rssMiB(server.pid),
        peakRss: Math.max(peakRss, rssMiB(server.pid)),
      }
    } finally {
      await server.stop()
    }
  }

  const pg = await startPostgres()
  const targets: Target[] = []
  const report: string[] = []
  const started = new Date().toISOString()
  try {
    if (ONLY.has('throughput')) {
      const rows: (string | number)[][] = []
      const runs: Record<string, Awaited<ReturnType<typeof throughput>>[]> = {}
      for (let run = 0; run < RUNS; run++) {
        const makers: [string, () => Promise<Target>][] = [
          [
            'flagstore, PostgreSQL',
            async () =>
              flagstore('flagstore, PostgreSQL', { DATABASE_URL: await pg.createDatabase(`flagstore_t${run}`) }),
          ],
          ['flagstore, files', () => flagstore('flagstore, files', {})],
          ...(values.unleash
            ? [
                ['Unleash 8.2', async () => unleash(values.unleash!, pg, `unleash_t${run}`)] as [
                  string,
                  () => Promise<Target>,
                ],
              ]
            : []),
        ]
        for (const [name, make] of makers) {
          const target = await make()
          targets.push(target)
          try {
            const token = await seed(target)
            const result = await throughput(target, token)
            ;(runs[name] ??= []).push(result)
            console.log(
              `run ${run + 1} ${name}: PATCH ${fmt(result.patch.rps, 0)}/s (p99 ${result.patch.p99} ms, ${result.patch.errors} errors), list ${fmt(result.list.rps, 0)}/s, client ${fmt(result.client.rps, 0)}/s (load ${fmt(result.patch.load, 2)})`,
            )
          } finally {
            await target.stop()
            targets.splice(targets.indexOf(target), 1)
          }
        }
      }
      const cell = (name: string, pick: (r: Awaited<ReturnType<typeof throughput>>) => Load) => {
        const all = runs[name] ?? []
        if (all.length === 0) return 'not run'
        return `${fmt(median(all.map(r => pick(r).rps)), 0)}/s (p50 ${median(all.map(r => pick(r).p50))} ms, p99 ${median(all.map(r => pick(r).p99))} ms, ${all.reduce((n, r) => n + pick(r).errors, 0)} errors)`
      }
      const ratio = (pick: (r: Awaited<ReturnType<typeof throughput>>) => Load) =>
        runs['Unleash 8.2']
          ? fmt(
              median(runs['flagstore, PostgreSQL'].map((r, i) => pick(r).rps / pick(runs['Unleash 8.2'][i]).rps)),
              1,
            ) + ' ×'
          : ''
      for (const [scenario, pick] of [
        ['durable PATCH of a description', (r: Awaited<ReturnType<typeof throughput>>) => r.patch],
        [`project flag list (${FLAGS} flags)`, (r: Awaited<ReturnType<typeof throughput>>) => r.list],
        [`GET /api/client/features (${FLAGS} flags)`, (r: Awaited<ReturnType<typeof throughput>>) => r.client],
      ] as const) {
        rows.push([
          scenario,
          cell('flagstore, PostgreSQL', pick),
          cell('flagstore, files', pick),
          cell('Unleash 8.2', pick),
          ratio(pick),
        ])
      }
      report.push(
        `Throughput, autocannon ${CONNECTIONS} connections × ${SECONDS} s, ${RUNS} run(s), medians:\n\n` +
          table(
            [
              'scenario',
              'flagstore, PostgreSQL',
              'flagstore, files',
              'Unleash 8.2',
              'PostgreSQL store / Unleash (same run)',
            ],
            rows,
          ),
      )
    }

    if (ONLY.has('propagation')) {
      const rows: string[][] = []
      const url = await pg.createDatabase('flagstore_p')
      const a = await flagstore('A', { DATABASE_URL: url })
      targets.push(a)
      const b = await flagstore('B', { DATABASE_URL: url })
      targets.push(b)
      const token = await seed(a)
      // B must know the token before it is polled with it.
      while ((await fetch(`${b.base}/api/client/features`, { headers: { authorization: token } })).status !== 200)
        await Bun.sleep(10)
      const ours = await propagation(a, b, token, WRITES)
      const line = (name: string, r: typeof ours) => [
        `${name}, ${r.writes} writes`,
        `${fmt(r.fromAnswer.p50, 1)} / ${fmt(r.fromAnswer.p99, 1)} / ${fmt(r.fromAnswer.max, 1)} ms`,
        `${fmt(r.fromSend.p50, 1)} / ${fmt(r.fromSend.p99, 1)} / ${fmt(r.fromSend.max, 1)} ms`,
      ]
      rows.push(line('flagstore, PostgreSQL', ours))
      console.log(rows.at(-1)!.join(' | '))
      for (const t of [a, b]) await t.stop()
      targets.length = 0
      if (values.unleash) {
        const database = 'unleash_p'
        const ua = await unleash(values.unleash, pg, database, 'Unleash A')
        targets.push(ua)
        const ub = await unleash(values.unleash, pg, database, 'Unleash B')
        targets.push(ub)
        const utoken = await seed(ua)
        while ((await fetch(`${ub.base}/api/client/features`, { headers: { authorization: utoken } })).status !== 200)
          await Bun.sleep(50)
        const theirs = await propagation(ua, ub, utoken, UNLEASH_WRITES)
        rows.push(line('Unleash 8.2', theirs))
        console.log(rows.at(-1)!.join(' | '))
        for (const t of [ua, ub]) await t.stop()
        targets.length = 0
      }
      report.push(
        `Write on A to visible on B's /api/client/features (p50 / p99 / max):\n\n` +
          table(['store', "from the write's answer", 'from sending the write'], rows),
      )
    }

    if (ONLY.has('startup')) {
      const dir = tempDataDir('bench-pg-startup-')
      console.log(`Seeding ${EVENTS} events and 10,000 flags…`)
      const seeding = { events: EVENTS, flags: 10_000 }
      seedDataDir(dir, seeding)
      const url = await pg.createDatabase('flagstore_s')
      let fillMs: number
      let fillHow: string
      if (values.fill === 'restore') {
        const backup = join(tempDataDir('bench-pg-backup-'), 'backup.jsonl')
        await runCommand(['backup', backup], { DATA_DIR: dir })
        fillMs = await runCommand(['restore', backup], { DATABASE_URL: url })
        fillHow = '`flagstore restore` of a backup of that data directory'
      } else {
        fillMs = await fillDirectly(url, seeding)
        fillHow =
          "the same state and events written straight into the tables (schema made by the store's own migration)"
      }
      console.log(`database filled in ${fmt(fillMs / 1000, 1)} s (${values.fill})`)
      const coldRuns: Awaited<ReturnType<typeof startupOnce>>[] = []
      const warmRuns: Awaited<ReturnType<typeof startupOnce>>[] = []
      const fileRuns: Awaited<ReturnType<typeof startupOnce>>[] = []
      for (let run = 0; run < RUNS; run++) {
        const scratch = tempDataDir('bench-pg-scratch-')
        // SEARCH_CACHE_DIR empty (as at a first start): the whole log is read from the database and copied;
        // then the same instance restarted on its copy, with nothing new in the database.
        const cache = tempDataDir('bench-pg-cache-')
        coldRuns.push(await startupOnce({ DATABASE_URL: url, SEARCH_CACHE_DIR: cache }, scratch))
        warmRuns.push(await startupOnce({ DATABASE_URL: url, SEARCH_CACHE_DIR: cache }, scratch))
        removeDir(cache)
        removeDir(scratch)
        fileRuns.push(await startupOnce({}, dir))
        const line = (r: (typeof coldRuns)[number]) =>
          `ready ${fmt(r.readyMs / 1000, 2)} s (RSS ${fmt(r.readyRss, 0)} MiB), first search ${fmt(r.firstSearchMs / 1000, 2)} s after, index ${fmt(r.indexMs / 1000, 1)} s after, RSS then ${fmt(r.indexedRss, 0)} MiB, peak ${fmt(r.peakRss, 0)} MiB`
        console.log(
          `run ${run + 1}: PostgreSQL cold: ${line(coldRuns.at(-1)!)}\n       PostgreSQL warm: ${line(warmRuns.at(-1)!)}\n       files: ${line(fileRuns.at(-1)!)} (load ${fmt(loadAverage(), 2)})`,
        )
      }
      const col = (runs: typeof coldRuns) => [
        `${fmt(median(runs.map(r => r.readyMs)) / 1000, 2)} s`,
        `${fmt(median(runs.map(r => r.readyRss)), 0)} MiB`,
        `${fmt(median(runs.map(r => r.firstSearchMs)) / 1000, 2)} s`,
        `${fmt(median(runs.map(r => r.indexMs)) / 1000, 1)} s`,
        `${fmt(median(runs.map(r => r.indexedRss)), 0)} MiB`,
        `${fmt(median(runs.map(r => r.peakRss)), 0)} MiB`,
      ]
      const ratio = (a: typeof coldRuns, b: typeof coldRuns, pick: (r: (typeof coldRuns)[number]) => number) =>
        fmt(median(a.map((r, i) => pick(r) / pick(b[i]))), 2)
      const ratios = (a: typeof coldRuns, b: typeof coldRuns) => [
        ratio(a, b, r => r.readyMs),
        ratio(a, b, r => r.readyRss),
        ratio(a, b, r => r.firstSearchMs),
        ratio(a, b, r => r.indexMs),
        ratio(a, b, r => r.indexedRss),
        ratio(a, b, r => r.peakRss),
      ]
      report.push(
        `Start-up with ${EVENTS.toLocaleString('en')} events and 10,000 flags (${RUNS} run(s), medians; the database filled with ${fillHow} in ${fmt(fillMs / 1000, 1)} s; first search and index timed from /ready):\n\n` +
          table(
            [
              'store',
              'to /ready',
              'RSS at ready',
              'first search after',
              'search index after',
              'RSS indexed',
              'RSS peak',
            ],
            [
              ['PostgreSQL, cold (empty SEARCH_CACHE_DIR)', ...col(coldRuns)],
              ['PostgreSQL, warm (restart on its copy)', ...col(warmRuns)],
              ['files (same data, same run)', ...col(fileRuns)],
              ['ratio warm / cold', ...ratios(warmRuns, coldRuns)],
              ['ratio warm / files', ...ratios(warmRuns, fileRuns)],
            ],
          ),
      )
      removeDir(dir)
    }
  } finally {
    for (const target of targets) await target.stop().catch(() => undefined)
    await pg.stop()
  }
  console.log(
    `\nbench/postgres.ts, started ${started}, load average ${fmt(loadAverage(), 2)} at the end\n\n${report.join('\n\n')}`,
  )
}
