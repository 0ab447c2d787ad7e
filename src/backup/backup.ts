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
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { EVENTS_FILE, JOURNAL_FILE, readLines, STATE_FILE, StoreLoadError } from '../storage/files'
import { collection, COLLECTIONS, type StateDoc } from '../storage/records'
import { replayJournal, type JournalEntry } from '../storage/state-journal'

export const BACKUP_FORMAT = 'flagstore-backup'

export interface BackupHeader {
  format: typeof BACKUP_FORMAT
  version: 1
  createdAt: string
  lastEventId: number
  commitSeq: number
}

/** The state at the last acknowledged commit, read from the files alone. */
async function readState(dataDir: string): Promise<StateDoc> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const state = JSON.parse(await readFile(join(dataDir, STATE_FILE), 'utf8')) as StateDoc
    const entries: JournalEntry[] = []
    // Only complete lines are read: a line still being written is not acknowledged yet.
    await readLines(join(dataDir, JOURNAL_FILE), (line) => {
      entries.push(JSON.parse(line))
    })
    for (const key of COLLECTIONS) state[key] = collection<unknown>(state[key]) as never
    if (replayJournal(state, entries)) return state
  }
  throw new Error(`${dataDir}: the state kept changing under the backup; try again`)
}

/** Writes a backup of `dataDir` (the service may be running) to `file`; returns its header. */
export async function backupDataDir(dataDir: string, file: string): Promise<BackupHeader> {
  const state = await readState(dataDir)
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    version: 1,
    createdAt: new Date().toISOString(),
    lastEventId: state.lastEventId,
    commitSeq: state.commitSeq,
  }
  // Synchronous writes, in order, from inside the line reader: the backup is never held whole in memory.
  const out = openSync(file, 'wx')
  try {
    writeSync(out, JSON.stringify(header) + '\n' + JSON.stringify(state) + '\n')
    let copied = 0
    let chunk = ''
    await readLines(join(dataDir, EVENTS_FILE), (line) => {
      if (copied === state.lastEventId) return false
      copied++
      chunk += line + '\n'
      if (chunk.length > 1 << 20) {
        writeSync(out, chunk)
        chunk = ''
      }
    })
    if (copied < state.lastEventId) throw new StoreLoadError(join(dataDir, EVENTS_FILE), `holds ${copied} events, fewer than the ${state.lastEventId} the state includes`)
    writeSync(out, chunk)
    fsyncSync(out)
  } finally {
    closeSync(out)
  }
  return header
}

/** Makes `dataDir` (missing or empty) a data directory holding what `file` holds. */
export async function restoreBackup(file: string, dataDir: string): Promise<BackupHeader> {
  await mkdir(dataDir, { recursive: true })
  if ((await readdir(dataDir)).some((name) => [STATE_FILE, JOURNAL_FILE, EVENTS_FILE].includes(name))) {
    throw new Error(`${dataDir} already holds a store; restore into an empty directory`)
  }
  let header: BackupHeader | null = null
  let state: StateDoc | null = null
  const events = openSync(join(dataDir, EVENTS_FILE), 'wx')
  let count = 0
  let pending = ''
  try {
    await readLines(file, (line, lineNumber) => {
      if (lineNumber === 1) {
        header = JSON.parse(line) as BackupHeader
        if (header.format !== BACKUP_FORMAT || header.version !== 1) throw new Error(`${file} is not a backup made by this service`)
        return
      }
      if (lineNumber === 2) {
        state = JSON.parse(line) as StateDoc
        return
      }
      const id = (JSON.parse(line) as { id: number }).id
      if (id !== ++count) throw new Error(`${file}: line ${lineNumber} is not event ${count}`)
      pending += line + '\n'
      if (pending.length > 1 << 20) {
        writeSync(events, pending)
        pending = ''
      }
    })
    writeSync(events, pending)
    fsyncSync(events)
  } finally {
    closeSync(events)
  }
  const restored = header as BackupHeader | null
  const restoredState = state as StateDoc | null
  if (!restored || !restoredState) throw new Error(`${file} is not a complete backup`)
  if (count !== restored.lastEventId || restoredState.lastEventId !== restored.lastEventId) {
    throw new Error(`${file} holds ${count} events but its state includes ${restored.lastEventId}; the backup is incomplete`)
  }
  await writeFile(join(dataDir, JOURNAL_FILE), '')
  await writeFile(join(dataDir, STATE_FILE), JSON.stringify(restoredState))
  return restored
}

/** Size of a file in bytes, for messages. */
export async function sizeOf(file: string): Promise<number> {
  return (await stat(file)).size
}
