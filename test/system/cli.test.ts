/**
 * The command line, with `bun src/main.ts` and the npm scripts (the compiled executable runs the
 * same in test/system/executable.test.ts): --help, --version, an unknown argument (usage on standard
 * error, exit 2), backup, restore and healthcheck, none of which starts a server or makes a data
 * directory; `serve` (the default) does.
 */
import { expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { makeApi } from '../helpers/api'
import { cleanupAfterEach } from '../helpers/files'
import { freePort, waitFor, PATIENCE_MS } from '../helpers/processes'
import { ADMIN_SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const MAIN = join(ROOT, 'src', 'main.ts')
const VERSION = (await Bun.file(join(ROOT, 'package.json')).json()).version as string
const { later, newDir } = cleanupAfterEach()

function baseEnv(extra: Record<string, string> = {}) {
  const env: Record<string, string | undefined> = { ...process.env, ...extra }
  for (const key of ['DATA_DIR', 'PORT', 'HOST', 'BASE_URI_PATH', 'INIT_ADMIN_API_TOKENS'])
    if (!(key in extra)) delete env[key]
  return env
}

/** `bun src/main.ts ARGS` in `cwd` (a directory of its own, so that a stray ./data would show). */
function run(cwd: string, args: string[], env: Record<string, string> = {}) {
  const result = Bun.spawnSync([process.execPath, MAIN, ...args], { cwd, env: baseEnv(env), timeout: PATIENCE_MS })
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
}

test('--version prints the package version, --help the usage; neither starts a server or makes ./data', () => {
  const cwd = newDir('cli-')
  for (const flag of ['--version', '-v'])
    expect(run(cwd, [flag])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' })
  for (const flag of ['--help', '-h', 'help']) {
    const help = run(cwd, [flag])
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' })
    expect(help.stdout).toStartWith('Usage: flagstore [COMMAND]\n')
    for (const command of ['serve', 'backup [FILE]', 'restore FILE [DIRECTORY]', 'healthcheck', '--help', '--version'])
      expect(help.stdout).toContain(command)
  }
  expect(readdirSync(cwd)).toEqual([])
})

test('--help says what an executable user has: every setting the service reads, and where the running service documents its API; no file it does not ship with', async () => {
  const help = run(newDir('cli-'), ['--help']).stdout
  const source = await Bun.file(join(ROOT, 'src', 'config.ts')).text()
  const settings = new Set([...source.matchAll(/\benv(?:\.|, ')([A-Z][A-Z_]{2,})/g)].map(match => match[1]))
  expect(settings.size).toBeGreaterThan(8)
  for (const setting of settings) expect({ setting, named: help.includes(setting) }).toEqual({ setting, named: true })
  expect(help).toContain('/swagger')
  expect(help).not.toMatch(/README|docs\//)
})

test('backup says in words why it cannot start: no data directory, no store in it, a file that exists, a directory that does not', async () => {
  const cwd = newDir('cli-')
  const live = join(cwd, 'live')
  mkdirSync(live)
  const api = await makeApi({ dataDir: live })
  await api.close()
  const taken = join(cwd, 'taken.jsonl')
  await Bun.write(taken, 'mine')
  const cases: [Record<string, string>, string, RegExp][] = [
    [
      { DATA_DIR: join(cwd, 'missing') },
      'out.jsonl',
      /^Cannot back up: the data directory .*missing does not exist; set DATA_DIR to the service's data directory\n$/,
    ],
    [
      { DATA_DIR: cwd },
      'out.jsonl',
      /^Cannot back up: .* holds no store \(no state\.json\); set DATA_DIR to the service's data directory\n$/,
    ],
    [
      { DATA_DIR: live },
      taken,
      /^Cannot back up: .*taken\.jsonl already exists; a backup never replaces a file, so give a new file name\n$/,
    ],
    [
      { DATA_DIR: live },
      join(cwd, 'no', 'such', 'out.jsonl'),
      /^Cannot back up: cannot write .*out\.jsonl: the directory .*such does not exist\n$/,
    ],
  ]
  for (const [env, file, message] of cases) {
    const result = run(cwd, ['backup', file], env)
    expect({ file, code: result.code, stdout: result.stdout }).toEqual({ file, code: 1, stdout: '' })
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toMatch(/\bE[A-Z]{3,}\b/)
  }
  expect(await Bun.file(taken).text()).toBe('mine')
})

test('--help after a command prints the usage, and an option after a command is a usage error, never a FILE (even with a data directory to back up)', async () => {
  const cwd = newDir('cli-')
  mkdirSync(join(cwd, 'data'))
  const api = await makeApi({ dataDir: join(cwd, 'data') })
  await api.close()
  const before = readdirSync(cwd).sort()
  for (const args of [
    ['backup', '--help'],
    ['restore', '-h'],
    ['restore', 'file.jsonl', '--help'],
    ['serve', '--help'],
    ['healthcheck', '-h'],
  ]) {
    const help = run(cwd, args)
    expect({ args, code: help.code, stderr: help.stderr }).toEqual({ args, code: 0, stderr: '' })
    expect(help.stdout).toStartWith('Usage: flagstore [COMMAND]\n')
  }
  for (const [args, option] of [
    [['backup', '--force'], '--force'],
    [['restore', '-x', 'dir'], '-x'],
    [['serve', '--port=1'], '--port=1'],
  ] as const) {
    const result = run(cwd, [...args])
    expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' })
    expect(result.stderr).toStartWith(`flagstore: unknown option "${option}" for ${args[0]}`)
  }
  expect(readdirSync(cwd).sort()).toEqual(before)
})

test('an unknown argument, or a command with the wrong arguments, prints the usage on standard error and exits 2', () => {
  const cwd = newDir('cli-')
  for (const [args, problem] of [
    [['bogus'], 'unknown command "bogus"'],
    [['--bogus'], 'unknown option "--bogus"'],
    [['serve', 'now'], 'serve takes no arguments'],
    [['backup', 'a', 'b'], 'backup takes at most one argument'],
    [['restore'], 'restore takes the FILE'],
    [['healthcheck', 'x'], 'healthcheck takes no arguments'],
  ] as const) {
    const result = run(cwd, [...args])
    expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' })
    expect(result.stderr).toStartWith(`flagstore: ${problem}`)
    expect(result.stderr).toContain('Usage: flagstore [COMMAND]')
  }
  expect(readdirSync(cwd)).toEqual([])
})

/** A new data directory holding a store with one flag, `name`, in the default project. */
async function storeWithFlag(name: string): Promise<string> {
  const live = join(newDir('cli-'), 'live')
  mkdirSync(live)
  const api = await makeApi({ dataDir: live })
  expect((await api.createFlag('default', name)).status).toBe(201)
  await api.close()
  return live
}

test('backup and restore, through the program and through the npm scripts, make no server and no ./data', async () => {
  const cwd = newDir('cli-')
  const live = await storeWithFlag('backed-up')

  const file = join(cwd, 'out.jsonl')
  const backup = run(cwd, ['backup', 'out.jsonl'], { DATA_DIR: live })
  expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: '' })
  expect(backup.stdout).toStartWith(`Backed up ${live} to ${file}: `)
  expect(await Bun.file(file).text()).toContain('"backed-up"')

  // restore FILE: into DATA_DIR.
  const into = join(newDir('cli-'), 'restored')
  const restore = run(cwd, ['restore', file], { DATA_DIR: into })
  expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: '' })
  expect(restore.stdout).toContain(`into ${into}`)
  const restored = await makeApi({ dataDir: into })
  expect((await restored.getFlag('default', 'backed-up')).status).toBe(200)
  await restored.close()
  // A second restore into a directory that holds a store is refused, in one line.
  const again = run(cwd, ['restore', file], { DATA_DIR: into })
  expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 1, stdout: '' })
  expect(again.stderr).toStartWith('Cannot restore: ')
  expect(readdirSync(cwd)).toEqual(['out.jsonl'])

  // The npm scripts run the same commands.
  const viaNpm = join(cwd, 'npm.jsonl')
  const npmBackup = Bun.spawnSync(['npm', 'run', '--silent', 'backup', '--', viaNpm], {
    cwd: ROOT,
    env: baseEnv({ DATA_DIR: live }),
    timeout: 30_000,
  })
  expect({ code: npmBackup.exitCode, out: npmBackup.stdout.toString() }).toEqual({
    code: 0,
    out: expect.stringContaining(`Backed up ${live} to ${viaNpm}`),
  })
  const npmInto = join(newDir('cli-'), 'npm-restored')
  const npmRestore = Bun.spawnSync(['npm', 'run', '--silent', 'restore', '--', viaNpm, npmInto], {
    cwd: ROOT,
    env: baseEnv(),
    timeout: 30_000,
  })
  expect({ code: npmRestore.exitCode, out: npmRestore.stdout.toString() }).toEqual({
    code: 0,
    out: expect.stringContaining(`into ${npmInto}`),
  })
  expect(existsSync(join(npmInto, 'state.json'))).toBe(true)
}, 60_000)

test('backup without FILE writes a new file in DATA_DIR/backups (0700, the files 0600), never in the working directory; restore takes it back', async () => {
  const cwd = newDir('cli-')
  const live = await storeWithFlag('kept-by-default')

  const backups = join(live, 'backups')
  const first = run(cwd, ['backup'], { DATA_DIR: live })
  expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' })
  const written = new RegExp(
    `^Backed up ${live} to ${backups}/(backup-\\d{8}T\\d{6}\\.\\d{3}Z\\.jsonl): \\d+ events, \\d+ bytes\\n$`,
  )
  expect(first.stdout).toMatch(written)
  const name = written.exec(first.stdout)![1]
  expect(readdirSync(cwd)).toEqual([])
  expect(statSync(backups).mode & 0o777).toBe(0o700)
  expect(statSync(join(backups, name)).mode & 0o777).toBe(0o600)
  // What docs/operations.md says a backup holds: the secret key in its header, the flag in its state.
  const [header, state] = readFileSync(join(backups, name), 'utf8').split('\n')
  expect(JSON.parse(header).secretKey).toBe(readFileSync(join(live, 'secret.key'), 'utf8').trim())
  expect(state).toContain('"kept-by-default"')

  // A second backup is a second file; a backups directory others could read is narrowed first.
  chmodSync(backups, 0o755)
  chmodSync(join(backups, name), 0o644)
  await Bun.sleep(2)
  const second = run(cwd, ['backup'], { DATA_DIR: live })
  expect(second.code).toBe(0)
  expect(readdirSync(backups).sort()).toEqual([name, written.exec(second.stdout)![1]].sort())
  expect(statSync(backups).mode & 0o777).toBe(0o700)
  // The service narrows what is in it at start, as it does the data files.
  const reopened = await makeApi({ dataDir: live })
  await reopened.close()
  expect(statSync(join(backups, name)).mode & 0o777).toBe(0o600)

  // Restored into DATA_DIR itself once its store is gone (the backups directory stays).
  for (const file of ['state.json', 'state.journal.jsonl', 'events.jsonl', 'secret.key'])
    Bun.spawnSync(['rm', join(live, file)])
  const restore = run(cwd, ['restore', join(backups, name)], { DATA_DIR: live })
  expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: '' })
  const restored = await makeApi({ dataDir: live })
  expect((await restored.getFlag('default', 'kept-by-default')).status).toBe(200)
  await restored.close()
  expect(readdirSync(backups)).toHaveLength(2)

  // No data directory: nothing is made, neither it nor a backups directory.
  const missing = join(cwd, 'missing')
  const refused = run(cwd, ['backup'], { DATA_DIR: missing })
  expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: '' })
  expect(refused.stderr).toMatch(/^Cannot back up: the data directory .*missing does not exist/)
  expect(readdirSync(cwd)).toEqual([])
}, 60_000)

