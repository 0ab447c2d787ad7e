/**
 * Online backup and restore: while the real server takes writes from four clients, `npm run
 * backup` copies the data directory to one file; `npm run restore` makes a new directory from it.
 * Every write acknowledged before the backup began is there, with its event; the restored store
 * opens and is consistent.
 */
import { afterAll, expect, test } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { EventsService } from '../src/features/events/events.service'
import { openStore } from '../src/services'
import type { EventRecord } from '../src/storage/records'
import { freePort, tempDir } from './helpers'

const ROOT = join(import.meta.dir, '..')
const SECRET = '*:*.backup-test-secret-0123456789'
const dir = tempDir('backup-')
const live = join(dir.path, 'live')
const file = join(dir.path, 'backup.jsonl')
const restored = join(dir.path, 'restored')
let server: ReturnType<typeof Bun.spawn> | undefined
afterAll(async () => {
  server?.kill('SIGKILL')
  await server?.exited
  dir.remove()
})

function cli(...args: string[]) {
  const result = Bun.spawnSync([process.execPath, 'run', 'src/backup/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: live } })
  return { exitCode: result.exitCode, output: result.stdout.toString() + result.stderr.toString() }
}

test('a backup taken under concurrent writes restores every write acknowledged before it began', async () => {
  const port = freePort()
  server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: live, INIT_ADMIN_API_TOKENS: SECRET, LOG_LEVEL: 'warn' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200 && !(await fetch(`${base}/ready`).then((r) => r.ok, () => false)); i++) await Bun.sleep(25)

  const acknowledged: string[] = []
  let writing = true
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; writing; i++) {
      const name = `w${w}-${i}`
      const response = await fetch(`${base}/api/admin/projects/default/features`, {
        method: 'POST',
        headers: { authorization: SECRET, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      })
      expect(response.status).toBe(201)
      acknowledged.push(name)
    }
  })
  await Bun.sleep(300)
  const before = [...acknowledged]
  const backup = cli('backup', file)
  expect(backup).toEqual({ exitCode: 0, output: expect.stringContaining('Backed up') })
  await Bun.sleep(100)
  writing = false
  await Promise.all(writers)
  expect(before.length).toBeGreaterThan(10)
  expect(acknowledged.length).toBeGreaterThan(before.length)

  expect(cli('restore', file, restored)).toEqual({ exitCode: 0, output: expect.stringContaining('Restored') })
  const store = await openStore(restored)
  const events: EventRecord[] = []
  await store.readEvents((event) => events.push(event))
  expect(events.map((event) => event.id)).toEqual(events.map((_, i) => i + 1))
  const search = new EventsService(store)
  await search.load().finally(() => search.close())
  for (const name of before) {
    expect(store.state.flags[name]?.name).toBe(name)
    expect(events.filter((event) => event.type === 'feature-created' && event.featureName === name)).toHaveLength(1)
  }
  // Whatever else made it in is whole: every flag has its event and every event's flag exists.
  for (const flag of Object.values(store.state.flags)) expect(events.some((e) => e.type === 'feature-created' && e.featureName === flag.name)).toBe(true)
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
