/**
 * The command line of `flagstore` (the executable, `bun src/main.ts`, the npm scripts): which
 * command the arguments name, and the commands that are not the server. Settings stay in the
 * environment, as for the server, so that one set of variables serves every command.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import packageJson from '../package.json'
import { sizeOf } from './backup/backup-file'
import type { DatabaseConfig } from './config'
import { describeIoError } from './storage/files'
import { DataDirLock, DataDirLockError } from './storage/lock'
import type { Store } from './storage/store'

// A command loads the store's modules when it runs, so that `--version`, `--help` and `healthcheck`
// load none of them (and no command loads the service's HTTP side: see main.ts).
const configModule = () => import('./config')
const backupModule = () => import('./backup/backup')
const postgresBackupModule = () => import('./backup/postgres-backup')
const openStoreModule = () => import('./open-store')
const usersModule = () => import('./features/users/users.service')

export const VERSION: string = packageJson.version

export const USAGE = `Usage: flagstore [COMMAND]

An Unleash-compatible feature-flag service in one process, storing its data in DATA_DIR.

Commands:
  serve                      start the service (the default)
  backup [FILE]              copy DATA_DIR (or the DATABASE_URL store) to FILE while the service runs;
                             without FILE, to a new file in DATA_DIR/backups (made 0700). A backup holds
                             the secret key and the token and password hashes: keep it as private as DATA_DIR
  restore FILE [DIRECTORY]   make DIRECTORY (default DATA_DIR; missing or empty) a data directory from FILE,
                             or with DATABASE_URL fill that empty database from FILE
  reset-password USER        give USER (a username or email) a new generated password, printed once, and end
                             their sessions; on DATA_DIR only while no service runs on it (stop it first),
                             with DATABASE_URL while instances run
  healthcheck                exit 0 if the service on PORT answers /ready with 200, else 1
  -h, --help                 show this help
  -v, --version              show the version

Settings come from the environment (the same for every command):
  PORT=4242                  port to listen on (0 picks a free one)
  HOST=0.0.0.0               address to listen on (127.0.0.1 to stay local)
  METRICS_TOKEN              secret that /internal-backstage/prometheus then requires as "Authorization: Bearer
                             <it>"; unset, the metrics answer anyone who reaches HOST (16 to 256 characters)
  DATA_DIR=data              directory of the store, created if missing
  DATABASE_URL               postgres://user:password@host:5432/database: store in PostgreSQL instead,
                             shared by several instances; or Unleash's DATABASE_HOST, DATABASE_PORT,
                             DATABASE_NAME, DATABASE_USERNAME, DATABASE_PASSWORD
  DATABASE_SSL=false         true (or require, verify-ca, verify-full) for TLS to PostgreSQL
  DATABASE_SCHEMA=public     the PostgreSQL schema of the store's tables
  DATABASE_TIMEOUT_MS=5000   on PostgreSQL: how long a commit or read waits before answering 503 (100-8000)
  SEARCH_CACHE_DIR           on PostgreSQL: directory to keep a copy of the event log for search in,
                             so that a restart reads only new events (default: none, copied each start)
  INIT_ADMIN_API_TOKENS      admin secrets (*:*.<16 to 128 letters, digits, - or _>) that must exist;
                             with none, a first admin token is generated and printed once
  BASE_URI_PATH              path prefix behind a reverse proxy, e.g. /flags
  LOG_LEVEL=info             debug, info, warn, error or silent
  BODY_LIMIT=102400          largest request body in bytes
  SYNC=true                  fsync every commit
  TRUST_PROXY=false          log the client address from X-Forwarded-For
  FRONTEND_CORS_ORIGINS=*    origins browsers may call /api/frontend from
  METRICS_FLUSH_MS=10000     how often SDK metrics are committed
  CHECKPOINT_AFTER_BYTES=8388608  journal size after which state.json is rewritten
  UNLEASH_DEFAULT_ADMIN_USERNAME=admin  the console user made at the first start
  UNLEASH_DEFAULT_ADMIN_PASSWORD  its password; with none, one is generated and printed once
  SESSION_TTL_HOURS=48       how long a console sign-in lasts
  SECURE_COOKIES=false       mark the session cookie Secure behind a TLS proxy
  UNLEASH_URL                the public URL: links in integrations' messages, the SSO redirect URI
  ADDONS_ALLOW_PRIVATE_TARGETS=true  integrations may send to loopback and private addresses
  ADDONS_RETRY_BASE_MS=1000  an integration's first retry delay (later ones double, up to an hour)
  CHANGE_REQUESTS_FOR_ADMIN_TOKENS=skip  or enforce: admin tokens go through change requests too
  OIDC_ENABLED, OIDC_DISCOVER_URL, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_*  single sign-on
  PASSWORD_SIGN_IN=on        password sign-in kept on: the way back for a locked-out admin
  STREAMING_MAX_STREAMS=10000     client API streams held at once; past it SDKs are told to poll
  STREAMING_MAX_STREAMS_PER_TOKEN=1000   streams one token holds; past it its SDKs are told to poll
  STREAMING_MAX_STREAMS_PER_ADDRESS=20   frontend tokens' streams from one client address
  STREAMING_MAX_UNSENT_BYTES=262144      bytes a slow reader's stream may hold before it is cut off
  STREAMING_HEARTBEAT_MS=15000    how often every stream gets a heartbeat
  STREAMING_BUFFER_CHANGES=1000   changes kept so that streams and delta polls resume

Once it runs, the service documents itself:
  http://HOST:PORT/                the console (sign in as the user above)
  http://HOST:PORT/swagger         every route, its body and answers (Swagger UI)
  http://HOST:PORT/swagger/json    the OpenAPI document
SDKs connect to http://HOST:PORT/api with a client token (server SDKs) or a frontend token (browsers);
OpenFeature SDKs to http://HOST:PORT (OFREP, /ofrep/v1) with either.
`

export type Command =
  | { name: 'serve' }
  | { name: 'backup'; file: string | undefined }
  | { name: 'restore'; file: string; directory: string | undefined }
  | { name: 'reset-password'; user: string }
  | { name: 'healthcheck' }
  | { name: 'help' }
  | { name: 'version' }

/** The arguments name no command: the usage goes to standard error and the exit code is 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** `args` are the arguments after the program (and, under bun, the script). */
export function parseCommand(args: readonly string[]): Command {
  const [first, ...rest] = args
  // After a command, an option is --help or a mistake, never a FILE: `backup --help` must not write
  // a file called --help (a file whose name starts with - is written ./-name).
  if (first !== undefined && !first.startsWith('-')) {
    if (rest.some(arg => arg === '-h' || arg === '--help')) return { name: 'help' }
    const option = rest.find(arg => arg.startsWith('-'))
    if (option !== undefined) throw new UsageError(`unknown option "${option}" for ${first}`)
  }
  const exactly = (count: number, names: string) => {
    if (rest.length !== count) throw new UsageError(`${first} takes ${names}`)
  }
  switch (first) {
    case undefined:
    case 'serve':
      if (first !== undefined) exactly(0, 'no arguments')
      return { name: 'serve' }
    case 'backup':
      if (rest.length > 1) throw new UsageError('backup takes at most one argument, the FILE to write')
      return { name: 'backup', file: rest[0] }
    case 'restore':
      if (rest.length < 1 || rest.length > 2)
        throw new UsageError('restore takes the FILE to read and, optionally, the DIRECTORY to make')
      return { name: 'restore', file: rest[0], directory: rest[1] }
    case 'reset-password':
      exactly(1, 'one argument, the USER (username or email) whose password is lost')
      return { name: 'reset-password', user: rest[0] }
    case 'healthcheck':
      exactly(0, 'no arguments')
      return { name: 'healthcheck' }
    case '-h':
    case '--help':
    case 'help':
      return { name: 'help' }
    case '-v':
    case '--version':
      return { name: 'version' }
    default:
      throw new UsageError(`unknown ${first.startsWith('-') ? 'option' : 'command'} "${first}"`)
  }
}

