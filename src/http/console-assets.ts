/**
 * The console's built files (console/, built by console/bundle.ts at transpile time). Imported
 * lazily by http/console.ts, so that only a process that serves the console pays for the build.
 */
import { bundleConsole } from '../../console/bundle' with { type: 'macro' }

export const CONSOLE_FILES = bundleConsole()
