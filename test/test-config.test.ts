/**
 * How the suite is run. Bun's default per-test and per-hook timeout is 5 s; tests that spawn servers,
 * the CLI or the compiler take longer on a loaded machine (a CI run with a second run beside it) and
 * must fail on a wrong answer, not on a busy CPU. Bun reads that timeout only from `--timeout`: a
 * `timeout` in bunfig.toml is ignored, and setDefaultTimeout in a preload reaches the first file only.
 */
import { expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './helpers'
import { dependsOnStore, postgresFiles, STORE_INDEPENDENT, TIMEOUT_ARGS, TIMINGS_ARGS, UNIT_ARGS } from './run-postgres'

const ROOT = join(import.meta.dir, '..')
const MIN_TIMEOUT_MS = 30_000

test('every bun test run of the suite passes --timeout of at least 30 s and the timings; outside test/system it keeps modules', async () => {
  const { scripts } = (await Bun.file(join(ROOT, 'package.json')).json()) as { scripts: Record<string, string> }
  const runners = Object.entries(scripts).filter(([, command]) => /\bbun test\s/.test(command))
  expect(runners.map(([name]) => name).sort()).toEqual(['test:files', 'test:system', 'test:unit'])
  // The README's `npm test` runs test:files, then test:postgres (test/run-postgres.ts).
  expect(scripts.test).toContain('npm run -s test:files')
  expect(scripts.test).toContain('npm run -s test:postgres')
  expect(scripts['test:postgres']).toBe('bun test/run-postgres.ts')
  const runs = [
    ...runners.flatMap(([name, command]) =>
      command
        .split(/\bbun test\s/)
        .slice(1)
        .map(run => ({ name, run })),
    ),
    { name: 'test/run-postgres.ts', run: [...TIMEOUT_ARGS, ...TIMINGS_ARGS, ...UNIT_ARGS, 'test/features'].join(' ') },
  ]
  for (const { name, run } of runs) {
    // test:files runs bun test twice (the tests through app.handle two files at a time, then test/system): each run needs it.
    const timeout = /^\s*--timeout[ =](\d+)/.exec(run)?.[1]
    expect({ name, timeout: Number(timeout) >= MIN_TIMEOUT_MS }).toEqual({ name, timeout: true })
    // And each starts its slowest files first (TIMINGS_ARGS says why).
    expect({ name, timings: run.includes(TIMINGS_ARGS[0]!) }).toEqual({ name, timings: true })
    // The runs through app.handle keep each worker's modules from file to file, test/system's do not (UNIT_ARGS says why).
    const system = /\btest\/system(?!\/\*\*)/.test(run)
    expect({ name, system, shared: UNIT_ARGS.every(arg => run.includes(arg)) }).toEqual({
      name,
      system,
      shared: !system,
    })
  }
  // A timeout key there would look like it worked and not.
  const bunfig = await Bun.file(join(ROOT, 'bunfig.toml')).text()
  expect(bunfig.split('\n').filter(line => /^\s*timeout\s*=/.test(line))).toEqual([])
})

test('bun test honours --timeout: a test longer than it fails, naming the timeout', () => {
  const dir = tempDir('timeout-')
  try {
    writeFileSync(
      join(dir.path, 'slow.test.ts'),
      "import { test } from 'bun:test'\ntest('slow', () => Bun.sleep(1_000))\n",
    )
    const run = Bun.spawnSync([process.execPath, 'test', '--timeout', '100', './slow.test.ts'], { cwd: dir.path })
    expect(run.exitCode).toBe(1)
    expect(run.stderr.toString()).toContain('timed out after 100ms')
  } finally {
    dir.remove()
  }
})

test('test:postgres runs again the tests that run differently on PostgreSQL, and only those', () => {
  const { unit, system } = postgresFiles()
  // A store opened without a data directory: a PostgreSQL schema in that run.
  expect(unit).toContain('test/features/flags/flags.test.ts')
  expect(system).toContain('test/system/crash.test.ts')
  // On a data directory, pure, or on a cluster of their own: the same in either run.
  for (const once of [
    'test/storage/persistence.test.ts',
    'test/features/events/search/event-search.property.test.ts',
    'test/features/events/search/search-cache.test.ts',
    'test/system/readme.test.ts',
    'test/architecture.test.ts',
    // About the HTTP layer, or the evaluator, and marked so.
    'test/http/openapi-examples.test.ts',
    'test/http/pipeline-bodies.test.ts',
    'test/features/frontend/frontend-evaluation.test.ts',
  ])
    expect([...unit, ...system]).not.toContain(once)
  // (The names are cut in two so that this file, which opens no store, is not taken for one that does.)
  const make = 'make' + 'Api'
  expect(dependsOnStore(`const api = await ${make}()`)).toBe(true)
  expect(dependsOnStore(`const api = await ${make}({ bodyLimit: 10 })`)).toBe(true)
  expect(dependsOnStore(`const api = await ${make}({ dataDir })`)).toBe(false)
  expect(dependsOnStore(`const api = await ${make}({ database, searchCacheDir })`)).toBe(false)
  expect(dependsOnStore(`${'fresh' + 'ApiPerTest'}(fresh => (api = fresh))`)).toBe(true)
  expect(dependsOnStore(`const shared = await ${'shared' + 'App'}()`)).toBe(true)
  // The mark counts only as a line of its own that gives a reason.
  const mark = `// ${STORE_INDEPENDENT}`
  expect(dependsOnStore(`${mark} about the routes\nconst api = await ${make}()`)).toBe(false)
  expect(dependsOnStore(`${mark}\nconst api = await ${make}()`)).toBe(true)
  expect(dependsOnStore(`const note = '${mark} x'\nconst api = await ${make}()`)).toBe(true)
})
