/**
 * A data directory whose store was moved to PostgreSQL (`flagstore restore` with DATABASE_URL, from
 * a backup of it) is marked so by `DATA_DIR/moved.json`: where it went (host, port, database and
 * schema, never a password), when, and from which backup. Its files then fall behind the database
 * with every write made there, so a start on it without DATABASE_URL (a forgotten variable, an old
 * unit file) stops and says so instead of quietly serving them; so do the commands that would use
 * its store. Removing the file is the deliberate way back to the files.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describeIoError, FILE_MODE, fsyncDirectory } from './files'

export const MOVED_FILE = 'moved.json'

export interface MovedMarker {
  /** The store it went to, as the commands name it: `PostgreSQL host:port/database (schema s)`. */
  movedTo: string
  movedAt: string
  /** The backup the move restored. */
  backup: string
}

/** Marks `dataDir` as moved (replacing an older mark), durably: a crash leaves the old file or the new one. */
export function markMoved(dataDir: string, marker: MovedMarker): void {
  const path = join(dataDir, MOVED_FILE)
  const temp = join(dataDir, `.${MOVED_FILE}.tmp`)
  const fd = openSync(temp, 'w', FILE_MODE)
  try {
    writeSync(fd, JSON.stringify(marker, null, 2) + '\n')
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, path)
  fsyncDirectory(path)
}

/** Why `dataDir`'s files must not be used as the store (it was moved to PostgreSQL), or null when it carries no mark. */
export function movedProblem(dataDir: string): string | null {
  const path = join(dataDir, MOVED_FILE)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    return `${path} cannot be read (${describeIoError(error)}); it marks DATA_DIR as moved to PostgreSQL`
  }
  let where = 'PostgreSQL'
  try {
    const marker = JSON.parse(text) as Partial<MovedMarker>
    if (typeof marker.movedTo === 'string')
      where = `${marker.movedTo}${typeof marker.movedAt === 'string' ? ` on ${marker.movedAt}` : ''}`
  } catch {
    // Unreadable as JSON: the mark still stands; the message names the file.
  }
  return (
    `DATA_DIR ${dataDir} was moved to ${where}, and its files miss every write made there since. ` +
    `Set DATABASE_URL (or DATABASE_HOST…) to use the database; to use these files again on purpose, remove ${path}`
  )
}
