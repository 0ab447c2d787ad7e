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
