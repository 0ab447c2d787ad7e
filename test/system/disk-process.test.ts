/**
 * The real process on a real full disk and on a directory it cannot write (issue 10, items 1, 4,
 * 5 and 15). The full disk is a 2 MiB tmpfs with a ballast file, which needs root to mount: where
 * mounting fails the test says why and is skipped (test/storage/disk-full.test.ts covers the same
 * behaviour through an injected file system everywhere).
 */
import { afterEach, describe, expect, test } from 'bun:test'
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { tempDir } from '../helpers/files'
import { freePort, waitFor } from '../helpers/processes'
import { ADMIN_SECRET as SECRET } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')

const cleanups: (() => void | Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup()
    } catch (error) {
      console.error(`cleanup: ${(error as Error).message}`)
    }
  }
})

const isRoot = process.getuid?.() === 0

/** Mounts a tmpfs of `size` on a new temp directory; null (and a printed reason) when it cannot. */
function mountTmpfs(size: string): string | null {
  const dir = tempDir('flags-tmpfs-')
  const result = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir.path], { stderr: 'pipe' })
  if (result.exitCode !== 0) {
    console.log(
      `skipped: cannot mount a tmpfs (${result.stderr.toString().trim() || `exit ${result.exitCode}`}); the injected-fault tests cover this`,
    )
    dir.remove()
    return null
  }
  cleanups.push(() => {
    const unmounted = Bun.spawnSync(['umount', '-l', dir.path])
    if (unmounted.exitCode !== 0) throw new Error(`umount ${dir.path} failed`)
    dir.remove()
  })
  return dir.path
}

interface Server {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  base: string
  stderr(): string
  finished(): Promise<number>
}

function start(dataDir: string, env: Record<string, string> = {}): Server {
  const port = freePort()
  const proc = Bun.spawn([BUN, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      INIT_ADMIN_API_TOKENS: SECRET,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let err = ''
  const decoder = new TextDecoder()
  const errClosed = (async () => {
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true })
  })().catch(() => {})
  const outClosed = (async () => {
    for await (const _chunk of proc.stdout);
  })().catch(() => {})
  cleanups.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    await proc.exited
  })
  return {
    proc,
    base: `http://127.0.0.1:${port}`,
    stderr: () => err,
    finished: async () => {
      const code = await proc.exited
      await Promise.all([errClosed, outClosed])
      return code
    },
  }
}

async function ready(server: Server): Promise<void> {
  await waitFor(
    () =>
      fetch(`${server.base}/ready`).then(
        r => r.ok,
        () => false,
      ),
    'the server to be ready',
    {
      giveUp: () =>
        server.proc.exitCode !== null ? `server exited with ${server.proc.exitCode}: ${server.stderr()}` : null,
    },
  )
}

