/**
 * Serving (`flagstore`, `flagstore serve`): the only code that reads the environment for the
 * server, opens the data directory, listens and handles signals. main.ts loads it only to serve.
 */
import { mkdirSync, statSync } from 'node:fs'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { dirname } from 'node:path'
import { createApp } from './app'
import { Logger, logWritten } from './log'
import { ConfigError, readConfig, type Config } from './config'
import { ServiceStarting } from './errors'
import { errorResponse } from './http/errors'
import { exactPaths, rawPathRoutes } from './http/routing'
import { DataDirError, describeIoError, DIR_MODE, StoreLoadError } from './storage/files'
import { DataDirLock, DataDirLockError } from './storage/lock'
import { movedProblem } from './storage/moved'
import { DatabaseStartError } from './storage/postgres-connect'
import { createServices, initialise, stopWorkers } from './services'
import { openDatabaseStore, openStore } from './open-store'
import { SEARCH_WAIT_SECONDS } from './features/events/events.service'
import { worked } from './workers/garbage'

function fail(message: string): never {
  console.error(`Cannot start: ${message}`)
  process.exit(1)
}

/** A data file that cannot be trusted stops the start, whether found opening the store or loading the log. */
function failOnStoreLoad(error: unknown): never {
  if (error instanceof DataDirError || error instanceof DatabaseStartError) fail(error.message)
  if (error instanceof StoreLoadError) fail(`${error.message}. The file was left as it is; repair or move it away.`)
  throw error
}

function exists(path: string): boolean {
  try {
    statSync(path)
    return true
  } catch {
    return false
  }
}

/** Makes DATA_DIR if it is missing; a file where it or a parent should be is named as such. */
function makeDataDir(dataDir: string): void {
  try {
    // Parents made here get the same mode: they hold nothing but the data directory.
    mkdirSync(dataDir, { recursive: true, mode: DIR_MODE })
    return
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') fail(`DATA_DIR ${dataDir} is a file, not a directory`)
    if (code === 'ENOTDIR') {
      let parent = dirname(dataDir)
      // The nearest parent that exists: there a file stands where a directory should.
      while (parent !== dirname(parent) && !exists(parent)) parent = dirname(parent)
      fail(`DATA_DIR ${dataDir} cannot be created: ${parent} is a file, not a directory`)
    }
    fail(`DATA_DIR ${dataDir} cannot be created: ${describeIoError(error)}`)
  }
}

/** Why the server could not listen, said in terms of PORT and HOST. */
function listenProblem(config: Config, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code
  const where = `HOST ${config.host} and PORT ${config.port}`
  if (code === 'EADDRINUSE')
    return `PORT ${config.port} is already in use on HOST ${config.host}: another process listens there (EADDRINUSE)`
  if (code === 'EADDRNOTAVAIL')
    return `HOST ${config.host} is not an address of this machine (EADDRNOTAVAIL); give one of its addresses, or 0.0.0.0 for all`
  if (code === 'EACCES')
    return `PORT ${config.port} on HOST ${config.host} needs privileges this process does not have (EACCES); use a port above 1023`
  return `cannot listen on ${where}: ${describeIoError(error)}`
}

/** A HOST that is a name must resolve: Bun says only "invalid argument" when it does not. */
async function checkHost(host: string): Promise<void> {
  if (isIP(host) !== 0) return
  try {
    await lookup(host)
  } catch (error) {
    fail(`HOST ${host} is not an address, and it cannot be resolved to one: ${describeIoError(error)}`)
  }
}

/** What is answered between listening and the store being open. */
const starting = () => errorResponse(new ServiceStarting('The service is starting: the store is still opening'))

