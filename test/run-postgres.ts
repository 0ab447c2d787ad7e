/**
 * `npm run test:postgres`: the suite on PostgreSQL. One private cluster serves the whole run (each
 * test process makes its schemas in one database of it, see test-store.ts; a test that needs a
 * cluster to itself, to stop or freeze it, still starts its own), and only the test files that run
 * differently there are run: those that open a store without a data directory or ask which store
 * the run is on (`dependsOnStore`). The others (a store on a data directory, pure functions, a
 * process spawned on the files, a cluster of their own) ran the same in `npm run test:files`.
 * Like test:files, two bun test runs, each ending with its own summary: the tests through
 * app.handle, then test/system, each two files at a time. Given test files
 * (`bun test/run-postgres.ts test/features/flags/flags.test.ts …`), it runs those instead.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { SHARED_CLUSTER_VARIABLE, startPostgres } from './postgres-cluster'
import { TEST_DATABASE } from './test-store'

const ROOT = join(import.meta.dir, '..')

/** What every bun test run of the suite passes (test/test-config.test.ts says why). */
export const TIMEOUT_ARGS = ['--timeout', '30000']

/**
 * Each test file's last measured duration, which every run of the suite passes: with it bun test
 * --parallel starts the slowest files first, so that a run does not end with one core busy on a
 * long file that started last. A file missing there counts as the median. Refresh it one run at a
 * time (two runs writing it at once would each drop the other's), e.g.
 * `npx bun test --timeout 30000 --timings=test/timings.json --update-timings --parallel test/system`.
 */
export const TIMINGS_ARGS = ['--timings=test/timings.json']

/**
 * Whether a test file runs differently on PostgreSQL: it asks test/test-store.ts which run this is
 * (ON_POSTGRES, TEST_STORE, freshDatabase), or opens a store without saying where (openTestStore,
 * freshApiPerTest or a setup module's useFreshApi, makeApi() or makeApi({...}) without dataDir or database), which is a PostgreSQL
 * schema in that run. A file that starts a cluster of its own (testCluster, startPostgres) runs the
 * same in both runs. So does a file whose subject is the HTTP layer, not the store (every documented
 * route, its answers and refusals), which says so in a line `// Store-independent: <why>`: its
 * requests reach the store through the same transact and commit as the feature tests that run again.
 */
export function dependsOnStore(text: string): boolean {
  if (new RegExp(`^// ${STORE_INDEPENDENT} \\S`, 'm').test(text)) return false
  return /\b(ON_POSTGRES|TEST_STORE|freshDatabase|openTestStore|freshApiPerTest|useFreshApi|sharedApp)\b|makeApi\((?!\{[^)]*\b(dataDir|database)\b)/.test(
    text,
  )
}

/** The mark of a test file that runs once, on the files, though it opens a store without a data directory. */
export const STORE_INDEPENDENT = 'Store-independent:'

function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith('.test.ts'))
    .map(name => join(dir, name))
    .sort()
}

/** The test files run again on PostgreSQL, relative to the checkout: through app.handle, and in test/system. */
export function postgresFiles(): { unit: string[]; system: string[] } {
  const dependent = testFiles(join(ROOT, 'test'))
    .filter(file => dependsOnStore(readFileSync(file, 'utf8')))
    .map(file => relative(ROOT, file))
  return {
    unit: dependent.filter(file => !file.startsWith('test/system/')),
    system: dependent.filter(file => file.startsWith('test/system/')),
  }
}

/**
 * What the runs of the tests through app.handle add (package.json's test:files and test:unit too): each
 * worker process loads the service's modules once and keeps them for every file it runs, instead of loading
 * them again in a fresh global for each file (`--isolate`, what `--parallel` does by default). Loading
 * `src/` costs 0.2–0.3 s of CPU, and JavaScriptCore's compiled code for it is kept as well; the phase's
 * CPU falls by about a sixth. The files then share what a long-running process shares (the modules' own
 * state) and nothing of their own: each builds its own apps on its own store, and a test that moves the
 * clock gives it back (`freshApiPerTest`). test/system keeps the
 * isolation: its files start processes, browsers and servers, where a leftover would cost more than a load.
 */
export const UNIT_ARGS = ['--no-isolate']

/** A bun test run with the suite's settings, in the checkout, under `env`: its exit status. */
export type BunTestRun = (args: string[], env: Record<string, string | undefined>) => Promise<number>

/** Runs bun test with its output on this process's. */
export const inheritedRun: BunTestRun = (args, env) =>
  Bun.spawn([process.execPath, 'test', ...TIMEOUT_ARGS, ...TIMINGS_ARGS, ...args], {
    cwd: ROOT,
    env,
    stdio: ['inherit', 'inherit', 'inherit'],
  }).exited

/** The private cluster of a PostgreSQL run, and the environment its bun test runs get. */
export async function postgresForRun(): Promise<{
  env: Record<string, string | undefined>
  stop: () => Promise<void>
}> {
  const cluster = await startPostgres({ fsync: false })
  await cluster.createDatabase(TEST_DATABASE)
  const env = { ...process.env, FLAGSTORE_TEST_STORE: 'postgres', [SHARED_CLUSTER_VARIABLE]: String(cluster.port) }
  return { env, stop: () => cluster.stop() }
}

/** `./` makes each a path, not a filter matching every path that contains it. */
export const asPaths = (files: string[]) => files.map(file => `./${file}`)

/**
 * The PostgreSQL runs on one private cluster: the given files, else those `postgresFiles` picks,
 * through app.handle, then in test/system, each two files at a time.
 */
export async function runOnPostgres(given: string[], run: BunTestRun): Promise<number> {
  const { env, stop } = await postgresForRun()
  const { unit, system } =
    given.length === 0
      ? postgresFiles()
      : {
          unit: given.filter(file => !file.startsWith('test/system/')),
          system: given.filter(file => file.startsWith('test/system/')),
        }
  const unitStatus = unit.length > 0 ? await run(['--parallel', ...UNIT_ARGS, ...asPaths(unit)], env) : 0
  const systemStatus = system.length > 0 ? await run(['--parallel', ...asPaths(system)], env) : 0
  await stop()
  return unitStatus || systemStatus
}

if (import.meta.main) process.exit(await runOnPostgres(process.argv.slice(2), inheritedRun))
