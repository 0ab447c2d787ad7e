/**
 * A Bun macro (imported `with { type: 'macro' }` by src/http/console-assets.ts): runs while that
 * file is transpiled, so `bun build --compile` embeds the built console in the executable as
 * string literals, and `bun run` builds it when the console is first asked for. Bun.build cannot
 * run inside a macro (the bundler would wait on itself), so the build runs as a child process.
 */
export interface ConsoleFile {
  name: string
  type: string
  text: string
}

export function bundleConsole(): ConsoleFile[] {
  const result = Bun.spawnSync([process.execPath, `${import.meta.dir}/build.ts`], { stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`the console did not build:\n${result.stderr.toString()}`)
  return JSON.parse(result.stdout.toString()) as ConsoleFile[]
}
