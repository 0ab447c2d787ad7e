/**
 * A private PostgreSQL for tests and benchmarks: its own cluster in a temp directory, on a free
 * loopback port, run by an unprivileged user (Debian's `postgres` when we are root, since the
 * server refuses to run as root), stopped and removed by `stop()`. Nothing is shared with a system
 * cluster: no socket in /var/run, no service, no password (trust on loopback only).
 *
 * The server is a daemon (pg_ctl), so it would outlive the process that started it: a reaper of its
 * own (a shell in a session of its own) stops it and removes its directory within a second of that
 * process ending, however it ends. `bun test` runs no `exit` handlers (Bun 1.4.5), and a test
 * process can be killed; until the reaper, every PostgreSQL run of the suite left its clusters
 * running and their files in the temp directory.
 *
 * `.ci/run` installs Debian's `postgresql` when it is missing; here we only find its binaries.
 *
 * As a program (`npx bun test/postgres-cluster.ts`) it starts one, prints its URL as one line and
 * keeps it until SIGTERM or SIGINT.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface PostgresCluster {
  /** postgres://… for the `postgres` database; `urlFor(name)` for another. */
  url: string
  port: number
  dir: string
  urlFor(database: string): string
  /** Creates a database (fresh, empty) and returns its URL. */
  createDatabase(name: string): Promise<string>
  /** Stops the server (fast shutdown) and keeps the files; `start()` brings it back on the same port. */
  halt(): Promise<void>
  start(): Promise<void>
  /**
   * Stops every process of the server with SIGSTOP (the postmaster first, so that it forks no
   * more): connections stay open and nothing answers, as when a database host hangs. `thaw()`
   * (SIGCONT) resumes them; so does the reaper and `stop()`, should the test end first.
   */
  freeze(): void
  thaw(): void
  /** Stops the server and removes its files. */
  stop(): Promise<void>
}

/** What a test process may do with a cluster it shares with the other processes of a run: make databases, connect. */
export type SharedCluster = Pick<PostgresCluster, 'url' | 'port' | 'urlFor' | 'createDatabase'>

/** The variable that hands the processes of a run the port of the run's cluster (see test/run-postgres.ts). */
export const SHARED_CLUSTER_VARIABLE = 'FLAGSTORE_TEST_POSTGRES_PORT'

/** A cluster already running on `port` (trust on loopback, user postgres), as test/run-postgres.ts starts one. */
export function sharedCluster(port: number): SharedCluster {
  const urlFor = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  return { url: urlFor('postgres'), port, urlFor, createDatabase: name => createDatabase(urlFor, name) }
}

async function createDatabase(urlFor: (database: string) => string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`)
  const sql = new Bun.SQL(urlFor('postgres'), { max: 1 })
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`)
  } finally {
    await sql.close()
  }
  return urlFor(name)
}

/** The directory holding initdb, pg_ctl and postgres, or null when PostgreSQL is not installed. */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql'
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter(v => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
    for (const v of versions) if (existsSync(join(root, v, 'bin', 'pg_ctl'))) return join(root, v, 'bin')
  }
  const onPath = Bun.which('pg_ctl')
  return onPath ? onPath.replace(/\/pg_ctl$/, '') : null
}

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

interface RunAs {
  uid?: number
  gid?: number
}

