/**
 * Which store the suite runs on: the files (the default), or PostgreSQL with
 * `FLAGSTORE_TEST_STORE=postgres`. On PostgreSQL every store a test opens without a data directory
 * (`openTestStore(null)`, what `makeApi()` does) gets a schema of its own in one database of a
 * private cluster: the one test/run-postgres.ts starts for the whole run (`npm run test:postgres`),
 * or else one started on first use by this test process and stopped by the cluster's reaper once the
 * process has ended. A test that gives a data directory is about the files and runs on them either way.
 */
import { SQL } from 'bun'
import type { DatabaseConfig } from '../src/config'
import { openDatabaseStore, openStore, type StoreOptions } from '../src/open-store'
import type { Store } from '../src/storage/store'
import { SHARED_CLUSTER_VARIABLE, sharedCluster, startPostgres, type SharedCluster } from './postgres-cluster'

export const TEST_STORE: 'files' | 'postgres' = process.env.FLAGSTORE_TEST_STORE === 'postgres' ? 'postgres' : 'files'
export const ON_POSTGRES = TEST_STORE === 'postgres'

let cluster: Promise<SharedCluster> | null = null
let database: Promise<string> | null = null
let schemas = 0
const sharedPort = Number(process.env[SHARED_CLUSTER_VARIABLE] ?? '') || null
/** Schema names unique in the run, whichever process makes them. */
const run = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`

/**
 * The cluster of this run (test/run-postgres.ts), else one private to this test process, started on
 * first use and stopped when the process has ended (its reaper).
 */
export function testCluster(): Promise<SharedCluster> {
  cluster ??= sharedPort ? Promise.resolve(sharedCluster(sharedPort)) : startPostgres({ fsync: false })
  return cluster
}

/** The settings of a database on `cluster`, as DATABASE_URL would give them. */
export function databaseConfig(cluster: Pick<SharedCluster, 'port'>, name: string, schema = 'public'): DatabaseConfig {
  const all = 'DATABASE_URL'
  return {
    host: '127.0.0.1',
    port: cluster.port,
    database: name,
    username: 'postgres',
    password: '',
    ssl: false,
    schema,
    settingOf: {
      host: all,
      port: all,
      database: all,
      username: all,
      password: all,
      ssl: all,
      schema: 'DATABASE_SCHEMA',
    },
  }
}

/** The database the stores of a run make their schemas in: test/run-postgres.ts makes it for the run. */
export const TEST_DATABASE = 'flagstore_test'

/** A new, empty place for a store: a schema of its own in the run's test database. */
export async function freshDatabase(): Promise<DatabaseConfig> {
  const pg = await testCluster()
  database ??= sharedPort ? Promise.resolve(pg.urlFor(TEST_DATABASE)) : pg.createDatabase(TEST_DATABASE)
  await database
  return databaseConfig(pg, TEST_DATABASE, `store_${run}_${++schemas}`)
}

/**
 * Schemas of closed test stores, emptied: the next store takes one already migrated. Making a
 * schema (its tables' catalog entries) costs more than the rest of opening a store, and a test
 * process opens a store for nearly every test.
 */
const emptied: DatabaseConfig[] = []
let admin: SQL | null = null

async function recycle(config: DatabaseConfig): Promise<void> {
  admin ??= new SQL({
    hostname: config.host,
    port: config.port,
    username: config.username,
    database: config.database,
    max: 1,
  })
  await admin.unsafe(
    `DELETE FROM "${config.schema}".flagstore_commits; DELETE FROM "${config.schema}".flagstore_events; DELETE FROM "${config.schema}".flagstore_checkpoints; DELETE FROM "${config.schema}".flagstore_meta; DELETE FROM "${config.schema}".flagstore_login_failures`,
  )
  emptied.push(config)
}

/** Opens a store as the suite's store kind says: on `dataDir` (files), in memory, or in a fresh PostgreSQL schema. */
export async function openTestStore(dataDir: string | null, options: StoreOptions = { sync: true }): Promise<Store> {
  if (dataDir !== null || !ON_POSTGRES) return openStore(dataDir, options)
  const config = emptied.pop() ?? (await freshDatabase())
  const store = await openDatabaseStore(config, {
    checkpointAfterBytes: options.checkpointAfterBytes,
    max: 2,
    idleTimeout: 5,
  })
  // Once closed (every write in, every connection given back), its schema is emptied for the next test.
  // (Once only: a store closed twice must not hand its schema to two stores.)
  const close = store.close.bind(store)
  let recycled = false
  store.close = async () => {
    const problem = await close()
    if (!recycled) {
      recycled = true
      await recycle(config).catch(() => {})
    }
    return problem
  }
  return store
}
