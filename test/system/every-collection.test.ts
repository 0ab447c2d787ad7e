/**
 * Every collection of the state, whichever feature added it (tag types, flag types, context fields,
 * SDK metrics and applications as much as flags): a backup taken while the service runs restores
 * it record for record; a backup of a data directory made before the later collections restores
 * and opens with their seeds; and a record of any collection that does not match its schema stops
 * the start naming the file and the record. The data directory is filled through the API with at
 * least one record in every collection, and the test fails if a collection is added without one.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { COLLECTIONS } from '../../src/feature-list'
import { JOURNAL_FILE, STATE_FILE } from '../../src/services'
import { openStore } from '../../src/open-store'
import { StoreLoadError } from '../../src/storage/files'
import { makeApi, type Api, type FlagListBody } from '../helpers/api'
import { expectOk } from '../helpers/expect'
import { tempDir } from '../helpers/files'
import { freePort, PATIENCE_MS, waitFor } from '../helpers/processes'
import { ADMIN_SECRET } from '../helpers/service'
import { asSession, signIn } from '../helpers/users'

const ROOT = join(import.meta.dir, '../..')
const dir = tempDir('every-collection-')
afterAll(() => dir.remove())
let made = 0
function newDir(): string {
  const path = join(dir.path, `data-${made++}`)
  mkdirSync(path)
  return path
}
/** A path for a restore to make. */
const target = () => join(dir.path, `restored-${made++}`)

function cli(dataDir: string, ...args: string[]) {
  const result = Bun.spawnSync([process.execPath, 'run', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir },
  })
  return { exitCode: result.exitCode, output: result.stdout.toString() + result.stderr.toString() }
}

/** A record in every collection, each made through the API; the metrics flushed (committed) but the store left open. */
async function fill(api: Api) {
  // An integration whose target is refused: its delivery is a dead letter, kept with its log.
  expectOk(
    await api.post('/api/admin/addons', {
      provider: 'webhook',
      enabled: true,
      parameters: { url: 'http://169.254.169.254/hook', signingSecret: 'kept-secret' },
      events: ['feature-created'],
    }),
  )
  expectOk(await api.createFlag('default', 'checkout', { description: 'the new checkout' }), 201)
  expectOk(await api.toggle('default', 'checkout', 'development', true), 200)
  expectOk(
    await api.post('/api/admin/segments', {
      name: 'europe',
      description: 'Users in Europe',
      constraints: [{ contextName: 'region', operator: 'IN', values: ['eu-west'] }],
    }),
    201,
  )
  expectOk(
    await api.post('/api/admin/strategies', {
      name: 'by-region',
      description: 'On in some regions',
      parameters: [{ name: 'regions', type: 'list', description: 'Regions', required: true }],
    }),
    201,
  )
  expectOk(await api.post('/api/admin/tag-types', { name: 'team', description: 'Owning team' }), 201)
  expectOk(
    await api.post('/api/admin/context', {
      name: 'region',
      description: 'Where the user is',
      legalValues: [{ value: 'eu-west', description: 'Ireland' }],
      stickiness: true,
    }),
    201,
  )
  expectOk(await api.put('/api/admin/feature-types/release/lifetime', { lifetimeDays: 60 }), 200)
  const token = await api.createToken({ tokenName: 'sdk', type: 'client', projects: ['*'], environment: 'development' })
  expectOk(token, 201)
  expectOk(
    await api.post(
      '/api/client/register',
      {
        appName: 'web',
        instanceId: 'pod-1',
        sdkVersion: 'unleash-client-node:6.1.0',
        strategies: ['default', 'by-region'],
      },
      { token: token.body.secret },
    ),
    202,
  )
  expectOk(
    await api.post(
      '/api/client/metrics',
      {
        appName: 'web',
        instanceId: 'pod-1',
        bucket: { start: 0, stop: 0, toggles: { checkout: { yes: 7, no: 2, variants: { blue: 3 } } } },
      },
      { token: token.body.secret },
    ),
    202,
  )
  await api.services.metrics.flush()
  expectOk(
    await api.post('/api/admin/user-admin', { username: 'alice', rootRole: 'Editor', password: 'Correct-horse-7' }),
    201,
  )
  const alice = asSession(await signIn(api, 'alice', 'Correct-horse-7'))
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString()
  expectOk(await api.post('/api/admin/user/tokens', { description: 'laptop', expiresAt: tomorrow }, alice), 201)
  expectOk(await api.post('/api/admin/service-account', { username: 'robot', rootRole: 'Editor' }), 201)
  expectOk(
    await api.post('/api/admin/auth/oidc/settings', {
      enabled: false,
      discoverUrl: 'https://login.example.com',
      clientId: 'flagstore',
      secret: 'kept-secret',
    }),
  )
  // A person's link to the provider is made by a sign-in through it (test/features/sso): written here as one would.
  const aliceId = Object.values(api.services.store.state.users).find(user => user.username === 'alice')!.id
  await api.services.store.transact({ name: 'every-collection', userId: null }, tx =>
    tx.put('ssoIdentities', 'https://login.example.com alice', {
      id: 'https://login.example.com alice',
      userId: aliceId,
      createdAt: tx.now,
    }),
  )
  const requests = '/api/admin/projects/default/environments/production/change-requests'
  expectOk(await api.put(`${requests}/config`, { changeRequestsEnabled: true, requiredApprovals: 1 }), 204)
  expectOk(
    await api.post(requests, { feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } }, alice),
  )
  await waitFor(() => Object.keys(api.services.store.state.addonAttempts).length > 0, 'the delivery attempt')
  for (const { name } of COLLECTIONS)
    expect({ collection: name, records: Object.keys(api.services.store.state[name]).length > 0 }).toEqual({
      collection: name,
      records: true,
    })
}

