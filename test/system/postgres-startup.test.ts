/**
 * Starting on PostgreSQL, with the real process: a wrong password, a user without permission, a
 * database or host that does not exist, a schema written by a newer version are each one line on
 * standard error naming the setting and the problem, exit code 1, and nothing written (no data
 * directory, no table). A server that cannot be reached yet is waited for, one log line per
 * attempt, and the start goes on once it is up. Three instances started at once on an empty
 * database migrate it once. A private cluster of its own (passwords required of other users than
 * the superuser, halted and started); in the PostgreSQL run of the suite.
 */
import { afterAll, beforeAll, expect, test as bunTest } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { tempDir } from '../helpers/files'
import { freePort, untilReady } from '../helpers/processes'
import { startPostgres, type PostgresCluster } from '../postgres-cluster'
import { ON_POSTGRES } from '../test-store'
import { SCHEMA_VERSION } from '../../src/storage/postgres-connect'

/** In the PostgreSQL run of the suite only (its cluster is its own, but it is about PostgreSQL). */
const test = ON_POSTGRES ? bunTest : bunTest.skip

const ROOT = join(import.meta.dir, '../..')
let pg: PostgresCluster
let admin: SQL
const dir = tempDir('pg-startup-')
/** DATA_DIR of every start here: on PostgreSQL it is never made. */
const dataDir = join(dir.path, 'data')

beforeAll(async () => {
  if (!ON_POSTGRES) return
  pg = await startPostgres({ fsync: false })
  admin = new SQL(pg.url, { max: 1 })
  await admin.unsafe(`CREATE ROLE flag_user LOGIN PASSWORD 'right-password'`)
  await admin.unsafe(`CREATE ROLE reader LOGIN PASSWORD 'reader-password'`)
  await admin.unsafe(`CREATE DATABASE flags OWNER flag_user`)
  await admin.unsafe(`CREATE DATABASE locked`)
  // Passwords are asked of every user but the superuser (the cluster trusts everyone by default).
  writeFileSync(
    join(pg.dir, 'data', 'pg_hba.conf'),
    'local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n',
  )
  await admin.unsafe('SELECT pg_reload_conf()')
}, 60_000)

afterAll(async () => {
  await admin?.close()
  await pg?.stop()
  dir.remove()
})

function env(extra: Record<string, string>): Record<string, string | undefined> {
  const base: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(freePort()),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
  }
  for (const key of Object.keys(base)) if (key.startsWith('DATABASE_') || key.startsWith('PG')) delete base[key]
  delete base.INIT_ADMIN_API_TOKENS
  return { ...base, ...extra }
}

async function failedStart(extra: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: env(extra),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000)
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ])
  clearTimeout(timer)
  return { code, stdout, stderr }
}

/** One line, "Cannot start: …", naming the problem; exit 1; nothing written where the files would go. */
function expectOneLine(result: { code: number; stdout: string; stderr: string }, problem: RegExp) {
  expect({ code: result.code, lines: result.stderr.split('\n').length }).toEqual({ code: 1, lines: 2 })
  expect(result.stderr).toMatch(/^Cannot start: .*\n$/)
  expect(result.stderr).toMatch(problem)
  expect(existsSync(dataDir)).toBe(false)
}

async function tablesIn(database: string): Promise<string[]> {
  const sql = new SQL(pg.urlFor(database), { max: 1 })
  try {
    const rows =
      await sql`SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_name LIKE 'flagstore_%' ORDER BY 1`
    return rows.map((row: { name: string }) => row.name)
  } finally {
    await sql.close()
  }
}

test('a wrong password names DATABASE_URL (or DATABASE_PASSWORD) and never shows the password', async () => {
  const url = `postgres://flag_user:not-the-password@127.0.0.1:${pg.port}/flags`
  const viaUrl = await failedStart({ DATABASE_URL: url })
  expectOneLine(viaUrl, /^Cannot start: DATABASE_URL: PostgreSQL refused the password of user "flag_user"/)
  expect(viaUrl.stderr).not.toContain('not-the-password')
  const viaParts = await failedStart({
    DATABASE_HOST: '127.0.0.1',
    DATABASE_PORT: String(pg.port),
    DATABASE_NAME: 'flags',
    DATABASE_USERNAME: 'flag_user',
    DATABASE_PASSWORD: 'not-the-password',
  })
  expectOneLine(viaParts, /^Cannot start: DATABASE_PASSWORD: PostgreSQL refused the password of user "flag_user"/)
  expect(viaParts.stderr).not.toContain('not-the-password')
  expect(await tablesIn('flags')).toEqual([])
})

