/**
 * Which store the suite runs on: the files (the default), or PostgreSQL with
 * `FLAGSTORE_TEST_STORE=postgres`. On PostgreSQL every store a test opens without a data directory
 * (`openTestStore(null)`, what `makeApi()` does) gets a schema of its own in one database of a
 * private cluster, started on first use by this test process and stopped when it exits. A test
 * that gives a data directory is about the files and runs on them either way.
 */
import type { DatabaseConfig } from '../src/config'
import { openDatabaseStore, openStore, type StoreOptions } from '../src/services'
import type { Store } from '../src/storage/store'
import { startPostgres, type PostgresCluster } from './postgres-cluster'

export const TEST_STORE: 'files' | 'postgres' = process.env.FLAGSTORE_TEST_STORE === 'postgres' ? 'postgres' : 'files'
export const ON_POSTGRES = TEST_STORE === 'postgres'

let cluster: Promise<PostgresCluster> | null = null
let database: Promise<string> | null = null
let schemas = 0

/** The private cluster of this test process, started on first use and stopped when the process exits. */
export function testCluster(): Promise<PostgresCluster> {
  cluster ??= startPostgres({ fsync: false }).then((started) => {
    process.on('exit', () => started.stopSync())
    return started
  })
  return cluster
}

/** The settings of a database on `cluster`, as DATABASE_URL would give them. */
export function databaseConfig(cluster: PostgresCluster, name: string, schema = 'public'): DatabaseConfig {
  const all = 'DATABASE_URL'
  return {
    host: '127.0.0.1',
    port: cluster.port,
    database: name,
    username: 'postgres',
    password: '',
    ssl: false,
    schema,
    settingOf: { host: all, port: all, database: all, username: all, password: all, ssl: all, schema: 'DATABASE_SCHEMA' },
  }
}

/** A new, empty place for a store: a schema of its own in this process's test database. */
export async function freshDatabase(): Promise<DatabaseConfig> {
  const pg = await testCluster()
  database ??= pg.createDatabase('flagstore_test')
  await database
  return databaseConfig(pg, 'flagstore_test', `store_${process.pid}_${++schemas}`)
}

/** Opens a store as the suite's store kind says: on `dataDir` (files), in memory, or in a fresh PostgreSQL schema. */
export async function openTestStore(dataDir: string | null, options: StoreOptions = { sync: true }): Promise<Store> {
  if (dataDir !== null || !ON_POSTGRES) return openStore(dataDir, options)
  return openDatabaseStore(await freshDatabase(), { checkpointAfterBytes: options.checkpointAfterBytes, max: 2, idleTimeout: 5 })
}
