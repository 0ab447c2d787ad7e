/**
 * `npm test`: the whole suite, as CI runs it (.ci/run). Four bun test runs, each two files at a time:
 * on the files, the tests through app.handle and test/system; on PostgreSQL (test/run-postgres.ts),
 * the files that run differently there, through app.handle and in test/system.
 *
 * Three go side by side: on the files, the tests through app.handle, and test/system; on PostgreSQL,
 * its two runs one after the other. One fills the time another spends waiting (on spawned servers,
 * Chromium, PostgreSQL, timers), and none ends with a core idle behind its slowest file: run one
 * after the other, the four took the sum of their times, each with its own tail. Each run's output is
 * held and printed whole when it ends, so every run still ends with its own summary ("Ran N tests
 * across N files."), the lines .ci/run adds up.
 *
 * Every run passes `--timings=test/timings.json`: with it, bun test starts the slowest files first,
 * so that the last file of a run is a short one. The file holds each test file's duration; a file
 * missing there counts as the median. Refresh it one run at a time (two runs writing it at once
 * would each drop the other's):
 *   npx bun test --timeout 30000 --parallel --path-ignore-patterns='test/system/**' --timings=test/timings.json --update-timings
 *   npx bun test --timeout 30000 --parallel test/system --timings=test/timings.json --update-timings
 */
import { join } from 'node:path'
import { type BunTestRun, runOnPostgres, TIMEOUT_ARGS } from './run-postgres'

const ROOT = join(import.meta.dir, '..')

/** Where each test file's last measured duration is kept (bun test's --timings format). */
export const TIMINGS_FILE = 'test/timings.json'

/** The two runs on the files (package.json's test:unit and test:system run each alone). */
export const FILES_RUNS = {
  unit: ['--parallel', '--path-ignore-patterns=test/system/**'],
  system: ['--parallel', 'test/system'],
}

/** Output printed whole, one run at a time. */
let printing = Promise.resolve()

/** A bun test run whose output is held until it ends, then printed with its name and duration. */
export function heldRun(store: string): BunTestRun {
  return async (args, env, part) => {
    const name = `${store}, ${part}`
    const started = performance.now()
    console.log(`${name}: started`)
    const child = Bun.spawn([process.execPath, 'test', ...TIMEOUT_ARGS, ...args], {
      cwd: ROOT,
      env,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const chunks: Uint8Array[] = []
    const hold = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) chunks.push(chunk)
    }
    await Promise.all([hold(child.stdout), hold(child.stderr)])
    const status = await child.exited
    const seconds = ((performance.now() - started) / 1000).toFixed(0)
    printing = printing.then(async () => {
      process.stdout.write(Buffer.concat(chunks))
      console.log(`${name}: exit ${status} after ${seconds} s\n`)
    })
    await printing
    return status
  }
}

if (import.meta.main) {
  const timings = [`--timings=${TIMINGS_FILE}`]
  const env = { ...process.env }
  const onFiles = (part: keyof typeof FILES_RUNS, name: string) =>
    heldRun('files')([...FILES_RUNS[part], ...timings], env, name)
  const onPostgres = () => runOnPostgres([], heldRun('PostgreSQL'), timings)
  const statuses = await Promise.all([
    onFiles('unit', 'through app.handle'),
    onFiles('system', 'test/system'),
    onPostgres(),
  ])
  process.exit(statuses.find(status => status !== 0) ?? 0)
}