test('a database that does not exist is named (DATABASE_NAME), and how to make it', async () => {
  const result = await failedStart({
    DATABASE_HOST: '127.0.0.1',
    DATABASE_PORT: String(pg.port),
    DATABASE_NAME: 'nosuch',
    DATABASE_USERNAME: 'flag_user',
    DATABASE_PASSWORD: 'right-password',
  })
  expectOneLine(
    result,
    /^Cannot start: DATABASE_NAME: PostgreSQL at 127\.0\.0\.1:\d+ has no database "nosuch"; create it first/,
  )
})

test('a user that may not create the tables is named, and nothing is written', async () => {
  // PostgreSQL 15 lets only the owner of a database create in its public schema.
  const result = await failedStart({ DATABASE_URL: `postgres://reader:reader-password@127.0.0.1:${pg.port}/locked` })
  expectOneLine(
    result,
    /^Cannot start: DATABASE_URL: user "reader" lacks a permission the store needs in locked, schema public \(permission denied for schema public\)/,
  )
  expect(await tablesIn('locked')).toEqual([])
})

test('a host that does not resolve is named (DATABASE_HOST) at once, not waited for', async () => {
  const result = await failedStart({ DATABASE_HOST: 'no-such-host.invalid', DATABASE_PORT: String(pg.port) })
  expectOneLine(
    result,
    /^Cannot start: DATABASE_HOST: the host "no-such-host\.invalid" cannot be resolved \(ENOTFOUND\)\n$/,
  )
})

test('a schema written by a newer version is refused in one line, and left as it was', async () => {
  const url = `postgres://flag_user:right-password@127.0.0.1:${pg.port}/flags`
  const sql = new SQL(pg.urlFor('flags'), { max: 1 })
  try {
    await sql.unsafe(
      `CREATE SCHEMA future AUTHORIZATION flag_user; CREATE TABLE future.flagstore_schema (version integer NOT NULL); INSERT INTO future.flagstore_schema VALUES (99); ALTER TABLE future.flagstore_schema OWNER TO flag_user`,
    )
    const result = await failedStart({ DATABASE_URL: url, DATABASE_SCHEMA: 'future' })
    expectOneLine(
      result,
      new RegExp(
        `^Cannot start: DATABASE_URL: schema future of flags was written by a newer flagstore \\(schema version 99; this version knows up to ${SCHEMA_VERSION}\\)`,
      ),
    )
    expect(await tablesIn('flags')).toEqual(['future.flagstore_schema'])
  } finally {
    await sql.unsafe('DROP SCHEMA future CASCADE')
    await sql.close()
  }
})

test('settings that cannot be right stop the start before connecting', async () => {
  expectOneLine(
    await failedStart({ DATABASE_URL: 'mysql://x@127.0.0.1/flags' }),
    /^Cannot start: DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//,
  )
  expectOneLine(
    await failedStart({ DATABASE_NAME: 'flags' }),
    /^Cannot start: DATABASE_NAME is set but neither DATABASE_URL nor DATABASE_HOST/,
  )
  expectOneLine(
    await failedStart({ DATABASE_URL: `postgres://127.0.0.1:${pg.port}/flags`, DATABASE_HOST: 'db' }),
    /^Cannot start: DATABASE_URL and DATABASE_HOST are both set/,
  )
  expectOneLine(
    await failedStart({ DATABASE_HOST: '127.0.0.1', DATABASE_SCHEMA: 'no-dashes' }),
    /^Cannot start: DATABASE_SCHEMA must be a plain name/,
  )
})

