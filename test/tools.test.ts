/**
 * `needs(tool)` (test/tools.ts): a test whose tool is missing fails under CI, naming the tool, and
 * is skipped with the reason printed otherwise. Each case is a small test file run by `bun test` in
 * a child process, as the suite runs it.
 */
import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './helpers'

const dir = tempDir('flags-needs-')
afterAll(() => dir.remove())

const TOOLS_MODULE = JSON.stringify(join(import.meta.dir, 'tools.ts'))
const MISSING = "{ name: 'the-missing-tool', found: false, install: 'install the-missing-tool' }"

/** Runs a test file using `needs(tool).kind` with CI set to `ci` (or unset), and gives its summary. */
async function run(kind: 'test' | 'describe', tool: string, ci: string | undefined) {
  const file = join(dir.path, `${kind}-${ci ?? 'local'}-${tool === MISSING ? 'missing' : 'found'}.test.ts`)
  const body =
    kind === 'test'
      ? "needs(tool).test('uses the tool', () => {})"
      : "needs(tool).describe('with the tool', () => { test('uses the tool', () => {}) })"
  writeFileSync(
    file,
    `import { test } from 'bun:test'\nimport { needs } from ${TOOLS_MODULE}\nconst tool = ${tool}\n${body}\n`,
  )
  const env: Record<string, string | undefined> = { ...process.env, CI: ci }
  if (ci === undefined) delete env.CI
  const child = Bun.spawn([process.execPath, 'test', file], { cwd: dir.path, env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  const count = (word: string) => Number(`${out}\n${err}`.match(new RegExp(`^\\s*(\\d+) ${word}$`, 'm'))?.[1] ?? 0)
  return { code, pass: count('pass'), skip: count('skip'), fail: count('fail'), output: `${out}\n${err}` }
}

for (const kind of ['test', 'describe'] as const) {
  test(`needs(tool).${kind}: under CI=true a missing tool fails the run, and the failure names the tool`, async () => {
    const result = await run(kind, MISSING, 'true')
    expect({ code: result.code, pass: result.pass, skip: result.skip, fail: result.fail }).toEqual({
      code: 1,
      pass: 0,
      skip: 0,
      fail: 1,
    })
    expect(result.output).toContain(
      'the-missing-tool is missing (install the-missing-tool): under CI a test that needs it fails',
    )
  }, 30_000)

  test(`needs(tool).${kind}: outside CI a missing tool skips the test and says why`, async () => {
    const result = await run(kind, MISSING, undefined)
    expect({ code: result.code, pass: result.pass, skip: result.skip, fail: result.fail }).toEqual({
      code: 0,
      pass: 0,
      skip: 1,
      fail: 0,
    })
    expect(result.output).toContain(
      'skipped: the tests that need the-missing-tool, which is missing (install the-missing-tool)',
    )
  }, 30_000)

  test(`needs(tool).${kind}: a tool that is there runs the test, under CI or not`, async () => {
    const found = "{ name: 'the-tool', found: true, install: 'nothing' }"
    for (const ci of ['true', undefined]) {
      const result = await run(kind, found, ci)
      expect({ ci, code: result.code, pass: result.pass, skip: result.skip, fail: result.fail }).toEqual({
        ci,
        code: 0,
        pass: 1,
        skip: 0,
        fail: 0,
      })
    }
  }, 30_000)
}
