/** Every setting the service reads, from the environment, validated in one place. */
import { ssoFromEnvironment } from './features/sso/sso.env'
import type { SsoEnvironment } from './features/sso/sso.options'
import { adminTokenPolicy, type AdminTokenPolicy } from './features/change-requests/change-requests.rule'
import { resolve } from 'node:path'
import { LOG_LEVELS, type LogLevel } from './log'
import { passwordProblem } from './features/users/passwords'
import { DEFAULT_BUFFER_CHANGES } from './features/streaming/change-feed'

export interface Config {
  port: number
  host: string
  /** Absolute path of the data directory. */
  dataDir: string
  /** Largest accepted request body in bytes. */
  bodyLimit: number
  /** fsync every commit (default); `SYNC=false` trades durability on power loss for speed. */
  sync: boolean
  /** Admin token secrets that must exist at start (`INIT_ADMIN_API_TOKENS`). */
  initAdminTokens: string[]
  /** `LOG_LEVEL`: debug, info (default), warn, error or silent. Request lines are info. */
  logLevel: LogLevel
  /** `CHECKPOINT_AFTER_BYTES`: journal size that triggers a new checkpoint (8 MiB; tests make it small). */
  checkpointAfterBytes: number
  /** `TRUST_PROXY`: log the client address a reverse proxy sends in X-Forwarded-For, not the proxy's. */
  trustProxy: boolean
  /**
   * `METRICS_TOKEN`: when set, `/internal-backstage/prometheus` answers only requests sending
   * `Authorization: Bearer <it>`; null (unset) leaves it open, as in Unleash.
   */
  metricsToken: string | null
  /** `METRICS_FLUSH_MS`: how often SDK metrics and registrations, held in memory, are committed. */
  metricsFlushMs: number
  /** `FRONTEND_CORS_ORIGINS`: origins browsers may call /api/frontend from (comma-separated), or `*` (default) for any. */
  frontendCorsOrigins: string[]
  /**
   * `BASE_URI_PATH` (Unleash's setting): the path prefix everything is served under behind a reverse
   * proxy, e.g. `/flags`; empty (the default) serves from `/`.
   */
  basePath: string
  /** `UNLEASH_DEFAULT_ADMIN_USERNAME` (Unleash's name): the user made at the first start, `admin` by default. */
  defaultAdminUsername: string
  /** `UNLEASH_DEFAULT_ADMIN_PASSWORD`: that user's password; without it one is generated and printed once. */
  defaultAdminPassword: string | undefined
  /** `SESSION_TTL_HOURS`: how long a console session lasts from sign-in (48). */
  sessionTtlHours: number
  /** `CHANGE_REQUESTS_FOR_ADMIN_TOKENS`: `skip` (admin API tokens change environments under change requests directly, their events saying so) or `enforce`. */
  changeRequestsForAdminTokens: AdminTokenPolicy
  /** `SECURE_COOKIES`: mark the session cookie Secure even when the request did not come over HTTPS (behind a TLS proxy that does not say so). */
  secureCookies: boolean
  /**
   * `UNLEASH_URL` (Unleash's name): the service's public URL, for links in integrations' messages and
   * the single sign-on redirect URI (else the request's origin); null unset.
   */
  publicUrl: string | null
  /** `ADDONS_ALLOW_PRIVATE_TARGETS`: integrations may send to loopback and private addresses (true, for self-hosting). */
  addonsAllowPrivateTargets: boolean
  /** `ADDONS_RETRY_BASE_MS`: an integration's first retry delay (1 s); gaps grow to 3,600 and retries stop after 86,400 of it. */
  addonsRetryBaseMs: number
  /**
   * Single sign-on from the environment (features/sso/sso.env.ts): `OIDC_*` (which then win over the
   * API), `PASSWORD_SIGN_IN=on` (password sign-in stays on, the way back for a locked-out admin),
   * and the public URL above.
   */
  sso: SsoEnvironment
  /** `STREAMING_MAX_STREAMS`: client API streams held at once; more are told to poll (10,000). */
  streamingMaxStreams: number
  /** `STREAMING_MAX_STREAMS_PER_TOKEN`: streams one token holds at once; more are told to poll (1,000). */
  streamingMaxStreamsPerToken: number
  /** `STREAMING_MAX_STREAMS_PER_ADDRESS`: streams of frontend tokens held for one client address; more are told to poll (20). */
  streamingMaxStreamsPerAddress: number
  /** `STREAMING_MAX_UNSENT_BYTES`: bytes a stream may have waiting for a slow client before it is cut off (256 KiB). */
  streamingMaxUnsentBytes: number
  /** `STREAMING_HEARTBEAT_MS`: how often every stream gets a heartbeat comment (15 s; the Node SDK gives up after 60 s of silence). */
  streamingHeartbeatMs: number
  /** `STREAMING_BUFFER_CHANGES`: changed flags and segments kept so that streams and delta polls resume without a hydration (1,000). */
  streamingBufferChanges: number
  /**
   * `DATABASE_URL`, or Unleash's `DATABASE_HOST`, `DATABASE_PORT`, `DATABASE_NAME`,
   * `DATABASE_USERNAME`, `DATABASE_PASSWORD`, `DATABASE_SSL` and `DATABASE_SCHEMA`: the PostgreSQL
   * that holds the store instead of DATA_DIR's files (storage/postgres.ts); null for the files.
   */
  database: DatabaseConfig | null
  /**
   * `SEARCH_CACHE_DIR` (PostgreSQL only): where the instance keeps its local copy of the event log
   * and the search segments over it between starts; null (unset) copies it to a temporary directory each start.
   */
  searchCacheDir: string | null
}

