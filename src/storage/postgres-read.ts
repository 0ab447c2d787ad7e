/** Reading the PostgreSQL store's tables (postgres.ts): its commits, and its events a page at a time. */
import type { SQL } from 'bun'
import { within } from './postgres-connect'
import type { JournalEntry } from './state-journal'

/** Events read per query when the log is read whole (the event search at start, a backup). */
const EVENT_PAGE = 5000

/** The commits after `seq`, oldest first: each one's journal entry and its changes as stored. */
export async function selectCommits(sql: SQL, seq: number): Promise<{ entry: JournalEntry; changesText: string }[]> {
  const rows: { seq: string; last_event_id: string; next_user_id: string; changes: string }[] =
    await sql`SELECT seq, last_event_id, next_user_id, changes FROM flagstore_commits WHERE seq > ${seq} ORDER BY seq`
  return rows.map(row => ({
    entry: {
      seq: Number(row.seq),
      lastEventId: Number(row.last_event_id),
      nextUserId: Number(row.next_user_id),
      changes: JSON.parse(row.changes),
    },
    changesText: row.changes,
  }))
}

/**
 * Calls `onLine` with the JSON line of each event after `from` up to `to`, oldest first, read a
 * page at a time through `sql` (a pool, or one transaction's snapshot), checking the ids run on;
 * `name` is the store's, for the error. With `timeoutMs`, each page waits that long at most.
 */
export async function selectEventLines(
  sql: SQL,
  name: string,
  from: number,
  to: number,
  onLine: (line: string, id: number) => void,
  timeoutMs?: number,
): Promise<void> {
  let next = from
  while (next < to) {
    const page =
      sql`SELECT id, line FROM flagstore_events WHERE id > ${next} AND id <= ${to} ORDER BY id LIMIT ${EVENT_PAGE}`.execute()
    const rows: { id: string; line: string }[] = await (timeoutMs === undefined
      ? page
      : within(page, timeoutMs, 'reading events'))
    if (rows.length === 0) break
    for (const row of rows) {
      const id = Number(row.id)
      if (id !== next + 1) throw new Error(`${name}: flagstore_events holds no event ${next + 1}`)
      onLine(row.line, id)
      next = id
    }
  }
  if (next < to)
    throw new Error(`${name}: flagstore_events ends at event ${next}, but the state includes events up to ${to}`)
}
