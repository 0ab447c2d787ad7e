/**
 * A local copy of a database's event log, for the event search of an instance on PostgreSQL: the
 * log's JSON lines in `events.jsonl`, appended to as the instance hears of events, and the search
 * segments over it in `search/`, exactly as a data directory keeps them (segmented-search.ts), so
 * the one search works on both stores; only where the lines come from differs. A restart maps the
 * segments and reads from the database only the events after the copy's last one.
 *
 * It is a cache: the database is the truth. `identity.json` names the log the copy is of (the
 * database's `log_id`, postgres.ts); a copy of another log, a last line that is not whole, or files
 * that cannot be read are discarded here, with one line saying why. The caller then checks the copy's
 * last event against the database's event of that id (`lastLine`), which also catches a database
 * restored to an older backup (the copy is ahead of it, or differs from it).
 *
 * Several instances may be given one SEARCH_CACHE_DIR (on one machine, say): each takes the first of
 * the directories 0, 1, 2… in it whose lock (storage/lock.ts) no other process holds, so each keeps
 * its own copy, and a restarted instance finds one again. Without a SEARCH_CACHE_DIR the copy is made
 * in a temporary directory removed when the search closes (or by the next start, after a kill):
 * nothing is kept between starts.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DIR_MODE, FILE_MODE, fsyncDirectory } from '../../../storage/files'
import { DataDirLock, DataDirLockError } from '../../../storage/lock'
import { SEARCH_DIR } from './segment-files'

export const CACHE_LOG = 'events.jsonl'
export const CACHE_IDENTITY = 'identity.json'
/** Directories tried in a SEARCH_CACHE_DIR before giving up on keeping a copy there. */
const SLOTS = 64

export interface CachedLog {
  /** The directory of this instance's copy: the log file, its segments and the identity. */
  readonly dir: string
  /** The copy's log file: whole lines only (a torn end is cut off at open). */
  readonly path: string
  /** The id of the copy's last event (0 for none), and its line as the copy holds it. */
  lastId: number
  lastLine: string | null
  /** Empties the copy (the log and its segments); the identity stays. `why` is logged. */
  clear(why: string): void
  /** Lets another instance take the directory; a temporary one is removed. */
  release(): void
}

/** The log (named `name`, identified by `identity`) as copied in `root` (SEARCH_CACHE_DIR), or in a temporary directory when `root` is null. */
export function openCachedLog(
  root: string | null,
  log: { name: string; identity: string },
  notice: (message: string) => void,
): CachedLog {
  const taken = root === null ? null : takeSlot(root, notice)
  try {
    return openIn(taken, log, notice)
  } catch (error) {
    // A directory that cannot be used (its files cannot be read or removed) is no reason not to search.
    if (taken === null) throw error
    taken.lock.release()
    notice(
      `SEARCH_CACHE_DIR ${root} cannot be used (${error instanceof Error ? error.message : String(error)}); the event log is copied to a temporary directory for this run`,
    )
    return openIn(null, log, notice)
  }
}

function openIn(
  taken: { dir: string; lock: DataDirLock } | null,
  log: { name: string; identity: string },
  notice: (message: string) => void,
): CachedLog {
  const temporaryLock = taken === null ? newTemporaryDir() : null
  const dir = taken?.dir ?? temporaryLock!.dir
  const path = join(dir, CACHE_LOG)
  const remove = () => {
    temporaryLock?.lock.release()
    rmSync(dir, { recursive: true, force: true })
    temporary.delete(dir)
  }
  if (taken === null) removeAtExit(dir)
  const cache: CachedLog = {
    dir,
    path,
    lastId: 0,
    lastLine: null,
    clear(why) {
      if (existsSync(path) || existsSync(join(dir, SEARCH_DIR)))
        notice(`the local copy of the event log in ${dir} is discarded and read again from the database: ${why}`)
      rmSync(join(dir, SEARCH_DIR), { recursive: true, force: true })
      writeFileSync(path, '', { mode: FILE_MODE })
      cache.lastId = 0
      cache.lastLine = null
    },
    release() {
      taken?.lock.release()
      if (taken === null) remove()
    },
  }
  const identityPath = join(dir, CACHE_IDENTITY)
  // Written once the copy is empty, so that a copy is never named after a log it does not hold.
  const name = (why: string) => {
    cache.clear(why)
    writeFileSync(`${identityPath}.tmp`, JSON.stringify({ log: log.identity, database: log.name }) + '\n', {
      mode: FILE_MODE,
    })
    renameSync(`${identityPath}.tmp`, identityPath)
    fsyncDirectory(identityPath)
  }
  let held: unknown = null
  let readable = true
  try {
    held = existsSync(identityPath)
      ? ((JSON.parse(readFileSync(identityPath, 'utf8')) as { log?: unknown } | null)?.log ?? null)
      : null
  } catch (error) {
    readable = false
    name(`${CACHE_IDENTITY} cannot be read (${error instanceof Error ? error.message : String(error)})`)
  }
  if (readable && held !== log.identity) {
    name(
      held == null
        ? 'it does not say which database it is of'
        : `it is of another database (log ${String(held)}, not ${log.identity} of ${log.name})`,
    )
  }
  try {
    if (!existsSync(path)) writeFileSync(path, '', { mode: FILE_MODE })
    const last = lastLineOf(path, notice)
    if (last !== null) {
      const id = (JSON.parse(last) as { id?: unknown } | null)?.id
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 1) throw new Error('its last line is not an event')
      cache.lastId = id
      cache.lastLine = last
    }
  } catch (error) {
    cache.clear(error instanceof Error ? error.message : String(error))
  }
  return cache
}

