/**
 * `flagstore reset-password USER` with the real program, for a lost console password: on a data
 * directory (refused, changing nothing, while a service holds it; run once the service is stopped)
 * and, in the PostgreSQL run, on a database while an instance serves it. The user gets a new
 * generated password, printed once; every session of theirs ends; the change is recorded as the
 * admin route records it, by `system`, without the password or its hash.
 */
import { describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { EventRecord } from '../../src/storage/records'
import { makeApi, type Api } from '../helpers/api'
import { cleanupAfterEach } from '../helpers/files'
import { freePort, untilReady, waitFor, PATIENCE_MS } from '../helpers/processes'
import { ADMIN_SECRET } from '../helpers/service'
import { ON_POSTGRES, testCluster } from '../test-store'

const ROOT = join(import.meta.dir, '../..')
const OLD_PASSWORD = 'Lost-password-1'
const { later, newDir } = cleanupAfterEach()

function cleanEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of Object.keys(env))
    if (key.startsWith('DATABASE_') || ['DATA_DIR', 'PORT', 'HOST', 'INIT_ADMIN_API_TOKENS'].includes(key))
      delete env[key]
  return { ...env, ...extra }
}

function cli(args: string[], env: Record<string, string>) {
  const result = Bun.spawnSync([process.execPath, 'src/main.ts', ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    timeout: PATIENCE_MS,
  })
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
}

/** The password a successful reset printed, checking the rest of what it printed. */
function printedPassword(result: { code: number | null; stdout: string; stderr: string }, username: string): string {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
  const match = new RegExp(
    `^New password for "${username}" \\(user \\d+\\), shown only this once \\(only an argon2id hash is stored\\):\\n\\n  (\\S+)\\n\\nEvery session of the user has ended\\. .*\\n$`,
  ).exec(result.stdout)
  expect(match).not.toBeNull()
  return match![1]
}

/** A service on `env`'s store (the data directory or DATABASE_URL), ready; stopped after the test. */
async function serve(env: Record<string, string>): Promise<{ base: string; proc: ReturnType<typeof Bun.spawn> }> {
  const port = freePort()
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: cleanEnv({
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      INIT_ADMIN_API_TOKENS: ADMIN_SECRET,
    }),
    stdout: 'ignore',
    stderr: 'ignore',
  })
  later(async () => {
    proc.kill('SIGKILL')
    await proc.exited
  })
  const base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: proc, ms: 30_000 })
  return { base, proc }
}

