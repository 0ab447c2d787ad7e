/** Every setting the service reads, from the environment, validated in one place. */
import { resolve } from 'node:path'
import { LOG_LEVELS, type LogLevel } from './log'
import { passwordProblem } from './features/users/passwords'

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
  /** `SECURE_COOKIES`: mark the session cookie Secure even when the request did not come over HTTPS (behind a TLS proxy that does not say so). */
  secureCookies: boolean
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

function integer(env: Record<string, string | undefined>, key: string, fallback: number, min: number, max: number): number {
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

/** Admin secrets look like Unleash's: `*:*.` followed by at least 16 characters. */
export const ADMIN_SECRET_PATTERN = /^\*:\*\.[A-Za-z0-9_-]{16,128}$/

export function readConfig(env: Record<string, string | undefined>, cwd = process.cwd()): Config {
  const initAdminTokens = (env.INIT_ADMIN_API_TOKENS ?? '')
    .split(',')
    .map((secret) => secret.trim())
    .filter((secret) => secret !== '')
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
    frontendCorsOrigins: corsOrigins(env.FRONTEND_CORS_ORIGINS),
    basePath: basePath(env.BASE_URI_PATH),
    defaultAdminUsername: defaultAdminUsername(env.UNLEASH_DEFAULT_ADMIN_USERNAME),
    defaultAdminPassword: defaultAdminPassword(env.UNLEASH_DEFAULT_ADMIN_PASSWORD),
    sessionTtlHours: integer(env, 'SESSION_TTL_HOURS', 48, 1, 24 * 365),
    secureCookies: boolean(env, 'SECURE_COOKIES', false),
  }
}

function defaultAdminUsername(raw: string | undefined): string {
  const name = raw?.trim() || 'admin'
  if (name.length > 100 || /\s/.test(name) || /^-?\d+$/.test(name)) {
    throw new ConfigError(`UNLEASH_DEFAULT_ADMIN_USERNAME must be 1 to 100 characters without spaces and not a number, got "${raw}"`)
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
  const origins = (raw ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  if (origins.length === 0) return ['*']
  for (const origin of origins) {
    if (origin !== '*' && !ORIGIN.test(origin)) {
      throw new ConfigError(`FRONTEND_CORS_ORIGINS must be * or a comma-separated list of origins such as https://shop.example.com (scheme, host, optional port; no path), got "${origin}"`)
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
  if (!BASE_PATH.test(normalised) || normalised.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new ConfigError(`BASE_URI_PATH must be a path such as /flags (letters, digits, . _ ~ - between slashes), got "${raw}"`)
  }
  return normalised
}

function logLevel(raw: string | undefined): LogLevel {
  const level = (raw?.trim().toLowerCase() || 'info') as LogLevel
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`)
  return level
}
