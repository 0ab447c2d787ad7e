/**
 * The TypeScript compiler accepts the whole project (src, test, bench, and console/ with its own settings) with
 * strict settings. Both compilers start at once, when the file loads, and each test waits for its own: the two
 * programs share nothing (other settings, other files), so one after the other took the sum of their times where
 * side by side on two cores they take about the longer one's.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '../..')

/** `tsc` with `args`, started now; resolves to everything it printed and its exit code. */
function tsc(...args: string[]): Promise<{ output: string; exitCode: number }> {
  const child = Bun.spawn([join(root, 'node_modules/.bin/tsc'), ...args], {
    cwd: root,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  return Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]).then(
    ([stdout, stderr, exitCode]) => ({ output: stdout + stderr, exitCode }),
  )
}

const project = tsc('--noEmit', '-p', root)
const consoleProject = tsc('-p', join(root, 'console'))

test('the project typechecks with tsc --noEmit', async () => {
  const result = await project
  expect(result.output).toBe('')
  expect(result.exitCode).toBe(0)
  // A bound on the compiler finishing, not a speed target.
}, 240_000)

test('the console (console/, its own settings: Preact JSX, the DOM) typechecks with tsc -p console', async () => {
  const result = await consoleProject
  expect(result.output).toBe('')
  expect(result.exitCode).toBe(0)
}, 240_000)
