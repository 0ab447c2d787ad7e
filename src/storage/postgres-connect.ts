/**
 * Reaching the PostgreSQL that DATABASE_URL (or DATABASE_HOST…) names, at start: connecting with
 * retries while it cannot be reached, saying any other failure in one line that names the
 * setting, and bringing the schema to this version by numbered migrations under an advisory lock.
 */
import { SQL } from 'bun'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { DATABASE_TIMEOUT_MS, type DatabaseConfig } from '../config'
import { StoreUnanswered } from '../errors'
import { logAlways } from '../log'

/** What this version of the schema is; a database at a later one was written by a newer flagstore. */
export const SCHEMA_VERSION = 2

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
  // The sign-in throttle's counts, shared by the instances (postgres-failures.ts).
  [
    `CREATE TABLE flagstore_login_failures (key text PRIMARY KEY, capped boolean NOT NULL, failures integer NOT NULL, pending integer NOT NULL, blocked_until bigint NOT NULL, last_seen bigint NOT NULL)`,
  ],
]

const TABLES = [
  'flagstore_schema',
  'flagstore_meta',
  'flagstore_commits',
  'flagstore_events',
  'flagstore_checkpoints',
  'flagstore_login_failures',
]

/** Seconds a connection attempt may take; past it the database counts as unreachable. */
const CONNECT_TIMEOUT_S = 5
/** The first wait between connection attempts at start, doubling up to the cap. */
const RETRY_MIN_MS = 500
const RETRY_MAX_MS = 10_000

/**
 * A start on PostgreSQL that cannot go on, said in one line naming the setting and the problem;
 * server.ts prints it and exits 1, having written nothing.
 */
export class DatabaseStartError extends Error {
  override name = 'DatabaseStartError'
}

/** How long one call may wait for PostgreSQL (`DATABASE_TIMEOUT_MS`). */
export const timeoutOf = (config: DatabaseConfig) => config.timeoutMs ?? DATABASE_TIMEOUT_MS

/**
 * `promise`, or a StoreUnanswered (errors.ts) once `ms` have passed without it settling: a server
 * that is stopped, swapping or cut off answers nothing at all, so the statement timeout alone
 * cannot bound a call. The call itself is not stopped (the driver cannot take back what it sent):
 * callers make sure that a late answer changes nothing (see PostgresLog.commit).
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  // Whatever the abandoned call ends with later is nobody's business.
  promise.catch(() => {})
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnanswered(`${what}: no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
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
    errno === '57P01' ||
    errno === '57P02' ||
    errno === '57P03' ||
    errno === '53300'
  )
}

/** Where the database is, without the password: "postgres@db:5432/flags". */
export function where(config: DatabaseConfig): string {
  return `${config.username}@${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}/${config.database}`
}

/** A PostgreSQL error in words, naming the setting it is about. */
export function describeDatabaseError(error: unknown, config: DatabaseConfig): string {
  const e = (error ?? {}) as PgErrorLike
  const code = e.code ?? ''
  const errno = e.errno ?? ''
  const message = (e.message ?? String(error)).split('\n')[0]
  const s = config.settingOf
  if (errno === '28P01')
    return `${s.password}: PostgreSQL refused the password of user "${config.username}" (${message})`
  if (errno === '28000') {
    if (/role .* does not exist/.test(message))
      return `${s.username}: PostgreSQL has no user "${config.username}" (${message})`
    return `${s.username}: PostgreSQL does not let user "${config.username}" connect to ${config.database} from here (${message})`
  }
  if (errno === '3D000')
    return `${s.database}: PostgreSQL at ${config.host}:${config.port} has no database "${config.database}"; create it first (CREATE DATABASE ${config.database})`
  if (errno === '42501')
    return `${s.username}: user "${config.username}" lacks a permission the store needs in ${config.database}, schema ${config.schema} (${message})`
  if (errno === '3F000') return `${s.schema}: ${message}`
  if (/ENOTFOUND|EAI_|DNS|getaddrinfo/i.test(code + message))
    return `${s.host}: the host "${config.host}" cannot be resolved (${message})`
  if (/TLS|SSL/i.test(code + message))
    return `${s.ssl}: the TLS connection to ${config.host}:${config.port} failed (${message})`
  if (error instanceof StoreUnanswered)
    return `${s.host}: PostgreSQL at ${config.host}:${config.port} did not answer (${message}); DATABASE_TIMEOUT_MS bounds the wait`
  if (isUnreachable(error))
    return `${s.host}: PostgreSQL at ${config.host}:${config.port} cannot be reached (${message}${code ? `, ${code}` : ''})`
  return `${s.host}: PostgreSQL at ${where(config)} failed: ${message}${errno ? ` (${errno})` : code ? ` (${code})` : ''}`
}

/**
 * A pool of connections on the configured database, with the schema as search path. The service's
 * connections bound each statement and lock wait on the server by the configured timeout; a tool
 * that moves a whole store in one transaction (backup, restore) asks for `long` ones instead.
 */
export function connect(
  config: DatabaseConfig,
  options: { max?: number; idleTimeout?: number; long?: boolean } = {},
): SQL {
  const bound = options.long ? 30_000 : timeoutOf(config)
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
      statement_timeout: options.long ? '0' : `${bound}ms`,
      lock_timeout: `${bound}ms`,
      // A stuck instance (stopped mid-commit) must not hold the commit lock for long: its
      // transaction is ended past twice the bound (its own client gave it up after one).
      idle_in_transaction_session_timeout: `${2 * bound}ms`,
    },
  })
}

/** A name for advisory locks and NOTIFY channels of this schema (several stores may share a database). */
export function lockName(schema: string, purpose: string): string {
  return `flagstore:${schema}:${purpose}`
}

/**
 * Connects, retrying with backoff (one log line per attempt) while the server cannot be reached;
 * any other failure (a wrong password, no such database) throws a DatabaseStartError at once.
 */
export async function connectAtStart(
  config: DatabaseConfig,
  options: {
    attempts?: number
    max?: number
    idleTimeout?: number
    long?: boolean
  } = {},
): Promise<SQL> {
  let delay = RETRY_MIN_MS
  for (let attempt = 1; ; attempt++) {
    // Bun's driver says "connection refused" for a name that does not resolve: a host that does
    // not exist is a mistake to say at once, not a server to wait for.
    if (isIP(config.host) === 0 && !config.host.startsWith('/')) {
      const unknown = await lookup(config.host).then(
        () => null,
        (error: NodeJS.ErrnoException) => (error.code === 'ENOTFOUND' ? error : null),
      )
      if (unknown)
        throw new DatabaseStartError(
          `${config.settingOf.host}: the host "${config.host}" cannot be resolved (${unknown.code})`,
        )
    }
    const sql = connect(config, options)
    try {
      await sql`SELECT 1`
      return sql
    } catch (error) {
      await sql.close().catch(() => {})
      if (!isUnreachable(error) || attempt === options.attempts)
        throw new DatabaseStartError(describeDatabaseError(error, config))
      logAlways('warn', 'PostgreSQL cannot be reached; trying again', {
        attempt,
        retryInMs: delay,
        problem: describeDatabaseError(error, config),
      })
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
      const [{ exists }] =
        await reserved`SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${config.schema}) AS exists`
      if (!exists) await reserved.unsafe(`CREATE SCHEMA "${config.schema}"`).catch(fail)
      const [{ found }] =
        await reserved`SELECT to_regclass(${`"${config.schema}".flagstore_schema`}) IS NOT NULL AS found`
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
          .begin(async tx => {
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
