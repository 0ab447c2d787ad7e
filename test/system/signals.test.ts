/**
 * SIGTERM and SIGINT sent to the process a user started (`npm start`, `bun run start`) stop the
 * service gracefully, as process supervisors and container runtimes send them: the server must not
 * be left running, orphaned, behind a launcher that died. Each launcher runs in its own process
 * group, which the test kills whatever happens.
 */
import { afterEach, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/files'
import { freePort, PATIENCE_MS } from '../helpers/processes'

const ROOT = join(import.meta.dir, '../..')
const SECRET = '*:*.signals-test-secret-0123456789'
const cleanups: (() => void)[] = []
afterEach(() => cleanups.splice(0).forEach(cleanup => cleanup()))

/** Pids of this user's processes started with DATA_DIR set to `dataDir` (the server, whatever launched it). */
function processesWithDataDir(dataDir: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(`DATA_DIR=${dataDir}`))
        found.push(Number(entry))
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return found
}

const answers = (url: string) =>
  fetch(url).then(
    r => r.ok,
    () => false,
  )

async function waitFor(condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await condition()) return true
    await Bun.sleep(50)
  }
  return condition()
}

/** Starts `command` in a new process group (killed after the test) and waits for /ready. */
async function launch(command: string[], dataDir: string) {
  const port = freePort()
  const proc = Bun.spawn(command, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      INIT_ADMIN_API_TOKENS: SECRET,
      LOG_LEVEL: 'warn',
    },
    stdout: 'ignore',
    stderr: 'pipe',
    detached: true,
  })
  cleanups.push(() => {
    try {
      process.kill(-proc.pid, 'SIGKILL')
    } catch {
      // The group is gone already.
    }
  })
  const base = `http://127.0.0.1:${port}`
  if (!(await waitFor(() => answers(`${base}/ready`), 30_000))) {
    throw new Error(`${command.join(' ')} did not become ready: ${await new Response(proc.stderr).text()}`)
  }
  return { proc, base }
}

const launchers: [string, string[]][] = [
  ['npm start', ['npm', 'start']],
  ['bun run start', [process.execPath, 'run', 'start']],
]

for (const [name, command] of launchers) {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${signal} to the ${name} process stops the server gracefully and keeps acknowledged writes`, async () => {
      const dir = tempDir('signals-')
      cleanups.push(() => dir.remove())
      const { proc, base } = await launch(command, dir.path)
      expect(processesWithDataDir(dir.path)).toContain(proc.pid)

      const headers = { authorization: SECRET, 'content-type': 'application/json' }
      const created = await fetch(`${base}/api/admin/projects/default/features`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'before-signal' }),
      })
      expect(created.status).toBe(201)

      proc.kill(signal)
      const exited = await Promise.race([proc.exited, Bun.sleep(PATIENCE_MS).then(() => 'still running')])
      expect(exited).toBe(0)
      // The server itself, not only its launcher, is gone and no longer listening.
      expect(await waitFor(() => processesWithDataDir(dir.path).length === 0, 30_000)).toBe(true)
      expect(await answers(`${base}/health`)).toBe(false)

      // A clean stop leaves a checkpoint: the journal is empty, and the write is there after a restart.
      expect(await Bun.file(join(dir.path, 'state.journal.jsonl')).text()).toBe('')
      const again = await launch([process.execPath, 'src/main.ts'], dir.path)
      const flag = await fetch(`${again.base}/api/admin/projects/default/features/before-signal`, { headers })
      expect(flag.status).toBe(200)
      again.proc.kill('SIGTERM')
      expect(await again.proc.exited).toBe(0)
    }, 60_000)
  }
}
