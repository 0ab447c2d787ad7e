/**
 * The shape of bench/: one runner (bench/run.ts) whose every scenario is a function its module
 * exports, at most MAX_FILES files (each at most 400 lines: test/architecture.test.ts), no file
 * outside what the runner reaches, and no import cycle between the modules. The benchmarks
 * themselves are run by hand, never here.
 */
import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { SCENARIOS } from '../bench/run'

const BENCH = resolve(import.meta.dir, '../bench')
const files = readdirSync(BENCH)
/** A new scenario goes into the module of its kind (see bench/run.ts), not into a file of its own. */
const MAX_FILES = 15

test(`bench/ holds at most ${MAX_FILES} files`, () => {
  expect(files.length).toBeGreaterThan(3)
  expect(files.length).toBeLessThanOrEqual(MAX_FILES)
})

test("every file in bench/ is reached from the runner: no stray script (the 400-line bound is test/architecture.test.ts's)", () => {
  const reached = new Set(['run.ts'])
  const queue = [
    'run.ts',
    ...Object.values(SCENARIOS).flatMap(scenario => (scenario.module ? [`${scenario.module}.ts`] : [])),
  ]
  while (queue.length > 0) {
    const name = queue.pop()!
    reached.add(name)
    for (const match of readFileSync(join(BENCH, name), 'utf8').matchAll(
      /from '\.\/([\w-]+)'|new URL\('\.\/([\w-]+)\.ts'/g,
    )) {
      const target = `${match[1] ?? match[2]}.ts`
      if (!reached.has(target)) queue.push(target)
    }
  }
  expect(files.filter(file => !reached.has(file))).toEqual([])
})

test('no bench module imports one that imports it back', () => {
  const importsOf = (name: string) =>
    [...readFileSync(join(BENCH, name), 'utf8').matchAll(/from '\.\/([\w-]+)'|new URL\('\.\/([\w-]+)\.ts'/g)]
      .map(match => `${match[1] ?? match[2]}.ts`)
      .filter(target => target !== name)
  const cycles: string[] = []
  const visit = (name: string, path: string[]) => {
    if (path.includes(name)) {
      cycles.push([...path.slice(path.indexOf(name)), name].join(' → '))
      return
    }
    for (const target of importsOf(name)) visit(target, [...path, name])
  }
  for (const name of files.filter(file => file.endsWith('.ts'))) visit(name, [])
  expect(cycles).toEqual([])
})

test('every scenario of bench/run.ts is a function its module exports, and --help lists them all', async () => {
  const missing: string[] = []
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    if (scenario.run) continue
    const module = (await import(join(BENCH, `${scenario.module}.ts`))) as Record<string, unknown>
    if (typeof module[scenario.fn!] !== 'function') missing.push(`${name}: ${scenario.module}.${scenario.fn}`)
  }
  expect(missing).toEqual([])

  const help = Bun.spawnSync([process.execPath, join(BENCH, 'run.ts'), '--help'])
  expect(help.exitCode).toBe(0)
  const listed = [...help.stdout.toString().matchAll(/^ {2}([\w-]+) /gm)].map(match => match[1])
  expect(listed).toEqual(Object.keys(SCENARIOS))
})
