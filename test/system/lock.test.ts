/**
 * The data directory's lock (storage/lock.ts) between real processes: one holder at a time, a
 * refusal that names the holder, and a lock the OS takes back when its holder is killed.
 */
import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { DataDirLock, DataDirLockError, LOCK_FILE } from '../../src/storage/lock'
import { cleanupAfterEach } from '../helpers/files'

const LOCK_MODULE = join(import.meta.dir, '..', '..', 'src', 'storage', 'lock.ts')
const { later, newDir } = cleanupAfterEach()

function hold(dir: string): DataDirLock {
  const lock = DataDirLock.acquire(dir)
  later(() => lock.release())
  return lock
}

/** Another process that tries to take the lock, prints the outcome, and holds it until killed. */
function other(dir: string): { proc: Subprocess<'ignore', 'pipe', 'pipe'>; outcome: Promise<string> } {
  const script = `
    import { DataDirLock } from ${JSON.stringify(LOCK_MODULE)}
    try {
      DataDirLock.acquire(${JSON.stringify(dir)})
      console.log('locked')
      setInterval(() => {}, 1000)
    } catch (error) {
      console.log(error.name + ': ' + error.message)
      process.exit(3)
    }`
  const proc = Bun.spawn([process.execPath, '-e', script], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  later(async () => {
    proc.kill('SIGKILL')
    await proc.exited
  })
  const reader = proc.stdout.getReader()
  const outcome = reader.read().then(({ value }) => new TextDecoder().decode(value).trim())
  return { proc, outcome }
}

test('a second process is refused with the directory and the holder named, and gets the lock once it is released', async () => {
  const dir = newDir('flags-lock-')
  const lock = hold(dir)
  const holder = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))
  expect(holder).toEqual({
    pid: process.pid,
    hostname: hostname(),
    startedAt: expect.any(String),
    command: expect.stringContaining(process.execPath),
  })
  expect(new Date(holder.startedAt).getTime()).toBeLessThanOrEqual(Date.now())

  const refused = other(dir)
  expect(await refused.outcome).toBe(
    `DataDirLockError: ${dir} is in use by another process: pid ${process.pid} on ${hostname()}, started ${holder.startedAt}, command: ${holder.command}; only one process may use a data directory at a time`,
  )
  expect(await refused.proc.exited).toBe(3)
  // The refused process changed nothing: the file still names this one.
  expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toEqual(holder)
  expect(readdirSync(dir)).toEqual([LOCK_FILE])

  lock.release()
  const next = other(dir)
  expect(await next.outcome).toBe('locked')
  expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(next.proc.pid)
})

test('a second lock in the same process is refused too (a lock belongs to one open file)', () => {
  const dir = newDir('flags-lock-')
  hold(dir)
  let refused: unknown
  try {
    DataDirLock.acquire(dir)
  } catch (error) {
    refused = error
  }
  expect(refused).toBeInstanceOf(DataDirLockError)
  expect((refused as DataDirLockError).holder?.pid).toBe(process.pid)
  expect((refused as DataDirLockError).dataDir).toBe(dir)
})

test('the lock of a process killed with SIGKILL is released by the OS', async () => {
  const dir = newDir('flags-lock-')
  const first = other(dir)
  expect(await first.outcome).toBe('locked')
  expect(() => DataDirLock.acquire(dir)).toThrow(`pid ${first.proc.pid}`)

  first.proc.kill('SIGKILL')
  await first.proc.exited
  const lock = hold(dir)
  expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid)
  lock.release()
})

test('a directory that cannot be locked is refused with the reason, not a stack trace', () => {
  const dir = join(newDir('flags-lock-'), 'missing')
  expect(() => DataDirLock.acquire(dir)).toThrow(
    `DATA_DIR ${dir} cannot be written: no such file or directory (ENOENT)`,
  )
})
