/**
 * Backup and restore of a store in PostgreSQL, in the files' backup format (backup.ts), so that a
 * backup of either store restores into either: the documented way from one machine's data
 * directory to several instances on one database (docs/operations.md).
 *
 * A backup reads one snapshot (a read-only repeatable-read transaction) while instances write:
 * the latest checkpoint, the commits after it replayed, and the events that state includes. A
 * restore fills an empty database in one transaction, so a backup that is cut short or garbage
 * leaves it empty; one that holds a store is refused.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { Memory } from 'lowdb'
import type { SQL } from 'bun'
import type { DatabaseConfig } from '../config'
import { COLLECTIONS } from '../services'
import { describeIoError, FILE_MODE } from '../storage/files'
import { MemoryEventLog } from '../storage/event-log'
import { connectAtStart, lockName, migrate } from '../storage/postgres-connect'
import { loadedCollection, type StateDoc } from '../storage/records'
import { MemoryJournal, replayJournal, type JournalEntry } from '../storage/state-journal'
import { Store } from '../storage/store'
import { BACKUP_FORMAT, isObject, parseLine, readHeader, type BackupHeader } from './backup'

const EVENT_BATCH = 5000

/**
 * The lines of a backup, read in bounded memory (a long line, the state, is joined once). A file
 * that does not end with a newline was cut short.
 */
async function* linesOf(file: string): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let carry: Uint8Array[] = []
  let lineNumber = 0
  for await (const chunk of Bun.file(file).stream()) {
    let start = 0
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      lineNumber++
      let bytes = chunk.subarray(start, newline)
      if (carry.length > 0) {
        carry.push(bytes)
        bytes = Buffer.concat(carry)
        carry = []
      }
      try {
        yield decoder.decode(bytes)
      } catch (error) {
        if (error instanceof TypeError) throw new Error(`${file}: line ${lineNumber} is not valid UTF-8`)
        throw error
      }
      start = newline + 1
    }
    if (start < chunk.length) carry.push(chunk.subarray(start))
  }
  if (carry.length > 0) throw new Error(`${file} is truncated: it ends in the middle of line ${lineNumber + 1}`)
}

async function withDatabase<T>(database: DatabaseConfig, use: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = await connectAtStart(database, { attempts: 1, max: 1 })
  try {
    return await use(sql)
  } finally {
    await sql.close()
  }
}

/** Writes a backup of the store in `database` (instances may be running on it) to `file`. */
export async function backupDatabase(database: DatabaseConfig, file: string): Promise<BackupHeader> {
  return withDatabase(database, (sql) =>
    sql.begin('isolation level repeatable read read only', async (tx) => {
      const [{ found }] = await tx`SELECT to_regclass(${`"${database.schema}".flagstore_checkpoints`}) IS NOT NULL AS found`
      const checkpoints = found ? await tx`SELECT seq, state FROM flagstore_checkpoints ORDER BY seq DESC LIMIT 1` : []
      if (checkpoints.length === 0) throw new Error(`${database.settingOf.database}: ${database.database} (schema ${database.schema}) holds no store`)
      const state = JSON.parse(checkpoints[0].state) as StateDoc
      for (const definition of COLLECTIONS) state[definition.name] = loadedCollection(definition, state[definition.name]) as never
      const rows: { seq: string; last_event_id: string; next_user_id: string; changes: string }[] =
        await tx`SELECT seq, last_event_id, next_user_id, changes FROM flagstore_commits WHERE seq > ${checkpoints[0].seq} ORDER BY seq`
      const entries: JournalEntry[] = rows.map((row) => ({ seq: Number(row.seq), lastEventId: Number(row.last_event_id), nextUserId: Number(row.next_user_id), changes: JSON.parse(row.changes) }))
      if (!replayJournal(state, entries)) throw new Error(`${database.database}: the commits do not follow on from the checkpoint`)
      const key = (await tx`SELECT value FROM flagstore_meta WHERE key = 'secret_key'`)[0]?.value as string | undefined
      const header: BackupHeader = { format: BACKUP_FORMAT, version: 2, createdAt: new Date().toISOString(), lastEventId: state.lastEventId, commitSeq: state.commitSeq, ...(key ? { secretKey: key } : {}) }
      let out: number
      try {
        out = openSync(file, 'wx', FILE_MODE)
      } catch (error) {
        throw new Error(`cannot create ${file}: ${describeIoError(error)}`)
      }
      try {
        writeSync(out, JSON.stringify(header) + '\n' + JSON.stringify(state) + '\n')
        for (let next = 0; next < state.lastEventId; ) {
          const events: { id: string; line: string }[] = await tx`SELECT id, line FROM flagstore_events WHERE id > ${next} AND id <= ${state.lastEventId} ORDER BY id LIMIT ${EVENT_BATCH}`
          if (events.length === 0 || Number(events[0].id) !== next + 1) throw new Error(`${database.database}: flagstore_events holds no event ${next + 1}`)
          let chunk = ''
          for (const event of events) {
            if (Number(event.id) !== ++next) throw new Error(`${database.database}: flagstore_events holds no event ${next}`)
            chunk += event.line + '\n'
          }
          writeSync(out, chunk)
        }
        fsyncSync(out)
      } finally {
        closeSync(out)
      }
      return header
    }),
  )
}

