/**
 * A restore into a data directory (`FilesLog.fill`): what is its own on files is making the
 * directory hold the store in one step, or not at all.
 *
 * The target is locked while this runs, so a service can neither be running on it nor start on it
 * half restored. The store is written in a temporary directory, each file fsynced, and moved into
 * place only once it is whole: a backup that is missing, garbage or cut short leaves the target as
 * it was, and the retry starts afresh.
 *
 * A missing or empty target is replaced by the temporary directory, built beside it, in one
 * rename. A target that holds other files (data/ holds a README), is a mount point or a symbolic
 * link can't be replaced that way; its files are then built in a directory inside it and renamed
 * in one by one, state.json last: a crash between two renames leaves events without a checkpoint,
 * which the service refuses to start on rather than take for a first start, and never a store
 * that opens with part of the backup.
 */
import { closeSync, existsSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { lstat, mkdir, mkdtemp, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { DIR_MODE, EVENTS_FILE, FILE_MODE, JOURNAL_FILE, secureDataDir, STATE_FILE } from './files'
import type { Filling } from './log'
import { DataDirLock, LOCK_FILE } from './lock'
import { KEY_FILE, writeKey } from './secret-key'

const STORE_FILES = [STATE_FILE, JOURNAL_FILE, EVENTS_FILE]

/** Makes `dataDir` (missing, or holding no store) hold the store `use` writes; as it was if `use` throws. */
export async function fillDataDir<T>(dataDir: string, use: (filling: Filling) => Promise<T>): Promise<T> {
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
    const result = await writeStore(temp, use)
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
        if (existsSync(join(temp, name))) await rename(join(temp, name), join(dataDir, name))
      // The directory was there before; it may have been made readable by others.
      secureDataDir(dataDir, [])
      syncDirectory(dataDir)
      await rm(temp, { recursive: true, force: true })
    }
    done = true
    return result
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

/** Writes the store `use` hands over into the empty directory `dir`, each file fsynced. */
async function writeStore<T>(dir: string, use: (filling: Filling) => Promise<T>): Promise<T> {
  const events = openSync(join(dir, EVENTS_FILE), 'wx', FILE_MODE)
  let closed = false
  try {
    return await use({
      events: async lines => void writeSync(events, `${lines.join('\n')}\n`),
      checkpoint: async (state, secretKey) => {
        fsyncSync(events)
        closeSync(events)
        closed = true
        writeSynced(join(dir, JOURNAL_FILE), '')
        if (secretKey !== null) writeKey(dir, secretKey)
        writeSynced(join(dir, STATE_FILE), JSON.stringify(state))
        syncDirectory(dir)
      },
    })
  } finally {
    if (!closed) closeSync(events)
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
