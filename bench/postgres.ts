import { SQL } from 'bun'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readConfig } from '../src/config'
import { connect, migrate } from '../src/storage/postgres-connect'
import { startPostgres } from '../test/postgres-cluster'
import {
  api,
  cannon,
  createToken,
  fmt,
  fmtMedian,
  freePort,
  type Load,
  loadAverage,
  options,
  removeDir,
  ROOT,
  repeat,
  rssMiB,
  SECRET,
  sampleMemory,
  seedDataDir,
  seededEventLines,
  seededState,
  spread,
  startServer,
  table,
  tempDataDir,
  waitForSearchIndex,
} from './lib'
import { writeToVisible } from './sdk'

/**
 * `postgres`: the PostgreSQL store beside the file store and Unleash 8.2 (`--unleash DIR`, DIR
 * holding `npm install unleash-server@8.2.0`; without it Unleash's columns are left out), all on
 * one private PostgreSQL (test/postgres-cluster.ts, fsync on). Sections (`--only`):
 * - throughput: autocannon alike on every target (durable PATCH, flag list, client API);
 * - propagation: a write on instance A until instance B, on the same database, serves it;
 * - startup: an instance joining a database of `--events` events and 10,000 flags written straight
 *   into the tables (`--fill restore`: through `flagstore backup` and `restore`, the moving-in
 *   path), cold then warm on one SEARCH_CACHE_DIR, next to the file store on the same data.
 */
