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
import { Memory } from 'lowdb'
import type { SQL } from 'bun'
import type { DatabaseConfig } from '../config'
import { COLLECTIONS } from '../services'
import { MemoryEventLog } from '../storage/event-log'
import { selectCommits, selectEventLines } from '../storage/postgres'
import { connectAtStart, lockName, migrate } from '../storage/postgres-connect'
import { loadedCollection, type StateDoc } from '../storage/records'
import { MemoryJournal, replayJournal } from '../storage/state-journal'
import { Store } from '../storage/store'
import { backupHeader, readBackup, readHeader, writeBackup, type BackupHeader } from './backup'

async function withDatabase<T>(database: DatabaseConfig, use: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = await connectAtStart(database, { attempts: 1, max: 1, long: true })
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
      const entries = (await selectCommits(tx, Number(checkpoints[0].seq))).map(({ entry }) => entry)
      if (!replayJournal(state, entries)) throw new Error(`${database.database}: the commits do not follow on from the checkpoint`)
      const key = (await tx`SELECT value FROM flagstore_meta WHERE key = 'secret_key'`)[0]?.value as string | undefined
      const header = backupHeader(state, key)
      await writeBackup(file, header, state, (writeLine) => selectEventLines(tx, database.database, 0, state.lastEventId, writeLine))
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
      const restored = await readBackup(file, header, async (lines, first) => {
        await tx`INSERT INTO flagstore_events (id, line) SELECT * FROM unnest(${tx.array(lines.map((_, i) => first + i), 'BIGINT')}, ${tx.array(lines, 'TEXT')})`
      })
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
