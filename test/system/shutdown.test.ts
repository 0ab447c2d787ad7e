/**
 * Graceful shutdown: on SIGTERM the server stops accepting, finishes the requests it has, makes
 * the last commit durable and exits 0; every write it answered with 2xx is there after a restart.
 * The log says `stopping` when the signal comes and `stopped`, its last line, once all is closed.
 */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { openStore } from '../../src/open-store'
import { tempDir } from '../helpers/files'
import { freePort, untilReady, waitFor } from '../helpers/processes'
import { ADMIN_SECRET as SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const cleanups: (() => void)[] = []
afterEach(() => cleanups.splice(0).forEach(cleanup => cleanup()))

test('SIGTERM finishes in-flight writes, keeps every acknowledged one, refuses new connections and exits 0', async () => {
  const dir = tempDir('shutdown-')
  cleanups.push(() => dir.remove())
  const port = freePort()
  const server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir.path, INIT_ADMIN_API_TOKENS: SECRET },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  cleanups.push(() => server.kill('SIGKILL'))
  const base = `http://127.0.0.1:${port}`
  await untilReady(base, { process: server })

  const headers = { authorization: SECRET, 'content-type': 'application/json' }
  const created: string[] = []
  let refused = 0
  const writes = Array.from({ length: 60 }, (_, i) =>
    fetch(`${base}/api/admin/projects/default/features`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: `graceful-${i}` }),
    }).then(
      response => {
        expect(response.status).toBe(201)
        created.push(`graceful-${i}`)
      },
      () => refused++,
    ),
  )
  // SIGTERM once the server has answered one write, with the others still on their way: a fixed
  // 5 ms could end before a loaded machine had accepted any.
  await waitFor(() => created.length > 0, 'the first write answered')
  server.kill('SIGTERM')
  await Promise.all(writes)
  expect(await server.exited).toBe(0)
  expect(created.length + refused).toBe(60)
  expect(created.length).toBeGreaterThan(0)
  expect(
    await fetch(`${base}/health`).then(
      () => 'answered',
      () => 'refused',
    ),
  ).toBe('refused')

  const store = await openStore(dir.path)
  for (const name of created) expect(store.state.flags[name]?.name).toBe(name)
  const events: string[] = []
  await store.readEvents(event => {
    if (event.type === 'feature-created') events.push(event.featureName!)
  })
  for (const name of created) expect(events).toContain(name)
  // A clean stop leaves a checkpoint and an empty journal.
  expect(await Bun.file(join(dir.path, 'state.journal.jsonl')).text()).toBe('')

  const lines = (await new Response(server.stdout).text())
    .trim()
    .split('\n')
    .map(line => JSON.parse(line) as { msg: string; signal?: string; exitCode?: number })
  const messages = lines.map(line => line.msg)
  expect(messages.filter(msg => msg === 'stopping' || msg === 'stopped')).toEqual(['stopping', 'stopped'])
  expect(lines.at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGTERM', exitCode: 0 })
})
