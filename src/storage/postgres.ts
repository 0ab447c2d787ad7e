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
import type { DatabaseConfig } from '../config'
import { describeDatabaseError, lockName, migrate, timeoutOf, where, within } from './postgres-connect'
import type { FailureTable } from './failure-table'
import {
  CommitInDoubt,
  type Commit,
  type Filling,
  type Loaded,
  type LogPosition,
  type Snapshot,
  type StoreLog,
} from './log'
import { PostgresFailureTable } from './postgres-failures'
import { selectCommits, selectEventLines } from './postgres-read'
import type { StateDoc } from './records'
import { newKey } from './secret-key'

/**
 * How often a store on a shared database looks for commits of other instances without being told
 * (a NOTIFY lost with a dropped connection): the longest another instance's write can go unseen.
 */
export const CATCH_UP_MS = 500

/** Commits are pruned only once this old and covered by the checkpoint before the latest. */
const PRUNE_AFTER = '10 minutes'

export class PostgresLog implements StoreLog {
  readonly name: string
  readonly checkpointName: string
  readonly journalName: string
  readonly checkpointOnClose = false
  readonly eventsPath = null
  identity = ''
  secretKey: Buffer = Buffer.alloc(0)
  readonly failures: FailureTable
  private readonly channel: string
  private unlisten: (() => Promise<void>) | null = null
  private catchUpTimer: ReturnType<typeof setInterval> | null = null
  private closed = false
  readonly timeoutMs: number
  /** The commit the checkpoint read at open includes: the commits read next start after it. */
  private loadedSeq = 0
  /** Bytes of the commits applied since the last checkpoint, and the commit that was at. */
  journalBytes = 0
  private since = 0

  /** `empty` is the state of a new store: its first checkpoint (see `load`). */
  constructor(
    private readonly sql: SQL,
    private readonly config: DatabaseConfig,
    private readonly empty: () => StateDoc = () => {
      throw new Error('no empty state given')
    },
  ) {
    this.name = `PostgreSQL ${where(config)} schema ${config.schema}`
    this.checkpointName = `${this.name}: flagstore_checkpoints`
    this.journalName = `${this.name}: flagstore_commits`
    this.timeoutMs = timeoutOf(config)
    // A channel is an identifier of at most 63 bytes: the schema's hash keeps it short and unquoted.
    this.channel = `flagstore_${Bun.hash(lockName(config.schema, 'commits')).toString(36)}`
    this.failures = new PostgresFailureTable(sql, config.schema, error => this.describe(error))
  }

  /**
   * The log's identity and secret key (made by the first instance to start), then the latest
   * checkpoint and the commits after it. A new database gets its first checkpoint (commit 0, the
   * empty state with the collections' built-in records) from whichever instance comes first, and
   * every instance loads that one, so that the built-ins are the same everywhere (they carry the
   * time they were made).
   */
  async load(): Promise<Loaded> {
    await this.readIdentity()
    await this.readSecretKey()
    const latest = async () =>
      (await this.sql`SELECT seq, state FROM flagstore_checkpoints ORDER BY seq DESC LIMIT 1`) as {
        seq: string
        state: string
      }[]
    let rows = await latest()
    if (rows.length === 0) {
      await this
        .sql`INSERT INTO flagstore_checkpoints (seq, state) VALUES (0, ${JSON.stringify(this.empty())}) ON CONFLICT (seq) DO NOTHING`
      rows = await latest()
    }
    this.loadedSeq = Number(rows[0].seq)
    const commits = (await selectCommits(this.sql, this.loadedSeq)).map(({ entry }) => entry)
    this.since = this.loadedSeq
    this.journalBytes = commits.reduce((sum, entry) => sum + JSON.stringify(entry.changes).length, 0)
    return { checkpoint: JSON.parse(rows[0].state) as StateDoc, commits }
  }