const TEMPORARY_PREFIX = 'flagstore-search-'
/** A temporary directory younger than this may be one another process has made and not yet locked. */
const YOUNG_MS = 60_000

/**
 * A new temporary directory, locked while this process uses it. Those of processes that ended
 * without removing theirs (killed: the exit handler never ran) are removed first, as each holds a
 * whole copy of the log: a directory whose lock can be taken belongs to no running process.
 */
function newTemporaryDir(): { dir: string; lock: DataDirLock } {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(TEMPORARY_PREFIX)) continue
    const left = join(tmpdir(), name)
    try {
      // Possibly made by a process that has not yet locked it: not ours to judge until it is old.
      if (Date.now() - statSync(left).mtimeMs < YOUNG_MS) continue
      const lock = DataDirLock.acquire(left)
      rmSync(left, { recursive: true, force: true })
      lock.release()
    } catch {
      // In use by a running instance, or another user's: left alone.
    }
  }
  const dir = mkdtempSync(join(tmpdir(), TEMPORARY_PREFIX))
  return { dir, lock: DataDirLock.acquire(dir) }
}

/** Temporary copies not yet removed: removed when the process exits, however the search was left. */
const temporary = new Set<string>()

function removeAtExit(dir: string) {
  if (temporary.size === 0)
    process.once('exit', () => temporary.forEach(left => rmSync(left, { recursive: true, force: true })))
  temporary.add(dir)
}

/** The first directory of `root` whose lock this process can take, or null (then a temporary one is used). */
function takeSlot(root: string, notice: (message: string) => void): { dir: string; lock: DataDirLock } | null {
  try {
    mkdirSync(root, { recursive: true, mode: DIR_MODE })
    for (let slot = 0; slot < SLOTS; slot++) {
      const dir = join(root, String(slot))
      mkdirSync(dir, { recursive: true, mode: DIR_MODE })
      try {
        return { dir, lock: DataDirLock.acquire(dir) }
      } catch (error) {
        if (!(error instanceof DataDirLockError && error.busy)) throw error
      }
    }
    notice(
      `SEARCH_CACHE_DIR ${root}: all of its ${SLOTS} directories are in use by other instances; the event log is copied to a temporary directory for this run`,
    )
  } catch (error) {
    notice(
      `SEARCH_CACHE_DIR ${root} cannot be used (${error instanceof Error ? error.message : String(error)}); the event log is copied to a temporary directory for this run`,
    )
  }
  return null
}

/**
 * The file's last whole line (null for an empty file), read backwards from its end; bytes after the
 * last newline (a line whose write was cut short) are cut off first.
 */
function lastLineOf(path: string, notice: (message: string) => void): string | null {
  const fd = openSync(path, 'r+')
  try {
    const size = fstatSync(fd).size
    let buffer = Buffer.alloc(0)
    let start = size
    let end = -1
    // The end of the last whole line, then the newline before it.
    for (;;) {
      // (A negative offset would count from the buffer's end: before its first byte there is nothing read yet.)
      const from =
        end === -1 ? buffer.lastIndexOf(0x0a) : end - start - 2 < 0 ? -1 : buffer.lastIndexOf(0x0a, end - start - 2)
      if (end === -1 && from !== -1) {
        end = start + from + 1
        continue
      }
      if (end !== -1 && (from !== -1 || start === 0)) {
        if (end < size) {
          notice(
            `the local copy of the event log in ${path} ends with ${size - end} bytes of a line cut short; they are cut off`,
          )
          ftruncateSync(fd, end)
        }
        return buffer.subarray(from + 1, end - start - 1).toString('utf8')
      }
      if (start === 0) {
        if (size > 0) {
          notice(
            `the local copy of the event log in ${path} holds only ${size} bytes of a line cut short; they are cut off`,
          )
          ftruncateSync(fd, 0)
        }
        return null
      }
      const length = Math.min(65536, start)
      start -= length
      const chunk = Buffer.alloc(length)
      for (let done = 0; done < length; ) done += readSync(fd, chunk, done, length - done, start + done)
      buffer = Buffer.concat([chunk, buffer])
    }
  } finally {
    closeSync(fd)
  }
}
