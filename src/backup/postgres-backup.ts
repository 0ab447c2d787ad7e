/**
 * Backup and restore of a store in PostgreSQL, in the files' backup format (backup.ts), so that a
 * backup of either store restores into either: the documented way from one machine's data
 * directory to several instances on one database (docs/operations.md).
 *
 * A backup is backup.ts's, over the database's log (its snapshot: one read-only repeatable-read
 * transaction, which instances writing meanwhile do not disturb). A restore is backup.ts's too,
 * into the database's log: it fills an empty database in one transaction, so a backup that is cut
 * short or garbage leaves it empty; one that holds a store is refused.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { SQL } from 'bun'
import type { DatabaseConfig } from '../config'
import { STATE_FILE } from '../storage/files'
import { DataDirLock, DataDirLockError } from '../storage/lock'
import { markMoved, MOVED_FILE } from '../storage/moved'
import { PostgresLog } from '../storage/postgres'
import { connectAtStart } from '../storage/postgres-connect'
import { readKey } from '../storage/secret-key'
import { backupLog, restoreLog } from './backup'
import { readHeader, type BackupHeader } from './backup-file'

async function withDatabase<T>(database: DatabaseConfig, use: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = await connectAtStart(database, { attempts: 1, max: 1, long: true })
  try {
    return await use(sql)
  } finally {
    await sql.close()
  }
}

/** Writes a backup of the store in `database` (instances may be running on it) to `file`. */
export function backupDatabase(database: DatabaseConfig, file: string): Promise<BackupHeader> {
  return withDatabase(database, sql => backupLog(new PostgresLog(sql, database), file))
}

/**
 * Fills the empty store in `database` with what `file` holds (backup.ts `restoreLog`): the state as
 * a checkpoint, its events and the secret key, in one transaction (PostgresLog.fill).
 */
export async function restoreDatabase(file: string, database: DatabaseConfig): Promise<BackupHeader> {
  // A file that is no backup is refused before connecting.
  await readHeader(file)
  return withDatabase(database, sql => restoreLog(new PostgresLog(sql, database), file))
}

/**
 * After a restore into PostgreSQL (`movedTo` names it, without a password), marks the data
 * directory the backup was taken from as moved (storage/moved.ts), when it is on this machine and
 * still holds that store (the same secret key). Returns what was done, in one line for the operator;
 * null for a backup that names no data directory (a database's, or an older version's).
 */
export function markSourceMoved(
  header: BackupHeader,
  file: string,
  movedTo: string,
): { marked: boolean; said: string } | null {
  const source = typeof header.source === 'string' ? header.source : null
  if (source === null) return null
  const unmarked = (why: string) => ({
    marked: false,
    said: `${source}, which the backup was taken from, was not marked as moved: ${why}`,
  })
  if (!existsSync(join(source, STATE_FILE))) return unmarked('it holds no store on this machine')
  let key: Buffer | null
  try {
    key = readKey(source)
  } catch (error) {
    return unmarked((error as Error).message)
  }
  if (key === null || header.secretKey === undefined || key.toString('hex') !== header.secretKey)
    return unmarked("it now holds another store (its secret.key is not the backup's)")
  try {
    markMoved(source, { movedTo, movedAt: new Date().toISOString(), backup: file })
  } catch (error) {
    return unmarked(`${join(source, MOVED_FILE)} cannot be written (${(error as Error).message})`)
  }
  return {
    marked: true,
    said: `Marked ${source} as moved (${join(source, MOVED_FILE)}): a start on it without DATABASE_URL now stops${stillServed(source)}`,
  }
}

/** Said when a service still runs on the directory moved: what it accepts now is not in the database. */
function stillServed(dataDir: string): string {
  try {
    DataDirLock.acquire(dataDir).release()
    return ''
  } catch (error) {
    if (!(error instanceof DataDirLockError) || !error.busy) return ''
    const pid = error.holder ? ` (pid ${error.holder.pid})` : ''
    return `. A service still runs on it${pid}: stop it, as writes it takes are not in the database`
  }
}
