/**
 * File primitives of the data directory: a data file that cannot be trusted, fsync of files and
 * directories, and the lowdb adapter for the state checkpoint.
 *
 * lowdb's own `JSONFile` does not fsync, and its preset silently swaps in memory under
 * `NODE_ENV=test`, so the store opens its adapters explicitly everywhere.
 */
import type { Adapter } from 'lowdb'
import { closeSync, fsyncSync, openSync } from 'node:fs'
import { open, readFile, rename, truncate } from 'node:fs/promises'
import { basename, dirname } from 'node:path'

/** The files of a data directory (see storage/event-log.ts, state-journal.ts and store.ts). */
export const STATE_FILE = 'state.json'
export const JOURNAL_FILE = 'state.journal.jsonl'
export const EVENTS_FILE = 'events.jsonl'

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
export async function truncateFile(path: string, length: number, sync: boolean): Promise<void> {
  try {
    await truncate(path, length)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && length === 0) return
    throw error
  }
  if (!sync) return
  const handle = await open(path, 'r+')
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

  async write(data: T): Promise<void> {
    const text = JSON.stringify(data)
    const temp = `${dirname(this.path)}/.${basename(this.path)}.tmp`
    const handle = await open(temp, 'w')
    try {
      await handle.writeFile(text)
      if (this.sync) await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, this.path)
    if (this.sync) fsyncDirectory(this.path)
  }
}

/**
 * Reads a text file of lines from the start in bounded memory, calling `onLine(text, lineNumber,
 * endOffset)` for each complete line, and returns the byte length of the complete lines: anything
 * after it is a torn last line, left by a crash mid-append. `onLine` may return false to stop.
 */
export async function readLines(
  path: string,
  onLine: (text: string, lineNumber: number, endOffset: number) => boolean | void,
): Promise<number> {
  const file = Bun.file(path)
  if (!(await file.exists())) return 0
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let carry: Uint8Array = new Uint8Array(0)
  let offset = 0
  let lineNumber = 0
  for await (const chunk of file.stream()) {
    const bytes: Uint8Array = carry.length === 0 ? chunk : Buffer.concat([carry, chunk])
    let start = 0
    for (let newline = bytes.indexOf(0x0a, start); newline !== -1; newline = bytes.indexOf(0x0a, start)) {
      lineNumber++
      let text: string
      try {
        text = decoder.decode(bytes.subarray(start, newline))
      } catch {
        throw new StoreLoadError(path, `line ${lineNumber} is not valid UTF-8`)
      }
      offset += newline + 1 - start
      if (onLine(text, lineNumber, offset) === false) return offset
      start = newline + 1
    }
    carry = bytes.subarray(start)
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