/** What the API shows of every kind of record. */
async function views(api: Api) {
  const paths = [
    '/api/admin/projects/default/features',
    '/api/admin/segments',
    '/api/admin/strategies',
    '/api/admin/tag-types',
    '/api/admin/context',
    '/api/admin/feature-types',
    '/api/admin/api-tokens',
    '/api/admin/user-admin',
    '/api/admin/client-metrics/features/checkout',
    '/api/admin/metrics/applications',
    '/api/admin/metrics/applications/web',
    '/api/admin/addons',
    '/api/admin/addons/1/events',
  ]
  return Object.fromEntries(await Promise.all(paths.map(async path => [path, (await api.get(path)).body])))
}

test('a backup taken while the service runs restores every collection record for record, SDK metrics and applications included', async () => {
  const source = newDir()
  const api = await makeApi({ dataDir: source, metricsFlushMs: 3_600_000 })
  await fill(api)
  const shown = await views(api)
  const file = join(dir.path, 'running.jsonl')
  // While it runs: the metrics are in the journal, not yet in state.json.
  expect(cli(source, 'backup', file)).toEqual({ exitCode: 0, output: expect.stringContaining('Backed up') })
  const state = JSON.parse(JSON.stringify(api.services.store.state))
  await api.close()

  const restored = target()
  expect(cli(restored, 'restore', file, restored)).toEqual({ exitCode: 0, output: expect.stringContaining('Restored') })
  const again = await makeApi({ dataDir: restored })
  try {
    for (const { name } of COLLECTIONS)
      expect({ collection: name, records: again.services.store.state[name] }).toEqual({
        collection: name,
        records: state[name],
      })
    expect(await views(again)).toEqual(shown)
  } finally {
    await again.close()
  }
})

/** A data directory as a version before tag types, flag types, context fields and SDK metrics left it. */
async function olderDataDir(): Promise<{ path: string; flags: FlagListBody }> {
  const path = newDir()
  const api = await makeApi({ dataDir: path })
  expectOk(await api.createFlag('default', 'legacy', { description: 'made before metrics' }), 201)
  expectOk(await api.post('/api/admin/features/legacy/tags', { type: 'simple', value: 'old-tag' }), 201)
  const flags = (await api.listFlags('default')).body
  await api.close()
  const state = JSON.parse(readFileSync(join(path, STATE_FILE), 'utf8'))
  for (const name of [
    'tagTypes',
    'flagTypes',
    'contextFields',
    'flagUsage',
    'flagLastSeen',
    'clientApplications',
    'clientInstances',
  ]) {
    expect(state[name]).toBeDefined()
    delete state[name]
  }
  writeFileSync(join(path, STATE_FILE), JSON.stringify(state))
  return { path, flags }
}

async function expectSeededAndWritable(dataDir: string, flags: FlagListBody) {
  const api = await makeApi({ dataDir })
  try {
    expect((await api.listFlags('default')).body).toEqual(flags)
    expect(
      (await api.get<{ tagTypes: { name: string }[] }>('/api/admin/tag-types')).body.tagTypes.map(type => type.name),
    ).toEqual(['simple'])
    expect(
      (await api.get<{ types: { id: string }[] }>('/api/admin/feature-types')).body.types.map(type => type.id).sort(),
    ).toEqual(['experiment', 'kill-switch', 'operational', 'permission', 'release'])
    expect((await api.get<{ name: string }[]>('/api/admin/context')).body.map(field => field.name).sort()).toEqual([
      'appName',
      'currentTime',
      'environment',
      'sessionId',
      'userId',
    ])
    expect((await api.get('/api/admin/metrics/applications')).body).toEqual({ applications: [], total: 0 })
    // And it takes the new records.
    await fill(api)
  } finally {
    await api.close()
  }
}

/** An older data directory and its backup, made once for the two tests that start from them (neither changes them). */
let older: Promise<{ path: string; flags: FlagListBody; file: string }> | undefined
const olderBackup = () =>
  (older ??= (async () => {
    const { path, flags } = await olderDataDir()
    const file = join(dir.path, 'older.jsonl')
    expect(cli(path, 'backup', file)).toEqual({ exitCode: 0, output: expect.stringContaining('Backed up') })
    return { path, flags, file }
  })())

