/**
 * Debian's Chromium for the tests that drive a real browser (.ci/run installs it when missing): where
 * it is, and one way to launch it headless. A test file without it skips its browser tests and says so.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)

/** Says, once per test file, that `what` is skipped when there is no browser. */
export function warnIfNoChromium(what: string): void {
  if (!hasChromium) console.warn(`${what} skipped: no Chromium at ${CHROMIUM} (install Debian's chromium package, or set CHROMIUM_PATH)`)
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}
