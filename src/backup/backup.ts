/**
 * Online backup and restore of a data directory, from its files, while the service runs.
 *
 * A backup is one JSON Lines file: a header, the state (as a checkpoint), then every event up to
 * the last one that state includes. It is read without touching the service: the checkpoint and
 * the journal give the state at the last acknowledged commit (a journal line half written is not
 * acknowledged and is left out), and the event log only ever grows, so its first events are final.
 * If a checkpoint was written between reading `state.json` and the journal, the journal no longer
 * follows on from it; the read is then simply made again.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { lstat, mkdir, mkdtemp, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { COLLECTIONS, openStore } from '../services'
import {
  BACKUPS_DIR,
  describeIoError,
  DIR_MODE,
  EVENTS_FILE,
  FILE_MODE,
  JOURNAL_FILE,
  readLines,
  secureDataDir,
  STATE_FILE,
  StoreLoadError,
} from '../storage/files'
import { KEY_FILE, parseKey, readKey, writeKey } from '../storage/secret-key'
import { DataDirLock, LOCK_FILE } from '../storage/lock'
import { movedProblem } from '../storage/moved'
import { loadedCollection, type StateDoc } from '../storage/records'
import { replayJournal, type JournalEntry } from '../storage/state-journal'

export const BACKUP_FORMAT = 'flagstore-backup'

/**
 * Version 2 carries the directory's secret key: token secrets are stored keyed by it, so a backup
 * without it would restore tokens that no secret matches. (A version 1 reader would drop the key,
 * so it refuses version 2.) The backup is therefore as secret as the data directory itself.
 */
export interface BackupHeader {
  format: typeof BACKUP_FORMAT
  version: 1 | 2
  createdAt: string
  lastEventId: number
  commitSeq: number
  /** The data directory's secret key in hex; absent from version 1, and from a directory that has none yet. */
  secretKey?: string
  /**
   * The absolute path of the data directory backed up (absent from a database's backup, and from
   * older backups): a restore into PostgreSQL marks that directory as moved (storage/moved.ts).
   */
  source?: string
}

/** The state at the last acknowledged commit, read from the files alone. */
async function readState(dataDir: string): Promise<StateDoc> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const state = JSON.parse(await readFile(join(dataDir, STATE_FILE), 'utf8')) as StateDoc
    const entries: JournalEntry[] = []
    // Only complete lines are read: a line still being written is not acknowledged yet.
    await readLines(join(dataDir, JOURNAL_FILE), line => {
      entries.push(JSON.parse(line))
    })
    for (const definition of COLLECTIONS)
      state[definition.name] = loadedCollection(definition, state[definition.name]) as never
    if (replayJournal(state, entries)) return state
  }
  throw new Error(`${dataDir}: the state kept changing under the backup; try again`)
}

/**
 * Why `dataDir` is not a data directory holding a store to use, in words: missing, empty, or moved
 * to PostgreSQL (its files out of date); null when it is one.
 */
export function storeProblem(dataDir: string): string | null {
  if (!existsSync(dataDir))
    return `the data directory ${dataDir} does not exist; set DATA_DIR to the service's data directory`
  if (!existsSync(join(dataDir, STATE_FILE)))
    return `${dataDir} holds no store (no ${STATE_FILE}); set DATA_DIR to the service's data directory`
  return movedProblem(dataDir)
}

/**
 * What stops a backup before it starts, in words: no store to read, or a file that cannot be
 * made (a backup never replaces a file). Null when both are fine.
 */
function backupProblem(dataDir: string, file: string): string | null {
  const problem = storeProblem(dataDir)
  if (problem) return problem
  if (existsSync(file)) return `${file} already exists; a backup never replaces a file, so give a new file name`
  if (!existsSync(dirname(file))) return `cannot write ${file}: the directory ${dirname(file)} does not exist`
  return null
}

/**
 * A new file in `dataDir`'s backups directory, named by the time (`backup-20261128T054005.123Z.jsonl`,
 * so that they sort by age). The directory is made `0700` if missing (DATA_DIR too, on PostgreSQL,
 * where there may be none), and narrowed to it if others could read it: a backup holds the secret key.
 */