/** DATA_DIR as the server reads it, without demanding that the server's other settings be valid. */
function dataDir(env: Record<string, string | undefined>): string {
  return resolve(env.DATA_DIR?.trim() || 'data')
}

/**
 * The address the healthcheck calls: the server's own PORT, HOST and BASE_URI_PATH, with a
 * wildcard HOST (every address) reached through loopback.
 */
export async function readyUrl(env: Record<string, string | undefined>): Promise<string> {
  const config = (await configModule()).readConfig(env)
  const host =
    config.host === '0.0.0.0'
      ? '127.0.0.1'
      : config.host === '::'
        ? '[::1]'
        : config.host.includes(':')
          ? `[${config.host}]`
          : config.host
  return `http://${host}:${config.port}${config.basePath}/ready`
}

/** The store in PostgreSQL, as the backup and restore commands name it. */
function databaseName(database: DatabaseConfig): string {
  return `PostgreSQL ${database.host}:${database.port}/${database.database} (schema ${database.schema})`
}

/** Runs a command other than `serve`; resolves to the process's exit code. */
export async function runCommand(command: Exclude<Command, { name: 'serve' }>, env = process.env): Promise<number> {
  switch (command.name) {
    case 'help':
      process.stdout.write(USAGE)
      return 0
    case 'version':
      console.log(VERSION)
      return 0
    case 'backup': {
      return attempt('back up', async () => {
        const { backupDataDir, defaultBackupFile, storeProblem } = await backupModule()
        // With DATABASE_URL (or DATABASE_HOST…) the store is PostgreSQL's, as for the server.
        const shared = (await configModule()).database(env)
        const from = shared ? databaseName(shared) : dataDir(env)
        // Without a FILE: DATA_DIR/backups, made only once there is a store to back up.
        const problem = shared ? null : storeProblem(from)
        if (problem) throw new Error(problem)
        const file = command.file === undefined ? defaultBackupFile(dataDir(env)) : resolve(command.file)
        if (shared && existsSync(file))
          throw new Error(`${file} already exists; a backup never replaces a file, so give a new file name`)
        const header = shared
          ? await (await postgresBackupModule()).backupDatabase(shared, file)
          : await backupDataDir(from, file)
        console.log(`Backed up ${from} to ${file}: ${header.lastEventId} events, ${await sizeOf(file)} bytes`)
      })
    }
    case 'restore': {
      const file = resolve(command.file)
      return attempt('restore', async () => {
        const shared = (await configModule()).database(env)
        if (shared && command.directory !== undefined)
          throw new Error(
            'DATABASE_URL (or DATABASE_HOST) is set: the restore goes into that database, so give no DIRECTORY',
          )
        const into = shared
          ? databaseName(shared)
          : command.directory === undefined
            ? dataDir(env)
            : resolve(command.directory)
        const header = shared
          ? await (await postgresBackupModule()).restoreDatabase(file, shared)
          : await (await backupModule()).restoreBackup(file, into)
        console.log(`Restored ${file} (taken ${header.createdAt}, ${header.lastEventId} events) into ${into}`)
        // Moved in from files: the data directory left behind must not be served again by mistake.
        const moved = shared ? (await postgresBackupModule()).markSourceMoved(header, file, into) : null
        if (moved) (moved.marked ? console.log : console.error)(moved.said)
      })
    }
    case 'reset-password':
      return attempt('reset the password', async () => {
        const { displayName, UsersService } = await usersModule()
        const { user, password } = await withStore(env, 'reset-password', store =>
          new UsersService(store).resetPassword(command.user),
        )
        console.log(
          `New password for "${displayName(user)}" (user ${user.id}), shown only this once (only an argon2id hash is stored):\n\n  ${password}\n\n` +
            'Every session of the user has ended. Sign in with it in the console, then choose your own (Change password).',
        )
      })
    case 'healthcheck':
      return attempt('check health', async () => {
        const url = await readyUrl(env)
        const response = await fetch(url, { signal: AbortSignal.timeout(5000) }).catch((error: Error) => {
          throw new Error(`${url} did not answer: ${error.message}`)
        })
        if (response.status !== 200)
          throw new Error(`${url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`)
        console.log(`${url}: ready`)
      })
  }
}

