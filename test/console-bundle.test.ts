/**
 * The console's weight: every script and style it serves, gzipped as the server sends them, stays
 * within 200 KB (the budget in docs/limits.md). A size, not a timing: it fails the same on any machine.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const BUDGET = 200 * 1024

test('the console’s scripts and styles are at most 200 KB gzipped', () => {
  const built = Bun.spawnSync([process.execPath, join(import.meta.dir, '../console/build.ts')], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  expect(built.stderr.toString()).toBe('')
  const files = JSON.parse(built.stdout.toString()) as { name: string; text: string }[]
  const sizes = files.map(file => ({
    name: file.name,
    gzipped: Bun.gzipSync(new TextEncoder().encode(file.text)).length,
  }))
  const total = sizes.reduce((sum, file) => sum + file.gzipped, 0)
  console.log(sizes.map(file => `${file.name}: ${(file.gzipped / 1024).toFixed(1)} KB gzipped`).join('\n'))
  expect(sizes.some(file => file.name.endsWith('.js'))).toBe(true)
  expect(sizes.some(file => file.name.endsWith('.css'))).toBe(true)
  expect(total).toBeLessThanOrEqual(BUDGET)
}, 60_000)
