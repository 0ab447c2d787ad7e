import { expect } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres } from '../postgres-cluster'
import { needs, TOOLS } from '../tools'

const withPostgres = needs(TOOLS.postgres)

// The private cluster every PostgreSQL test and benchmark starts; .ci/run installs the package.
withPostgres.test(
  'a private PostgreSQL starts on a free port, answers, survives a halt and is removed',
  async () => {
    const cluster = await startPostgres()
    try {
      const url = await cluster.createDatabase('probe_db')
      const sql = new Bun.SQL(url, { max: 1 })
      const [row] = await sql`SELECT current_database() AS name, current_setting('listen_addresses') AS listen`
      expect(row).toEqual({ name: 'probe_db', listen: '127.0.0.1' })
      await sql.close()
      await cluster.halt()
      await cluster.start()
      const again = new Bun.SQL(url, { max: 1 })
      expect((await again`SELECT 1 AS one`)[0].one).toBe(1)
      await again.close()
    } finally {
      await cluster.stop()
    }
    expect(await Bun.file(`${cluster.dir}/data/PG_VERSION`).exists()).toBe(false)
  },
  90_000,
)

/** Whether something still listens on the loopback port. */
async function listening(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
    socket.end()
    return true
  } catch {
    return false
  }
}

/** Waits (30 s at most) until the cluster's files and port are gone, and checks that they are. */
async function expectGone({ dir, port }: { dir: string; port: number }): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline && ((await Bun.file(`${dir}/data/PG_VERSION`).exists()) || (await listening(port))))
    await Bun.sleep(200)
  expect(await Bun.file(`${dir}/data/PG_VERSION`).exists()).toBe(false)
  expect(await listening(port)).toBe(false)
}

// `bun test` runs no exit handlers and a test process can be killed: the cluster's reaper stops it
// and removes its files once the process that started it has ended, however it ended.
for (const ending of ['exits without stopping it', 'is killed (SIGKILL)'] as const) {
  withPostgres.test(
    `a cluster is stopped and removed when the process that started it ${ending}`,
    async () => {
      const program = `
      import { startPostgres } from ${JSON.stringify(`${import.meta.dir}/../postgres-cluster.ts`)}
      const cluster = await startPostgres({ fsync: false })
      console.log(JSON.stringify({ dir: cluster.dir, port: cluster.port }))
      ${ending === 'exits without stopping it' ? 'process.exit(0)' : "process.kill(process.pid, 'SIGKILL')"}
    `
      const child = Bun.spawn([process.execPath, '-e', program], { stdout: 'pipe', stderr: 'inherit' })
      const [out] = await Promise.all([new Response(child.stdout).text(), child.exited])
      await expectGone(JSON.parse(out.trim()))
    },
    90_000,
  )
}

// As the suite runs them: test files in `bun test --parallel` workers, whose own children die with
// them (the reaper forks away from the worker).
withPostgres.test(
  'clusters started by test files in bun test --parallel workers are stopped and removed after the run',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cluster-reaper-'))
    try {
      const cluster = JSON.stringify(`${import.meta.dir}/../postgres-cluster.ts`)
      for (const name of ['a', 'b']) {
        const file = JSON.stringify(join(dir, `${name}.json`))
        writeFileSync(
          join(dir, `${name}.test.ts`),
          `import { test } from 'bun:test'\nimport { writeFileSync } from 'node:fs'\nimport { startPostgres } from ${cluster}\n` +
            `test('starts a cluster and leaves it', async () => {\n  const started = await startPostgres({ fsync: false })\n  writeFileSync(${file}, JSON.stringify({ dir: started.dir, port: started.port }))\n}, 60_000)\n`,
        )
      }
      const run = Bun.spawn(
        [process.execPath, 'test', '--parallel', '--timeout', '60000', './a.test.ts', './b.test.ts'],
        { cwd: dir, stdout: 'pipe', stderr: 'pipe' },
      )
      const [, errors, code] = await Promise.all([
        new Response(run.stdout).text(),
        new Response(run.stderr).text(),
        run.exited,
      ])
      expect({ code, errors: code === 0 ? '' : errors }).toEqual({ code: 0, errors: '' })
      for (const name of ['a', 'b']) await expectGone(JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  },
  120_000,
)
