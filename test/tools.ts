/**
 * The programs some tests need besides Bun, and the one way a test says it needs one: `needs(tool)`
 * gives `test` and `describe` that are the ordinary ones when the tool is there. Without it, a test
 * is skipped and the run says why (once per tool); under CI (`CI=true`) it fails instead, naming
 * the tool, so a run that could not test something does not pass as if it had.
 *
 * Skips by design are not this: a PostgreSQL-only test in the files run (`ON_POSTGRES`,
 * test/test-store.ts) is tested by the other run.
 */
import { describe, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { postgresBinaries } from './postgres-cluster'

export interface Tool {
  /** What is missing, as the message names it. */
  name: string
  found: boolean
  /** How to get it. */
  install: string
}

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Every tool a test needs; .ci/run installs Chromium and PostgreSQL when they are missing. */
export const TOOLS = {
  chromium: {
    name: `Chromium (${CHROMIUM_PATH})`,
    found: existsSync(CHROMIUM_PATH),
    install: "install Debian's chromium package, or set CHROMIUM_PATH",
  },
  postgres: {
    name: "PostgreSQL's pg_ctl",
    found: postgresBinaries() !== null,
    install: "install Debian's postgresql package",
  },
  systemdAnalyze: {
    name: 'systemd-analyze',
    found: Bun.which('systemd-analyze') !== null,
    install: "install Debian's systemd package",
  },
  smaps: { name: '/proc/self/smaps', found: existsSync('/proc/self/smaps'), install: 'run on Linux' },
} satisfies Record<string, Tool>

export const UNDER_CI = process.env.CI === 'true'

type Body = () => void | Promise<unknown>
type TestLike = (name: string, body: Body, timeout?: number) => void
type DescribeLike = (name: string, body: () => void) => void

const warned = new Set<string>()

/** The message a test without `tool` fails with under CI. */
export function missingMessage(tool: Tool): string {
  return `${tool.name} is missing (${tool.install}): under CI a test that needs it fails instead of being skipped`
}

/** `test` and `describe` for tests that need `tool` (see the top of this file). `ci` is for this module's own test. */
export function needs(tool: Tool, ci = UNDER_CI): { test: TestLike; describe: DescribeLike } {
  if (tool.found) return { test, describe }
  if (ci) {
    const failing: TestLike = name =>
      test(name, () => {
        throw new Error(missingMessage(tool))
      })
    return { test: failing, describe: name => describe(name, () => failing(`needs ${tool.name}`, () => {})) }
  }
  if (!warned.has(tool.name)) {
    warned.add(tool.name)
    console.warn(`skipped: the tests that need ${tool.name}, which is missing (${tool.install})`)
  }
  return { test: test.skip as TestLike, describe: describe.skip as DescribeLike }
}
