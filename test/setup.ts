/**
 * Preloaded before every test file (bunfig.toml). Bun's default per-test timeout is 5 s and
 * bunfig.toml has no key for it (a `[test] timeout` there is silently ignored), so it is set here:
 * tests that start servers, spawn the CLI or build the executable take longer than 5 s on a loaded
 * machine, and must fail on a wrong answer, not on a busy CPU.
 */
import { setDefaultTimeout } from 'bun:test'

export const DEFAULT_TEST_TIMEOUT_MS = 30_000

setDefaultTimeout(DEFAULT_TEST_TIMEOUT_MS)