export function defaultBackupFile(dataDir: string, now = new Date()): string {
  const dir = join(dataDir, BACKUPS_DIR)
  try {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE })
  } catch (error) {
    throw new Error(`cannot make ${dir} for the backup: ${describeIoError(error)}; give a FILE elsewhere`)
  }
  const { refused } = secureDataDir(dir, [])
  if (refused.length > 0)
    throw new Error(
      `${dir} can be read by others and this process cannot change that (${refused.join(', ')}); make it 0700, or give a FILE elsewhere`,
    )
  return join(dir, `backup-${now.toISOString().replace(/[-:]/g, '')}.jsonl`)
}

/** Writes a backup of `dataDir` (the service may be running) to `file`; returns its header. */
export async function backupDataDir(dataDir: string, file: string): Promise<BackupHeader> {
  const problem = backupProblem(dataDir, file)
  if (problem) throw new Error(problem)
  const state = await readState(dataDir)
  const header = backupHeader(state, readKey(dataDir)?.toString('hex'), dataDir)
  await writeBackup(file, header, state, async writeLine => {
    // Written in order from inside the line reader: the backup is never held whole in memory.
    let copied = 0
    await readLines(join(dataDir, EVENTS_FILE), line => {
      if (copied === state.lastEventId) return false
      copied++
      writeLine(line)
    })
    if (copied < state.lastEventId)
      throw new StoreLoadError(
        join(dataDir, EVENTS_FILE),
        `holds ${copied} events, fewer than the ${state.lastEventId} the state includes`,
      )
  })
  return header
}

/** The header of a backup of `state`, with the store's secret key (hex) when it has one, and the data directory it comes from. */
export function backupHeader(state: StateDoc, secretKey: string | undefined, source?: string): BackupHeader {
  return {
    format: BACKUP_FORMAT,
    version: 2,
    createdAt: new Date().toISOString(),
    lastEventId: state.lastEventId,
    commitSeq: state.commitSeq,
    ...(secretKey ? { secretKey } : {}),
    ...(source ? { source } : {}),
  }
}

/**
 * Writes a backup to `file`, which must not exist (a backup never replaces a file): the header, the
 * state, then the event lines `writeEvents` hands to `writeLine`, in order, written a megabyte at a
 * time; synced to disk before it resolves.
 */
export async function writeBackup(
  file: string,
  header: BackupHeader,
  state: StateDoc,
  writeEvents: (writeLine: (line: string) => void) => Promise<void>,
): Promise<void> {
  let out: number
  try {
    out = openSync(file, 'wx', FILE_MODE)
  } catch (error) {
    // Made or removed between the check and here, or not ours to write.
    throw new Error(`cannot create ${file}: ${describeIoError(error)}`)
  }
  try {
    writeSync(out, JSON.stringify(header) + '\n' + JSON.stringify(state) + '\n')
    let chunk = ''
    await writeEvents(line => {
      chunk += line + '\n'
      if (chunk.length > BATCH_BYTES) {
        writeSync(out, chunk)
        chunk = ''
      }
    })
    writeSync(out, chunk)
    fsyncSync(out)
  } finally {
    closeSync(out)
  }
}

/**
 * Makes `dataDir` (missing, or holding no store) a data directory holding what `file` holds.
 *
 * The target is locked while this runs, so a service can neither be running on it nor start on it
 * half restored. The store is written and checked in a temporary directory, and moved into place
 * only once it is whole and opens: a backup that is missing, garbage or cut short leaves the target
 * as it was, and the retry starts afresh.
 *
 * A missing or empty target is replaced by the temporary directory, built beside it, in one
 * rename. A target that holds other files (data/ holds a README), is a mount point or a symbolic
 * link can't be replaced that way; its three files are then built in a directory inside it and renamed in one by
 * one, state.json last: a crash between two renames leaves events without a checkpoint, which the
 * service refuses to start on rather than take for a first start, and never a store that opens
 * with part of the backup.
 */
