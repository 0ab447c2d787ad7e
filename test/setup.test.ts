/**
 * The per-test timeout set by test/setup.ts is the one in force: a test that takes longer than
 * Bun's own 5 s default still passes. (It sleeps, costing time but no CPU.)
 */
import { expect, test } from 'bun:test'
import { DEFAULT_TEST_TIMEOUT_MS } from './setup'

test('a test may take longer than Bun\'s 5 s default: the preloaded timeout applies', async () => {
  expect(DEFAULT_TEST_TIMEOUT_MS).toBeGreaterThan(5_000)
  const started = performance.now()
  await Bun.sleep(5_500)
  expect(performance.now() - started).toBeGreaterThanOrEqual(5_400)
})
