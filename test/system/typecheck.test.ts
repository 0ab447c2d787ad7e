/** The TypeScript compiler accepts the whole project (src, test, bench, and console/ with its own settings) with strict settings. */
import { expect, test } from 'bun:test'
import { join } from 'node:path'

test('the project typechecks with tsc --noEmit', () => {
  const root = join(import.meta.dir, '../..')
  const result = Bun.spawnSync([join(root, 'node_modules/.bin/tsc'), '--noEmit', '-p', root], { cwd: root })
  expect(result.stdout.toString() + result.stderr.toString()).toBe('')
  expect(result.exitCode).toBe(0)
  // A bound on the compiler finishing, not a speed target: with a second test run beside it on 2 cores it took over 60 s.
}, 240_000)

test('the console (console/, its own settings: Preact JSX, the DOM) typechecks with tsc -p console', () => {
  const root = join(import.meta.dir, '../..')
  const result = Bun.spawnSync([join(root, 'node_modules/.bin/tsc'), '-p', join(root, 'console')], { cwd: root })
  expect(result.stdout.toString() + result.stderr.toString()).toBe('')
  expect(result.exitCode).toBe(0)
}, 240_000)
