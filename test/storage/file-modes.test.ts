/**
 * The data directory is the service's alone: the directory 0700 and every file the service writes in
 * it 0600 whatever the umask (after a start, a checkpoint, a backup and a restore), and a directory
 * left wider by an older version is narrowed at start, saying so. Token secrets are stored as
 * HMAC-SHA-256 under the directory's key (secret.key), never as a plain SHA-256; data directories of
 * older versions (plain SHA-256, no key) keep working and are upgraded.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { backupDataDir, restoreBackup } from '../../src/backup/backup'
import { EVENTS_FILE, JOURNAL_FILE, KEY_FILE, STATE_FILE } from '../../src/services'
import { openStore } from '../../src/open-store'
import { StoreLoadError, type SecuredReport } from '../../src/storage/files'
import type { StateDoc } from '../../src/storage/records'
import { ADMIN_SECRET, freePort, makeApi, PATIENCE_MS, tempDir, untilReady, type Api } from '../helpers'

const dirs: { remove(): void }[] = []
const apis: Api[] = []
const umaskBefore = process.umask()
afterEach(async () => {
  process.umask(umaskBefore)
  for (const api of apis.splice(0)) await api.close().catch(() => {})
  for (const dir of dirs.splice(0)) dir.remove()
})

function newParent(): string {
  const dir = tempDir('file-modes-')
  dirs.push(dir)
  return dir.path
}

/** An empty data directory, as the service makes it. */
function newDataDir(): string {
  const dir = join(newParent(), 'data')
  mkdirSync(dir, { mode: 0o700 })
  return dir
}

async function open(dataDir: string, adminTokens = [ADMIN_SECRET]): Promise<Api> {
  const api = await makeApi({ dataDir, adminTokens })
  apis.push(api)
  return api
}

async function close(api: Api) {
  apis.splice(apis.indexOf(api), 1)
  await api.close()
}

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8)

/** The mode of the directory and of every file in it, by name. */
function modes(dir: string): Record<string, string> {
  const result: Record<string, string> = { '.': modeOf(dir) }
  for (const name of readdirSync(dir)) result[name] = modeOf(join(dir, name))
  return result
}

function expectPrivate(dir: string, files: string[]) {
  const expected: Record<string, string> = { '.': '700' }
  for (const name of files) expected[name] = '600'
  expect(modes(dir)).toEqual(expected)
}

const STORE = [STATE_FILE, JOURNAL_FILE, EVENTS_FILE, KEY_FILE]
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

async function clientSecret(api: Api, tokenName: string): Promise<string> {
  const response = await api.createToken({ tokenName, type: 'client', environment: 'development' })
  expect(response.status).toBe(201)
  return response.body.secret
}

const UMASKS = [
  ['restrictive', 0o077],
  ['permissive', 0o000],
] as const

describe.each(UMASKS)('with a %s umask', (_, umask) => {
  test('a start, a checkpoint, a backup and a restore make the directory 0700 and every file 0600', async () => {
    process.umask(umask)
    const parent = newParent()
    const dir = join(parent, 'data')
    mkdirSync(dir, { mode: 0o700 })
    const api = await makeApi({ dataDir: dir, checkpointAfterBytes: 2000 })
    apis.push(api)
    expectPrivate(dir, STORE)

    // Enough writes for a checkpoint: state.json is replaced through its temp file.
    // (Compared by content: a new file's inode can be the one an earlier checkpoint freed.)
    const stateBefore = readFileSync(join(dir, STATE_FILE), 'utf8')
    for (let i = 0; i < 20; i++)
      expect((await api.createFlag('default', `flag-${i}`, { description: 'x'.repeat(100) })).status).toBe(201)
    await api.services.store.flush()
    expect(readFileSync(join(dir, STATE_FILE), 'utf8')).not.toBe(stateBefore)
    expectPrivate(dir, STORE)
    await close(api)
    expectPrivate(dir, STORE)

    const file = join(parent, 'backup.jsonl')
    await backupDataDir(dir, file)
    expect(modeOf(file)).toBe('600')

    // Into a missing directory (made whole beside it and renamed in) and into one holding other files.
    const missing = join(parent, 'restored')
    await restoreBackup(file, missing)
    expectPrivate(missing, [...STORE, '.lock'])
    const holding = join(parent, 'holding')
    mkdirSync(holding, { mode: 0o755 })
    chmodSync(holding, 0o755)
    writeFileSync(join(holding, 'README.md'), 'data lives here\n', { mode: 0o600 })
    await restoreBackup(file, holding)
    expectPrivate(holding, [...STORE, '.lock', 'README.md'])
    const restored = await open(holding)
    expect((await restored.getFlag('default', 'flag-19')).status).toBe(200)
    expectPrivate(holding, [...STORE, '.lock', 'README.md'])
  })
})

