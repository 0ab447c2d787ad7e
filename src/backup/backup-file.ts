/**
 * The backup file, one format for either store (backup.ts): JSON Lines of a header, the state (as a
 * checkpoint), then every event up to the last one that state includes. Written a megabyte at a
 * time and synced; read back in bounded memory, checking every line.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { describeIoError, FILE_MODE, readLines } from '../storage/files'
import type { StateDoc } from '../storage/records'
import { parseKey } from '../storage/secret-key'

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

/** Size of a file in bytes, for messages. */
export async function sizeOf(file: string): Promise<number> {
  return (await stat(file)).size
}