export async function postgres() {
  const o = options({
    ...{ flags: 1000, seconds: 10, connections: 32, writes: 1000, 'unleash-writes': 100, events: 1000000, runs: 1 },
    ...{ unleash: undefined as string | undefined, fill: 'direct', only: 'throughput,propagation,startup' },
  })
  const { flags: FLAGS, seconds: SECONDS, connections: CONNECTIONS, events: EVENTS, runs: RUNS } = o
  const ONLY = new Set(o.only.split(','))
  const UNLEASH_SECRET = '*:*.unleash-bench-admin-secret-0123456789'

  type Target = { name: string; base: string; admin: string; stop(): Promise<unknown> }

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
    const stop = async () => (await server.stop(), removeDir(dataDir))
    return { name, base: server.base, admin: SECRET, stop }
  }

  /** Unleash 8.2 from the --unleash directory, on `database`. */
  async function unleash(database: string, name: string): Promise<Target> {
    return { name, admin: UNLEASH_SECRET, ...(await unleashServer(o.unleash!, pg.port, database, UNLEASH_SECRET)) }
  }

  /** `--flags` flags in project default, every other one on in development; returns a client token for development. */
  async function seed(target: Target): Promise<string> {
    let next = 0
    const features = '/api/admin/projects/default/features'
    const writer = async () => {
      for (let i = next++; i < FLAGS; i = next++) {
        await api(target.base, 'POST', features, { name: `flag-${i}`, description: 'seeded' }, target.admin)
        if (i % 2 === 0)
          await api(target.base, 'POST', `${features}/flag-${i}/environments/development/on`, undefined, target.admin)
      }
    }
    await Promise.all(Array.from({ length: 8 }, writer))
    return createToken(target.base, 'client', 'development', ['*'], target.admin)
  }

  /** autocannon on `target`: requests/s counted from the 2xx answers, timeouts among the errors. */
  async function load(
    target: Target,
    request: () => { method: string; path: string; headers: Record<string, string>; body?: string },
  ) {
    const setupRequest = (r: any) => ({ ...r, ...request() })
    const result = await cannon({
      url: target.base,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [{ setupRequest }],
    })
    return { ...result, rps: result.requests! / SECONDS, errors: result.errors + result.timeouts }
  }

  async function throughput(target: Target, clientToken: string) {
    let counter = 0
    const admin = { authorization: target.admin }
    const patch = await load(target, () => ({
      method: 'PATCH',
      path: `/api/admin/projects/default/features/flag-${counter % FLAGS}`,
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify([{ op: 'replace', path: '/description', value: `throughput ${counter++}` }]),
    }))
    const list = await load(target, () => ({
      method: 'GET',
      path: '/api/admin/projects/default/features',
      headers: admin,
    }))
    const headers = { authorization: clientToken }
    const client = await load(target, () => ({ method: 'GET', path: '/api/client/features', headers }))
    return { patch, list, client }
  }

  /** Sequential writes on A; after each answer B is polled until it serves the flag's new state. */
  async function propagation(a: Target, b: Target, clientToken: string, writes: number) {
    // B must know the token before it is polled with it.
    while ((await fetch(`${b.base}/api/client/features`, { headers: { authorization: clientToken } })).status !== 200)
      await Bun.sleep(10)
    const times = await writeToVisible({
      ...{ writer: a.base, reader: b.base, headers: { authorization: clientToken }, secret: a.admin },
      ...{ flag: 'flag-1', environment: 'development', writes, enabled: false },
    })
    return { writes, fromAnswer: spread(times.fromAnswer), fromSend: spread(times.fromSend) }
  }

  async function runCommand(args: string[], env: Record<string, string>): Promise<number> {
    const started = performance.now()
    const child = Bun.spawn([process.execPath, 'src/main.ts', ...args], {
      ...{ cwd: ROOT, env: { ...process.env, ...env } },
      ...{ stdout: 'pipe', stderr: 'pipe' },
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
      const memory = sampleMemory(server.pid, 100)
      // A search made the moment /ready answers: it waits for the log to be read (not for the text index).
      const asked = performance.now()
      const first = await fetch(`${server.base}/api/admin/search/events?query=flag&limit=10`, {
        headers: { authorization: SECRET },
      })
      if (first.status !== 200) throw new Error(`first search answered ${first.status}`)
      const firstSearchMs = performance.now() - asked
      const indexMs = firstSearchMs + (await waitForSearchIndex(server.base).finally(memory.stop))
      const indexedRss = rssMiB(server.pid)
      return {
        readyMs: server.readyMs,
        readyRss,
        firstSearchMs,
        indexMs,
        indexedRss,
        peakRss: Math.max(readyRss, memory.rss, indexedRss),
      }
    } finally {
      await server.stop()
    }
  }

  type Throughput = Awaited<ReturnType<typeof throughput>>
  type Startup = Awaited<ReturnType<typeof startupOnce>>

  const pg = await startPostgres()
  /** Targets running, stopped at the end should a section fail. */
  const targets: Target[] = []
  /** The PostgreSQL store, the file store (database null) or Unleash on `database`, kept in `targets`. */
  const start = async (kind: 'flagstore' | 'unleash', name: string, database: string | null) => {
    // The second instance on a database finds it made.
    const url = database && (await pg.createDatabase(database).catch(() => pg.urlFor(database)))
    const target =
      kind === 'unleash' ? await unleash(database!, name) : await flagstore(name, url ? { DATABASE_URL: url } : {})
    targets.push(target)
    return target
  }
  const stopAll = async () => {
    for (const target of targets.splice(0)) await target.stop()
  }
  const report: string[] = []
  const started = new Date().toISOString()
  try {
    if (ONLY.has('throughput')) {
      const runs: Record<string, Throughput[]> = {}
      for (let run = 0; run < RUNS; run++) {
        const sides: [string, 'flagstore' | 'unleash', string | null][] = [
          ['flagstore, PostgreSQL', 'flagstore', `flagstore_t${run}`],
          ['flagstore, files', 'flagstore', null],
        ]
        if (o.unleash) sides.push(['Unleash 8.2', 'unleash', `unleash_t${run}`])
        for (const [name, kind, database] of sides) {
          const target = await start(kind, name, database)
          const result = await throughput(target, await seed(target))
          await stopAll()
          ;(runs[name] ??= []).push(result)
          const { patch, list, client } = result
          console.log(
            `run ${run + 1} ${name}: PATCH ${fmt(patch.rps, 0)}/s (p99 ${patch.p99} ms, ${patch.errors} errors), list ${fmt(list.rps, 0)}/s, client ${fmt(client.rps, 0)}/s (load ${fmt(patch.load, 2)})`,
          )
        }
      }
      const cell = (name: string, pick: (r: Throughput) => Load) => {
        const all = runs[name] ?? []
        if (all.length === 0) return 'not run'
        const errors = all.reduce((n, r) => n + pick(r).errors, 0)
        return `${fmtMedian(all, 0, r => pick(r).rps)}/s (p50 ${fmtMedian(all, 0, r => pick(r).p50)} ms, p99 ${fmtMedian(all, 0, r => pick(r).p99)} ms, ${errors} errors)`
      }
      const unleashRuns = runs['Unleash 8.2']
      const both = runs['flagstore, PostgreSQL'].map((r, i) => [r, unleashRuns?.[i]])
      const ratio = (pick: (r: Throughput) => Load) =>
        unleashRuns ? `${fmtMedian(both, 1, ([r, u]) => pick(r!).rps / pick(u!).rps)} ×` : ''
      const names = ['flagstore, PostgreSQL', 'flagstore, files', 'Unleash 8.2']
      const scenarios: [string, (r: Throughput) => Load][] = [
        ['durable PATCH of a description', r => r.patch],
        [`project flag list (${FLAGS} flags)`, r => r.list],
        [`GET /api/client/features (${FLAGS} flags)`, r => r.client],
      ]
      const rows = scenarios.map(([scenario, pick]) => [scenario, ...names.map(name => cell(name, pick)), ratio(pick)])
      const columns = ['scenario', ...names, 'PostgreSQL store / Unleash (same run)']
      report.push(
        `Throughput, autocannon ${CONNECTIONS} connections × ${SECONDS} s, ${RUNS} run(s), medians:\n\n${table(columns, rows)}`,
      )
    }

    if (ONLY.has('propagation')) {
      const rows: string[][] = []
      const line = (name: string, r: Awaited<ReturnType<typeof propagation>>) => [
        `${name}, ${r.writes} writes`,
        ...[r.fromAnswer, r.fromSend].map(t => `${fmt(t.p50, 1)} / ${fmt(t.p99, 1)} / ${fmt(t.max, 1)} ms`),
      ]
      const sides: [string, 'flagstore' | 'unleash', string, number][] = [
        ['flagstore, PostgreSQL', 'flagstore', 'flagstore_p', o.writes],
      ]
      if (o.unleash) sides.push(['Unleash 8.2', 'unleash', 'unleash_p', o['unleash-writes']])
      for (const [name, kind, database, writes] of sides) {
        const a = await start(kind, `${name} A`, database)
        const b = await start(kind, `${name} B`, database)
        rows.push(line(name, await propagation(a, b, await seed(a), writes)))
        console.log(rows.at(-1)!.join(' | '))
        await stopAll()
      }
      const columns = ['store', "from the write's answer", 'from sending the write']
      report.push(`Write on A to visible on B's /api/client/features (p50 / p99 / max):\n\n${table(columns, rows)}`)
    }

    if (ONLY.has('startup')) {
      const dir = tempDataDir('bench-pg-startup-')
      console.log(`Seeding ${EVENTS} events and 10,000 flags…`)
      const seeding = { events: EVENTS, flags: 10_000 }
      seedDataDir(dir, seeding)
      const url = await pg.createDatabase('flagstore_s')
      let fillMs: number
      let fillHow =
        "the same state and events written straight into the tables (schema made by the store's own migration)"
      if (o.fill === 'restore') {
        const backup = join(tempDataDir('bench-pg-backup-'), 'backup.jsonl')
        await runCommand(['backup', backup], { DATA_DIR: dir })
        fillMs = await runCommand(['restore', backup], { DATABASE_URL: url })
        fillHow = '`flagstore restore` of a backup of that data directory'
      } else fillMs = await fillDirectly(url, seeding)
      console.log(`database filled in ${fmt(fillMs / 1000, 1)} s (${o.fill})`)
      const runs = await repeat(RUNS, async () => {
        // SEARCH_CACHE_DIR empty (as at a first start): the whole log is read from the database and
        // copied; then the same instance restarted on its copy, with nothing new in the database.
        const [scratch, cache] = [tempDataDir('bench-pg-scratch-'), tempDataDir('bench-pg-cache-')]
        const env = { DATABASE_URL: url, SEARCH_CACHE_DIR: cache }
        const cold = await startupOnce(env, scratch)
        const warm = await startupOnce(env, scratch)
        removeDir(cache)
        removeDir(scratch)
        return { cold, warm, files: await startupOnce({}, dir), load: loadAverage() }
      })
      const figures: [string, (r: Startup) => number, number, string][] = [
        ['to /ready', r => r.readyMs / 1000, 2, ' s'],
        ['RSS at ready', r => r.readyRss, 0, ' MiB'],
        ['first search after', r => r.firstSearchMs / 1000, 2, ' s'],
        ['search index after', r => r.indexMs / 1000, 1, ' s'],
        ['RSS indexed', r => r.indexedRss, 0, ' MiB'],
        ['RSS peak', r => r.peakRss, 0, ' MiB'],
      ]
      type Side = 'cold' | 'warm' | 'files'
      const col = (side: Side) =>
        figures.map(([, pick, digits, unit]) => `${fmtMedian(runs, digits, r => pick(r[side]))}${unit}`)
      const ratios = (a: Side, b: Side) => figures.map(([, pick]) => fmtMedian(runs, 2, r => pick(r[a]) / pick(r[b])))
      const columns = ['store', ...figures.map(([name]) => name)]
      const rows = [
        ['PostgreSQL, cold (empty SEARCH_CACHE_DIR)', ...col('cold')],
        ['PostgreSQL, warm (restart on its copy)', ...col('warm')],
        ['files (same data, same run)', ...col('files')],
        ['ratio warm / cold', ...ratios('warm', 'cold')],
        ['ratio warm / files', ...ratios('warm', 'files')],
      ]
      report.push(
        `Start-up with ${EVENTS.toLocaleString('en')} events and 10,000 flags (${RUNS} run(s), medians; the database filled with ${fillHow} in ${fmt(fillMs / 1000, 1)} s; first search and index timed from /ready):\n\n${table(columns, rows)}`,
      )
      removeDir(dir)
    }
  } finally {
    await stopAll().catch(() => undefined)
    await pg.stop()
  }
  console.log(
    `\nbench/postgres.ts, started ${started}, load average ${fmt(loadAverage(), 2)} at the end\n\n${report.join('\n\n')}`,
  )
}

