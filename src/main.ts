/** The only file that reads the environment, opens the data directory, listens and handles signals. */
import { mkdirSync } from 'node:fs'
import { createApp } from './app'
import { Logger } from './log'
import { ConfigError, readConfig } from './config'
import { DataDirError, describeIoError, StoreLoadError } from './storage/files'
import { DataDirLock, DataDirLockError } from './storage/lock'
import { createServices, initialise, openStore, stopWorkers } from './services'

function fail(message: string): never {
  console.error(`Cannot start: ${message}`)
  process.exit(1)
}

/** A data file that cannot be trusted stops the start, whether found opening the store or loading the log. */
function failOnStoreLoad(error: unknown): never {
  if (error instanceof DataDirError) fail(error.message)
  if (error instanceof StoreLoadError) fail(`${error.message}. The file was left as it is; repair or move it away.`)
  throw error
}

async function main() {
  let config
  try {
    config = readConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message)
    throw error
  }
  try {
    mkdirSync(config.dataDir, { recursive: true })
  } catch (error) {
    fail(`DATA_DIR ${config.dataDir} cannot be created: ${describeIoError(error)}`)
  }
  // Before anything in the directory is read or written; the lock's descriptor stays open, so it
  // is held until the process ends.
  try {
    DataDirLock.acquire(config.dataDir)
  } catch (error) {
    if (error instanceof DataDirLockError) fail(error.message)
    throw error
  }
  let store
  try {
    store = await openStore(config.dataDir, { sync: config.sync, checkpointAfterBytes: config.checkpointAfterBytes })
  } catch (error) {
    failOnStoreLoad(error)
  }
  const services = createServices(store, { metricsFlushMs: config.metricsFlushMs })
  const generatedSecret = await initialise(services, config.initAdminTokens)
  const log = new Logger(config.logLevel)
  for (const { projectId, pattern, problem } of services.patterns.unusable()) {
    log.warn('naming pattern cannot be used; names checked against it are refused until it is saved again', { project: projectId, pattern, problem })
  }
  const app = createApp(services, config, log, { socketAddress: (request) => server.requestIP(request)?.address })
  // Bun's own body limit resets the connection; ours answers 413 with JSON, so Bun's is set out of the way.
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch: (request) => app.handle(request),
  })
  if (generatedSecret) {
    console.log(`Created an admin API token. Its secret is shown only this once:\n\n  ${generatedSecret}\n`)
  }
  log.info('listening', {
    url: `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${server.port}`,
    swagger: `http://localhost:${server.port}/swagger`,
    dataDir: config.dataDir,
    sync: config.sync,
  })

  // The event log loads after the server listens: /ready answers 503 until then.
  const loadStarted = performance.now()
  services.events.onIndexBuilt = ({ buildMs, heapBytes }) =>
    log.info('search index built', { buildMs, workerHeapMiB: Math.round(heapBytes / 1048576) })
  services.events.load().then(
    () => log.info('ready', { events: store.lastEventId, loadMs: Math.round(performance.now() - loadStarted) }),
    (error) => {
      if (error instanceof StoreLoadError) failOnStoreLoad(error)
      console.error(error)
      process.exit(1)
    },
  )

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('stopping', { signal })
    try {
      await server.stop()
      // Every acknowledged write is durable in the journal whether or not the checkpoint can be written.
      const problem = await store.close()
      if (problem) console.error(`Stopped without a new checkpoint (${problem}); state.journal.jsonl holds every acknowledged write.`)
    } catch (error) {
      console.error(`Stopped with an error: ${error instanceof Error ? error.message : String(error)}`)
      process.exitCode = 1
    }
    stopWorkers(services)
    process.exit()
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

await main()
