/**
 * The data directory's secret key: 32 random bytes in `DATA_DIR/secret.key` (mode 0600), made at
 * the first start. Token secrets are stored as HMAC-SHA-256 under this key (features/tokens/
 * secret-hash.ts), so the state file, the journal or the event log alone, without this file, does
 * not let anyone test guesses of a secret. It lives in its own file so that it is never in a commit,
 * a checkpoint or a log line; a backup carries it (backup/backup.ts), since tokens cannot be checked
 * without it.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { FILE_MODE, fsyncDirectory, StoreLoadError } from './files'

export const KEY_FILE = 'secret.key'
const KEY_BYTES = 32

/** A key as it is written in the key file and in a backup: 64 hex digits. */
export function parseKey(text: string, source: string): Buffer {
  const hex = text.trim()
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new StoreLoadError(source, `is not a secret key (${KEY_BYTES * 2} hex digits)`)
  return Buffer.from(hex, 'hex')
}

export function newKey(): Buffer {
  return randomBytes(KEY_BYTES)
}

/** The directory's key, or null when it has none yet. */
export function readKey(dataDir: string): Buffer | null {
  const path = join(dataDir, KEY_FILE)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new StoreLoadError(path, (error as Error).message)
  }
  return parseKey(text, path)
}

/** Writes `key` as the directory's key file (0600), durably and atomically: a crash leaves the old file or the new one. */
export function writeKey(dataDir: string, key: Buffer): void {
  const path = join(dataDir, KEY_FILE)
  const temp = join(dataDir, `.${KEY_FILE}.tmp`)
  const fd = openSync(temp, 'w', FILE_MODE)
  try {
    writeSync(fd, key.toString('hex') + '\n')
    fsyncSync(fd)
  } catch (error) {
    closeSync(fd)
    unlinkSync(temp)
    throw error
  }
  closeSync(fd)
  renameSync(temp, path)
  fsyncDirectory(path)
}
