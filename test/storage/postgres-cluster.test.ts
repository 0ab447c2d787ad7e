import { expect, test } from 'bun:test'
import { postgresBinaries, startPostgres } from '../postgres-cluster'

// The private cluster every PostgreSQL test and benchmark starts; .ci/run installs the package.
test.skipIf(!postgresBinaries())('a private PostgreSQL starts on a free port, answers, survives a halt and is removed', async () => {
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
}, 90_000)

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

// `bun test` runs no exit handlers and a test process can be killed: the cluster's reaper stops it
// and removes its files once the process that started it has ended, however it ended.
for (const ending of ['exits without stopping it', 'is killed (SIGKILL)'] as const) {
  test.skipIf(!postgresBinaries())(`a cluster is stopped and removed when the process that started it ${ending}`, async () => {
    const program = `
      import { startPostgres } from ${JSON.stringify(`${import.meta.dir}/../postgres-cluster.ts`)}
      const cluster = await startPostgres({ fsync: false })
      console.log(JSON.stringify({ dir: cluster.dir, port: cluster.port }))
      ${ending === 'exits without stopping it' ? 'process.exit(0)' : "process.kill(process.pid, 'SIGKILL')"}
    `
    const child = Bun.spawn([process.execPath, '-e', program], { stdout: 'pipe', stderr: 'inherit' })
    const [out] = await Promise.all([new Response(child.stdout).text(), child.exited])
    const { dir, port } = JSON.parse(out.trim()) as { dir: string; port: number }
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline && ((await Bun.file(`${dir}/data/PG_VERSION`).exists()) || (await listening(port)))) await Bun.sleep(200)
    expect(await Bun.file(`${dir}/data/PG_VERSION`).exists()).toBe(false)
    expect(await listening(port)).toBe(false)
  }, 90_000)
}