/**
 * The data directory's state and events straight into the tables, in the store's own format (the
 * checkpoint is the state document, each event its JSON line): what a database that has lived
 * through a million events holds after its last checkpoint. Much faster than any API.
 */
export async function fillDirectly(url: string, seeding: { events: number; flags: number }): Promise<number> {
  const started = performance.now()
  const config = readConfig({ DATABASE_URL: url }).database!
  const sql = connect(config, { max: 4 })
  try {
    await migrate(sql, config)
    await sql`INSERT INTO flagstore_checkpoints (seq, state) VALUES (1, ${JSON.stringify(seededState(seeding))})`
    let ids: number[] = []
    let lines: string[] = []
    const flush = async () => {
      await sql`INSERT INTO flagstore_events (id, line) SELECT * FROM unnest(${sql.array(ids, 'BIGINT')}, ${sql.array(lines, 'TEXT')})`
      ids = []
      lines = []
    }
    let id = 0
    for (const line of seededEventLines(seeding)) {
      ids.push(++id)
      lines.push(line)
      if (ids.length === 5000) await flush()
    }
    if (ids.length > 0) await flush()
  } finally {
    await sql.close()
  }
  return performance.now() - started
}

/**
 * Unleash 8.2 with Node, from `dir` (where `npm install unleash-server@8.2.0` was run), on the
 * PostgreSQL at `pgPort`, database `database`, with `secret` as its admin token. Its SDK and token
 * rate limits (20,000 a minute by default) are raised: they would cap the load tool, not the server.
 */