export async function restoreBackup(file: string, dataDir: string): Promise<BackupHeader> {
  const header = await readHeader(file)
  const created = !existsSync(dataDir)
  await mkdir(dataDir, { recursive: true, mode: DIR_MODE })
  // A lock file this restore made is removed if it fails, so a failed restore leaves the target as it was.
  let madeLockFile = !existsSync(join(dataDir, LOCK_FILE))
  const lock = DataDirLock.acquire(dataDir)
  let tempLock: DataDirLock | null = null
  let temp: string | null = null
  let done = false
  try {
    const entries = await readdir(dataDir)
    if (entries.some(name => STORE_FILES.includes(name))) {
      throw new Error(`${dataDir} already holds a store; restore into an empty directory`)
    }
    const whole =
      entries.every(name => name === LOCK_FILE) &&
      !(await isMountPoint(dataDir)) &&
      !(await lstat(dataDir)).isSymbolicLink()
    // The parent may not be writable (a directory made for the service by an administrator).
    if (whole) temp = await mkdtemp(`${dataDir}.restore-`).catch(() => null)
    const beside = temp !== null
    temp ??= await mkdtemp(join(dataDir, '.restore-'))
    await writeStore(file, header, temp)
    if (beside) {
      // Locked before it moves, so the directory is never unlocked while this process restores it.
      tempLock = DataDirLock.acquire(temp)
      await unlink(join(dataDir, LOCK_FILE))
      madeLockFile = false
      // rename replaces an empty directory in one step. Between the unlink and the rename a service
      // starting on the directory could lock a new .lock in it; the rename then fails, rather than
      // mixing two stores, and says so.
      await rename(temp, dataDir).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error
        throw new Error(`${dataDir} was taken by another process as the restore finished; nothing was restored`)
      })
      syncDirectory(dirname(dataDir))
    } else {
      for (const name of [EVENTS_FILE, JOURNAL_FILE, KEY_FILE, STATE_FILE])
        await rename(join(temp, name), join(dataDir, name))
      // The directory was there before; it may have been made readable by others.
      secureDataDir(dataDir, [])
      syncDirectory(dataDir)
      await rm(temp, { recursive: true, force: true })
    }
    done = true
    return header
  } finally {
    if (!done) {
      if (temp) await rm(temp, { recursive: true, force: true })
      // Removed while still held: a process that opened it meanwhile finds it gone and takes a new one.
      if (madeLockFile) await unlink(join(dataDir, LOCK_FILE)).catch(() => {})
      if (created) await rmdir(dataDir).catch(() => {})
    }
    tempLock?.release()
    lock.release()
  }
}

const STORE_FILES = [STATE_FILE, JOURNAL_FILE, EVENTS_FILE]

/** Checks that `file` is a backup made by this service and returns its header (its first line). */
export async function readHeader(file: string): Promise<BackupHeader> {
  let handle
  try {
    handle = await open(file, 'r')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new Error(`no such file: ${file}`)
    throw new Error(`${file}: ${(error as Error).message}`)
  }
  const notBackup = new Error(`${file} is not a backup made by this service`)
  let first: string
  try {
    if ((await handle.stat()).isDirectory()) throw new Error(`${file} is a directory, not a backup`)
    // Read only the start: a large file that is not a backup is refused without reading it all.
    const buffer = Buffer.alloc(4096)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    if (bytesRead === 0) throw new Error(`${file} is empty, not a backup`)
    const newline = buffer.subarray(0, bytesRead).indexOf(0x0a)
    if (newline === -1) throw notBackup
    first = buffer.subarray(0, newline).toString('utf8')
  } finally {
    await handle.close()
  }
  let header: Partial<BackupHeader>
  try {
    header = JSON.parse(first)
  } catch {
    throw notBackup
  }
  if (header?.format !== BACKUP_FORMAT) throw notBackup
  if (header.version !== 1 && header.version !== 2)
    throw new Error(
      `${file} is a backup of version ${JSON.stringify(header.version)}; this service reads versions 1 and 2`,
    )
  if (header.secretKey !== undefined) {
    try {
      parseKey(String(header.secretKey), file)
    } catch {
      throw new Error(`${file}: its header's secretKey is not a secret key`)
    }
  }
  if (!Number.isInteger(header.lastEventId) || header.lastEventId! < 0)
    throw new Error(`${file}: its header has no valid lastEventId`)
  return header as BackupHeader
}