function postgresUser(): RunAs {
  if (process.getuid?.() !== 0) return {}
  const passwd = require('node:fs').readFileSync('/etc/passwd', 'utf8') as string
  const line =
    passwd.split('\n').find(l => l.startsWith('postgres:')) ?? passwd.split('\n').find(l => l.startsWith('nobody:'))
  if (!line) throw new Error('running as root and no unprivileged user (postgres or nobody) to run PostgreSQL as')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/** The command prefix that runs a command as `as`. */
const runAs = (as: RunAs) =>
  as.uid === undefined ? [] : ['setpriv', `--reuid=${as.uid}`, `--regid=${as.gid}`, '--clear-groups', '--']

async function run(cmd: string[], as: RunAs, what: string): Promise<string> {
  const child = Bun.spawn([...runAs(as), ...cmd], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
  })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${err.trim() || out.trim()}`)
  return out
}

/**
 * Runs `stop` and removes `dir` once process `owner` has ended, unless `dir` is gone first (a
 * `stop()` that ran): polled each second by a shell forked into a session of its own, so that
 * neither the owner's end, nor a signal to its process group, nor what ends the children of a
 * `bun test --parallel` worker with it ends the shell. Returns once the shell is on its own.
 */
async function reapWhenGone(owner: number, dir: string, stop: string[]): Promise<void> {
  const script =
    'while kill -0 "$0" 2>/dev/null && [ -d "$1" ]; do sleep 1; done; if [ -d "$1" ]; then [ -f "$1/frozen" ] && kill -CONT $(cat "$1/frozen"); shift && "$@"; rm -rf -- "$DIR"; fi'
  const forking = Bun.spawn(['setsid', '--fork', 'sh', '-c', script, String(owner), dir, ...stop], {
    stdio: ['ignore', 'ignore', 'ignore'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DIR: dir },
  })
  // setsid exits as soon as it has forked the shell.
  if ((await forking.exited) !== 0) throw new Error(`could not start the reaper of the PostgreSQL cluster in ${dir}`)
}

/** The processes of the server whose postmaster is `pid`: it and its children. */
function serverProcesses(pid: number): number[] {
  const children = readdirSync('/proc')
    .filter(entry => /^\d+$/.test(entry))
    .filter(entry => {
      try {
        // The parent pid is the second field after the command, which is in parentheses.
        return (
          Number(
            readFileSync(`/proc/${entry}/stat`, 'utf8')
              .replace(/^.*\) /s, '')
              .split(' ')[1],
          ) === pid
        )
      } catch {
        return false
      }
    })
    .map(Number)
  return [pid, ...children]
}

/** Starts a private cluster. Throws when PostgreSQL is not installed (see `postgresBinaries`). */
export async function startPostgres(options: { port?: number; fsync?: boolean } = {}): Promise<PostgresCluster> {
  const bin = postgresBinaries()
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql); .ci/run installs it')
  const as = postgresUser()
  const dir = mkdtempSync(join(tmpdir(), 'flagstore-pg-'))
  chmodSync(dir, 0o700)
  if (as.uid !== undefined) chownSync(dir, as.uid, as.gid!)
  const data = join(dir, 'data')
  const port = options.port ?? freePort()
  await run(
    [
      join(bin, 'initdb'),
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--no-instructions',
      '--no-sync',
    ],
    as,
    'initdb',
  )
  const settings = [
    `-c listen_addresses=127.0.0.1`,
    `-c port=${port}`,
    `-c unix_socket_directories=${dir}`,
    `-c max_connections=300`,
    `-c fsync=${options.fsync === false ? 'off' : 'on'}`,
    `-c shared_buffers=128MB`,
    `-c log_min_messages=warning`,
  ].join(' ')
  const pgctlCommand = (...args: string[]) => [join(bin, 'pg_ctl'), '-D', data, '-w', '-t', '60', ...args]
  const pgctl = (...args: string[]) => run(pgctlCommand(...args), as, `pg_ctl ${args[0]}`)
  const start = async () => {
    await pgctl('start', '-o', settings, '-l', join(dir, 'server.log'))
  }
  await start()
  await reapWhenGone(process.pid, dir, [...runAs(as), ...pgctlCommand('stop', '-m', 'immediate')])
  const urlFor = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  let stopped = false
  const cluster: PostgresCluster = {
    url: urlFor('postgres'),
    port,
    dir,
    urlFor,
    createDatabase: name => createDatabase(urlFor, name),
    halt: () => pgctl('stop', '-m', 'fast').then(() => undefined),
    start,
    freeze() {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
      process.kill(postmaster, 'SIGSTOP')
      const frozen = serverProcesses(postmaster)
      // For the reaper, which resumes them before it stops the server.
      writeFileSync(join(dir, 'frozen'), frozen.join(' '))
      for (const pid of frozen) process.kill(pid, 'SIGSTOP')
    },
    thaw() {
      const file = join(dir, 'frozen')
      if (!existsSync(file)) return
      for (const pid of readFileSync(file, 'utf8').split(' ').map(Number)) {
        try {
          process.kill(pid, 'SIGCONT')
        } catch {}
      }
      rmSync(file)
    },
    async stop() {
      if (stopped) return
      stopped = true
      cluster.thaw()
      await pgctl('stop', '-m', 'immediate').catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return cluster
}

if (import.meta.main) {
  const cluster = await startPostgres()
  console.log(cluster.url)
  const stop = () => cluster.stop().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  setInterval(() => {}, 1 << 30)
}