const signIn = (base: string, username: string, password: string) =>
  fetch(`${base}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })

async function sessionCookie(base: string, username: string, password: string): Promise<string> {
  const response = await signIn(base, username, password)
  expect(response.status).toBe(200)
  return response.headers.get('set-cookie')!.split(';')[0]
}

const whoAmI = (base: string, cookie: string) =>
  fetch(`${base}/api/admin/user`, { headers: { cookie } }).then(response => response.status)

/** The user `ed` (an editor, with an email) with a password, made through the API. */
async function withUser(api: Api): Promise<number> {
  const made = await api.post<{ id: number }>('/api/admin/user-admin', {
    username: 'ed',
    email: 'ed@example.com',
    rootRole: 'Editor',
    password: OLD_PASSWORD,
  })
  expect(made.status).toBe(201)
  return made.body.id
}

/** What the reset recorded: one user-updated by system, saying the password changed, holding neither password nor hash. */
function expectResetEvent(events: EventRecord[], id: number, password: string) {
  expect(events).toEqual([
    expect.objectContaining({
      type: 'user-updated',
      createdBy: 'system',
      data: expect.objectContaining({ id, username: 'ed', passwordChanged: true }),
    }),
  ])
  expect(JSON.stringify(events)).not.toContain(password)
  expect(JSON.stringify(events)).not.toMatch(/argon2|Lost-password/)
}

test('on a data directory: refused while a service holds it, changing nothing; once stopped, a new password, sessions ended, the event recorded', async () => {
  const dataDir = join(newDir('reset-password-'), 'data')
  mkdirSync(dataDir)
  const api = await makeApi({ dataDir })
  const id = await withUser(api)
  await api.close()

  const { base, proc } = await serve({ DATA_DIR: dataDir })
  const cookie = await sessionCookie(base, 'ed', OLD_PASSWORD)
  const refused = cli(['reset-password', 'ed'], { DATA_DIR: dataDir })
  expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: '' })
  expect(refused.stderr).toMatch(
    new RegExp(
      `^Cannot reset the password: ${dataDir} is in use by another process: pid ${proc.pid} .*: stop the service, then run reset-password again\\n$`,
    ),
  )
  // The service went on as it was: the session still works, the old password still signs in.
  expect(await whoAmI(base, cookie)).toBe(200)
  expect((await signIn(base, 'ed', OLD_PASSWORD)).status).toBe(200)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)

  // The user named by their email, in another case.
  const password = printedPassword(cli(['reset-password', 'ED@Example.com'], { DATA_DIR: dataDir }), 'ed')
  const again = await serve({ DATA_DIR: dataDir })
  expect(await whoAmI(again.base, cookie)).toBe(401)
  expect((await signIn(again.base, 'ed', OLD_PASSWORD)).status).toBe(401)
  expect(await whoAmI(again.base, await sessionCookie(again.base, 'ed', password))).toBe(200)
  const events = (await (
    await fetch(`${again.base}/api/admin/search/events?type=IS:user-updated`, {
      headers: { authorization: ADMIN_SECRET },
    })
  ).json()) as { events: EventRecord[] }
  expectResetEvent(events.events, id, password)
}, 90_000)

test('an unknown user, a missing data directory and a wrong number of arguments are refused in words', async () => {
  const dataDir = join(newDir('reset-password-'), 'data')
  mkdirSync(dataDir)
  await (await makeApi({ dataDir })).close()
  expect(cli(['reset-password', 'nobody'], { DATA_DIR: dataDir })).toEqual({
    code: 1,
    stdout: '',
    stderr: 'Cannot reset the password: No user signs in as "nobody" (give a username or an email)\n',
  })
  const missing = join(newDir('reset-password-'), 'missing')
  expect(cli(['reset-password', 'ed'], { DATA_DIR: missing })).toEqual({
    code: 1,
    stdout: '',
    stderr: `Cannot reset the password: the data directory ${missing} does not exist; set DATA_DIR to the service's data directory\n`,
  })
  for (const args of [['reset-password'], ['reset-password', 'a', 'b']]) {
    const result = cli(args, { DATA_DIR: dataDir })
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' })
    expect(result.stderr).toStartWith('flagstore: reset-password takes one argument, the USER')
  }
})

test('the npm script runs the same command', async () => {
  const dataDir = join(newDir('reset-password-'), 'data')
  mkdirSync(dataDir)
  const api = await makeApi({ dataDir })
  await withUser(api)
  await api.close()
  const result = Bun.spawnSync(['npm', 'run', '--silent', 'reset-password', '--', 'ed'], {
    cwd: ROOT,
    env: cleanEnv({ DATA_DIR: dataDir }),
    timeout: PATIENCE_MS,
  })
  printedPassword({ code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }, 'ed')
})

describe.skipIf(!ON_POSTGRES)('on PostgreSQL', () => {
  test('with DATABASE_URL while an instance serves the database: the instance ends the sessions and takes the new password', async () => {
    const url = await (await testCluster()).createDatabase('reset_password')
    const { base } = await serve({ DATABASE_URL: url })
    const made = await fetch(`${base}/api/admin/user-admin`, {
      method: 'POST',
      headers: { authorization: ADMIN_SECRET, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ed', email: 'ed@example.com', rootRole: 'Editor', password: OLD_PASSWORD }),
    })
    expect(made.status).toBe(201)
    const { id } = (await made.json()) as { id: number }
    const cookie = await sessionCookie(base, 'ed', OLD_PASSWORD)
    const lastBefore = (
      (await (
        await fetch(`${base}/api/admin/search/events?limit=1`, { headers: { authorization: ADMIN_SECRET } })
      ).json()) as { events: EventRecord[] }
    ).events[0].id

    const password = printedPassword(cli(['reset-password', 'ed'], { DATABASE_URL: url }), 'ed')
    // The instance hears of the commit as of any other instance's.
    await waitFor(async () => (await whoAmI(base, cookie)) === 401, 'the old session to end on the instance')
    expect((await signIn(base, 'ed', OLD_PASSWORD)).status).toBe(401)
    expect(await whoAmI(base, await sessionCookie(base, 'ed', password))).toBe(200)
    const events = (await (
      await fetch(`${base}/api/admin/search/events?type=IS:user-updated`, { headers: { authorization: ADMIN_SECRET } })
    ).json()) as { events: EventRecord[] }
    expect(events.events.every(event => event.id > lastBefore)).toBe(true)
    expectResetEvent(events.events, id, password)
  }, 90_000)
})
