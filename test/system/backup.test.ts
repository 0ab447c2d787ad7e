/**
 * Online backup and restore: while the service takes writes from four writers, `npm run backup` (a
 * process of its own) copies the data directory to one file; `npm run restore` makes a new directory from it.
 * Every write acknowledged before the backup began is there, with its event; the restored store
 * opens and is consistent.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { EventsService } from '../../src/features/events/events.service'
import { EVENTS_FILE, STATE_FILE } from '../../src/services'
import { openStore } from '../../src/open-store'
import { LOCK_FILE } from '../../src/storage/lock'
import type { EventRecord } from '../../src/storage/records'
import { makeApi, type FlagListBody, type EventPageBody } from '../helpers/api'
import { tempDir, dirSnapshot } from '../helpers/files'
import { freePort, untilReady, waitFor, PATIENCE_MS } from '../helpers/processes'
import { ADMIN_SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const dir = tempDir('backup-')
const live = join(dir.path, 'live')
const file = join(dir.path, 'backup.jsonl')
const restored = join(dir.path, 'restored')
afterAll(() => dir.remove())

function cli(...args: string[]) {
  const result = Bun.spawnSync([process.execPath, 'run', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: live },
  })
  return { exitCode: result.exitCode, output: result.stdout.toString() + result.stderr.toString() }
}

/** As `cli`, without blocking this process meanwhile. */
async function cliAsync(...args: string[]): Promise<ReturnType<typeof cli>> {
  const child = Bun.spawn([process.execPath, 'run', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: live },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { exitCode, output: stdout + stderr }
}

test('a backup taken under concurrent writes restores every write acknowledged before it began', async () => {
  // The service in this process (the same app and store as a started server's), so that its four writers
  // keep writing while the backup, a process of its own, reads the directory.
  mkdirSync(live)
  const api = await makeApi({ dataDir: live, adminTokens: [ADMIN_SECRET] })
  const acknowledged: string[] = []
  let before: string[] = []
  let writing = true
  try {
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const name = `w${w}-${i}`
        expect((await api.createFlag('default', name)).status).toBe(201)
        acknowledged.push(name)
      }
    })
    // Counts of writes, not times: on a loaded machine 300 ms may see no write at all.
    await waitFor(() => acknowledged.length > 10, 'writes acknowledged before the backup')
    before = [...acknowledged]
    expect(await cliAsync('backup', file)).toEqual({ exitCode: 0, output: expect.stringContaining('Backed up') })
    const after = acknowledged.length
    await waitFor(() => acknowledged.length > after + 4, 'writes acknowledged after the backup')
    writing = false
    await Promise.all(writers)
    expect(acknowledged.length).toBeGreaterThan(before.length)
  } finally {
    writing = false
    await api.close()
  }

  expect(cli('restore', file, restored)).toEqual({ exitCode: 0, output: expect.stringContaining('Restored') })
  const store = await openStore(restored)
  const events: EventRecord[] = []
  await store.readEvents(event => events.push(event))
  expect(events.map(event => event.id)).toEqual(events.map((_, i) => i + 1))
  const search = new EventsService(store)
  await search.load().finally(() => search.close())
  for (const name of before) {
    expect(store.state.flags[name]?.name).toBe(name)
    expect(events.filter(event => event.type === 'feature-created' && event.featureName === name)).toHaveLength(1)
  }
  // Whatever else made it in is whole: every flag has its event and every event's flag exists.
  for (const flag of Object.values(store.state.flags))
    expect(events.some(e => e.type === 'feature-created' && e.featureName === flag.name)).toBe(true)
  for (const event of events) if (event.featureName) expect(event.featureName in store.state.flags).toBe(true)
})

test('restore refuses a directory that already holds a store, and a file that is not a backup', () => {
  expect(existsSync(join(restored, 'state.json'))).toBe(true)
  const again = cli('restore', file, restored)
  expect(again.exitCode).toBe(1)
  expect(again.output).toContain('already holds a store')
  const bogus = join(dir.path, 'bogus.jsonl')
  writeFileSync(bogus, '{"hello":"world"}\n')
  const wrong = cli('restore', bogus, join(dir.path, 'elsewhere'))
  expect(wrong.exitCode).toBe(1)
  expect(wrong.output).toContain('not a backup')
})

