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
 * A restore (`restoreLog`) is one function over `StoreLog.fill`, whichever the target: the backend
 * makes a data directory (storage/files-fill.ts) or a database (storage/postgres.ts) hold the
 * backup's store all at once, or nothing.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Memory } from 'lowdb'
import { SecretHasher } from '../features/tokens/secret-hash'
import { COLLECTIONS } from '../feature-list'
import { MemoryEventLog } from '../storage/event-log'
import { BACKUPS_DIR, describeIoError, DIR_MODE, secureDataDir, STATE_FILE, StoreLoadError } from '../storage/files'
import { dataDirLog, FilesLog } from '../storage/files-log'
import type { StoreLog } from '../storage/log'
import { movedProblem } from '../storage/moved'
import { loadedCollection, type StateDoc } from '../storage/records'
import { KEY_FILE, parseKey, readKey } from '../storage/secret-key'
import { MemoryJournal, replayJournal } from '../storage/state-journal'
import { Store } from '../storage/store'
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
 * Fills the log `log`, which holds no store, with what `file` holds, and returns its header: the
 * backend (`StoreLog.fill`) makes it hold all of it at once or nothing. The state is first opened
 * as the service would open it (every record checked), so a backup the service would refuse is
 * refused here, before the target changes.
 */
export async function restoreLog(log: StoreLog, file: string): Promise<BackupHeader> {
  const header = await readHeader(file)
  const key = header.secretKey === undefined ? null : parseKey(header.secretKey, file)
  return log.fill(async filling => {
    const state = await readBackup(file, header, (lines, first) => filling.events(lines, first))
    try {
      await opens(state, key)
    } catch (error) {
      throw new Error(`${file} does not make a store that opens: ${(error as Error).message}`)
    }
    await filling.checkpoint(state, key)
    return header
  })
}

/** Opens `state` as the service opens a store, in memory; throws as the service would. */
async function opens(state: StateDoc, key: Buffer | null): Promise<void> {
  const memory = new Memory<StateDoc>()
  await memory.write(structuredClone(state))
  const log = new FilesLog({
    checkpoint: memory,
    journal: new MemoryJournal(),
    events: new MemoryEventLog(),
    checkpointName: STATE_FILE,
  })
  const store = await Store.open(log, { collections: COLLECTIONS })
  try {
    // A new key would make every keyed hash unmatchable (services.ts openStore refuses such a directory).
    if (key === null && Object.values(store.state.tokens).some(token => !SecretHasher.isLegacy(token.secretHash)))
      throw new StoreLoadError(KEY_FILE, 'is missing, but tokens are stored under it')
  } finally {
    await store.close()
  }
}

/** Makes `dataDir` (missing, or holding no store) a data directory holding what `file` holds (storage/files-fill.ts). */
export function restoreBackup(file: string, dataDir: string): Promise<BackupHeader> {
  return restoreLog(dataDirLog(dataDir, { sync: true }), file)
}
