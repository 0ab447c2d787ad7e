/**
 * Debian's Chromium for the tests that drive a real browser (.ci/run installs it when missing): where
 * it is, and one way to launch it headless. Its tests go through `withChromium` (test/tools.ts).
 */
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_PATH, needs, TOOLS } from '../tools'

export const hasChromium = TOOLS.chromium.found
/** `test` and `describe` for the tests that drive Chromium: skipped without it, failed under CI. */
export const withChromium = needs(TOOLS.chromium)

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
