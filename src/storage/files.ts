/**
 * File primitives of the data directory: a data file that cannot be trusted, fsync of files and
 * directories, and the lowdb adapter for the state checkpoint.
 *
 * lowdb's own `JSONFile` does not fsync, and its preset silently swaps in memory under
 * `NODE_ENV=test`, so the store opens its adapters explicitly everywhere.
 *
 * Every write of the data files goes through a `FileSystem` (the real one by default) and
 * `writeAll`: on a full disk a write may store fewer bytes than asked without throwing, so a write
 * is complete only when every byte is counted. Tests inject short writes and ENOSPC through it.
 */
import type { Adapter } from 'lowdb'
import { chmodSync, closeSync, fsyncSync, lstatSync, openSync, readdirSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import { readFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** The part of an open file the data files use; node's FileHandle is one. */
export interface WritableFile {
  write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>
  datasync(): Promise<void>
  sync(): Promise<void>
  stat(): Promise<{ size: number }>
  close(): Promise<void>
}

/** The file operations that change the data directory; injectable so tests can fill the disk. */
export interface FileSystem {
  open(path: string, flags: 'a' | 'w' | 'r+'): Promise<WritableFile>
  truncate(path: string, length: number): Promise<void>
  rename(from: string, to: string): Promise<void>
  unlink(path: string): Promise<void>
}

/**
 * Modes of what the service creates in a data directory: the files hold token hashes and every
 * flag's configuration, so only the service's user may read them. A mode given at creation is only
 * narrowed by the umask, so these hold whatever the umask; `secureDataDir` narrows what an earlier
 * version (0644 files, 0755 directory) or an administrator left wider.
 */
export const FILE_MODE = 0o600
export const DIR_MODE = 0o700

export const realFileSystem: FileSystem = {
  open: (path, flags) => fsp.open(path, flags, FILE_MODE),
  truncate: (path, length) => fsp.truncate(path, length),
  rename: (from, to) => fsp.rename(from, to),
  unlink: path => fsp.unlink(path),
}

const ERRNO_TEXT: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EFBIG: 'file too large',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
}

/** A failed write or fsync, said in words with its code: "no space left on device (ENOSPC)". */
export function describeIoError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code
  if (code && ERRNO_TEXT[code]) return `${ERRNO_TEXT[code]} (${code})`
  if (code) return `${(error as Error).message} (${code})`
  return error instanceof Error ? error.message : String(error)
}

/** A write that stored nothing: the file system is full, whether or not it said so. */
function shortWrite(path: string, written: number, total: number): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${path}: the write stored ${written} of ${total} bytes`)
  error.code = 'ENOSPC'
  return error
}

/** Writes every byte of `bytes` at the file's current position (the end, for 'a'), looping on short writes. */
export async function writeAll(handle: WritableFile, bytes: Uint8Array, path: string): Promise<void> {
  let offset = 0
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, null)
    if (!(bytesWritten > 0)) throw shortWrite(path, offset, bytes.length)
    offset += bytesWritten
  }
}

/** The data directory cannot be written: the start stops, naming it and why. */
export class DataDirError extends Error {
  constructor(dataDir: string, problem: string) {
    super(`DATA_DIR ${dataDir} cannot be written: ${problem}`)
    this.name = 'DataDirError'
  }
}

export const PROBE_FILE = '.write-probe.tmp'

/** What `secureDataDir` did: permissions it took away, and those it could not (not the owner). */
export interface SecuredReport {
  /** "path: 644 -> 600" */
  narrowed: string[]
  /** "path: 777 (operation not permitted (EPERM))" */
  refused: string[]
}

/**
 * Takes group and other permissions off the data directory and the files the service keeps in it
 * (other files, like a README, are left alone: the directory's mode keeps them from others too).
 * A directory an administrator made for the service and owns can't be changed by it; that is
 * reported, not fatal: the start goes on as before.
 */
export function secureDataDir(
  dataDir: string,
  fileNames: readonly string[],
  directoryNames: readonly string[] = [],
): SecuredReport {
  const report: SecuredReport = { narrowed: [], refused: [] }
  const narrow = (path: string, mode: number, isDirectory: boolean) => {
    let stat
    try {
      stat = lstatSync(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    // A symbolic link's own mode means nothing; what it points to is not ours to change.
    if (stat.isSymbolicLink() || stat.isDirectory() !== isDirectory) return
    const current = stat.mode & 0o777
    if ((current & ~mode) === 0) return
    try {
      chmodSync(path, current & mode)
    } catch (error) {
      report.refused.push(`${path}: ${current.toString(8)} (${describeIoError(error)})`)
      return
    }
    report.narrowed.push(`${path}: ${current.toString(8)} -> ${(current & mode).toString(8)}`)
  }
  narrow(dataDir, DIR_MODE, true)
  for (const name of fileNames) narrow(join(dataDir, name), FILE_MODE, false)
  // Directories the service keeps its own files in (every file in them is the service's).
  for (const name of directoryNames) {
    const directory = join(dataDir, name)
    narrow(directory, DIR_MODE, true)
    let entries: string[] = []
    try {
      entries = readdirSync(directory)
    } catch {
      // Missing, or not a directory: nothing of ours in it.
    }
    for (const entry of entries) narrow(join(directory, entry), FILE_MODE, false)
  }
  return report
}

/**
 * What the store checks before it changes anything at open, and again while writes fail: the
 * directory takes a new file (`probeWritable`), and the journal and the event log open for
 * appending (created when missing, so that a journal missing later is known to be lost).
 */
export async function probeDataDir(dataDir: string, fs: FileSystem = realFileSystem, bytes = 4096): Promise<void> {
  await probeWritable(dataDir, fs, bytes)
  for (const name of [JOURNAL_FILE, EVENTS_FILE]) {
    const handle = await fs.open(join(dataDir, name), 'a')
    await handle.close()
  }
  fsyncDirectory(join(dataDir, JOURNAL_FILE))
}

/**
 * Creates, fills, fsyncs and removes a small file in `dataDir`, then fsyncs the directory: what a
 * commit and a checkpoint need. Throws the file system's error when it cannot.
 */
export async function probeWritable(dataDir: string, fs: FileSystem = realFileSystem, bytes = 4096): Promise<void> {
  const path = join(dataDir, PROBE_FILE)
  const handle = await fs.open(path, 'w')
  try {
    await writeAll(handle, new Uint8Array(bytes), path)
    await handle.sync()
  } finally {
    await handle.close().catch(() => {})
    await fs.unlink(path).catch(() => {})
  }
  fsyncDirectory(path)
}

/** The files of a data directory (see storage/event-log.ts, state-journal.ts and store.ts). */
export const STATE_FILE = 'state.json'
export const JOURNAL_FILE = 'state.journal.jsonl'
export const EVENTS_FILE = 'events.jsonl'
/** The directory in DATA_DIR that `flagstore backup` without a FILE writes into. */
export const BACKUPS_DIR = 'backups'

/** A data file that cannot be trusted. Start-up stops with this message; nothing is replaced. */
export class StoreLoadError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`)
    this.name = 'StoreLoadError'
  }
}

