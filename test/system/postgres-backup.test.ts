/**
 * Moving in, end to end with the real program: a data directory backed up (`flagstore backup`),
 * restored into an empty PostgreSQL database (`flagstore restore` with DATABASE_URL), and served
 * from there with every flag, event and token secret; a backup of the database restores into a
 * data directory the same way back. A database that holds a store is refused, and a backup cut
 * short leaves the database empty. In the PostgreSQL run of the suite.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { DataDirLock } from '../../src/storage/lock'
import { makeApi, tokenFor } from '../helpers/api'
import { expectOk } from '../helpers/expect'
import { tempDir } from '../helpers/files'
import { freePort, untilReady } from '../helpers/processes'
import { ON_POSTGRES, testCluster } from '../test-store'

const ROOT = join(import.meta.dir, '../..')
const dir = tempDir('pg-backup-')
afterAll(() => dir.remove())
let databases = 0

async function newDatabase(): Promise<string> {
  return (await testCluster()).createDatabase(`moving_${++databases}`)
}

function cleanEnv(): Record<string, string | undefined> {
  const clean: Record<string, string | undefined> = { ...process.env }
  for (const key of Object.keys(clean)) if (key.startsWith('DATABASE_') || key === 'DATA_DIR') delete clean[key]
  return clean
}

function cli(args: string[], env: Record<string, string>) {
  const result = Bun.spawnSync([process.execPath, 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
}

async function count(url: string, table: string): Promise<number> {
  const sql = new SQL(url, { max: 1 })
  try {
    return Number((await sql.unsafe(`SELECT count(*) AS n FROM ${table}`))[0].n)
  } finally {
    await sql.close()
  }
}

describe.skipIf(!ON_POSTGRES)('backup and restore between the files and PostgreSQL', () => {
  test('a data directory backed up and restored into PostgreSQL is served from there whole: flags, events, token secrets', async () => {
    const dataDir = join(dir.path, 'files')
    mkdirSync(dataDir, { mode: 0o700 })
    const files = await makeApi({ dataDir })
    await files.flagOn('moved-flag')
    expectOk(await files.createProject('moved-project'), 201)
    const client = await tokenFor(files, 'moved-sdk', { type: 'client', environment: 'development', projects: ['*'] })
    const events = files.events()
    const state = structuredClone(files.services.store.state)
    await files.close()

    const backup = join(dir.path, 'files.backup')
    const backedUp = cli(['backup', backup], { DATA_DIR: dataDir })
    expect(backedUp).toMatchObject({ code: 0, stderr: '' })
    // With a password in the URL (the test cluster trusts its user, so any will do): it is never written down.
    const url = (await newDatabase()).replace('postgres://postgres@', 'postgres://postgres:never-written-down@')
    expect(url).toContain('never-written-down')
    const restored = cli(['restore', backup], { DATABASE_URL: url })
    expect(restored.stderr).toBe('')
    const into = `PostgreSQL 127\\.0\\.0\\.1:\\d+/moving_\\d+ \\(schema public\\)`
    expect(restored.stdout).toMatch(
      new RegExp(
        `^Restored .*files\\.backup \\(taken .*, ${events.length} events\\) into ${into}\\nMarked ${dataDir} as moved \\(${dataDir}/moved\\.json\\): a start on it without DATABASE_URL now stops\\n$`,
      ),
    )
    expect(restored.code).toBe(0)
    const marker = readFileSync(join(dataDir, 'moved.json'), 'utf8')
    expect(JSON.parse(marker)).toEqual({
      movedTo: expect.stringMatching(new RegExp(`^${into}$`)),
      movedAt: expect.any(String),
      backup,
    })
    expect(marker).not.toContain('never-written-down')
    expect(statSync(join(dataDir, 'moved.json')).mode & 0o777).toBe(0o600)

    // The directory left behind is not served, nor backed up, without DATABASE_URL: each says why and how back.
    const before = readdirSync(dataDir).sort()
    const start = Bun.spawnSync([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: { ...cleanEnv(), DATA_DIR: dataDir, PORT: String(freePort()), HOST: '127.0.0.1' },
      timeout: 30_000,
    })
    expect({ code: start.exitCode, stdout: start.stdout.toString() }).toEqual({ code: 1, stdout: '' })
    const refusal = `DATA_DIR ${dataDir} was moved to PostgreSQL 127.0.0.1:`
    const wayBack = `Set DATABASE_URL (or DATABASE_HOST…) to use the database; to use these files again on purpose, remove ${dataDir}/moved.json\n`
    expect(start.stderr.toString()).toStartWith(`Cannot start: ${refusal}`)
    expect(start.stderr.toString()).toEndWith(wayBack)
    expect(start.stderr.toString().split('\n')).toHaveLength(2)
    const staleBackup = cli(['backup', join(dir.path, 'stale.backup')], { DATA_DIR: dataDir })
    expect(staleBackup).toEqual({ code: 1, stdout: '', stderr: expect.stringContaining(`Cannot back up: ${refusal}`) })
    expect(cli(['reset-password', 'admin'], { DATA_DIR: dataDir })).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringContaining(`Cannot reset the password: ${refusal}`),
    })
    expect(readdirSync(dataDir).sort()).toEqual(before)
    expect(await count(url, 'flagstore_events')).toBe(events.length)

    // Served by the real program on the database: the token made on the files still works.
    const port = freePort()
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: url,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        INIT_ADMIN_API_TOKENS: '*:*.moved-admin-secret-000001',
      },
      stdout: 'ignore',
      stderr: 'pipe',
    })
    try {
      await untilReady(`http://127.0.0.1:${port}`, { process: proc, ms: 30_000 })
      const features = await fetch(`http://127.0.0.1:${port}/api/client/features`, {
        headers: { authorization: client },
      })
      expect(features.status).toBe(200)
      expect(
        ((await features.json()) as { features: { name: string; enabled: boolean }[] }).features.map(flag => [
          flag.name,
          flag.enabled,
        ]),
      ).toEqual([['moved-flag', true]])
      const search = await fetch(`http://127.0.0.1:${port}/api/admin/search/events?limit=1000`, {
        headers: { authorization: '*:*.moved-admin-secret-000001' },
      })
      const page = (await search.json()) as { events: { id: number; type: string }[] }
      // Every event of the files, then the admin token INIT_ADMIN_API_TOKENS added at this start.
      expect(
        page.events
          .reverse()
          .slice(0, events.length)
          .map(event => [event.id, event.type]),
      ).toEqual(events.map(event => [event.id, event.type]))
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }

    // And back: the database backed up while it holds the store, restored into a new data directory.
    const again = join(dir.path, 'database.backup')
    expect(cli(['backup', again], { DATABASE_URL: url })).toMatchObject({ code: 0, stderr: '' })
    const back = join(dir.path, 'back')
    expect(cli(['restore', again, back], {})).toMatchObject({ code: 0, stderr: '' })
    // Without a FILE, into DATA_DIR/backups as on the files (made 0700 for it).
    const pgData = join(dir.path, 'pg-data')
    const byDefault = cli(['backup'], { DATABASE_URL: url, DATA_DIR: pgData })
    expect(byDefault).toMatchObject({ code: 0, stderr: '' })
    expect(byDefault.stdout).toMatch(
      new RegExp(`^Backed up PostgreSQL .* to ${pgData}/backups/backup-\\d{8}T\\d{6}\\.\\d{3}Z\\.jsonl: `),
    )
    expect(statSync(join(pgData, 'backups')).mode & 0o777).toBe(0o700)
    // The way back to the old files, on purpose: remove the mark.
    rmSync(join(dataDir, 'moved.json'))
    expect(cli(['backup', join(dir.path, 'old-files.backup')], { DATA_DIR: dataDir })).toMatchObject({
      code: 0,
      stderr: '',
    })
    const reopened = await makeApi({ dataDir: back })
    try {
      expect(reopened.services.store.state.flags).toEqual(state.flags)
      expect(reopened.services.store.state.projects['moved-project']).toEqual(state.projects['moved-project'])
      expect(reopened.events().slice(0, events.length)).toEqual(events)
    } finally {
      await reopened.close()
    }
  }, 120_000)

  test('a database that holds a store is refused and left as it was; a backup cut short leaves the database empty', async () => {
    mkdirSync(join(dir.path, 'second'), { mode: 0o700 })
    const api = await makeApi({ dataDir: join(dir.path, 'second') })
    await api.flagOn('one')
    await api.close()
    const backup = join(dir.path, 'second.backup')
    expect(cli(['backup', backup], { DATA_DIR: join(dir.path, 'second') }).code).toBe(0)

    const url = await newDatabase()
    // A service still running on the directory moved (here: this process holding its lock) is named.
    const held = DataDirLock.acquire(join(dir.path, 'second'))
    const moved = cli(['restore', backup], { DATABASE_URL: url })
    held.release()
    expect(moved).toMatchObject({ code: 0, stderr: '' })
    expect(moved.stdout).toContain(
      `now stops. A service still runs on it (pid ${process.pid}): stop it, as writes it takes are not in the database\n`,
    )
    const events = await count(url, 'flagstore_events')
    const refused = cli(['restore', backup], { DATABASE_URL: url })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(
      /^Cannot restore: moving_\d+ \(schema public\) already holds a store; restore into an empty database\n$/,
    )
    expect(await count(url, 'flagstore_events')).toBe(events)

    const cut = join(dir.path, 'cut.backup')
    const text = readFileSync(backup, 'utf8')
    writeFileSync(cut, text.slice(0, text.length - 40))
    const empty = await newDatabase()
    const truncated = cli(['restore', cut], { DATABASE_URL: empty })
    expect(truncated.code).toBe(1)
    expect(truncated.stderr).toMatch(/^Cannot restore: .*cut\.backup is truncated/)
    expect(await count(empty, 'flagstore_events')).toBe(0)
    expect(await count(empty, 'flagstore_checkpoints')).toBe(0)
    // A directory with DATABASE_URL is a mistake, said as such.
    expect(cli(['restore', backup, join(dir.path, 'x')], { DATABASE_URL: empty }).stderr).toMatch(/give no DIRECTORY/)
  }, 120_000)
})
