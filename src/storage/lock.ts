/**
 * One process per data directory: an exclusive `flock` on `DATA_DIR/.lock`, taken before anything
 * in the directory is read or written and held for the life of the process.
 *
 * An OS advisory lock rather than a pidfile or a lock directory (proper-lockfile's way): the kernel
 * drops it when the process ends, however it ends (SIGKILL, a crash, a power cut), so there is no
 * staleness to guess from pids or mtimes, no timer refreshing it, and no window in which a live
 * process's lock looks stale. `flock` is not in node:fs, so it is called in libc through `bun:ffi`
 * (which also works in the executable `npm run build` makes). A lock belongs to one open file
 * description: a second open of the file, even in the same process, does not get it.
 *
 * The service never deletes the file: a process that opened it just before a delete would lock a
 * file no one else can find. (Restore removes or replaces one only while holding it, and `acquire`
 * checks that the file it locked is still the directory's.) Once locked, the file says who holds it
 * (pid, host, start time, command), so a process that is refused can name the other one.
 */
import { dlopen, FFIType, read } from 'bun:ffi'
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describeIoError, FILE_MODE } from './files'

export const LOCK_FILE = '.lock'

export interface LockHolder {
  pid: number
  hostname: string
  startedAt: string
  command: string
}

/** Another process holds the directory's lock, or the lock could not be taken at all. */
export class DataDirLockError extends Error {
  /** Another process holds the lock (rather than the lock not being possible at all). */
  readonly busy: boolean

  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | null,
    problem?: string,
  ) {
    super(problem ?? `${dataDir} is in use by ${describe(holder)}; only one process may use a data directory at a time`)
    this.busy = problem === undefined
    this.name = 'DataDirLockError'
  }
}

function describe(holder: LockHolder | null): string {
  if (!holder) return 'another process (it has not yet written who it is)'
  return `another process: pid ${holder.pid} on ${holder.hostname}, started ${holder.startedAt}, command: ${holder.command}`
}

const LOCK_EX = 2
const LOCK_NB = 4

interface Libc {
  flock(fd: number, operation: number): number
  errno(): number
  /** errno when the lock is held elsewhere (EWOULDBLOCK). */
  busy: number
}

let libc: Libc | null = null

function loadLibc(): Libc {
  if (libc) return libc
  const platform = process.platform
  if (platform !== 'linux' && platform !== 'darwin') {
    throw new Error(`there is no file lock for ${platform} yet: only Linux and macOS are supported`)
  }
  const errnoSymbol = platform === 'linux' ? '__errno_location' : '__error'
  const lib = dlopen(platform === 'linux' ? 'libc.so.6' : 'libSystem.B.dylib', {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    [errnoSymbol]: { args: [], returns: FFIType.ptr },
  })
  const errnoLocation = lib.symbols[errnoSymbol] as () => number
  libc = {
    flock: (fd, operation) => lib.symbols.flock(fd, operation) as number,
    errno: () => read.i32(errnoLocation() as never, 0),
    busy: platform === 'linux' ? 11 : 35,
  }
  return libc
}

/** How this process was started, for the message another one prints. */
function commandLine(): string {
  // In the compiled executable argv[1] is the embedded entry point (/$bunfs/...), not something to run.
  const args = process.argv.slice(1).filter(arg => !arg.startsWith('/$bunfs/'))
  return [process.execPath, ...args].join(' ')
}

/** Reads who holds the lock; a holder that has only just taken it may not have written it yet. */
function readHolder(path: string): LockHolder | null {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder
      if (holder && typeof holder.pid === 'number') return holder
    } catch {}
    Bun.sleepSync(5)
  }
  return null
}

export class DataDirLock {
  private constructor(
    readonly dataDir: string,
    readonly path: string,
    private fd: number | null,
  ) {}

  /**
   * Takes the lock on `dataDir` (which must exist) without waiting, or throws DataDirLockError
   * naming the process that holds it.
   */
  static acquire(dataDir: string): DataDirLock {
    const path = join(dataDir, LOCK_FILE)
    const cannot = (error: unknown) =>
      new DataDirLockError(dataDir, null, `cannot lock ${path}: ${(error as Error).message}`)
    let lib: Libc
    try {
      lib = loadLibc()
    } catch (error) {
      throw cannot(error)
    }
    const { flock, errno, busy } = lib
    for (;;) {
      let fd: number
      try {
        // Opened without truncating: the file says who holds the lock until we hold it ourselves.
        fd = openSync(path, constants.O_RDWR | constants.O_CREAT, FILE_MODE)
      } catch (error) {
        // Said as the store says it when it probes the directory, whichever of the two meets it first.
        throw new DataDirLockError(dataDir, null, `DATA_DIR ${dataDir} cannot be written: ${describeIoError(error)}`)
      }
      if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
        const code = errno()
        closeSync(fd)
        if (code !== busy) throw cannot(new Error(`flock failed with errno ${code}`))
        throw new DataDirLockError(dataDir, readHolder(path))
      }
      // A restore may have moved a new directory in place of the one this file was in: then the
      // lock is on a file that is no longer the directory's, and the one that is must be taken.
      const held = fstatSync(fd)
      let current: { dev: number; ino: number } | null = null
      try {
        current = statSync(path)
      } catch {}
      if (current?.ino !== held.ino || current.dev !== held.dev) {
        closeSync(fd)
        continue
      }
      const holder: LockHolder = {
        pid: process.pid,
        hostname: hostname(),
        startedAt: new Date(performance.timeOrigin).toISOString(),
        command: commandLine(),
      }
      try {
        ftruncateSync(fd, 0)
        writeSync(fd, JSON.stringify(holder) + '\n', 0)
        fsyncSync(fd)
      } catch {
        // The lock is held all the same; on a full disk, another process just cannot say by whom.
      }
      return new DataDirLock(dataDir, path, fd)
    }
  }

  /** Lets another process take the directory (the lock also goes when this process ends). */
  release(): void {
    if (this.fd === null) return
    closeSync(this.fd)
    this.fd = null
  }
}