  /** The tables need no repair after a crash (a transaction is whole or absent): only that the database answers. */
  async recover(): Promise<void> {
    await this.probe()
  }

  async commit(after: LogPosition, body: (others: Commit[]) => Commit | null): Promise<void> {
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
      const others = await this.readWith(tx, after)
      wanted()
      this.counted(others)
      const commit = body(others)
      if (commit === null) return null
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
      return commit
    })
    let written: Commit | null = null
    try {
      written = await within(transaction, this.timeoutMs, 'commit')
    } catch (error) {
      if (stage === 'sent' && !refusedByServer(error)) throw new CommitInDoubt(error)
      stage = 'abandoned'
      throw error
    }
    if (written) this.journalBytes += written.changesText.length
  }

  async read(after: LogPosition): Promise<Commit[]> {
    return this.counted(await within(this.readWith(this.sql, after), this.timeoutMs, 'reading new commits'))
  }

  /** Other instances' commits count towards the next checkpoint as this one's do. */
  private counted(commits: Commit[]): Commit[] {
    for (const commit of commits) this.journalBytes += commit.changesText.length
    return commits
  }

  private async readWith(sql: SQL, after: LogPosition): Promise<Commit[]> {
    const commits: Commit[] = (await selectCommits(sql, after.seq)).map(commit => ({ ...commit, lines: [] }))
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

  /** Hears each commit's NOTIFY, and looks every CATCH_UP_MS whatever happens. */
  async listen(listener: (seq: number | null) => void): Promise<void> {
    const subscription = await this.sql.listen(this.channel, payload => {
      const seq = Number(payload)
      if (Number.isInteger(seq)) listener(seq)
    })
    this.unlisten = () => subscription.unlisten()
    this.catchUpTimer = setInterval(() => listener(null), CATCH_UP_MS)
    this.catchUpTimer.unref?.()
  }

  /**
   * Writes a checkpoint of the state at its commit unless another instance holds the checkpoint
   * lock or wrote one since this one's last; prunes commits no instance can still need.
   */
  async checkpoint(state: StateDoc): Promise<boolean> {
    const seq = state.commitSeq
    const since = this.since
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
      await tx`INSERT INTO flagstore_checkpoints (seq, state) VALUES (${seq}, ${JSON.stringify(state)}) ON CONFLICT (seq) DO NOTHING`
      // The checkpoint before this one stays, with the commits after it, for instances that are behind.
      const [{ previous }] =
        await tx`SELECT coalesce(max(seq), 0) AS previous FROM flagstore_checkpoints WHERE seq < ${seq}`
      await tx`DELETE FROM flagstore_checkpoints WHERE seq < ${previous}`
      await tx`DELETE FROM flagstore_commits WHERE seq <= ${previous} AND committed_at < now() - ${PRUNE_AFTER}::interval`
      return true
    })
    let wrote: boolean
    try {
      wrote = await within(writing, this.timeoutMs, 'checkpoint')
    } catch (error) {
      abandoned = true
      throw error
    }
    this.journalBytes = 0
    this.since = seq
    return wrote
  }

  async probe(): Promise<void> {
    await within(this.sql`SELECT 1`.execute(), this.timeoutMs, 'probe')
  }

  describe(error: unknown): string {
    return describeDatabaseError(error, this.config)
  }

  /** One read-only repeatable-read transaction, which instances writing meanwhile do not disturb. */
  snapshot<T>(use: (snapshot: Snapshot) => Promise<T>): Promise<T> {
    const { config } = this
    return this.sql.begin('isolation level repeatable read read only', async tx => {
      const [{ found }] =
        await tx`SELECT to_regclass(${`"${config.schema}".flagstore_checkpoints`}) IS NOT NULL AS found`
      const checkpoints = found ? await tx`SELECT seq, state FROM flagstore_checkpoints ORDER BY seq DESC LIMIT 1` : []
      if (checkpoints.length === 0)
        throw new Error(`${config.settingOf.database}: ${config.database} (schema ${config.schema}) holds no store`)
      const commits = (await selectCommits(tx, Number(checkpoints[0].seq))).map(({ entry }) => entry)
      const key = (await tx`SELECT value FROM flagstore_meta WHERE key = 'secret_key'`)[0]?.value as string | undefined
      return use({
        checkpoint: JSON.parse(checkpoints[0].state) as StateDoc,
        commits,
        secretKey: key === undefined ? null : Buffer.from(key, 'hex'),
        events: (lastId, onLine) => selectEventLines(tx, config.database, 0, lastId, onLine),
      })
    })
  }

  /**
   * One transaction under the commit lock (instances starting meanwhile wait for their first
   * commit), on an empty database: a store already there is refused, and a restore cut short
   * leaves it empty. Given a connection whose statements are not bounded (a restore's own).
   */
  async fill<T>(use: (filling: Filling) => Promise<T>): Promise<T> {
    const { config } = this
    await migrate(this.sql, config)
    return this.sql.begin(async tx => {
      await tx`SELECT pg_advisory_xact_lock(hashtext(${lockName(config.schema, 'commit')}))`
      const [{ used }] =
        await tx`SELECT EXISTS (SELECT 1 FROM flagstore_commits) OR EXISTS (SELECT 1 FROM flagstore_events) OR EXISTS (SELECT 1 FROM flagstore_checkpoints WHERE seq > 0) AS used`
      if (used)
        throw new Error(
          `${config.database} (schema ${config.schema}) already holds a store; restore into an empty database`,
        )
      await tx`DELETE FROM flagstore_checkpoints`
      return use({
        events: async (lines, first) => {
          const ids = lines.map((_, i) => first + i)
          await tx`INSERT INTO flagstore_events (id, line) SELECT * FROM unnest(${tx.array(ids, 'BIGINT')}, ${tx.array(lines, 'TEXT')})`
        },
        checkpoint: async (state, secretKey) => {
          await tx`INSERT INTO flagstore_checkpoints (seq, state) VALUES (${state.commitSeq ?? 0}, ${JSON.stringify(state)})`
          if (secretKey !== null)
            await tx`INSERT INTO flagstore_meta (key, value) VALUES ('secret_key', ${secretKey.toString('hex')}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`
        },
      })
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.catchUpTimer) clearInterval(this.catchUpTimer)
    await this.unlisten?.().catch(() => {})
    await this.sql.close({ timeout: 5 }).catch(() => {})
  }

  async readEvents(after: number, lastId: number, onLine: (line: string) => void): Promise<void> {
    await selectEventLines(this.sql, this.name, after, lastId, onLine, this.timeoutMs)
  }

  /**
   * Reads the log's identity, made by the first instance to start (not a migration: instances of an
   * older version keep starting on the database). A backup does not carry it, so a database restored
   * from one is a new log to every cache; a copy of the database made otherwise keeps it, and the
   * caches' check of their last event against the database's tells the copies apart as they diverge.
   */
  private async readIdentity(): Promise<string> {
    await this
      .sql`INSERT INTO flagstore_meta (key, value) VALUES ('log_id', ${crypto.randomUUID()}) ON CONFLICT (key) DO NOTHING`
    const [{ value }] = await this.sql`SELECT value FROM flagstore_meta WHERE key = 'log_id'`
    this.identity = value as string
    return this.identity
  }

  /** The secret key that token secrets are hashed with, made by the first instance to start. */
  private async readSecretKey(): Promise<void> {
    await this
      .sql`INSERT INTO flagstore_meta (key, value) VALUES ('secret_key', ${newKey().toString('hex')}) ON CONFLICT (key) DO NOTHING`
    const [{ value }] = await this.sql`SELECT value FROM flagstore_meta WHERE key = 'secret_key'`
    this.secretKey = Buffer.from(value as string, 'hex')
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