test('a backup of a data directory made before the later collections restores, opens with their seeds and takes their records', async () => {
  const { file, flags } = await olderBackup()
  const restored = target()
  expect(cli(restored, 'restore', file, restored)).toEqual({ exitCode: 0, output: expect.stringContaining('Restored') })
  await expectSeededAndWritable(restored, flags)
})

test('a backup file written by a version before the later collections (its state without them) restores and opens with their seeds', async () => {
  const { path, flags, file: backup } = await olderBackup()
  const file = join(dir.path, 'older-version.jsonl')
  // As the older version wrote it: the state line holds only what that version knew.
  const lines = readFileSync(backup, 'utf8').split('\n')
  const older = JSON.parse(readFileSync(join(path, STATE_FILE), 'utf8'))
  const state = JSON.parse(lines[1])
  for (const key of Object.keys(state)) if (!(key in older)) delete state[key]
  lines[1] = JSON.stringify(state)
  writeFileSync(file, lines.join('\n'))
  const restored = target()
  expect(cli(restored, 'restore', file, restored)).toEqual({ exitCode: 0, output: expect.stringContaining('Restored') })
  await expectSeededAndWritable(restored, flags)
})

/** A data directory with a record in every collection, all of them in state.json (a clean stop). */
async function filledAndStopped(): Promise<string> {
  const path = newDir()
  const api = await makeApi({ dataDir: path, metricsFlushMs: 3_600_000 })
  await fill(api)
  await api.close()
  expect(readFileSync(join(path, JOURNAL_FILE), 'utf8')).toBe('')
  return path
}

test('a record of any collection that does not match its schema stops the start, naming state.json and the record; nothing on disk changes', async () => {
  const path = await filledAndStopped()
  const original = readFileSync(join(path, STATE_FILE), 'utf8')
  for (const { name } of COLLECTIONS) {
    const state = JSON.parse(original)
    const key = Object.keys(state[name])[0]
    // A field of the record given a value of the wrong kind (an object where none is expected).
    const record = state[name][key]
    const field = Object.keys(record)[0]
    record[field] = { damaged: true }
    const damaged = JSON.stringify(state)
    writeFileSync(join(path, STATE_FILE), damaged)
    const error = await openStore(path).then(
      store => store.close().then(() => null),
      (caught: unknown) => caught,
    )
    expect({ collection: name, error: error instanceof StoreLoadError ? error.message : String(error) }).toEqual({
      collection: name,
      error: expect.stringContaining(
        `${join(path, STATE_FILE)}: holds a bad record: ${name}[${JSON.stringify(key)}]/${field}`,
      ),
    })
    expect(readFileSync(join(path, STATE_FILE), 'utf8')).toBe(damaged)
  }
  writeFileSync(join(path, STATE_FILE), original)
})

test('the real server refuses to start on a bad SDK metrics record, in state.json or in a journal line, naming the file and the record', async () => {
  const path = await filledAndStopped()
  const original = readFileSync(join(path, STATE_FILE), 'utf8')
  const start = () => {
    const result = Bun.spawnSync([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(freePort()),
        HOST: '127.0.0.1',
        DATA_DIR: path,
        INIT_ADMIN_API_TOKENS: ADMIN_SECRET,
        LOG_LEVEL: 'warn',
      },
      timeout: PATIENCE_MS,
    })
    return { exitCode: result.exitCode, stderr: result.stderr.toString().trim() }
  }

  const state = JSON.parse(original)
  const row = Object.keys(state.flagUsage)[0]
  state.flagUsage[row].cells = 'development,web,-3,0'
  writeFileSync(join(path, STATE_FILE), JSON.stringify(state))
  expect(start()).toEqual({
    exitCode: 1,
    stderr: expect.stringMatching(
      new RegExp(
        `^Cannot start: ${join(path, STATE_FILE)}: holds a bad record: flagUsage\\[${JSON.stringify(JSON.stringify(row)).slice(1, -1).replaceAll('|', '\\|').replaceAll('.', '\\.')}\\]/cells: .*The file was left as it is`,
      ),
    ),
  })

  writeFileSync(join(path, STATE_FILE), original)
  const { seq } = { seq: JSON.parse(original).commitSeq + 1 }
  const instance = {
    appName: 'web',
    instanceId: 'pod-2',
    sdkVersion: null,
    environment: 'development',
    createdAt: 'then',
    lastSeen: 42,
  }
  const line = {
    seq,
    lastEventId: JSON.parse(original).lastEventId,
    nextUserId: JSON.parse(original).nextUserId,
    changes: [['clientInstances', '["web","pod-2"]', instance]],
  }
  writeFileSync(
    join(path, JOURNAL_FILE),
    JSON.stringify(line) + '\n' + JSON.stringify({ ...line, seq: seq + 1, changes: [] }) + '\n',
  )
  expect(start()).toEqual({
    exitCode: 1,
    stderr: expect.stringContaining(
      `Cannot start: ${join(path, JOURNAL_FILE)}: commit ${seq} holds a bad record: clientInstances["[\\"web\\",\\"pod-2\\"]"]/lastSeen`,
    ),
  })
}, 40_000)