test('a directory and files an older version left readable by others are narrowed at start, and the start says which', async () => {
  process.umask(0o022)
  const dir = newDataDir()
  await close(await open(dir))
  // As an older version left them: 0755 and 0644 (a temp file of an interrupted checkpoint too).
  chmodSync(dir, 0o755)
  for (const name of STORE) chmodSync(join(dir, name), 0o644)
  writeFileSync(join(dir, `.${STATE_FILE}.tmp`), '{}', { mode: 0o664 })
  chmodSync(join(dir, `.${STATE_FILE}.tmp`), 0o664)
  writeFileSync(join(dir, 'README.md'), 'not ours\n', { mode: 0o644 })

  const told: SecuredReport[] = []
  const store = await openStore(dir, { sync: true, onSecured: report => told.push(report) })
  await store.close()
  expect(told).toHaveLength(1)
  expect(told[0].refused).toEqual([])
  expect(told[0].narrowed.sort()).toEqual(
    [
      `${dir}: 755 -> 700`,
      ...[...STORE, `.${STATE_FILE}.tmp`].map(
        name => `${join(dir, name)}: ${name.endsWith('.tmp') ? '664' : '644'} -> 600`,
      ),
    ].sort(),
  )
  expect(modes(dir)).toMatchObject({
    '.': '700',
    [STATE_FILE]: '600',
    [JOURNAL_FILE]: '600',
    [EVENTS_FILE]: '600',
    [KEY_FILE]: '600',
    'README.md': '644',
  })

  // Nothing left to narrow: nothing said.
  const again = await openStore(dir, { sync: true, onSecured: report => told.push(report) })
  await again.close()
  expect(told).toHaveLength(1)
})

test(
  'the server makes a missing DATA_DIR 0700 under a permissive umask, and narrows a wider one at start, logging it',
  async () => {
    process.umask(0o000)
    const dataDir = join(newParent(), 'nested', 'data')
    const serve = async () => {
      const port = freePort()
      const server = Bun.spawn([process.execPath, join(import.meta.dir, '../../src/main.ts')], {
        env: {
          ...process.env,
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          INIT_ADMIN_API_TOKENS: ADMIN_SECRET,
          LOG_LEVEL: 'warn',
        },
        stdout: 'ignore',
        stderr: 'pipe',
      })
      try {
        await untilReady(`http://127.0.0.1:${port}`, { process: server })
        expectPrivate(dataDir, [...STORE, '.lock'])
      } finally {
        server.kill('SIGTERM')
        await server.exited
      }
      return new Response(server.stderr).text()
    }
    expect(await serve()).not.toContain('permissions narrowed')
    expect(modeOf(join(dataDir, '..'))).toBe('700')
    chmodSync(dataDir, 0o755)
    chmodSync(join(dataDir, '.lock'), 0o644)
    const warned = (await serve())
      .split('\n')
      .filter(line => line.includes('permissions narrowed'))
      .map(line => JSON.parse(line))
    expect(warned).toEqual([
      expect.objectContaining({
        level: 'warn',
        changes: [`${dataDir}: 755 -> 700`, `${join(dataDir, '.lock')}: 644 -> 600`],
      }),
    ])
  },
  2 * PATIENCE_MS,
)

