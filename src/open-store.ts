/** Opening the one store: on a data directory (or in memory) or on PostgreSQL, with every feature's collections. */
import { COLLECTIONS } from './feature-list'
import { join } from 'node:path'
import { Memory } from 'lowdb'
import { MemoryEventLog } from './storage/event-log'
import {
  BACKUPS_DIR,
  EVENTS_FILE,
  JOURNAL_FILE,
  PROBE_FILE,
  secureDataDir,
  STATE_FILE,
  StoreLoadError,
  type FileSystem,
  type SecuredReport,
} from './storage/files'
import { LOCK_FILE } from './storage/lock'
import { KEY_FILE, newKey, readKey, writeKey } from './storage/secret-key'
import { MemoryJournal } from './storage/state-journal'
import { emptyState, type StateDoc } from './storage/records'
import type { DatabaseConfig } from './config'
import { dataDirLog, FilesLog } from './storage/files-log'
import { PostgresLog } from './storage/postgres'
import { connectAtStart, DatabaseStartError, migrate } from './storage/postgres-connect'
import { Store } from './storage/store'
import { SEARCH_DIR } from './features/events/search/segment-files'
import { SecretHasher } from './features/tokens/secret-hash'
import { logAlways } from './log'

/** Every file the service writes in a data directory (the checkpoint's and the key's temp files too). */
export const DATA_FILES = [
  STATE_FILE,
  `.${STATE_FILE}.tmp`,
  JOURNAL_FILE,
  EVENTS_FILE,
  KEY_FILE,
  `.${KEY_FILE}.tmp`,
  LOCK_FILE,
  PROBE_FILE,
]
/**
 * Directories of files the service writes in a data directory: the event log's search segments (a
 * cache, never in backups), and the backups `flagstore backup` writes without a FILE.
 */
export const DATA_DIRECTORIES = [SEARCH_DIR, BACKUPS_DIR]

export interface StoreOptions {
  sync: boolean
  /** Bytes of journal after which a new checkpoint is written (tests make it small). */
  checkpointAfterBytes?: number
  /** The file operations of the data files; tests inject a full disk here. */
  fs?: FileSystem
  /** Told of permissions taken off the directory or its files, or that could not be (by default warnings on standard error). */
  onSecured?: (report: SecuredReport) => void
}

function warnSecured({ narrowed, refused }: SecuredReport) {
  const warn = (msg: string, fields: Record<string, unknown>) => logAlways('warn', msg, fields)
  if (narrowed.length > 0) warn('data directory was readable by others; permissions narrowed', { changes: narrowed })
  if (refused.length > 0)
    warn('data directory is readable by others and this process cannot change that; make it 0700 and its files 0600', {
      paths: refused,
    })
}

/** Opens the store on `dataDir`, or in memory when `dataDir` is null (tests, throwaway runs). */
export async function openStore(dataDir: string | null, options: StoreOptions = { sync: true }): Promise<Store> {
  if (dataDir === null) {
    return Store.open(
      new FilesLog({ checkpoint: new Memory<StateDoc>(), journal: new MemoryJournal(), events: new MemoryEventLog() }),
      { collections: COLLECTIONS },
    )
  }
  const key = readKey(dataDir)
  const store = await Store.open(
    dataDirLog(dataDir, { sync: options.sync, fs: options.fs, secretKey: key ?? newKey() }),
    {
      collections: COLLECTIONS,
      checkpointAfterBytes: options.checkpointAfterBytes,
    },
  )
  if (key === null) {
    // A new key would make every keyed hash unmatchable: a lost key file is a damaged directory.
    if (Object.values(store.state.tokens).some(token => !SecretHasher.isLegacy(token.secretHash))) {
      throw new StoreLoadError(
        join(dataDir, KEY_FILE),
        'is missing, but tokens are stored under it; restore it (a backup holds it) or move the directory away',
      )
    }
    writeKey(dataDir, store.secretKey)
  }
  // Once the store has opened: a start that fails says only why (files made since are 0600 anyway).
  const secured = secureDataDir(dataDir, DATA_FILES, DATA_DIRECTORIES)
  if (secured.narrowed.length + secured.refused.length > 0) (options.onSecured ?? warnSecured)(secured)
  return store
}

/**
 * Opens the store in PostgreSQL (storage/postgres.ts): connects (retrying while the server cannot
 * be reached, a warning for each attempt), migrates the schema, and loads the latest checkpoint
 * and the commits after it. A failure is a DatabaseStartError naming the setting, or a
 * StoreLoadError for data that cannot be trusted.
 */
export async function openDatabaseStore(
  database: DatabaseConfig,
  options: {
    checkpointAfterBytes?: number
    max?: number
    idleTimeout?: number
    attempts?: number
  } = {},
): Promise<Store> {
  const sql = await connectAtStart(database, {
    max: options.max,
    idleTimeout: options.idleTimeout,
    attempts: options.attempts,
  })
  try {
    await migrate(sql, database)
    return await Store.open(new PostgresLog(sql, database, () => emptyState(COLLECTIONS)), {
      collections: COLLECTIONS,
      checkpointAfterBytes: options.checkpointAfterBytes,
    })
  } catch (error) {
    await sql.close().catch(() => {})
    if (error instanceof DatabaseStartError || error instanceof StoreLoadError) throw error
    throw new DatabaseStartError(new PostgresLog(sql, database).describe(error))
  }
}
