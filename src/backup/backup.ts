/**
 * Online backup and restore, for either store, in one file format (backup-file.ts).
 *
 * A backup reads the store's log (storage/log.ts) through `StoreLog.snapshot`, beside a service that
 * runs on it and without disturbing it: the latest checkpoint and the commits after it give the state
 * at the last acknowledged commit (a journal line half written is not acknowledged and is left out),
 * then the events that state includes. On files the event log only ever grows, so its first events
 * are final; a checkpoint written meanwhile is read again (files-log.ts). On PostgreSQL the reading is
 * one snapshot (postgres-backup.ts opens the connection).
 *
 * A restore fills a store that holds nothing: a data directory here, a database in postgres-backup.ts.
 */
import { existsSync, fsyncSync, mkdirSync, openSync, writeSync, closeSync } from 'node:fs'
import { lstat, mkdir, mkdtemp, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { COLLECTIONS, openStore } from '../services'
import { dataDirLog } from '../storage/files-log'
import {
  BACKUPS_DIR,
  describeIoError,
  DIR_MODE,
  EVENTS_FILE,
  FILE_MODE,
  JOURNAL_FILE,
  secureDataDir,
  STATE_FILE,
} from '../storage/files'
import type { StoreLog } from '../storage/log'
import { KEY_FILE, parseKey, readKey, writeKey } from '../storage/secret-key'
import { DataDirLock, LOCK_FILE } from '../storage/lock'
import { movedProblem } from '../storage/moved'
import { loadedCollection, type StateDoc } from '../storage/records'
import { replayJournal } from '../storage/state-journal'
import { backupHeader, readBackup, readHeader, writeBackup, type BackupHeader } from './backup-file'

/**
 * Writes a backup of the store kept in `log` to `file` (which must not exist) and returns its
 * header; `source` names the data directory backed up, for a restore into PostgreSQL to mark.
 */
export function backupLog(log: StoreLog, file: string, source?: string): Promise<BackupHeader> {
  return log.snapshot(async ({ checkpoint, commits, secretKey, events }) => {
    const state = checkpoint
    for (const definition of COLLECTIONS)
      state[definition.name] = loadedCollection(definition, state[definition.name]) as never
    if (!replayJournal(state, commits)) throw new Error(`${log.name}: the commits do not follow on from the checkpoint`)
    const header = backupHeader(state, secretKey?.toString('hex'), source)
    // Written in order as they are read: the backup is never held whole in memory.
    await writeBackup(file, header, state, writeLine => events(state.lastEventId, writeLine))
    return header
  })
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
  return backupLog(dataDirLog(dataDir, { sync: false, secretKey: readKey(dataDir) }), file, dataDir)
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
