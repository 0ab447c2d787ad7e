/**
 * The store in PostgreSQL, for several instances on one database (docs/architecture.md, Storage).
 *
 * The files' roles carry over: `flagstore_commits` is the state journal (one row per commit, the
 * records it changed), `flagstore_events` the event log (one row per event, its JSON line),
 * `flagstore_checkpoints` the checkpoint. Every instance keeps the whole state in memory as the
 * file store does and answers reads from it; a commit (store.ts) is one SQL transaction that takes
 * the cluster-wide commit lock, first applies the commits other instances made since this one's
 * last (through the journal's replay), then runs the batch on that current state and inserts its
 * journal row and events, so event ids and commit numbers are assigned under the lock, gapless.
 * The COMMIT is what acknowledges the writes. A NOTIFY with the new commit number tells the other
 * instances to catch up at once; a periodic read catches up after a lost notification.
 *
 * The schema is made and migrated at start by numbered migrations, under an advisory lock so that
 * instances starting together migrate once; a schema newer than this version knows is refused.
 */
import type { SQL } from 'bun'
import type { Adapter } from 'lowdb'
import type { DatabaseConfig } from '../config'
import { describeDatabaseError, lockName, timeoutOf, where, within } from './postgres-connect'
import type { EventLog } from './event-log'
import type { FailureTable } from './failure-table'
import { PostgresFailureTable } from './postgres-failures'
import type { JournalContents, JournalEntry, StateJournal } from './state-journal'
import type { EventRecord, StateDoc } from './records'

/** A commit made by any instance, as read back: its journal entry and its events' JSON lines. */
export interface SharedCommit {
  entry: JournalEntry
  lines: string[]
  /** The entry's changes as JSON, as stored (its length is what it adds towards the next checkpoint). */
  changesText: string
}

/** What the store needs of a database shared with other instances (store.ts). */
export interface SharedLog {
  readonly name: string
  /** Which log this is, made once per schema (flagstore_meta `log_id`): a local cache of the log (the event search's) names it. */
  readonly identity: string
  /**
   * One transaction holding the cluster-wide commit lock: `body` gets the commits made after
   * `after` (by other instances) and returns the commit to write, or null to write nothing. It
   * resolves once the commit is durable, and rejects otherwise: with a CommitInDoubt when the
   * COMMIT was sent and no answer came (it may yet take effect: the log says, once read), else
   * having written nothing. It never waits longer than the database's timeout.
   */
  commit(
    after: { seq: number; lastEventId: number },
    body: (remote: SharedCommit[]) => SharedCommit | null,
  ): Promise<void>
  /** The commits made after `after`, oldest first, read without the lock (catching up); bounded as `commit`. */
  read(after: { seq: number; lastEventId: number }): Promise<SharedCommit[]>
  /** `listener` hears the commit number of each commit any instance makes (NOTIFY), best effort. */
  listen(listener: (seq: number) => void): Promise<void>
  /**
   * Writes a checkpoint of the state at commit `seq` unless another instance holds the checkpoint
   * lock or wrote one after `since`; prunes commits no instance can still need. Resolves to
   * whether it wrote one.
   */
  checkpoint(seq: number, since: number, state: () => string): Promise<boolean>
  /** Throws when the database cannot be used now (or does not answer in time). */
  probe(): Promise<void>
  /** How long a call may wait for the database, in ms. */
  readonly timeoutMs: number
  /** A failure of this database in words, for `/ready`, the 503 and the log. */
  describe(error: unknown): string
  /** The sign-in throttle's counts, shared by every instance on the database. */
  readonly failures: FailureTable
  close(): Promise<void>
}

/**
 * A commit whose COMMIT was sent but not answered (the connection broke, or the database did not
 * answer in time): it may have taken effect or not. The store undoes it in memory, as for any
 * failed commit, and reads the log: if it did take effect, it comes back as a commit of the log,
 * applied once. Its writes are answered as of unknown outcome, never as failed.
 */
export class CommitInDoubt extends Error {
  override name = 'CommitInDoubt'
  constructor(override readonly cause: unknown) {
    super((cause as Error)?.message ?? String(cause))
  }
}

/** Events read per query when the log is read whole (the event search at start, a backup). */
const EVENT_PAGE = 5000

/**
 * How often a store on a shared database looks for commits of other instances without being told
 * (a NOTIFY lost with a dropped connection): the longest another instance's write can go unseen.
 */
export const CATCH_UP_MS = 500

/** Commits are pruned only once this old and covered by the checkpoint before the latest. */
const PRUNE_AFTER = '10 minutes'

export class PostgresLog implements SharedLog {
  readonly name: string
  identity = ''
  readonly failures: FailureTable
  private readonly channel: string
  private unlisten: (() => Promise<void>) | null = null
  private closed = false
  readonly timeoutMs: number

