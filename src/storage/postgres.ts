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
import { SQL } from 'bun'
import type { Adapter } from 'lowdb'
import type { DatabaseConfig } from '../config'
import type { EventLog } from './event-log'
import type { JournalContents, JournalEntry, StateJournal } from './state-journal'
import type { EventRecord, StateDoc } from './records'

/** What this version of the schema is; a database at a later one was written by a newer flagstore. */
export const SCHEMA_VERSION = 1

/** Migration n (1-based) brings the schema from version n - 1 to n; each runs in one transaction. */
const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE flagstore_schema (version integer NOT NULL)`,
    `CREATE TABLE flagstore_meta (key text PRIMARY KEY, value text NOT NULL)`,
    `CREATE TABLE flagstore_commits (seq bigint PRIMARY KEY, last_event_id bigint NOT NULL, next_user_id bigint NOT NULL, changes text NOT NULL, committed_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE flagstore_events (id bigint PRIMARY KEY, line text NOT NULL)`,
    `CREATE TABLE flagstore_checkpoints (seq bigint PRIMARY KEY, state text NOT NULL, written_at timestamptz NOT NULL DEFAULT now())`,
    `INSERT INTO flagstore_schema (version) VALUES (0)`,
  ],
]

const TABLES = ['flagstore_schema', 'flagstore_meta', 'flagstore_commits', 'flagstore_events', 'flagstore_checkpoints']

/** Seconds a connection attempt may take; past it the database counts as unreachable. */
const CONNECT_TIMEOUT_S = 5
/** The first wait between connection attempts at start, doubling up to the cap. */
const RETRY_MIN_MS = 500
const RETRY_MAX_MS = 10_000
/** Events read per query when the log is read whole (the event search at start, a backup). */
const EVENT_PAGE = 5000

/**
 * A start on PostgreSQL that cannot go on, said in one line naming the setting and the problem;
 * main.ts prints it and exits 1, having written nothing.
 */
export class DatabaseStartError extends Error {
  override name = 'DatabaseStartError'
}

interface PgErrorLike {
  code?: string
  errno?: string
  message?: string
}

/** Whether the error says the server could not be reached (worth trying again), not that it refused us. */
export function isUnreachable(error: unknown): boolean {
  const code = (error as PgErrorLike | null)?.code ?? ''
  const errno = (error as PgErrorLike | null)?.errno ?? ''
  return (
    /CONNECTION_(REFUSED|TIMEOUT|CLOSED)|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE/.test(code) ||
    // The server is shutting down or starting up, or has too many clients.
    errno === '57P01' || errno === '57P02' || errno === '57P03' || errno === '53300'
  )
}

/** Where the database is, without the password: "postgres@db:5432/flags". */
function where(config: DatabaseConfig): string {
  return `${config.username}@${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}/${config.database}`
}

/** A PostgreSQL error in words, naming the setting it is about. */
export function describeDatabaseError(error: unknown, config: DatabaseConfig): string {
  const e = (error ?? {}) as PgErrorLike
  const code = e.code ?? ''
  const errno = e.errno ?? ''
  const message = (e.message ?? String(error)).split('\n')[0]
  const s = config.settingOf
  if (errno === '28P01') return `${s.password}: PostgreSQL refused the password of user "${config.username}" (${message})`
  if (errno === '28000') {
    if (/role .* does not exist/.test(message)) return `${s.username}: PostgreSQL has no user "${config.username}" (${message})`
    return `${s.username}: PostgreSQL does not let user "${config.username}" connect to ${config.database} from here (${message})`
  }
  if (errno === '3D000') return `${s.database}: PostgreSQL at ${config.host}:${config.port} has no database "${config.database}"; create it first (CREATE DATABASE ${config.database})`
  if (errno === '42501') return `${s.username}: user "${config.username}" lacks a permission the store needs in ${config.database}, schema ${config.schema} (${message})`
  if (errno === '3F000') return `${s.schema}: ${message}`
  if (/ENOTFOUND|EAI_|DNS|getaddrinfo/i.test(code + message)) return `${s.host}: the host "${config.host}" cannot be resolved (${message})`
  if (/TLS|SSL/i.test(code + message)) return `${s.ssl}: the TLS connection to ${config.host}:${config.port} failed (${message})`
  if (isUnreachable(error)) return `${s.host}: PostgreSQL at ${config.host}:${config.port} cannot be reached (${message}${code ? `, ${code}` : ''})`
  return `${s.host}: PostgreSQL at ${where(config)} failed: ${message}${errno ? ` (${errno})` : code ? ` (${code})` : ''}`
}

/** A pool of connections on the configured database, with the schema as search path. */
export function connect(config: DatabaseConfig, options: { max?: number; idleTimeout?: number } = {}): SQL {
  return new SQL({
    adapter: 'postgres',
    hostname: config.host,
    port: config.port,
    username: config.username,
    password: config.password,
    database: config.database,
    tls: config.ssl === false ? false : config.ssl,
    max: options.max ?? 8,
    idleTimeout: options.idleTimeout ?? 60,
    connectionTimeout: CONNECT_TIMEOUT_S,
    connection: {
      search_path: config.schema,
      application_name: 'flagstore',
      // A stuck instance (stopped mid-commit) must not hold the commit lock for ever.
      idle_in_transaction_session_timeout: '30s',
      lock_timeout: '30s',
    },
  })
}

/** A name for advisory locks and NOTIFY channels of this schema (several stores may share a database). */
function lockName(schema: string, purpose: string): string {
  return `flagstore:${schema}:${purpose}`
}

/**
 * Connects, retrying with backoff (one log line per attempt) while the server cannot be reached;
 * any other failure (a wrong password, no such database) throws a DatabaseStartError at once.
 */
export async function connectAtStart(config: DatabaseConfig, options: { log?: (line: Record<string, unknown>) => void; attempts?: number; max?: number; idleTimeout?: number } = {}): Promise<SQL> {
  const log = options.log ?? ((line) => console.error(JSON.stringify({ time: new Date().toISOString(), ...line })))
  let delay = RETRY_MIN_MS
  for (let attempt = 1; ; attempt++) {
    const sql = connect(config, options)
    try {
      await sql`SELECT 1`
      return sql
    } catch (error) {
      await sql.close().catch(() => {})
      if (!isUnreachable(error) || attempt === options.attempts) throw new DatabaseStartError(describeDatabaseError(error, config))
      log({ level: 'warn', msg: 'PostgreSQL cannot be reached; trying again', attempt, retryInMs: delay, problem: describeDatabaseError(error, config) })
      await Bun.sleep(delay)
      delay = Math.min(delay * 2, RETRY_MAX_MS)
    }
  }
}

/**
 * Brings the schema to SCHEMA_VERSION under an advisory lock (instances starting at once migrate
 * once), then checks that the tables can be read and written. Refuses a newer schema.
 */
export async function migrate(sql: SQL, config: DatabaseConfig): Promise<void> {
  const reserved = await sql.reserve()
  const fail = (error: unknown): never => {
    if (error instanceof DatabaseStartError) throw error
    throw new DatabaseStartError(describeDatabaseError(error, config))
  }
  try {
    await reserved`SELECT pg_advisory_lock(hashtext(${lockName(config.schema, 'migrate')}))`.catch(fail)
    try {
      const [{ exists }] = await reserved`SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${config.schema}) AS exists`
      if (!exists) await reserved.unsafe(`CREATE SCHEMA "${config.schema}"`).catch(fail)
      const [{ found }] = await reserved`SELECT to_regclass(${`"${config.schema}".flagstore_schema`}) IS NOT NULL AS found`
      let version = 0
      if (found) {
        const rows = await reserved.unsafe(`SELECT version FROM "${config.schema}".flagstore_schema`).catch(fail)
        version = Number(rows[0]?.version ?? 0)
      }
      if (version > SCHEMA_VERSION) {
        throw new DatabaseStartError(
          `${config.settingOf.database}: schema ${config.schema} of ${config.database} was written by a newer flagstore (schema version ${version}; this version knows up to ${SCHEMA_VERSION}); run that version or a later one`,
        )
      }
      for (let next = version + 1; next <= SCHEMA_VERSION; next++) {
        await reserved
          .begin(async (tx) => {
            for (const statement of MIGRATIONS[next - 1]) await tx.unsafe(statement)
            await tx.unsafe(`UPDATE flagstore_schema SET version = ${next}`)
          })
          .catch(fail)
      }
      const missing = await reserved`
        SELECT t FROM unnest(${sql.array(TABLES, 'TEXT')}) AS t
        WHERE NOT has_table_privilege(${config.schema} || '.' || t, 'SELECT, INSERT, DELETE')`.catch(fail)
      if (missing.length > 0) {
        throw new DatabaseStartError(
          `${config.settingOf.username}: user "${config.username}" may not read, insert and delete in ${missing.map((row: { t: string }) => row.t).join(', ')} (schema ${config.schema}); grant it SELECT, INSERT, DELETE`,
        )
      }
    } finally {
      await reserved`SELECT pg_advisory_unlock(hashtext(${lockName(config.schema, 'migrate')}))`.catch(() => {})
    }
  } finally {
    await reserved.release()
  }
}

/** A commit made by any instance, as read back: its journal entry and its events' JSON lines. */
export interface SharedCommit {
  entry: JournalEntry
  lines: string[]
  /** The length of the entry's changes as JSON: what it adds towards the next checkpoint. */
  bytes: number
}

/** What the store needs of a database shared with other instances (store.ts). */
export interface SharedLog {
  readonly name: string
  /**
   * One transaction holding the cluster-wide commit lock: `body` gets the commits made after
   * `after` (by other instances) and returns the commit to write, or null to write nothing. It
   * resolves once the commit is durable, and rejects (having written nothing) otherwise.
   */
  commit(after: { seq: number; lastEventId: number }, body: (remote: SharedCommit[]) => SharedCommit | null): Promise<void>
  /** The commits made after `after`, oldest first, read without the lock (catching up). */
  read(after: { seq: number; lastEventId: number }): Promise<SharedCommit[]>
  /** `listener` hears the commit number of each commit any instance makes (NOTIFY), best effort. */
  listen(listener: (seq: number) => void): Promise<void>
  /**
   * Writes a checkpoint of the state at commit `seq` unless another instance holds the checkpoint
   * lock or wrote one after `since`; prunes commits no instance can still need. Resolves to
   * whether it wrote one.
   */
  checkpoint(seq: number, since: number, state: () => string): Promise<boolean>
  /** Throws when the database cannot be used now. */
  probe(): Promise<void>
  /** A failure of this database in words, for `/ready`, the 503 and the log. */
  describe(error: unknown): string
  close(): Promise<void>
}

/** Commits are pruned only once this old and covered by the checkpoint before the latest. */
const PRUNE_AFTER = '10 minutes'

export class PostgresLog implements SharedLog {
  readonly name: string
  private readonly channel: string
  private unlisten: (() => Promise<void>) | null = null
  private closed = false

  constructor(
    private readonly sql: SQL,
    private readonly config: DatabaseConfig,
  ) {
    this.name = `PostgreSQL ${where(config)} schema ${config.schema}`
    // A channel is an identifier of at most 63 bytes: the schema's hash keeps it short and unquoted.
    this.channel = `flagstore_${Bun.hash(lockName(config.schema, 'commits')).toString(36)}`
  }

  async commit(after: { seq: number; lastEventId: number }, body: (remote: SharedCommit[]) => SharedCommit | null): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext(${lockName(this.config.schema, 'commit')}))`
      const remote = await this.readWith(tx, after)
      const commit = body(remote)
      if (commit === null) return
      const { entry, lines } = commit
      await tx`INSERT INTO flagstore_commits (seq, last_event_id, next_user_id, changes) VALUES (${entry.seq}, ${entry.lastEventId}, ${entry.nextUserId}, ${JSON.stringify(entry.changes)})`
      if (lines.length > 0) {
        const first = entry.lastEventId - lines.length + 1
        const ids = lines.map((_, i) => first + i)
        await tx`INSERT INTO flagstore_events (id, line) SELECT * FROM unnest(${tx.array(ids, 'BIGINT')}, ${tx.array(lines as string[], 'TEXT')})`
      }
      // Delivered on COMMIT, and only then.
      await tx`SELECT pg_notify(${this.channel}, ${String(entry.seq)})`
    })
  }

  read(after: { seq: number; lastEventId: number }): Promise<SharedCommit[]> {
    return this.readWith(this.sql, after)
  }

  private async readWith(sql: SQL, after: { seq: number; lastEventId: number }): Promise<SharedCommit[]> {
    const rows: { seq: string; last_event_id: string; next_user_id: string; changes: string }[] =
      await sql`SELECT seq, last_event_id, next_user_id, changes FROM flagstore_commits WHERE seq > ${after.seq} ORDER BY seq`
    if (rows.length === 0) return []
    const commits: SharedCommit[] = rows.map((row) => ({
      entry: { seq: Number(row.seq), lastEventId: Number(row.last_event_id), nextUserId: Number(row.next_user_id), changes: JSON.parse(row.changes) },
      lines: [],
      bytes: row.changes.length,
    }))
    const last = commits.at(-1)!.entry.lastEventId
    if (last > after.lastEventId) {
      const events: { id: string; line: string }[] = await sql`SELECT id, line FROM flagstore_events WHERE id > ${after.lastEventId} AND id <= ${last} ORDER BY id`
      let at = 0
      for (const commit of commits) {
        while (at < events.length && Number(events[at].id) <= commit.entry.lastEventId) commit.lines.push(events[at++].line)
      }
    }
    return commits
  }

  async listen(listener: (seq: number) => void): Promise<void> {
    const subscription = await this.sql.listen(this.channel, (payload) => {
      const seq = Number(payload)
      if (Number.isInteger(seq)) listener(seq)
    })
    this.unlisten = () => subscription.unlisten()
  }

  async checkpoint(seq: number, since: number, state: () => string): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const [{ locked }] = await tx`SELECT pg_try_advisory_xact_lock(hashtext(${lockName(this.config.schema, 'checkpoint')})) AS locked`
      if (!locked) return false
      const [{ latest }] = await tx`SELECT coalesce(max(seq), 0) AS latest FROM flagstore_checkpoints`
      if (Number(latest) > since) return false
      await tx`INSERT INTO flagstore_checkpoints (seq, state) VALUES (${seq}, ${state()}) ON CONFLICT (seq) DO NOTHING`
      // The checkpoint before this one stays, with the commits after it, for instances that are behind.
      const [{ previous }] = await tx`SELECT coalesce(max(seq), 0) AS previous FROM flagstore_checkpoints WHERE seq < ${seq}`
      await tx`DELETE FROM flagstore_checkpoints WHERE seq < ${previous}`
      await tx`DELETE FROM flagstore_commits WHERE seq <= ${previous} AND committed_at < now() - ${PRUNE_AFTER}::interval`
      return true
    })
  }

  async probe(): Promise<void> {
    await this.sql`SELECT 1`
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
   * The checkpoint as the store opens it: the latest one, or on a new database the empty state (a
   * new database needs no checkpoint row, so instances starting together on it need not race to
   * write one). The journal then holds the commits after it.
   */
  checkpointAdapter(empty: () => StateDoc): Adapter<StateDoc> {
    return {
      read: async () => {
        const rows: { seq: string; state: string }[] = await this.sql`SELECT seq, state FROM flagstore_checkpoints ORDER BY seq DESC LIMIT 1`
        this.loadedSeq = rows.length === 0 ? 0 : Number(rows[0].seq)
        return rows.length === 0 ? empty() : (JSON.parse(rows[0].state) as StateDoc)
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
        const rows: { seq: string; last_event_id: string; next_user_id: string; changes: string }[] =
          await log.sql`SELECT seq, last_event_id, next_user_id, changes FROM flagstore_commits WHERE seq > ${log.loadedSeq} ORDER BY seq`
        const entries = rows.map((row) => ({ seq: Number(row.seq), lastEventId: Number(row.last_event_id), nextUserId: Number(row.next_user_id), changes: JSON.parse(row.changes) }))
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
        await log.readLines(0, lastId, (line) => onEvent(JSON.parse(line)))
      },
      async isEmpty() {
        const rows = await log.sql`SELECT 1 FROM flagstore_events LIMIT 1`
        return rows.length === 0
      },
    }
  }

  /** Calls `onLine` with the JSON line of each event after `from` up to `to`, oldest first, checking the ids run on. */
  async readLines(from: number, to: number, onLine: (line: string, id: number) => void): Promise<void> {
    let next = from
    while (next < to) {
      const rows: { id: string; line: string }[] = await this.sql`SELECT id, line FROM flagstore_events WHERE id > ${next} AND id <= ${to} ORDER BY id LIMIT ${EVENT_PAGE}`
      if (rows.length === 0) break
      for (const row of rows) {
        const id = Number(row.id)
        if (id !== next + 1) throw new Error(`${this.name}: flagstore_events holds no event ${next + 1}`)
        onLine(row.line, id)
        next = id
      }
    }
    if (next < to) throw new Error(`${this.name}: flagstore_events ends at event ${next}, but the state includes events up to ${to}`)
  }

  /** The secret key that token secrets are hashed with, made by the first instance to start. */
  async secretKey(make: () => Buffer): Promise<Buffer> {
    await this.sql`INSERT INTO flagstore_meta (key, value) VALUES ('secret_key', ${make().toString('hex')}) ON CONFLICT (key) DO NOTHING`
    const [{ value }] = await this.sql`SELECT value FROM flagstore_meta WHERE key = 'secret_key'`
    return Buffer.from(value as string, 'hex')
  }
}