/**
 * Runs `use` on the store where the data is, for a command that writes: in PostgreSQL with
 * DATABASE_URL (instances may run; they hear of the commit as of any other), else in DATA_DIR,
 * locked as the service locks it, so only while no service runs there.
 */
async function withStore<T>(
  env: Record<string, string | undefined>,
  command: string,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  const { openDatabaseStore, openStore } = await openStoreModule()
  const shared = (await configModule()).database(env)
  if (shared) {
    const store = await openDatabaseStore(shared, { attempts: 1, max: 1 })
    try {
      return await use(store)
    } finally {
      await store.close()
    }
  }
  const dir = dataDir(env)
  const problem = (await backupModule()).storeProblem(dir)
  if (problem) throw new Error(problem)
  let lock: DataDirLock
  try {
    lock = DataDirLock.acquire(dir)
  } catch (error) {
    if (error instanceof DataDirLockError && error.busy)
      throw new Error(`${error.message}: stop the service, then run ${command} again`)
    throw error
  }
  try {
    const store = await openStore(dir, { sync: true })
    try {
      return await use(store)
    } finally {
      await store.close()
    }
  } finally {
    lock.release()
  }
}

/** An error as one line for a person: a system error by its meaning and file, not Node's "ENOENT: …, open '…'". */
function inWords(error: unknown): string {
  const errno = error as NodeJS.ErrnoException
  if (errno && typeof errno.code === 'string' && /^E[A-Z]+$/.test(errno.code))
    return `${errno.path ? `${errno.path}: ` : ''}${describeIoError(errno)}`
  return error instanceof Error ? error.message : String(error)
}

async function attempt(what: string, work: () => Promise<void>): Promise<number> {
  try {
    await work()
    return 0
  } catch (error) {
    console.error(`Cannot ${what}: ${inWords(error)}`)
    return 1
  }
}