  constructor(
    private readonly sql: SQL,
    private readonly config: DatabaseConfig,
  ) {
    this.name = `PostgreSQL ${where(config)} schema ${config.schema}`
    this.timeoutMs = timeoutOf(config)
    // A channel is an identifier of at most 63 bytes: the schema's hash keeps it short and unquoted.
    this.channel = `flagstore_${Bun.hash(lockName(config.schema, 'commits')).toString(36)}`
    this.failures = new PostgresFailureTable(sql, config.schema, error => this.describe(error))
  }

  async commit(
    after: { seq: number; lastEventId: number },
    body: (remote: SharedCommit[]) => SharedCommit | null,
  ): Promise<void> {
    // The transaction outlives a timeout (its statements are on the wire): past the deadline it
    // must not go on to run `body` or to send COMMIT, so every step checks it is still wanted.
    let stage = 'running' as 'running' | 'abandoned' | 'sent'
    const wanted = () => {
      if (stage === 'abandoned') throw new Error('commit abandoned: the database did not answer in time')
    }
    const transaction = this.sql.begin(async tx => {
      wanted()
      await tx`SELECT pg_advisory_xact_lock(hashtext(${lockName(this.config.schema, 'commit')}))`
      wanted()
      const remote = await this.readWith(tx, after)
      wanted()
      const commit = body(remote)
      if (commit === null) return
      const { entry, lines } = commit
      const first = entry.lastEventId - lines.length + 1
      const ids = lines.map((_, i) => first + i)
      // One round trip for the journal row, the events and the notification (delivered on COMMIT, and only then).
      await tx`WITH journal AS (
                 INSERT INTO flagstore_commits (seq, last_event_id, next_user_id, changes)
                 VALUES (${entry.seq}, ${entry.lastEventId}, ${entry.nextUserId}, ${commit.changesText})),
               events AS (
                 INSERT INTO flagstore_events (id, line) SELECT * FROM unnest(${tx.array(ids, 'BIGINT')}, ${tx.array(lines as string[], 'TEXT')}))
               SELECT pg_notify(${this.channel}, ${String(entry.seq)})`
      wanted()
      // From here the driver sends COMMIT: an answer that does not come leaves the outcome unknown.
      stage = 'sent'
    })
    try {
      await within(transaction, this.timeoutMs, 'commit')
    } catch (error) {
      if (stage === 'sent' && !refusedByServer(error)) throw new CommitInDoubt(error)
      stage = 'abandoned'
      throw error
    }
  }

  read(after: { seq: number; lastEventId: number }): Promise<SharedCommit[]> {
    return within(this.readWith(this.sql, after), this.timeoutMs, 'reading new commits')
  }

  private async readWith(sql: SQL, after: { seq: number; lastEventId: number }): Promise<SharedCommit[]> {
    const commits: SharedCommit[] = (await selectCommits(sql, after.seq)).map(commit => ({ ...commit, lines: [] }))
    if (commits.length === 0) return []
    const last = commits.at(-1)!.entry.lastEventId
    if (last > after.lastEventId) {
      const events: { id: string; line: string }[] =
        await sql`SELECT id, line FROM flagstore_events WHERE id > ${after.lastEventId} AND id <= ${last} ORDER BY id`
      let at = 0
      for (const commit of commits) {
        while (at < events.length && Number(events[at].id) <= commit.entry.lastEventId)
          commit.lines.push(events[at++].line)
      }
    }
    return commits
  }

  async listen(listener: (seq: number) => void): Promise<void> {
    const subscription = await this.sql.listen(this.channel, payload => {
      const seq = Number(payload)
      if (Number.isInteger(seq)) listener(seq)
    })
    this.unlisten = () => subscription.unlisten()
  }

  async checkpoint(seq: number, since: number, state: () => string): Promise<boolean> {
    // `state` is the state at `seq` only until the store goes on: a checkpoint given up (no answer
    // in time) must not read it later, and rolls back instead. One that read it in time may still
    // commit late, harmlessly: it holds the state at `seq`, which the log holds too.
    let abandoned = false
    const writing = this.sql.begin(async tx => {
      const [{ locked }] =
        await tx`SELECT pg_try_advisory_xact_lock(hashtext(${lockName(this.config.schema, 'checkpoint')})) AS locked`
      if (!locked) return false
      const [{ latest }] = await tx`SELECT coalesce(max(seq), 0) AS latest FROM flagstore_checkpoints`
      if (Number(latest) > since) return false
      if (abandoned) throw new Error('checkpoint abandoned: the database did not answer in time')
      await tx`INSERT INTO flagstore_checkpoints (seq, state) VALUES (${seq}, ${state()}) ON CONFLICT (seq) DO NOTHING`
      // The checkpoint before this one stays, with the commits after it, for instances that are behind.
      const [{ previous }] =
        await tx`SELECT coalesce(max(seq), 0) AS previous FROM flagstore_checkpoints WHERE seq < ${seq}`
      await tx`DELETE FROM flagstore_checkpoints WHERE seq < ${previous}`
      await tx`DELETE FROM flagstore_commits WHERE seq <= ${previous} AND committed_at < now() - ${PRUNE_AFTER}::interval`
      return true
    })
    try {
      return await within(writing, this.timeoutMs, 'checkpoint')
    } catch (error) {
      abandoned = true
      throw error
    }
  }