function parseLine(file: string, line: string, lineNumber: number): unknown {
  try {
    return JSON.parse(line)
  } catch (error) {
    throw new Error(`${file}: line ${lineNumber} is not valid JSON (${(error as Error).message})`)
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A backup's events are handed on (written, inserted) in batches of at most this many bytes or lines. */
const BATCH_BYTES = 1 << 20
const BATCH_LINES = 5000

/**
 * Reads a backup after its `header`: line 2 must be the state the header announces, then events
 * 1 to its lastEventId, whole and in order. The events are handed to `onEvents` in batches (their
 * lines and the first one's id), a batch's promise awaited before reading on. Resolves to the
 * state; throws, naming the line, on anything out of place or cut short.
 */
export async function readBackup(
  file: string,
  header: BackupHeader,
  onEvents: (lines: string[], firstId: number) => void | Promise<void>,
): Promise<StateDoc> {
  let state: StateDoc | null = null
  let count = 0
  let lines = 0
  let batch: string[] = []
  let batchBytes = 0
  const handOn = () => {
    const taken = batch
    batch = []
    batchBytes = 0
    return onEvents(taken, count - taken.length + 1)
  }
  const complete = await readLines(file, (line, lineNumber) => {
    lines = lineNumber
    if (lineNumber === 1) return
    const value = parseLine(file, line, lineNumber)
    if (lineNumber === 2) {
      if (!isObject(value) || value.lastEventId !== header.lastEventId) {
        throw new Error(`${file}: line 2 is not the state its header announces (events up to ${header.lastEventId})`)
      }
      state = value as unknown as StateDoc
      return
    }
    if (!isObject(value) || value.id !== ++count) throw new Error(`${file}: line ${lineNumber} is not event ${count}`)
    if (count > header.lastEventId)
      throw new Error(`${file}: line ${lineNumber} is an event past the ${header.lastEventId} its state includes`)
    batch.push(line)
    batchBytes += line.length
    if (batch.length >= BATCH_LINES || batchBytes > BATCH_BYTES) return handOn()
  })
  if (batch.length > 0) await handOn()
  if ((await stat(file)).size > complete)
    throw new Error(`${file} is truncated: it ends in the middle of line ${lines + 1}`)
  if (state === null) throw new Error(`${file} is truncated: it holds no state after its header`)
  if (count !== header.lastEventId) {
    throw new Error(`${file} is truncated: it holds ${count} events but its state includes ${header.lastEventId}`)
  }
  return state
}

/**
 * Writes the store held by `file` into the empty directory `dir`, each file fsynced, and checks
 * that it is whole (every event the state includes, nothing cut short) and that it opens.
 */
async function writeStore(file: string, header: BackupHeader, dir: string): Promise<void> {
  const events = openSync(join(dir, EVENTS_FILE), 'wx', FILE_MODE)
  let state: StateDoc
  try {
    state = await readBackup(file, header, lines => void writeSync(events, lines.join('\n') + '\n'))
    fsyncSync(events)
  } finally {
    closeSync(events)
  }
  writeSynced(join(dir, JOURNAL_FILE), '')
  if (header.secretKey !== undefined) writeKey(dir, parseKey(header.secretKey, file))
  writeSynced(join(dir, STATE_FILE), JSON.stringify(state))
  syncDirectory(dir)
  // Opened as the service opens it, so whatever the service would refuse is refused here, before the target changes.
  try {
    await (await openStore(dir, { sync: true })).close()
  } catch (error) {
    throw new Error(`${file} does not make a store that opens: ${(error as Error).message.replaceAll(dir + '/', '')}`)
  }
}

function writeSynced(path: string, text: string) {
  const fd = openSync(path, 'wx', FILE_MODE)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function syncDirectory(dir: string) {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

async function isMountPoint(dir: string): Promise<boolean> {
  return (await stat(dir)).dev !== (await stat(dirname(dir))).dev
}

/** Size of a file in bytes, for messages. */
export async function sizeOf(file: string): Promise<number> {
  return (await stat(file)).size
}