export async function unleashServer(dir: string, pgPort: number, database: string, secret: string) {
  writeFileSync(
    join(dir, 'bench-start.mjs'),
    `import { start } from 'unleash-server'
await start({
  db: { host: '127.0.0.1', port: Number(process.env.PGPORT), user: 'postgres', password: '', database: process.env.PGDATABASE, ssl: false },
  server: { port: Number(process.env.PORT), host: '127.0.0.1' },
  authentication: { initApiTokens: [{ environment: '*', projects: ['*'], secret: ${JSON.stringify(secret)}, type: 'admin', tokenName: 'bench-admin' }] },
  versionCheck: { enable: false },
  telemetry: false,
})
`,
  )
  const port = freePort()
  const limits = { SDK_API_RATE_LIMIT_PER_MINUTE: '100000000', TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: '100000000' }
  const child = Bun.spawn(['node', 'bench-start.mjs'], {
    cwd: dir,
    env: {
      ...process.env,
      PGPORT: String(pgPort),
      PGDATABASE: database,
      PORT: String(port),
      LOG_LEVEL: 'error',
      SEND_TELEMETRY: 'false',
      ...limits,
    },
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`Unleash exited with ${child.exitCode}`)
    if (i > 1200) throw new Error('Unleash did not answer within 120 s')
    const answer = await fetch(`${base}/api/admin/projects`, { headers: { authorization: secret } }).catch(() => null)
    if (answer?.ok) break
    await Bun.sleep(100)
  }
  return { base, pid: child.pid, stop: async () => (child.kill('SIGTERM'), await child.exited) }
}
