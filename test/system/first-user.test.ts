/**
 * The real server's first admin user: made at the first start with a password printed once (or
 * the one UNLEASH_DEFAULT_ADMIN_PASSWORD gives), which signs in; a restart prints nothing and keeps
 * the session; a password that breaks the strength rule stops the start.
 */
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { tempDir } from '../helpers/files'
import { freePort } from '../helpers/processes'

const ROOT = join(import.meta.dir, '../..')
const dir = tempDir('first-user-')
afterAll(() => dir.remove())

async function start(dataDir: string, extra: Record<string, string> = {}) {
  const port = freePort()
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ...extra,
  }
  delete env.UNLEASH_DEFAULT_ADMIN_PASSWORD
  Object.assign(env, extra)
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: ROOT, env, stdout: 'ignore', stderr: 'pipe' })
  let stderr = ''
  const reading = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  const base = `http://127.0.0.1:${port}`
  for (
    let i = 0;
    i < 200 &&
    !(await fetch(`${base}/ready`).then(
      r => r.ok,
      () => false,
    ));
    i++
  )
    await Bun.sleep(25)
  await Bun.sleep(100)
  return {
    base,
    stderr: () => stderr,
    stop: async () => {
      proc.kill('SIGTERM')
      await proc.exited
      await reading
    },
  }
}

const signIn = (base: string, username: string, password: string) =>
  fetch(`${base}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })

test('the first start prints a password once; it signs in, and the session outlives a restart that prints nothing', async () => {
  const dataDir = join(dir.path, 'generated')
  const first = await start(dataDir)
  const printed = /=== flagstore: console user created ===[\s\S]*?\n\n {2}(\S+)\n/.exec(first.stderr())?.[1]
  expect(printed).toBeString()
  const response = await signIn(first.base, 'admin', printed!)
  expect(response.status).toBe(200)
  const cookie = response.headers.get('set-cookie')!.split(';')[0]!
  await first.stop()
  const again = await start(dataDir)
  expect(again.stderr()).not.toContain('console user created')
  const me = await fetch(`${again.base}/api/admin/user`, { headers: { cookie } })
  expect(await me.json()).toMatchObject({ user: { username: 'admin', rootRole: 1 } })
  await again.stop()
}, 60_000)

test('UNLEASH_DEFAULT_ADMIN_USERNAME and _PASSWORD choose the first user, and nothing is printed', async () => {
  const server = await start(join(dir.path, 'chosen'), {
    UNLEASH_DEFAULT_ADMIN_USERNAME: 'owner',
    UNLEASH_DEFAULT_ADMIN_PASSWORD: 'Chosen-pass-42',
  })
  expect(server.stderr()).not.toContain('console user created')
  expect((await signIn(server.base, 'owner', 'Chosen-pass-42')).status).toBe(200)
  await server.stop()
})

test('a weak UNLEASH_DEFAULT_ADMIN_PASSWORD stops the start, saying what is missing', () => {
  const result = Bun.spawnSync([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir.path, 'weak'),
      UNLEASH_DEFAULT_ADMIN_PASSWORD: 'unleash4all',
    },
  })
  expect(result.exitCode).toBe(1)
  expect(result.stderr.toString()).toMatch(
    /^Cannot start: UNLEASH_DEFAULT_ADMIN_PASSWORD is too weak: A password needs .*an upper-case letter/,
  )
})