test('three instances started at once on an empty database migrate it once and serve the same flags', async () => {
  await admin.unsafe('CREATE DATABASE together OWNER flag_user')
  const url = `postgres://flag_user:right-password@127.0.0.1:${pg.port}/together`
  const secret = '*:*.together-admin-secret-0001'
  const procs = [0, 1, 2].map(() => {
    const port = freePort()
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: env({ DATABASE_URL: url, PORT: String(port), INIT_ADMIN_API_TOKENS: secret }),
      stdout: 'ignore',
      stderr: 'pipe',
    })
    return { proc, base: `http://127.0.0.1:${port}` }
  })
  try {
    for (const { proc, base } of procs) await untilReady(base, { process: proc, ms: 30_000 })
    const created = await fetch(`${procs[0].base}/api/admin/projects/default/features`, {
      method: 'POST',
      headers: { authorization: secret, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'everywhere' }),
    })
    expect(created.status).toBe(201)
    for (const { base } of procs) {
      const deadline = Date.now() + 10_000
      let status = 0
      while (status !== 200 && Date.now() < deadline) {
        status = (
          await fetch(`${base}/api/admin/projects/default/features/everywhere`, { headers: { authorization: secret } })
        ).status
        if (status !== 200) await Bun.sleep(50)
      }
      expect(status).toBe(200)
    }
    const sql = new SQL(pg.urlFor('together'), { max: 1 })
    try {
      expect((await sql`SELECT version FROM flagstore_schema`).map((row: { version: number }) => row.version)).toEqual([
        SCHEMA_VERSION,
      ])
      const types = (await sql`SELECT line FROM flagstore_events ORDER BY id`).map(
        (row: { line: string }) => JSON.parse(row.line).type,
      )
      expect(types.filter((type: string) => type === 'project-created')).toHaveLength(1)
      expect(types.filter((type: string) => type === 'api-token-created')).toHaveLength(1)
      expect(types.filter((type: string) => type === 'user-created')).toHaveLength(1)
    } finally {
      await sql.close()
    }
  } finally {
    for (const { proc } of procs) proc.kill('SIGKILL')
    await Promise.all(procs.map(({ proc }) => proc.exited))
  }
  expect(existsSync(dataDir)).toBe(false)
}, 90_000)

test('a server not reachable yet is waited for with backoff, one log line per attempt; the start goes on once it is up', async () => {
  const port = freePort()
  const appPort = freePort()
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: env({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
      INIT_ADMIN_API_TOKENS: '*:*.later-admin-secret-00001',
      PORT: String(appPort),
    }),
    stdout: 'ignore',
    stderr: 'pipe',
  })
  let later: PostgresCluster | null = null
  try {
    let stderr = ''
    void (async () => {
      for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk)
    })()
    const attempts = () =>
      stderr.split('\n').filter(line => line.includes('PostgreSQL cannot be reached; trying again'))
    const deadline = Date.now() + 15_000
    while (attempts().length < 3 && Date.now() < deadline) await Bun.sleep(50)
    const lines = attempts().map(line => JSON.parse(line))
    expect(lines.slice(0, 3).map(line => line.attempt)).toEqual([1, 2, 3])
    // The waits grow.
    expect(lines[1].retryInMs).toBeGreaterThan(lines[0].retryInMs)
    expect(lines[0].problem).toMatch(/^DATABASE_URL: PostgreSQL at 127\.0\.0\.1:\d+ cannot be reached/)
    expect(proc.exitCode).toBeNull()
    // Meanwhile the service answers, saying it is starting.
    expect((await fetch(`http://127.0.0.1:${appPort}/ready`)).status).toBe(503)
    later = await startPostgres({ port, fsync: false })
    await untilReady(`http://127.0.0.1:${appPort}`, { process: proc, ms: 30_000 })
    const flags = await fetch(`http://127.0.0.1:${appPort}/api/admin/projects/default/features`, {
      headers: { authorization: '*:*.later-admin-secret-00001' },
    })
    expect(flags.status).toBe(200)
    expect(existsSync(dataDir)).toBe(false)
  } finally {
    proc.kill('SIGKILL')
    await proc.exited
    await later?.stop()
  }
}, 60_000)