  async probe(): Promise<void> {
    await within(this.sql`SELECT 1`.execute(), this.timeoutMs, 'probe')
  }

  describe(error: unknown): string {
    return describeDatabaseError(error, this.config)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.unlisten?.().catch(() => {})
    await this.sql.close({ timeout: 5 }).catch(() => {})
  }

  /**
   * The checkpoint as the store opens it: the latest one. A new database gets its first (commit 0,
   * the empty state with the collections' built-in records) from whichever instance comes first,
   * and every instance loads that one, so that the built-ins are the same everywhere (they carry
   * the time they were made). The journal then holds the commits after the checkpoint loaded.
   */
  checkpointAdapter(empty: () => StateDoc): Adapter<StateDoc> {
    const latest = async () =>
      (await this.sql`SELECT seq, state FROM flagstore_checkpoints ORDER BY seq DESC LIMIT 1`) as {
        seq: string
        state: string
      }[]
    return {
      read: async () => {
        let rows = await latest()
        if (rows.length === 0) {
          await this
            .sql`INSERT INTO flagstore_checkpoints (seq, state) VALUES (0, ${JSON.stringify(empty())}) ON CONFLICT (seq) DO NOTHING`
          rows = await latest()
        }
        this.loadedSeq = Number(rows[0].seq)
        return JSON.parse(rows[0].state) as StateDoc
      },
      write: async () => {
        throw new Error('checkpoints are written through SharedLog.checkpoint')
      },
    }
  }

  /** The commit the checkpoint read at open includes: the journal read next starts after it, whatever was written meanwhile. */
  private loadedSeq = 0

  /** The commits after the latest checkpoint, as the journal the store replays at open. */
  journal(): StateJournal {
    const log = this
    return {
      name: `${this.name}: flagstore_commits`,
      size: 0,
      async append() {
        throw new Error('commits are written through SharedLog.commit')
      },
      async read(): Promise<JournalContents> {
        const entries = (await selectCommits(log.sql, log.loadedSeq)).map(({ entry }) => entry)
        return { entries, exists: true, complete: 0, size: 0 }
      },
      async cutTo() {},
      async reset() {},
    }
  }

  /** The events table as the store's event log: read in pages; appended through `commit`. */
  eventLog(): EventLog {
    const log = this
    return {
      name: `${this.name}: flagstore_events`,
      path: null,
      size: 0,
      async append() {
        throw new Error('events are written through SharedLog.commit')
      },
      async cutTo() {},
      async findEnd(lastId: number) {
        return { end: lastId, size: lastId }
      },
      async read(lastId: number, onEvent: (event: EventRecord) => void) {
        await log.readLines(0, lastId, line => onEvent(JSON.parse(line)))
      },
      async readLines(lastId: number, onLine: (line: string) => void, after = 0) {
        await log.readLines(after, lastId, onLine)
      },
      async isEmpty() {
        const rows = await log.sql`SELECT 1 FROM flagstore_events LIMIT 1`
        return rows.length === 0
      },
    }
  }

  /** Calls `onLine` with the JSON line of each event after `from` up to `to`, oldest first, checking the ids run on. */
  readLines(from: number, to: number, onLine: (line: string, id: number) => void): Promise<void> {
    return selectEventLines(this.sql, this.name, from, to, onLine, this.timeoutMs)
  }

  /**
   * Reads the log's identity, made by the first instance to start (not a migration: instances of an
   * older version keep starting on the database). A backup does not carry it, so a database restored
   * from one is a new log to every cache; a copy of the database made otherwise keeps it, and the
   * caches' check of their last event against the database's tells the copies apart as they diverge.
   */
  async readIdentity(): Promise<string> {
    await this
      .sql`INSERT INTO flagstore_meta (key, value) VALUES ('log_id', ${crypto.randomUUID()}) ON CONFLICT (key) DO NOTHING`
    const [{ value }] = await this.sql`SELECT value FROM flagstore_meta WHERE key = 'log_id'`
    this.identity = value as string
    return this.identity
  }

  /** The secret key that token secrets are hashed with, made by the first instance to start. */
  async secretKey(make: () => Buffer): Promise<Buffer> {
    await this
      .sql`INSERT INTO flagstore_meta (key, value) VALUES ('secret_key', ${make().toString('hex')}) ON CONFLICT (key) DO NOTHING`
    const [{ value }] = await this.sql`SELECT value FROM flagstore_meta WHERE key = 'secret_key'`
    return Buffer.from(value as string, 'hex')
  }
}

/**
 * Whether PostgreSQL answered that the transaction failed (an SQLSTATE), so that it did not commit:
 * not a connection failure or a server going down (classes 08 and 57P0x), which can cut off the
 * answer to a COMMIT that took effect.
 */
function refusedByServer(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno
  return typeof errno === 'string' && /^[0-9A-Z]{5}$/.test(errno) && !/^08|^57P0/.test(errno)
}

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