/** Where the store lives in PostgreSQL, and which variables said so (named by start-up failures). */
export interface DatabaseConfig {
  host: string
  port: number
  database: string
  username: string
  password: string
  /** `DATABASE_SSL`: false (the default), true (require TLS), or a libpq mode such as verify-full. */
  ssl: boolean | 'require' | 'verify-ca' | 'verify-full' | 'prefer'
  schema: string
  /**
   * `DATABASE_TIMEOUT_MS`: how long one commit, read or probe may wait for PostgreSQL before the
   * write answers 503 (5000 by default; docs/postgres.md, When PostgreSQL is down).
   */
  timeoutMs?: number
  /** The variable that names each part: DATABASE_URL for all of them, or DATABASE_HOST, DATABASE_NAME… */
  settingOf: Record<'host' | 'port' | 'database' | 'username' | 'password' | 'ssl' | 'schema', string>
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

function integer(
  env: Record<string, string | undefined>,
  key: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[key]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${key} must be a whole number from ${min} to ${max}, got "${raw}"`)
  }
  return value
}

function boolean(env: Record<string, string | undefined>, key: string, fallback: boolean): boolean {
  const raw = env[key]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (['true', '1', 'yes', 'on'].includes(raw)) return true
  if (['false', '0', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(`${key} must be true or false, got "${env[key]}"`)
}

function publicUrl(raw: string | undefined): string | null {
  const value = raw?.trim()
  if (!value) return null
  if (!/^https?:\/\/[^\s]+$/.test(value))
    throw new ConfigError(`UNLEASH_URL must be an http or https URL, got "${raw}"`)
  return value.replace(/\/+$/, '')
}

/** Admin secrets look like Unleash's: `*:*.` followed by at least 16 characters. */
export const ADMIN_SECRET_PATTERN = /^\*:\*\.[A-Za-z0-9_-]{16,128}$/

/** A feature's own reading of its variables (which throws an Error naming the variable) as a ConfigError. */
function featureSetting<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    throw new ConfigError((error as Error).message)
  }
}

export function readConfig(env: Record<string, string | undefined>, cwd = process.cwd()): Config {
  const url = publicUrl(env.UNLEASH_URL)
  const initAdminTokens = (env.INIT_ADMIN_API_TOKENS ?? '')
    .split(',')
    .map(secret => secret.trim())
    .filter(secret => secret !== '')
  for (const secret of initAdminTokens) {
    if (!ADMIN_SECRET_PATTERN.test(secret)) {
      throw new ConfigError(
        'INIT_ADMIN_API_TOKENS holds a secret that is not of the form "*:*.<16 to 128 letters, digits, - or _>"',
      )
    }
  }
  return {
    port: integer(env, 'PORT', 4242, 0, 65535),
    host: env.HOST?.trim() || '0.0.0.0',
    dataDir: resolve(cwd, env.DATA_DIR?.trim() || 'data'),
    bodyLimit: integer(env, 'BODY_LIMIT', 102400, 1, 64 * 1024 * 1024),
    sync: boolean(env, 'SYNC', true),
    initAdminTokens,
    logLevel: logLevel(env.LOG_LEVEL),
    checkpointAfterBytes: integer(env, 'CHECKPOINT_AFTER_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    metricsFlushMs: integer(env, 'METRICS_FLUSH_MS', 10_000, 100, 3_600_000),
    metricsToken: metricsToken(env.METRICS_TOKEN),
    frontendCorsOrigins: corsOrigins(env.FRONTEND_CORS_ORIGINS),
    basePath: basePath(env.BASE_URI_PATH),
    defaultAdminUsername: defaultAdminUsername(env.UNLEASH_DEFAULT_ADMIN_USERNAME),
    defaultAdminPassword: defaultAdminPassword(env.UNLEASH_DEFAULT_ADMIN_PASSWORD),
    sessionTtlHours: integer(env, 'SESSION_TTL_HOURS', 48, 1, 24 * 365),
    secureCookies: boolean(env, 'SECURE_COOKIES', false),
    publicUrl: url,
    addonsAllowPrivateTargets: boolean(env, 'ADDONS_ALLOW_PRIVATE_TARGETS', true),
    addonsRetryBaseMs: integer(env, 'ADDONS_RETRY_BASE_MS', 1000, 1, 3_600_000),
    sso: featureSetting(() => ssoFromEnvironment(env, url)),
    changeRequestsForAdminTokens: featureSetting(() => adminTokenPolicy(env.CHANGE_REQUESTS_FOR_ADMIN_TOKENS)),
    streamingMaxStreams: integer(env, 'STREAMING_MAX_STREAMS', 10_000, 0, 1_000_000),
    streamingMaxStreamsPerToken: integer(env, 'STREAMING_MAX_STREAMS_PER_TOKEN', 1000, 0, 1_000_000),
    streamingMaxStreamsPerAddress: integer(env, 'STREAMING_MAX_STREAMS_PER_ADDRESS', 20, 0, 1_000_000),
    streamingMaxUnsentBytes: integer(env, 'STREAMING_MAX_UNSENT_BYTES', 256 * 1024, 1024, 1 << 30),
    streamingHeartbeatMs: integer(env, 'STREAMING_HEARTBEAT_MS', 15_000, 100, 55_000),
    streamingBufferChanges: integer(env, 'STREAMING_BUFFER_CHANGES', DEFAULT_BUFFER_CHANGES, 0, 10_000_000),
    database: database(env),
    searchCacheDir: env.SEARCH_CACHE_DIR?.trim() ? resolve(cwd, env.SEARCH_CACHE_DIR.trim()) : null,
  }
}

const DATABASE_PARTS = [
  'DATABASE_HOST',
  'DATABASE_PORT',
  'DATABASE_NAME',
  'DATABASE_USERNAME',
  'DATABASE_PASSWORD',
] as const
/** `DATABASE_TIMEOUT_MS` unless set. */
export const DATABASE_TIMEOUT_MS = 5000

/** A PostgreSQL identifier we can put in search_path and in lock and channel names without quoting. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/**
 * PostgreSQL is chosen by `DATABASE_URL` or `DATABASE_HOST` (Unleash's variables, with its
 * defaults for the parts left out); `DATABASE_SSL` and `DATABASE_SCHEMA` go with either.
 */
export function database(env: Record<string, string | undefined>): DatabaseConfig | null {
  const set = (key: string) => (env[key] ?? '').trim() !== ''
  const url = env.DATABASE_URL?.trim() ?? ''
  const schemaRaw = env.DATABASE_SCHEMA?.trim() || 'public'
  if (!SCHEMA_NAME.test(schemaRaw))
    throw new ConfigError(
      `DATABASE_SCHEMA must be a plain name (letters, digits and _, not starting with a digit, at most 63), got "${env.DATABASE_SCHEMA}"`,
    )
  const ssl = databaseSsl(env.DATABASE_SSL)
  // Below the server's 10 s request timeout, so that a write always gets its 503.
  const timeoutMs = integer(env, 'DATABASE_TIMEOUT_MS', DATABASE_TIMEOUT_MS, 100, 8000)
  if (url !== '') {
    const extra = DATABASE_PARTS.filter(set)
    if (extra.length > 0)
      throw new ConfigError(
        `DATABASE_URL and ${extra.join(', ')} are both set; give the connection as DATABASE_URL or as its parts, not both`,
      )
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new ConfigError(
        'DATABASE_URL must be a URL such as postgres://user:password@host:5432/database, got something that is not a URL',
      )
    }
    if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
      throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://, got "${parsed.protocol}//…"`)
    }
    if (parsed.hostname === '')
      throw new ConfigError('DATABASE_URL names no host (postgres://user:password@host:5432/database)')
    const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''))
    if (name === '' || name.includes('/'))
      throw new ConfigError('DATABASE_URL names no database: end it with /<database name>')
    const mode = parsed.searchParams.get('sslmode')
    const all = Object.fromEntries(
      ['host', 'port', 'database', 'username', 'password'].map(part => [part, 'DATABASE_URL']),
    )
    return {
      host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: parsed.port === '' ? 5432 : Number(parsed.port),
      database: name,
      username: decodeURIComponent(parsed.username) || 'postgres',
      password: decodeURIComponent(parsed.password),
      ssl:
        env.DATABASE_SSL !== undefined && env.DATABASE_SSL.trim() !== ''
          ? ssl
          : mode
            ? databaseSsl(mode, 'DATABASE_URL sslmode')
            : false,
      schema: schemaRaw,
      timeoutMs,
      settingOf: {
        ...all,
        ssl: set('DATABASE_SSL') ? 'DATABASE_SSL' : 'DATABASE_URL',
        schema: 'DATABASE_SCHEMA',
      } as DatabaseConfig['settingOf'],
    }
  }
  if (!set('DATABASE_HOST')) {
    const stray = [
      ...DATABASE_PARTS,
      'DATABASE_SSL',
      'DATABASE_SCHEMA',
      'DATABASE_TIMEOUT_MS',
      'SEARCH_CACHE_DIR',
    ].filter(set)
    if (stray.length > 0)
      throw new ConfigError(
        `${stray.join(', ')} ${stray.length > 1 ? 'are' : 'is'} set but neither DATABASE_URL nor DATABASE_HOST: set one of them to store in PostgreSQL, or unset ${stray.length > 1 ? 'them' : 'it'} to store in DATA_DIR`,
      )
    return null
  }
  return {
    host: env.DATABASE_HOST!.trim(),
    port: integer(env, 'DATABASE_PORT', 5432, 1, 65535),
    database: env.DATABASE_NAME?.trim() || 'unleash',
    username: env.DATABASE_USERNAME?.trim() || 'unleash_user',
    password: env.DATABASE_PASSWORD ?? '',
    ssl,
    schema: schemaRaw,
    timeoutMs,
    settingOf: {
      host: 'DATABASE_HOST',
      port: 'DATABASE_PORT',
      database: 'DATABASE_NAME',
      username: 'DATABASE_USERNAME',
      password: 'DATABASE_PASSWORD',
      ssl: 'DATABASE_SSL',
      schema: 'DATABASE_SCHEMA',
    },
  }
}

