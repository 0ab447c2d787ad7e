/** The only file that reads the environment, opens the data directory, listens and handles signals. */
import { mkdirSync } from 'node:fs'
import { createApp } from './app'
import { Logger } from './log'
import { ConfigError, readConfig } from './config'
import { StoreLoadError } from './storage/files'
import { createServices, initialise, openStore, stopWorkers } from './services'

function fail(message: string): never {
  console.error(`Cannot start: ${message}`)
  process.exit(1)
}

/** A data file that cannot be trusted stops the start, whether found opening the store or loading the log. */
function failOnStoreLoad(error: unknown): never {
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
  mkdirSync(config.dataDir, { recursive: true })
  let store
  try {
    store = await openStore(config.dataDir, { sync: config.sync })
  } catch (error) {
    failOnStoreLoad(error)
  }
  const services = createServices(store)
  const generatedSecret = await initialise(services, config.initAdminTokens)
  const log = new Logger(config.logLevel)
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
    await server.stop()
    await store.close()
    stopWorkers(services)
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

await main()