test('serve (also the default) starts the service; healthcheck answers 0 once it is ready, under BASE_URI_PATH too, and 1 when nothing answers', async () => {
  const cwd = newDir('cli-')
  const port = freePort()
  const env = { PORT: String(port), HOST: '0.0.0.0', BASE_URI_PATH: '/flags', DATA_DIR: join(cwd, 'data') }
  const down = run(cwd, ['healthcheck'], env)
  expect({ code: down.code, stdout: down.stdout }).toEqual({ code: 1, stdout: '' })
  expect(down.stderr).toMatch(
    new RegExp(`^Cannot check health: http://127\\.0\\.0\\.1:${port}/flags/ready did not answer: .*\\n$`),
  )

  const server = Bun.spawn([process.execPath, MAIN, 'serve'], {
    cwd,
    env: baseEnv({ ...env, INIT_ADMIN_API_TOKENS: ADMIN_SECRET, LOG_LEVEL: 'warn' }),
    stdout: 'ignore',
    stderr: 'ignore',
  })
  later(() => server.kill('SIGKILL'))
  let up = run(cwd, ['healthcheck'], env)
  await waitFor(() => (up = run(cwd, ['healthcheck'], env)).code === 0, 'healthcheck to pass', { every: 50 })
  expect(up).toEqual({ code: 0, stdout: `http://127.0.0.1:${port}/flags/ready: ready\n`, stderr: '' })
  expect(
    (await fetch(`http://127.0.0.1:${port}/flags/api/admin/projects`, { headers: { authorization: ADMIN_SECRET } }))
      .status,
  ).toBe(200)
  // A healthcheck against the wrong prefix gets the 404 and says so.
  const wrong = run(cwd, ['healthcheck'], { ...env, BASE_URI_PATH: '' })
  expect(wrong.code).toBe(1)
  expect(wrong.stderr).toStartWith(`Cannot check health: http://127.0.0.1:${port}/ready answered 404: `)
  server.kill('SIGTERM')
  expect(await server.exited).toBe(0)
  expect(readdirSync(join(cwd, 'data'))).toContain('state.json')
}, 60_000)