function databaseSsl(raw: string | undefined, key = 'DATABASE_SSL'): DatabaseConfig['ssl'] {
  const value = raw?.trim().toLowerCase() ?? ''
  if (value === '' || ['false', '0', 'no', 'off', 'disable'].includes(value)) return false
  if (['true', '1', 'yes', 'on', 'require'].includes(value)) return 'require'
  if (value === 'verify-ca' || value === 'verify-full' || value === 'prefer') return value
  throw new ConfigError(`${key} must be true, false, require, prefer, verify-ca or verify-full, got "${raw}"`)
}

/** A bearer token as Prometheus sends it: printable ASCII without spaces, long enough not to be guessed. */
const METRICS_TOKEN = /^[\x21-\x7e]{16,256}$/

function metricsToken(raw: string | undefined): string | null {
  const token = raw?.trim() ?? ''
  if (token === '') return null
  if (!METRICS_TOKEN.test(token))
    throw new ConfigError(
      'METRICS_TOKEN must be 16 to 256 printable ASCII characters without spaces (e.g. openssl rand -hex 32)',
    )
  return token
}

function defaultAdminUsername(raw: string | undefined): string {
  const name = raw?.trim() || 'admin'
  if (name.length > 100 || /\s/.test(name) || /^-?\d+$/.test(name)) {
    throw new ConfigError(
      `UNLEASH_DEFAULT_ADMIN_USERNAME must be 1 to 100 characters without spaces and not a number, got "${raw}"`,
    )
  }
  return name
}