export async function serve(): Promise<void> {
  let config
  try {
    config = readConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message)
    throw error
  }
  // On PostgreSQL there is no data directory: several instances share the database.
  if (config.database === null) {
    // A directory moved to PostgreSQL is out of date: serving it would quietly lose every write made there.
    const moved = movedProblem(config.dataDir)
    if (moved) fail(moved)
    makeDataDir(config.dataDir)
    // Before anything in the directory is read or written; the lock's descriptor stays open, so it
    // is held until the process ends.
    try {
      DataDirLock.acquire(config.dataDir)
    } catch (error) {
      if (error instanceof DataDirLockError) fail(error.message)
      throw error
    }
  }
  // Listening comes before the store opens, so that a port or address that cannot be had stops the
  // start with nothing written in the directory (no seed, no admin token: the lock's file at most),
  // and the first admin token is made only once the server is reachable (its secret cannot be lost
  // to a failed listen). Until the app is ready every request is answered 503.
  await checkHost(config.host)
  let handle: (request: Request) => Response | Promise<Response> = starting
  const serveRequest = (request: Request) => (worked(), handle(request))
  let server: ReturnType<typeof Bun.serve>
  try {
    // Bun's own body limit resets the connection; ours answers 413 with JSON, so Bun's is set out of the way.
    server = Bun.serve({
      port: config.port,
      hostname: config.host,
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // Every path passes through Bun's router, which sees the segments as sent (http/routing.ts).
      // Each request counts as work: a full collection runs once the server falls idle (workers/garbage.ts).
      routes: rawPathRoutes(serveRequest),
      fetch: serveRequest,
    })
  } catch (error) {
    fail(listenProblem(config, error))
  }
  let store
  try {
    store = config.database
      ? await openDatabaseStore(config.database, { checkpointAfterBytes: config.checkpointAfterBytes })
      : await openStore(config.dataDir, { sync: config.sync, checkpointAfterBytes: config.checkpointAfterBytes })
  } catch (error) {
    failOnStoreLoad(error)
  }
  const services = createServices(store, {
    metricsFlushMs: config.metricsFlushMs,
    changeRequestsForAdminTokens: config.changeRequestsForAdminTokens,
    session: { ttlMs: config.sessionTtlHours * 3600_000, secureCookies: config.secureCookies },
    sso: config.sso,
    streaming: {
      maxStreams: config.streamingMaxStreams,
      heartbeatMs: config.streamingHeartbeatMs,
      maxStreamsPerToken: config.streamingMaxStreamsPerToken,
      maxStreamsPerAddress: config.streamingMaxStreamsPerAddress,
      maxUnsentBytes: config.streamingMaxUnsentBytes,
    },
    streamingBufferChanges: config.streamingBufferChanges,
    searchCacheDir: config.searchCacheDir,
    addons: {
      publicUrl: config.publicUrl,
      allowPrivate: config.addonsAllowPrivateTargets,
      retryBaseMs: config.addonsRetryBaseMs,
    },
  })
  const generatedSecret = await initialise(services, config.initAdminTokens)
  const generatedPassword = await services.users.bootstrap(config.defaultAdminUsername, config.defaultAdminPassword)
  if (generatedPassword) {
    console.error(
      `\n=== flagstore: console user created ===\nSign in at / as "${config.defaultAdminUsername}" with this password, shown only this once (only an argon2id hash is stored):\n\n  ${generatedPassword}\n\n` +
        `(UNLEASH_DEFAULT_ADMIN_USERNAME and UNLEASH_DEFAULT_ADMIN_PASSWORD choose them.)\n=======================================\n`,
    )
  }
  if (generatedSecret) {
    // Said the moment its commit returns (durable), on standard error and outside the JSON log lines.
    console.error(
      `\n=== flagstore: admin API token created ===\nIts secret is shown only this once (only a hash is stored):\n\n  ${generatedSecret}\n\n` +
        `Keep it now: it cannot be shown again. (INIT_ADMIN_API_TOKENS gives admin secrets of your choosing.)\n==========================================\n`,
    )
  }
  const log = new Logger(config.logLevel)
  for (const { projectId, pattern, problem } of services.patterns.unusable()) {
    log.warn('naming pattern cannot be used; names checked against it are refused until it is saved again', {
      project: projectId,
      pattern,
      problem,
    })
  }
  services.streaming.holdOpen = request => server.timeout(request, 0)
  // A search that waits for a database's log to be copied, or reads the log while segments are
  // rebuilt: minutes at worst, not forever.
  services.events.holdOpen = request => server.timeout(request, SEARCH_WAIT_SECONDS)
  const app = createApp(services, config, log, { socketAddress: request => server.requestIP(request)?.address })
  handle = request => app.handle(request)
  // Now that the routes are known, the paths without parameters become Bun's static routes (http/routing.ts).
  server.reload({ routes: rawPathRoutes(serveRequest, exactPaths(app.routes)), fetch: serveRequest })
  log.info('listening', {
    url: `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${server.port}${config.basePath}`,
    swagger: `http://localhost:${server.port}${config.basePath}/swagger`,
    ...(config.database ? { store: store.log.name } : { dataDir: config.dataDir, sync: config.sync }),
  })

  // The event log loads after the server listens: /ready answers 503 until then.
  const loadStarted = performance.now()
  services.events.onNotice = message => log.warn('event search', { message })
  services.events.onRebuilt = ({ events, segments, ms }) =>
    log.info('search segments rebuilt', {
      events,
      segments,
      ms,
      eventsPerSecond: Math.round((events / Math.max(ms, 1)) * 1000),
    })
  // The collector counts the mapped segment files in its heap size (as ArrayBuffers' bytes): told
  // apart, or a data directory's 1.2 GB of segments reads as a 1.4 GB heap (measured at 10M events).
  services.events.onIndexBuilt = ({ buildMs, heapBytes, segmentBytes }) =>
    log.info('search index built', {
      buildMs,
      workerHeapMiB: Math.round((heapBytes - segmentBytes) / 1048576),
      segmentsMappedMiB: Math.round(segmentBytes / 1048576),
    })
  services.events.load().then(
    // On PostgreSQL, how many events came from the local copy and how many from the database.
    () =>
      log.info('ready', {
        events: store.lastEventId,
        loadMs: Math.round(performance.now() - loadStarted),
        ...services.events.copyReport,
      }),
    error => {
      if (error instanceof StoreLoadError) failOnStoreLoad(error)
      console.error(error)
      process.exit(1)
    },
  )

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    const started = performance.now()
    log.info('stopping', { signal })
    try {
      // Streams never finish on their own: they are told to poll and ended first, or stop() would wait for them.
      services.streaming.close()
      await server.stop()
      // Every acknowledged write is durable in the journal whether or not the checkpoint can be written.
      const problem = await store.close()
      if (problem)
        console.error(
          `Stopped without a new checkpoint (${problem}); state.journal.jsonl holds every acknowledged write.`,
        )
    } catch (error) {
      console.error(`Stopped with an error: ${error instanceof Error ? error.message : String(error)}`)
      process.exitCode = 1
    }
    stopWorkers(services)
    // Last, once the server, the streams, the store and the workers are closed.
    log.info('stopped', {
      signal,
      exitCode: process.exitCode ?? 0,
      durationMs: Math.round(performance.now() - started),
    })
    // The lines still on their way out (log.ts), for as long as an output that takes them needs.
    await logWritten(2000)
    process.exit()
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}