describe('token secrets on disk', () => {
  test('no file of the data directory holds a plain SHA-256 of a secret: they are keyed hashes under secret.key', async () => {
    const dir = newDataDir()
    const api = await open(dir)
    const secret = await clientSecret(api, 'sdk')
    await close(api)
    const key = readFileSync(join(dir, KEY_FILE), 'utf8').trim()
    expect(key).toMatch(/^[0-9a-f]{64}$/)
    const state = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')) as StateDoc
    expect(Object.values(state.tokens).map(token => token.secretHash.replace(/[0-9a-f]{64}$/, 'HEX'))).toEqual([
      'hmac-sha256:HEX',
      'hmac-sha256:HEX',
    ])
    for (const name of readdirSync(dir)) {
      const text = readFileSync(join(dir, name), 'utf8')
      for (const plain of [ADMIN_SECRET, secret]) {
        expect(text).not.toContain(sha256(plain))
        expect(text).not.toContain(plain)
      }
    }
    // The key stays the directory's: the secrets work after a restart.
    const again = await open(dir)
    expect((await again.get('/api/client/features', { token: secret })).status).toBe(200)
    expect((await again.get('/api/client/features', { token: `${secret}x` })).status).toBe(401)
    expect(readFileSync(join(dir, KEY_FILE), 'utf8').trim()).toBe(key)
  })

  test('a data directory of an older version (plain SHA-256, no key) keeps working; each hash is replaced on first use, INIT tokens at start', async () => {
    const dir = newDataDir()
    const api = await open(dir)
    const secret = await clientSecret(api, 'sdk')
    const unused = await clientSecret(api, 'unused')
    await close(api)
    // Rewritten as the versions before the key wrote it.
    const path = join(dir, STATE_FILE)
    const state = JSON.parse(readFileSync(path, 'utf8')) as StateDoc
    const plain: Record<string, string> = { 'admin-bootstrap': ADMIN_SECRET, sdk: secret, unused }
    for (const [name, text] of Object.entries(plain))
      state.tokens[name] = { ...state.tokens[name], secretHash: sha256(text) }
    writeFileSync(path, JSON.stringify(state))
    unlinkSync(join(dir, KEY_FILE))

    const upgraded = await open(dir)
    // The INIT token's hash was replaced at start, before any request.
    const hashes = () =>
      Object.fromEntries(
        Object.entries(upgraded.services.store.state.tokens).map(([name, token]) => [name, token.secretHash]),
      )
    expect(hashes()['admin-bootstrap']).toStartWith('hmac-sha256:')
    expect(hashes().sdk).toBe(sha256(secret))
    expect((await upgraded.get('/api/client/features', { token: secret })).status).toBe(200)
    await upgraded.services.store.flush()
    expect(hashes().sdk).toStartWith('hmac-sha256:')
    expect((await upgraded.get('/api/client/features', { token: secret })).status).toBe(200)
    expect((await upgraded.get('/api/admin/projects')).status).toBe(200)
    // Upgrading writes no event: nothing about the token changed for its users.
    expect(
      upgraded
        .events()
        .filter(event => event.type.startsWith('api-token'))
        .map(event => event.type),
    ).toEqual(['api-token-created', 'api-token-created', 'api-token-created'])
    await close(upgraded)

    const text = readFileSync(path, 'utf8')
    expect(text).not.toContain(sha256(ADMIN_SECRET))
    expect(text).not.toContain(sha256(secret))
    // A token never presented since keeps its old hash, and still works whenever it comes.
    expect(text).toContain(sha256(unused))
    const later = await open(dir)
    for (const token of [secret, unused]) expect((await later.get('/api/client/features', { token })).status).toBe(200)
    expect((await later.get('/api/admin/projects')).status).toBe(200)
  })

  test('an old-format admin token whose first use is a write: the write is made although the hash it was found by is replaced before it', async () => {
    const dir = newDataDir()
    const api = await open(dir)
    const secret = (await api.createToken({ tokenName: 'ci', type: 'admin', role: 'editor' })).body.secret
    await close(api)
    const path = join(dir, STATE_FILE)
    const state = JSON.parse(readFileSync(path, 'utf8')) as StateDoc
    for (const [name, text] of Object.entries({ 'admin-bootstrap': ADMIN_SECRET, ci: secret }))
      state.tokens[name] = { ...state.tokens[name], secretHash: sha256(text) }
    writeFileSync(path, JSON.stringify(state))
    unlinkSync(join(dir, KEY_FILE))

    const upgraded = await open(dir)
    // The hash is replaced by a write of its own, queued at the request's arrival, before the request's write.
    const created = await upgraded.createFlag('default', 'first-use', {}, { token: secret })
    expect(created.status).toBe(201)
    expect(upgraded.services.store.state.tokens.ci.secretHash).toStartWith('hmac-sha256:')
    expect(upgraded.events().at(-1)).toMatchObject({ type: 'feature-created', createdBy: 'ci' })
    await close(upgraded)
  })

  test('a directory whose key file is lost, while tokens are stored under it, refuses to start instead of locking every token out', async () => {
    const dir = newDataDir()
    await close(await open(dir))
    const before = readFileSync(join(dir, STATE_FILE), 'utf8')
    rmSync(join(dir, KEY_FILE))
    const error = await openStore(dir, { sync: true }).then(
      () => null,
      caught => caught,
    )
    expect(error).toBeInstanceOf(StoreLoadError)
    expect(error.message).toBe(
      `${join(dir, KEY_FILE)}: is missing, but tokens are stored under it; restore it (a backup holds it) or move the directory away`,
    )
    expect(existsSync(join(dir, KEY_FILE))).toBe(false)
    expect(readFileSync(join(dir, STATE_FILE), 'utf8')).toBe(before)
  })

  test('a backup carries the key: the restored directory accepts the same secrets', async () => {
    const dir = newDataDir()
    const parent = join(dir, '..')
    const api = await open(dir)
    const secret = await clientSecret(api, 'sdk')
    await close(api)
    const file = join(parent, 'backup.jsonl')
    await backupDataDir(dir, file)
    const header = JSON.parse(readFileSync(file, 'utf8').split('\n')[0])
    expect(header).toMatchObject({ version: 2, secretKey: readFileSync(join(dir, KEY_FILE), 'utf8').trim() })
    const into = join(parent, 'restored')
    await restoreBackup(file, into)
    expect(readFileSync(join(into, KEY_FILE))).toEqual(readFileSync(join(dir, KEY_FILE)))
    const restored = await open(into, [])
    expect((await restored.get('/api/client/features', { token: secret })).status).toBe(200)
    expect((await restored.get('/api/admin/projects', { token: ADMIN_SECRET })).status).toBe(200)
  })
})