function call(server: Server, method: string, path: string, body?: unknown) {
  return fetch(`${server.base}${path}`, {
    method,
    headers:
      body === undefined ? { authorization: SECRET } : { authorization: SECRET, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  })
}

/** Fills the file system holding `path` with a ballast file until it takes no more. */
function fillUp(path: string) {
  const chunk = Buffer.alloc(4096, 1)
  let offset = 0
  const fd = openSync(path, 'a')
  try {
    for (;;) offset += writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
  return offset
}

async function flagNames(server: Server): Promise<string[]> {
  const response = await call(server, 'GET', '/api/admin/projects/default/features')
  expect(response.status).toBe(200)
  return ((await response.json()).features as { name: string }[]).map(flag => flag.name)
}

describe('the real process on a real full disk', () => {
  test.skipIf(!isRoot)(
    'fills a 2 MiB tmpfs until 503, says why on /ready, recovers without a restart once room is freed, stops cleanly with no room for a checkpoint, and a restart has every acknowledged flag',
    async () => {
      const mount = mountTmpfs('2m')
      if (!mount) return
      const dataDir = join(mount, 'data')
      mkdirSync(dataDir)
      const server = start(dataDir)
      await ready(server)
      writeFileSync(join(mount, 'ballast'), Buffer.alloc(1536 * 1024, 1))

      const acknowledged: string[] = []
      let failure: { status: number; body: any } | null = null
      for (let i = 0; i < 4000 && !failure; i++) {
        const response = await call(server, 'POST', '/api/admin/projects/default/features', {
          name: `fill-${i}`,
          description: 'x'.repeat(400),
        })
        if (response.status === 201) acknowledged.push(`fill-${i}`)
        else failure = { status: response.status, body: await response.json() }
      }
      expect(failure).not.toBeNull()
      expect(failure!.status).toBe(503)
      expect(failure!.body.name).toBe('ServiceUnavailable')
      expect(failure!.body.message).toMatch(/^The write could not be saved: no space left on device \(ENOSPC\)/)
      expect(acknowledged.length).toBeGreaterThan(10)
      // The failed flag is not there; the acknowledged ones are.
      const names = await flagNames(server)
      expect(names).not.toContain(`fill-${acknowledged.length}`)
      for (const name of acknowledged) expect(names).toContain(name)

      const notReady = await fetch(`${server.base}/ready`)
      expect(notReady.status).toBe(503)
      const notReadyBody = await notReady.json()
      expect(notReadyBody.name).toBe('ServiceUnavailable')
      expect(notReadyBody.message).toMatch(/^Writes cannot be made durable: no space left on device \(ENOSPC\)/)

      // Room again: ready and writable without a restart.
      rmSync(join(mount, 'ballast'))
      await Bun.sleep(1100)
      expect((await fetch(`${server.base}/ready`)).status).toBe(200)
      const after = await call(server, 'POST', '/api/admin/projects/default/features', { name: 'after-room' })
      expect(after.status).toBe(201)
      acknowledged.push('after-room')

      // Full again, to the last byte: SIGTERM cannot write a checkpoint, yet stops cleanly.
      fillUp(join(mount, 'ballast'))
      server.proc.kill('SIGTERM')
      expect(await server.finished()).toBe(0)
      const stderr = server.stderr()
      expect(stderr).toContain(
        'Stopped without a new checkpoint (no space left on device (ENOSPC)); state.journal.jsonl holds every acknowledged write.',
      )
      expect(stderr).not.toMatch(/Unhandled|^\s+at /m)
      expect(readdirSync(dataDir)).not.toContain('.state.json.tmp')

      rmSync(join(mount, 'ballast'))
      const again = start(dataDir)
      await ready(again)
      const restarted = await flagNames(again)
      for (const name of acknowledged) expect(restarted).toContain(name)
      expect(restarted.filter(name => !acknowledged.includes(name))).toEqual([])
      again.proc.kill('SIGTERM')
      expect(await again.finished()).toBe(0)
    },
    60_000,
  )
})

describe('a data directory the process cannot write', () => {
  test.skipIf(!isRoot)(
    'a read-only mount stops the start with one line naming DATA_DIR and the cause, exit 1, never ready, files unchanged',
    async () => {
      const mount = mountTmpfs('4m')
      if (!mount) return
      const dataDir = join(mount, 'data')
      mkdirSync(dataDir)
      const first = start(dataDir)
      await ready(first)
      first.proc.kill('SIGTERM')
      expect(await first.finished()).toBe(0)
      const before = readdirSync(dataDir).map(name => [name, readFileSync(join(dataDir, name), 'latin1')])
      expect(Bun.spawnSync(['mount', '-o', 'remount,ro', mount]).exitCode).toBe(0)

      const second = start(dataDir)
      let answered = false
      const poll = (async () => {
        while (second.proc.exitCode === null) {
          if (
            await fetch(`${second.base}/ready`).then(
              () => true,
              () => false,
            )
          )
            answered = true
          await Bun.sleep(20)
        }
      })()
      expect(await second.finished()).toBe(1)
      await poll
      expect(answered).toBe(false)
      expect(second.stderr().trim()).toBe(
        `Cannot start: DATA_DIR ${dataDir} cannot be written: read-only file system (EROFS)`,
      )
      expect(readdirSync(dataDir).map(name => [name, readFileSync(join(dataDir, name), 'latin1')])).toEqual(before)

      // A DATA_DIR that does not exist yet and cannot be created says so too.
      const missing = join(mount, 'not-yet')
      const third = start(missing)
      expect(await third.finished()).toBe(1)
      expect(third.stderr().trim()).toBe(
        `Cannot start: DATA_DIR ${missing} cannot be created: read-only file system (EROFS)`,
      )
    },
    30_000,
  )

  test.skipIf(isRoot)(
    'a directory without write permission (chmod 555) stops the start with one line naming DATA_DIR, exit 1',
    async () => {
      const dir = tempDir('flags-readonly-')
      cleanups.push(() => dir.remove())
      const first = start(dir.path)
      await ready(first)
      first.proc.kill('SIGTERM')
      expect(await first.finished()).toBe(0)
      chmodSync(dir.path, 0o555)
      cleanups.push(() => chmodSync(dir.path, 0o755))
      const second = start(dir.path)
      expect(await second.finished()).toBe(1)
      expect(second.stderr().trim()).toMatch(
        new RegExp(`^Cannot start: DATA_DIR ${dir.path} cannot be written: permission denied \\(EACCES\\)$`),
      )
    },
    30_000,
  )
})

describe('a damaged record', () => {
  test('a state.json with a null flag record stops the process at start naming the file and the record, instead of answering 500 later', async () => {
    const dir = tempDir('flags-bad-record-')
    cleanups.push(() => dir.remove())
    const first = start(dir.path)
    await ready(first)
    expect((await call(first, 'POST', '/api/admin/projects/default/features', { name: 'x' })).status).toBe(201)
    first.proc.kill('SIGTERM')
    expect(await first.finished()).toBe(0)
    const statePath = join(dir.path, 'state.json')
    const state = JSON.parse(readFileSync(statePath, 'utf8'))
    state.flags.x = null
    writeFileSync(statePath, JSON.stringify(state))

    const second = start(dir.path)
    expect(await second.finished()).toBe(1)
    expect(second.stderr()).toContain(`${statePath}: holds a bad record: flags["x"]`)
  }, 30_000)
})
