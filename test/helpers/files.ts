/** Temporary directories and what a test leaves to undo. */
import { afterEach } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

export function tempDir(prefix = 'flags-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/**
 * What each test of a file leaves to undo (servers to stop, directories to remove), undone after
 * each test, last registered first. Call it at the top of the test file: Bun runs a hook registered
 * by a shared module for the first file of a run only.
 */
export function cleanupAfterEach(): {
  /** Undone after the test, before what was registered earlier. */
  later(undo: () => unknown): void
  /** A new temporary directory, removed after the test. */
  newDir(prefix?: string): string
} {
  const pending: (() => unknown)[] = []
  afterEach(async () => {
    for (const undo of pending.splice(0).reverse()) await undo()
  })
  return {
    later: undo => pending.push(undo),
    newDir: prefix => {
      const dir = tempDir(prefix)
      pending.push(dir.remove)
      return dir.path
    },
  }
}

/** Every file under `dir` with its bytes (base64), by path relative to `dir`; a directory as 'directory'. */
export function dirSnapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {}
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).sort((a, b) =>
    join(a.parentPath, a.name) < join(b.parentPath, b.name) ? -1 : 1,
  )) {
    const path = join(entry.parentPath, entry.name)
    files[relative(dir, path)] = entry.isFile() ? readFileSync(path).toString('base64') : 'directory'
  }
  return files
}