describe('a failed restore leaves the target as it was, and a retry then makes a store the service opens', () => {
  const source = join(dir.path, 'source')
  const valid = join(dir.path, 'valid.jsonl')
  let flags: FlagListBody
  let events: EventPageBody
  let text = ''
  let lines: string[] = []

  beforeAll(async () => {
    mkdirSync(source)
    const api = await makeApi({ dataDir: source, adminTokens: [ADMIN_SECRET] })
    for (let i = 0; i < 6; i++)
      expect((await api.createFlag('default', `restored-${i}`, { description: `flag ${i}` })).status).toBe(201)
    expect((await api.toggle('default', 'restored-2', 'development', true)).status).toBe(200)
    flags = (await api.listFlags('default')).body
    events = (await api.searchEvents('?limit=1000')).body
    await api.close()
    expect(run(['backup', valid], source).exitCode).toBe(0)
    text = readFileSync(valid, 'utf8')
    lines = text.split('\n')
    expect(lines.length).toBeGreaterThan(10)
  })

  /** Byte offset of the start of line `index` (0-based) of the valid backup. */
  const offsetOf = (index: number) => lines.slice(0, index).reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0)
  const middleEvent = () => Math.floor((lines.length - 1 + 2) / 2)

  const cases: { name: string; make: () => string | null; problem: string | ((file: string) => string) }[] = [
    { name: 'a missing backup file', make: () => null, problem: file => `no such file: ${file}` },
    {
      name: 'garbage',
      make: () => 'PK\u0003\u0004 not a backup\n\u0000\u00ff{"id":1}\n',
      problem: 'is not a backup made by this service',
    },
    {
      name: 'a backup without its header',
      make: () => lines.slice(1).join('\n'),
      problem: 'is not a backup made by this service',
    },
    {
      name: 'a backup cut in the middle of an event',
      make: () => text.slice(0, offsetOf(middleEvent()) + 10),
      problem: () => `is truncated: it ends in the middle of line ${middleEvent() + 1}`,
    },
    {
      name: 'a backup cut after an event',
      make: () => lines.slice(0, middleEvent()).join('\n') + '\n',
      problem: () => `is truncated: it holds ${middleEvent() - 2} events but its state includes ${lines.length - 3}`,
    },
    {
      name: 'a backup cut in the middle of the state',
      make: () => text.slice(0, offsetOf(1) + Math.floor(lines[1].length / 2)),
      problem: 'is truncated: it ends in the middle of line 2',
    },
    {
      name: 'a backup whose events do not follow on',
      make: () => lines.filter((_, i) => i !== middleEvent()).join('\n'),
      problem: () => `line ${middleEvent() + 1} is not event ${middleEvent() - 1}`,
    },
    {
      name: 'a backup whose state the service would refuse',
      make: () =>
        [lines[0], JSON.stringify({ ...JSON.parse(lines[1]), formatVersion: 2 }), ...lines.slice(2)].join('\n'),
      problem: 'does not make a store that opens: state.json: has formatVersion 2, expected 1',
    },
  ]

  for (const target of ['missing', 'empty', 'holding other files'] as const) {
    for (const { name, make, problem } of cases) {
      test(`${name}, into a target ${target}`, async () => {
        const parent = join(dir.path, `case-${Math.random().toString(36).slice(2)}`)
        mkdirSync(parent)
        const into = join(parent, 'data')
        if (target !== 'missing') mkdirSync(into)
        if (target === 'holding other files') {
          writeFileSync(join(into, 'README.md'), 'Runtime data lives here.\n')
          writeFileSync(join(into, '.gitkeep'), '')
        }
        const before = existsSync(into) ? dirSnapshot(into) : null
        const bad = join(parent, 'bad.jsonl')
        const content = make()
        if (content !== null) writeFileSync(bad, content)

        const failed = run(['restore', bad, into])
        expect(failed.exitCode).toBe(1)
        const expected = typeof problem === 'function' ? problem(bad) : problem
        expect(failed.output).toStartWith('Cannot restore: ')
        expect(failed.output).toContain(bad)
        expect(failed.output).toContain(expected)
        expect(failed.output.trim().split('\n')).toHaveLength(1)
        // Untouched, and nothing left beside it.
        expect(existsSync(into) ? dirSnapshot(into) : null).toEqual(before)
        expect(readdirSync(parent).sort()).toEqual(
          content === null ? (before ? ['data'] : []) : before ? ['bad.jsonl', 'data'] : ['bad.jsonl'],
        )

        const retry = run(['restore', valid, into])
        expect(retry).toEqual({ exitCode: 0, output: expect.stringContaining('Restored') })
        expect(readdirSync(parent).filter(entry => entry.includes('restore'))).toEqual([])
        expect(readdirSync(into).filter(entry => entry.includes('restore'))).toEqual([])
        if (before)
          for (const [file, bytes] of Object.entries(before))
            expect(readFileSync(join(into, file)).toString('base64')).toBe(bytes)

        const api = await makeApi({ dataDir: into, adminTokens: [ADMIN_SECRET] })
        try {
          expect((await api.listFlags('default')).body).toEqual(flags)
          expect((await api.searchEvents('?limit=1000')).body).toEqual(events)
          expect((await api.createFlag('default', 'after-restore')).status).toBe(201)
        } finally {
          await api.close()
        }
      })
    }
  }

  test('a target that is a symbolic link stays one: the store goes into the directory it points to', async () => {
    const real = join(dir.path, 'link-target')
    const link = join(dir.path, 'link')
    mkdirSync(real)
    symlinkSync(real, link)
    const bad = join(dir.path, 'cut-state.jsonl')
    writeFileSync(bad, text.slice(0, offsetOf(1) + 20))
    expect(run(['restore', bad, link]).exitCode).toBe(1)
    expect(readdirSync(real)).toEqual([])
    expect(run(['restore', valid, link]).exitCode).toBe(0)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readdirSync(real).sort()).toEqual([
      '.lock',
      'events.jsonl',
      'secret.key',
      'state.journal.jsonl',
      'state.json',
    ])
  })

  test('the real server starts on a directory restored after a failed restore, and has everything', async () => {
    const into = join(dir.path, 'served')
    const bad = join(dir.path, 'cut.jsonl')
    writeFileSync(bad, text.slice(0, offsetOf(middleEvent()) + 5))
    expect(run(['restore', bad, into]).exitCode).toBe(1)
    expect(existsSync(into)).toBe(false)
    expect(run(['restore', valid, into]).exitCode).toBe(0)

    const port = freePort()
    const served = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: into,
        INIT_ADMIN_API_TOKENS: ADMIN_SECRET,
        LOG_LEVEL: 'warn',
      },
      stdout: 'ignore',
      stderr: 'inherit',
    })
    try {
      const base = `http://127.0.0.1:${port}`
      await untilReady(base, { process: served })
      const headers = { authorization: ADMIN_SECRET }
      expect(await (await fetch(`${base}/api/admin/projects/default/features`, { headers })).json()).toEqual(flags)
      // The backup holds no user, so the start made the first admin: its one event comes on top of everything restored.
      const answer = (await (await fetch(`${base}/api/admin/search/events?limit=1000`, { headers })).json()) as {
        events: { type: string; createdBy: string }[]
        total: number
      }
      const [newest, ...restored] = answer.events
      expect(newest).toMatchObject({ type: 'user-created', createdBy: 'system', data: { username: 'admin' } })
      expect({ events: restored, total: answer.total - 1 }).toEqual(events)
    } finally {
      served.kill('SIGKILL')
      await served.exited
    }
  })
})