/**
 * Fills the empty store in `database` with what `file` holds: the state as a checkpoint, its
 * events and the secret key, in one transaction. The state is first opened as the service would
 * open it (every record checked), so a backup the service would refuse is refused here.
 */
export async function restoreDatabase(file: string, database: DatabaseConfig): Promise<BackupHeader> {
  const header = await readHeader(file)
  return withDatabase(database, async (sql) => {
    await migrate(sql, database)
    await sql.begin(async (tx) => {
      // Instances starting meanwhile wait for their first commit; a store already there is refused.
      await tx`SELECT pg_advisory_xact_lock(hashtext(${lockName(database.schema, 'commit')}))`
      const [{ used }] = await tx`SELECT EXISTS (SELECT 1 FROM flagstore_commits) OR EXISTS (SELECT 1 FROM flagstore_events) OR EXISTS (SELECT 1 FROM flagstore_checkpoints WHERE seq > 0) AS used`
      if (used) throw new Error(`${database.database} (schema ${database.schema}) already holds a store; restore into an empty database`)
      await tx`DELETE FROM flagstore_checkpoints`
      let state: StateDoc | null = null
      let count = 0
      let lineNumber = 0
      let batch: string[] = []
      const insert = async () => {
        const first = count - batch.length + 1
        await tx`INSERT INTO flagstore_events (id, line) SELECT * FROM unnest(${tx.array(batch.map((_, i) => first + i), 'BIGINT')}, ${tx.array(batch, 'TEXT')})`
        batch = []
      }
      for await (const line of linesOf(file)) {
        lineNumber++
        if (lineNumber === 1) continue
        const value = parseLine(file, line, lineNumber)
        if (lineNumber === 2) {
          if (!isObject(value) || value.lastEventId !== header.lastEventId) throw new Error(`${file}: line 2 is not the state its header announces (events up to ${header.lastEventId})`)
          state = value as unknown as StateDoc
          continue
        }
        if (!isObject(value) || value.id !== ++count) throw new Error(`${file}: line ${lineNumber} is not event ${count}`)
        if (count > header.lastEventId) throw new Error(`${file}: line ${lineNumber} is an event past the ${header.lastEventId} its state includes`)
        batch.push(line)
        if (batch.length === EVENT_BATCH) await insert()
      }
      if (batch.length > 0) await insert()
      if (state === null) throw new Error(`${file} is truncated: it holds no state after its header`)
      if (count !== header.lastEventId) throw new Error(`${file} is truncated: it holds ${count} events but its state includes ${header.lastEventId}`)
      const restored = state as StateDoc
      try {
        const memory = new Memory<StateDoc>()
        await memory.write(structuredClone(restored))
        await (await Store.open({ checkpoint: memory, journal: new MemoryJournal(), events: new MemoryEventLog() }, { collections: COLLECTIONS })).close()
      } catch (error) {
        throw new Error(`${file} does not make a store that opens: ${(error as Error).message}`)
      }
      await tx`INSERT INTO flagstore_checkpoints (seq, state) VALUES (${restored.commitSeq ?? 0}, ${JSON.stringify(restored)})`
      if (header.secretKey !== undefined) {
        await tx`INSERT INTO flagstore_meta (key, value) VALUES ('secret_key', ${header.secretKey}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`
      }
    })
    return header
  })
}
