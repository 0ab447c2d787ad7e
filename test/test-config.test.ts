/**
 * How the suite is run. Bun's default per-test and per-hook timeout is 5 s; tests that spawn servers,
 * the CLI or the compiler take longer on a loaded machine (a CI run with a second run beside it) and
 * must fail on a wrong answer, not on a busy CPU. Bun reads that timeout only from `--timeout`: a
 * `timeout` in bunfig.toml is ignored, and setDefaultTimeout in a preload reaches the first file only.
 */
import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const MIN_TIMEOUT_MS = 30_000

test('every package.json script that runs bun test passes --timeout of at least 30 s', async () => {
  const { scripts } = (await Bun.file(join(ROOT, 'package.json')).json()) as { scripts: Record<string, string> }
  const runners = Object.entries(scripts).filter(([, command]) => /\bbun test\b/.test(command))
  expect(runners.map(([name]) => name).sort()).toEqual(['test:files', 'test:postgres', 'test:system', 'test:unit'])
  // The README's `npm test` runs test:files, then test:postgres: the tests through app.handle on PostgreSQL.
  expect(scripts.test).toContain('npm run -s test:files')
  expect(scripts.test).toContain('npm run -s test:postgres')
  expect(scripts['test:postgres']).toStartWith('FLAGSTORE_TEST_STORE=postgres npm run -s test:unit;')
  for (const [name, command] of runners) {
    // test:files runs bun test twice (the tests through app.handle two files at a time, then test/system): each run needs it.
    for (const run of command.split(/\bbun test\b/).slice(1)) {
      const timeout = /^\s*--timeout[ =](\d+)/.exec(run)?.[1]
      expect({ name, timeout: Number(timeout) >= MIN_TIMEOUT_MS }).toEqual({ name, timeout: true })
    }
  }
  // A timeout key there would look like it worked and not.
  const bunfig = await Bun.file(join(ROOT, 'bunfig.toml')).text()
  expect(bunfig.split('\n').filter(line => /^\s*timeout\s*=/.test(line))).toEqual([])
})

/**
 * Whether a system test runs differently on PostgreSQL: it asks test/test-store.ts which run this is
 * (ON_POSTGRES, freshDatabase) or opens a store without a data directory (makeApi() or makeApi({...})
 * without dataDir, freshApiPerTest), which is a PostgreSQL schema in that run. A test that spawns
 * the service without DATABASE_URL, or gives a data directory, is on the files in either run, and
 * one that starts its own cluster (testCluster, startPostgres) runs the same in both.
 */
function dependsOnStore(text: string): boolean {
  return /\b(ON_POSTGRES|TEST_STORE|freshDatabase|openTestStore|freshApiPerTest)\b|makeApi\((?!\{[^)]*\bdataDir\b)/.test(
    text,
  )
}

test('test:postgres runs again exactly the system tests that run differently on PostgreSQL; the others run once', async () => {
  const { scripts } = (await Bun.file(join(ROOT, 'package.json')).json()) as { scripts: Record<string, string> }
  const listed = [...scripts['test:postgres'].split(/\bbun test\b/)[1].matchAll(/test\/system\/[\w-]+\.test\.ts/g)]
    .map(([path]) => path)
    .sort()
  const dependent = readdirSync(join(ROOT, 'test/system'))
    .filter(name => name.endsWith('.test.ts') && dependsOnStore(readFileSync(join(ROOT, 'test/system', name), 'utf8')))
    .map(name => `test/system/${name}`)
    .sort()
  expect(listed).toEqual(dependent)
  expect(listed.length).toBeGreaterThan(0)
})

test("run through the npm scripts, a test may take longer than Bun's 5 s default", async () => {
  const started = performance.now()
  await Bun.sleep(5_500)
  expect(performance.now() - started).toBeGreaterThanOrEqual(5_400)
})