export function fsyncDirectory(path: string) {
  const fd = openSync(dirname(path), 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export async function readIfExists(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new StoreLoadError(path, (error as Error).message)
  }
}

/** Cuts a file to `length` bytes; with `sync`, the new length is on disk when this resolves. */
export async function truncateFile(
  path: string,
  length: number,
  sync: boolean,
  fs: FileSystem = realFileSystem,
): Promise<void> {
  try {
    await fs.truncate(path, length)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && length === 0) return
    throw error
  }
  if (!sync) return
  const handle = await fs.open(path, 'r+')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * One compact JSON document, replaced atomically (temp file, fsync, rename, fsync of the
 * directory), so a reader never meets a half-written document.
 */
export class AtomicJsonFile<T> implements Adapter<T> {
  constructor(
    readonly path: string,
    private readonly sync: boolean,
    private readonly fs: FileSystem = realFileSystem,
  ) {}

  async read(): Promise<T | null> {
    const bytes = await readIfExists(this.path)
    if (bytes === null) return null
    try {
      return JSON.parse(bytes.toString('utf8')) as T
    } catch (error) {
      throw new StoreLoadError(this.path, `not valid JSON (${(error as Error).message})`)
    }
  }

  /** The temp file a write fills before renaming it over the document. */
  get tempPath(): string {
    return `${dirname(this.path)}/.${basename(this.path)}.tmp`
  }

  /** On failure the temp file is removed, and the document is as it was. */
  async write(data: T): Promise<void> {
    const bytes = Buffer.from(JSON.stringify(data))
    const temp = this.tempPath
    try {
      const handle = await this.fs.open(temp, 'w')
      try {
        await writeAll(handle, bytes, temp)
        if (this.sync) await handle.sync()
      } finally {
        await handle.close()
      }
      await this.fs.rename(temp, this.path)
    } catch (error) {
      await this.fs.unlink(temp).catch(() => {})
      throw error
    }
    if (this.sync) fsyncDirectory(this.path)
  }
}

/**
 * Reads a text file of lines from the start in bounded memory, calling `onLine(text, lineNumber,
 * endOffset)` for each complete line, and returns the byte length of the complete lines: anything
 * after it is a torn last line, left by a crash mid-append. `onLine` may return false to stop, or
 * a promise (say, of a batch written somewhere), which is awaited before the next line.
 */
export async function readLines(
  path: string,
  onLine: (text: string, lineNumber: number, endOffset: number) => boolean | void | Promise<boolean | void>,
  start = 0,
): Promise<number> {
  const whole = Bun.file(path)
  if (!(await whole.exists())) return 0
  // From byte `start` on (the start of a line): line numbers count from there, offsets from the file's start.
  const file = start > 0 ? whole.slice(start) : whole
  const decoder = new TextDecoder('utf-8', { fatal: true })
  // The start of a line that runs over chunks is kept as a list and joined once, when its end
  // comes: joining it to every chunk would copy a line of n chunks n times (a flush of SDK metrics
  // at their caps, or a large import, makes journal lines of tens of megabytes).
  let carry: Uint8Array[] = []
  let offset = start
  let lineNumber = 0
  for await (const chunk of file.stream()) {
    let start = 0
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      lineNumber++
      let bytes = chunk.subarray(start, newline)
      if (carry.length > 0) {
        carry.push(bytes)
        bytes = Buffer.concat(carry)
        carry = []
      }
      let text: string
      try {
        text = decoder.decode(bytes)
      } catch {
        throw new StoreLoadError(path, `line ${lineNumber} is not valid UTF-8`)
      }
      offset += bytes.length + 1
      let result = onLine(text, lineNumber, offset)
      if (result instanceof Promise) result = await result
      if (result === false) return offset
      start = newline + 1
    }
    if (start < chunk.length) carry.push(chunk.subarray(start))
  }
  return offset
}

/** `readLines`, with each line parsed as JSON. */
export async function readJsonLines(
  path: string,
  onLine: (value: unknown, lineNumber: number, endOffset: number) => void,
): Promise<number> {
  return readLines(path, (text, lineNumber, endOffset) => {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new StoreLoadError(path, `line ${lineNumber} is not valid JSON (${(error as Error).message})`)
    }
    onLine(value, lineNumber, endOffset)
  })
}