function defaultAdminPassword(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  const problem = passwordProblem(raw)
  if (problem) throw new ConfigError(`UNLEASH_DEFAULT_ADMIN_PASSWORD is too weak: ${problem}`)
  return raw
}

/** `*`, or origins as browsers send them: scheme://host[:port], no path, no trailing slash. */
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/

function corsOrigins(raw: string | undefined): string[] {
  const origins = (raw ?? '')
    .split(',')
    .map(origin => origin.trim())
    .filter(origin => origin !== '')
  if (origins.length === 0) return ['*']
  for (const origin of origins) {
    if (origin !== '*' && !ORIGIN.test(origin)) {
      throw new ConfigError(
        `FRONTEND_CORS_ORIGINS must be * or a comma-separated list of origins such as https://shop.example.com (scheme, host, optional port; no path), got "${origin}"`,
      )
    }
  }
  return origins
}

/** Segments a path prefix may hold: URL-safe characters only, so the prefix needs no encoding anywhere. */
const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)+$/

/**
 * Normalised as Unleash does (a leading slash added, a trailing one dropped, so `flags/` is
 * `/flags`); anything that is not a plain path (a query, `//`, spaces, `%`) is refused.
 */
function basePath(raw: string | undefined): string {
  const trimmed = raw?.trim() ?? ''
  if (trimmed === '' || trimmed === '/') return ''
  const normalised = ('/' + trimmed.replace(/^\//, '')).replace(/\/$/, '')
  if (!BASE_PATH.test(normalised) || normalised.split('/').some(segment => segment === '.' || segment === '..')) {
    throw new ConfigError(
      `BASE_URI_PATH must be a path such as /flags (letters, digits, . _ ~ - between slashes), got "${raw}"`,
    )
  }
  return normalised
}

function logLevel(raw: string | undefined): LogLevel {
  const level = (raw?.trim().toLowerCase() || 'info') as LogLevel
  if (!LOG_LEVELS.includes(level))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`)
  return level
}