function run(args: string[], dataDir = live) {
  const result = Bun.spawnSync([process.execPath, 'run', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir },
  })
  return { exitCode: result.exitCode, output: result.stdout.toString() + result.stderr.toString() }
}

test('a server started while a restore writes is refused, naming the restore; the restore then completes', async () => {
  const source = join(dir.path, 'big-source')
  mkdirSync(source)
  const api = await makeApi({ dataDir: source, adminTokens: [ADMIN_SECRET] })
  const description = 'x'.repeat(1000)
  const created = await Promise.all(
    Array.from({ length: 500 }, (_, i) => api.createFlag('default', `big-${i}`, { description })),
  )
  expect(created.every(response => response.status === 201)).toBe(true)
  await api.close()
  const big = join(dir.path, 'big.jsonl')
  expect(run(['backup', big], source).exitCode).toBe(0)

  const parent = join(dir.path, 'while-restoring')
  mkdirSync(parent)
  // The restore is stopped (SIGSTOP) with its events half written; if it got past them before the
  // signal landed, another round is made.
  let caught = false
  for (let round = 0; round < 5 && !caught; round++) {
    const into = join(parent, `data-${round}`)
    const restore = Bun.spawn([process.execPath, 'run', 'src/main.ts', 'restore', big, into], {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    let temp: string | undefined
    while (restore.exitCode === null && !(temp && existsSync(join(parent, temp, EVENTS_FILE)))) {
      temp = readdirSync(parent).find(name => name.startsWith(`data-${round}.restore-`))
      await Bun.sleep(1)
    }
    restore.kill('SIGSTOP')
    try {
      if (!temp || existsSync(join(parent, temp, STATE_FILE))) continue
      caught = true
      const server = Bun.spawnSync([process.execPath, 'src/main.ts'], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(freePort()), HOST: '127.0.0.1', DATA_DIR: into, LOG_LEVEL: 'warn' },
        timeout: PATIENCE_MS,
      })
      expect(server.exitCode).toBe(1)
      expect(server.stderr.toString()).toMatch(
        new RegExp(`^Cannot start: ${into} is in use by another process: pid ${restore.pid} .*main\\.ts restore `),
      )
      expect(server.stdout.toString()).toBe('')
      expect(readdirSync(into)).toEqual([LOCK_FILE])
    } finally {
      restore.kill('SIGCONT')
      expect(await restore.exited).toBe(0)
    }
    const restored = await makeApi({ dataDir: into, adminTokens: [ADMIN_SECRET] })
    try {
      expect((await restored.listFlags('default')).body.features).toHaveLength(500)
    } finally {
      await restored.close()
    }
  }
  expect(caught).toBe(true)
}, 30_000)
