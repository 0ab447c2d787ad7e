/**
 * Test helpers: an app on the real store (in memory, or on a temp directory), and a typed client
 * over `app.handle` that reads like the API reference.
 */
import { afterEach, beforeEach, expect, setSystemTime } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp, type App } from '../src/app'
import type { Logger } from '../src/log'
import type { EventRecord } from '../src/storage/records'
import type { FileSystem } from '../src/storage/files'
import {
  createServices,
  initialise,
  openDatabaseStore,
  stopWorkers,
  type ServiceOptions,
  type Services,
} from '../src/services'
import type { DatabaseConfig } from '../src/config'
import { openTestStore } from './test-store'
import { SESSION_COOKIE } from '../src/features/users/sessions.service'
import type { Static } from '@sinclair/typebox'
import type { ErrorSchema } from '../src/http/schemas'
import type { Environment, EnvironmentList } from '../src/features/environments/environments.model'
import type { EventPage } from '../src/features/events/events.model'
import type { Feature, FeatureList, Tag, TagList } from '../src/features/flags/flags.model'
import type { Strategy, VariantList } from '../src/features/flags/strategy.model'
import type { Project, ProjectList } from '../src/features/projects/projects.model'
import type { CreatedToken, TokenList } from '../src/features/tokens/tokens.model'

/** Response bodies, as the route schemas define them. */
export type ErrorBody = Static<typeof ErrorSchema>
export type FlagBody = Static<typeof Feature>
export type FlagListBody = Static<typeof FeatureList>
export type FlagEnvironmentBody = FlagBody['environments'][number]
export type ProjectBody = Static<typeof Project>
export type ProjectListBody = Static<typeof ProjectList>
export type EnvironmentBody = Static<typeof Environment>
export type EnvironmentListBody = Static<typeof EnvironmentList>
export type EventPageBody = Static<typeof EventPage>
export type EventBody = EventPageBody['events'][number]
export type TagBody = Static<typeof Tag>
export type TagListBody = Static<typeof TagList>
export type StrategyBody = Static<typeof Strategy>
export type VariantListBody = Static<typeof VariantList>
export type CreatedTokenBody = Static<typeof CreatedToken>
export type TokenListBody = Static<typeof TokenList>
export type { EventRecord }

export const ADMIN_SECRET = '*:*.test-admin-secret-0123456789abcdef'
export const BODY_LIMIT = 102400
/** The largest page the event search answers. */
const SEARCH_PAGE = 1000

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A timestamp as the API writes it: RFC 3339, UTC, milliseconds. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** Who the events of the bootstrap admin token (ADMIN_SECRET) name. */
export const BOOTSTRAP = { createdBy: 'admin-bootstrap', createdByUserId: -42 }
export const FLAG_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission']

/** Paths of the admin API. */
export const paths = {
  flag: (flag: string, project = 'default') => `/api/admin/projects/${project}/features/${flag}`,
  strategies: (flag: string, environment = 'development', project = 'default') =>
    `${paths.flag(flag, project)}/environments/${environment}/strategies`,
  variants: (flag: string, environment = 'development', project = 'default') =>
    `${paths.flag(flag, project)}/environments/${environment}/variants`,
  tags: (flag: string) => `/api/admin/features/${flag}/tags`,
}

/** `body` is typed as the success answer; read an error's body with `errorOf`. */
export interface ApiResponse<T = unknown> {
  status: number
  body: T
  text: string
  headers: Headers
}

export interface RequestOptions {
  /** JSON body; sent with content-type application/json unless `headers` says otherwise. */
  body?: unknown
  /** A raw body, sent as is. */
  raw?: BodyInit
  /** The Authorization header; defaults to the admin secret. `null` sends none. */
  token?: string | null
  headers?: Record<string, string>
}

export class Api {
  /** Every committed event, oldest first: read from the log at open, then from each commit. */
  private readonly log: EventRecord[] = []

  constructor(
    readonly app: App,
    readonly services: Services,
    readonly dataDir: string | null,
    /** An admin secret this app accepts, for the helpers that read the event log through the API. */
    readonly adminToken = ADMIN_SECRET,
  ) {
    services.store.onCommit(events => this.log.push(...events))
  }

  /** Reads the events already in the log when the app was opened; call it before any write. */
  async loadLog(): Promise<void> {
    const existing: EventRecord[] = []
    await this.services.store.readEvents(event => existing.push(event))
    this.log.unshift(...existing)
  }

  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {}
    const token = options.token === undefined ? ADMIN_SECRET : options.token
    if (token !== null) headers.authorization = token
    let body: BodyInit | undefined
    if (options.raw !== undefined) body = options.raw
    else if (options.body !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(options.body)
    }
    Object.assign(headers, options.headers)
    const response = await this.app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
    const text = await bodyText(response)
    let parsed: unknown
    if (text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    }
    return { status: response.status, body: parsed as T, text, headers: response.headers }
  }

  get = <T = unknown>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options)
  post = <T = unknown>(path: string, body?: unknown, options?: RequestOptions) =>
    this.request<T>('POST', path, { ...options, body })
  put = <T = unknown>(path: string, body?: unknown, options?: RequestOptions) =>
    this.request<T>('PUT', path, { ...options, body })
  patch = <T = unknown>(path: string, body?: unknown, options?: RequestOptions) =>
    this.request<T>('PATCH', path, { ...options, body })
  delete = <T = unknown>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options)

  createProject(id: string, extra: Record<string, unknown> = {}, options?: RequestOptions) {
    return this.post<ProjectBody>('/api/admin/projects', { id, name: id, ...extra }, options)
  }
  /** Creates a project, asserting it is created; returns it. */
  async newProject(id: string, extra: Record<string, unknown> = {}): Promise<ProjectBody> {
    const response = await this.createProject(id, extra)
    expectOk(response, 201)
    return response.body
  }
  /** Creates a flag, asserting it is created; returns it. */
  async newFlag(project: string, name: string, extra: Record<string, unknown> = {}): Promise<FlagBody> {
    const response = await this.createFlag(project, name, extra)
    expectOk(response, 201)
    return response.body
  }
  createFlag(project: string, name: string, extra: Record<string, unknown> = {}, options?: RequestOptions) {
    return this.post<FlagBody>(`/api/admin/projects/${project}/features`, { name, ...extra }, options)
  }
  getFlag(project: string, name: string, options?: RequestOptions) {
    return this.get<FlagBody>(`/api/admin/projects/${project}/features/${name}`, options)
  }
  listFlags(project: string, query = '', options?: RequestOptions) {
    return this.get<FlagListBody>(`/api/admin/projects/${project}/features${query}`, options)
  }
  patchFlag(project: string, name: string, operations: unknown, options?: RequestOptions) {
    return this.patch<FlagBody>(`/api/admin/projects/${project}/features/${name}`, operations, options)
  }
  toggle(project: string, name: string, environment: string, on: boolean, options?: RequestOptions) {
    return this.post<FlagBody>(
      `/api/admin/projects/${project}/features/${name}/environments/${environment}/${on ? 'on' : 'off'}`,
      undefined,
      options,
    )
  }
  /** A flag with one strategy, on in `environment`. */
  async flagOn(
    name: string,
    strategy: Record<string, unknown> = { name: 'default' },
    environment = 'development',
    project = 'default',
  ) {
    expectOk(await this.createFlag(project, name), 201)
    expectOk(await this.post(paths.strategies(name, environment, project), strategy))
    expectOk(await this.toggle(project, name, environment, true))
  }
  bulkToggle(project: string, environment: string, features: string[], on: boolean, options?: RequestOptions) {
    return this.post(
      `/api/admin/projects/${project}/bulk_features/environments/${environment}/${on ? 'on' : 'off'}`,
      { features },
      options,
    )
  }
  validateName(body: unknown, options?: RequestOptions) {
    return this.post('/api/admin/features/validate', body, options)
  }
  searchEvents(query = '', options?: RequestOptions) {
    return this.get<EventPageBody>(`/api/admin/search/events${query}`, options)
  }
  createToken(body: Record<string, unknown>, options?: RequestOptions) {
    return this.post<CreatedTokenBody>('/api/admin/api-tokens', body, options)
  }
  /** Creates the tag types a test's tags use (a tag needs a known type; only `simple` is seeded), asserting each is created. */
  async newTagTypes(...names: string[]): Promise<void> {
    for (const name of names) expectOk(await this.post('/api/admin/tag-types', { name }), 201)
  }

  /** Every event in the log, oldest first. */
  events(): EventRecord[] {
    return [...this.log]
  }
  /** Events recorded after `sinceId`, oldest first. */
  eventsSince(sinceId: number): EventRecord[] {
    return this.log.filter(event => event.id > sinceId)
  }
  /**
   * Events written after `sinceId`, oldest first, as the event search API answers them (it sees a
   * commit's events before the commit's write is answered). For tests of the events the contract
   * promises; it starts the search worker, which `eventsSince` does not.
   */
  async eventsAfter(sinceId: number): Promise<EventBody[]> {
    const found: EventBody[] = []
    for (let offset = 0; ; offset += SEARCH_PAGE) {
      const page = await this.searchEvents(`?limit=${SEARCH_PAGE}&offset=${offset}`, { token: this.adminToken })
      expectOk(page)
      const newer = page.body.events.filter(event => event.id > sinceId)
      found.push(...newer)
      if (newer.length < page.body.events.length || page.body.events.length < SEARCH_PAGE) break
    }
    return found.reverse()
  }
  /** The events of one type about one flag, oldest first, through the event search API. */
  async eventsOf(type: string, flag: string): Promise<EventBody[]> {
    const page = await this.searchEvents(
      `?type=IS:${encodeURIComponent(type)}&feature=IS:${encodeURIComponent(flag)}&limit=${SEARCH_PAGE}`,
      { token: this.adminToken },
    )
    expectOk(page)
    expect(page.body.total).toBe(page.body.events.length)
    return page.body.events.reverse()
  }
  lastEventId(): number {
    return this.services.store.lastEventId
  }

  async close() {
    openApps.delete(this)
    await this.services.store.close()
    stopWorkers(this.services)
  }

  /** Leaves without closing the store (no checkpoint), as a crash would; stops the workers. */
  abandon() {
    openApps.delete(this)
    stopWorkers(this.services)
  }
}

/**
 * The body as text. An event stream (/api/client/streaming) never ends by itself: its first event
 * is read, then the stream is cancelled, so that a test walking every route neither hangs nor
 * leaves a stream open.
 */
export async function bodyText(response: Response): Promise<string> {
  if (!/^text\/event-stream/.test(response.headers.get('content-type') ?? '') || response.body === null)
    return response.text()
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  await reader.cancel()
  return text
}

/** Apps made by makeApi and not yet closed or abandoned. */
const openApps = new Set<Api>()

/** An app on the in-memory store, seeded as at first start, with ADMIN_SECRET as admin token. */
export async function makeApi(
  options: {
    dataDir?: string
    database?: DatabaseConfig
    bodyLimit?: number
    trustProxy?: boolean
    adminTokens?: string[]
    checkpointAfterBytes?: number
    log?: Logger
    fs?: FileSystem
  } & ServiceOptions = {},
): Promise<Api> {
  const store = options.database
    ? await openDatabaseStore(options.database, {
        checkpointAfterBytes: options.checkpointAfterBytes,
        max: 3,
        idleTimeout: 5,
      })
    : await openTestStore(options.dataDir ?? null, {
        sync: true,
        checkpointAfterBytes: options.checkpointAfterBytes,
        fs: options.fs,
      })
  const services = createServices(store, {
    metricsFlushMs: options.metricsFlushMs,
    streaming: options.streaming,
    streamingBufferChanges: options.streamingBufferChanges,
    segmentEvents: options.segmentEvents,
    segmentCheck: options.segmentCheck,
    searchCacheDir: options.searchCacheDir,
    search: options.search,
    session: options.session,
  })
  const app = createApp(
    services,
    { bodyLimit: options.bodyLimit ?? BODY_LIMIT, trustProxy: options.trustProxy },
    options.log,
  )
  const adminTokens = options.adminTokens ?? [ADMIN_SECRET]
  const api = new Api(app, services, options.dataDir ?? null, adminTokens[0])
  openApps.add(api)
  await api.loadLog()
  await initialise(services, adminTokens)
  return api
}

/** The OpenAPI document a fresh service serves at /swagger/json (for tests that walk every operation). */
export async function openApiSpec(): Promise<Record<string, any>> {
  const api = await makeApi()
  try {
    return (await api.get<Record<string, any>>('/swagger/json', { token: null })).body
  } finally {
    await api.close()
  }
}

/**
 * A fresh app on the memory store for each test of the file, handed to `use`; after each test the
 * clock is given back and every app still open is closed (a test may swap in its own).
 */
export function freshApiPerTest(use: (api: Api) => void) {
  beforeEach(async () => use(await makeApi()))
  afterEach(async () => {
    setSystemTime()
    for (const api of [...openApps]) {
      // A store whose commit loop died would never flush: do not let that hang the next tests.
      await withTimeout(api.close(), 1000).catch(() => api.abandon())
    }
  })
}

export function tempDir(prefix = 'flags-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/** A token of the given role/projects, created through the API; returns its secret. */
export async function tokenFor(api: Api, tokenName: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await api.createToken({ tokenName, type: 'admin', ...extra })
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${response.text}`)
  return response.body.secret
}

/** A free loopback port for a test server. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

/**
 * How long a test waits for something that takes a varying time (a spawned server to be ready, a
 * process to exit, a background write to land): generous, because a loaded machine (CI with a second
 * run beside it) is slow, not wrong. A test waits for the condition itself, never for a fixed time.
 */
export const PATIENCE_MS = 30_000

/**
 * Polls `condition` until it holds; fails naming `what` after `ms`. `giveUp`, checked before each
 * poll, returns a reason to stop at once (a spawned process that exited).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: { ms?: number; every?: number; giveUp?: () => string | null } = {},
): Promise<void> {
  const { ms = PATIENCE_MS, every = 25, giveUp } = options
  const deadline = performance.now() + ms
  for (;;) {
    const reason = giveUp?.()
    if (reason) throw new Error(`gave up waiting for ${what}: ${reason}`)
    if (await condition()) return
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`)
    await Bun.sleep(every)
  }
}

/** Waits until a spawned server answers `path` (by default /ready) with 2xx; fails at once if the process exits. */
export async function untilReady(
  base: string,
  options: { path?: string; process?: { exitCode: number | null }; ms?: number } = {},
): Promise<void> {
  const { path = '/ready', process: child, ms } = options
  await waitFor(
    () =>
      fetch(`${base}${path}`, { signal: AbortSignal.timeout(2000) }).then(
        r => r.ok,
        () => false,
      ),
    `${base}${path} to answer`,
    {
      ms,
      giveUp: () => (child && child.exitCode !== null ? `the server exited with ${child.exitCode}` : null),
    },
  )
}

/** Fails instead of hanging when the service never answers. */
export function withTimeout<T>(promise: Promise<T>, ms = 2000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function expectStatus(response: ApiResponse, status: number, name?: string) {
  expect({ status: response.status, body: response.body }).toMatchObject({
    status,
    ...(name ? { body: { name } } : {}),
  })
}

/** Asserts an error answer: status, name, a JSON body with a uuid id and a helpful message mentioning `mentions`. */
export function expectError(response: ApiResponse, status: number, name: string, mentions: (string | RegExp)[] = []) {
  const body = errorOf(response)
  expect({ status: response.status, name: body?.name }).toEqual({ status, name })
  expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
  expect(body.id).toMatch(UUID)
  expect(typeof body.message).toBe('string')
  expect(body.message.length).toBeGreaterThan(10)
  for (const mention of mentions) {
    if (typeof mention === 'string') expect(body.message).toContain(mention)
    else expect(body.message).toMatch(mention)
  }
  // Neither an HTML error page nor a stack trace reaches the client.
  expect(response.text).not.toMatch(/<html|\n\s+at \S/i)
}

/** Asserts a value is there (a `find` that found) and narrows its type. */
export function defined<T>(value: T | undefined | null): T {
  expect(value).toBeDefined()
  expect(value).not.toBeNull()
  return value as T
}

/** The item called `name` (an environment entry, a flag in a list…), asserted to be there. */
export function named<T extends { name: string }>(items: readonly T[] | undefined, name: string): T {
  return defined(items?.find(item => item.name === name))
}

/** The body of an error answer (whatever the route answers on success). */
export function errorOf(response: ApiResponse<unknown>): ErrorBody {
  return response.body as ErrorBody
}

/** An answer as compared between two services: status and body, the error id (new on every request) left out. */
export function withoutErrorId(response: ApiResponse) {
  const body =
    response.body && typeof response.body === 'object' && 'id' in response.body
      ? { ...response.body, id: '<id>' }
      : response.body
  return { status: response.status, body }
}

/** Asserts a success status, showing the body when it is not. */
export function expectOk(response: ApiResponse, status = 200) {
  expect({ status: response.status, body: response.status === status ? undefined : response.body }).toEqual({
    status,
    body: undefined,
  })
}

/** The real service, started as `npm start` would, on a free loopback port and a temp directory. */
export interface RunningService {
  base: string
  /** SIGTERM, wait for the exit, remove the data directory. */
  stop(): Promise<void>
}

export async function startService(
  adminSecret: string,
  prefix = 'flags-service-',
  extraEnv: Record<string, string> = {},
): Promise<RunningService> {
  const root = join(import.meta.dir, '..')
  const dir = tempDir(prefix)
  const port = freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of ['BODY_LIMIT', 'SYNC']) delete env[key]
  const child = Bun.spawn([join(root, 'node_modules', '.bin', 'bun'), 'src/main.ts'], {
    cwd: root,
    env: {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir.path,
      INIT_ADMIN_API_TOKENS: adminSecret,
      ...extraEnv,
    },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await child.exited
    }
    dir.remove()
  }
  const base = `http://127.0.0.1:${port}`
  try {
    await untilReady(base, { path: '/health', process: child })
  } catch (error) {
    await stop()
    throw error
  }
  return { base, stop }
}

/** One admin API call over HTTP: the status and the parsed body (undefined when empty). */
export async function adminCall(
  base: string,
  secret: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string; body: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: secret, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {}
  return { status: response.status, text, body: parsed }
}

/**
 * Stops an `unleash-client` SDK for good. Its destroy() removes its repository's listeners, but a
 * request already in flight goes on; when it then fails (the test's server has stopped), the
 * repository re-emits the error with no listener, which throws it into whatever test runs next
 * (seen as ECONNREFUSED failing an unrelated test). A listener kept after destroy() takes it.
 */
export function destroySdk(client: { destroy(): void } | undefined): void {
  if (!client) return
  client.destroy()
  const repository = (client as unknown as { repository?: { on?: (event: string, listener: () => void) => void } })
    .repository
  repository?.on?.('error', () => {})
}

/** Resolves when `emitter` (an SDK client) emits `event`, or fails after `ms`. */
export function eventOf(
  emitter: { once(event: string, listener: () => void): unknown },
  event: string,
  ms = PATIENCE_MS,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms)
    emitter.once(event, () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/** Creates a console user through the admin API, asserting 201; answers the created user. */
export async function newUser<T = { id: number; username: string | null }>(
  target: Api,
  body: Record<string, unknown>,
): Promise<T> {
  const response = await target.post<T>('/api/admin/user-admin', body)
  expectOk(response, 201)
  return response.body
}

/** Signs in with a password, asserting it works; answers the session cookie as a Cookie header value. */
export async function signIn(target: Api, username: string, password: string): Promise<string> {
  const response = await target.post('/auth/simple/login', { username, password }, { token: null })
  expectOk(response)
  const header = response.headers.get('set-cookie') ?? ''
  expect(header).toStartWith(`${SESSION_COOKIE}=`)
  return header.split(';')[0]!
}

/** Request options for a call signed in with `cookie`, from the console's own origin (or with `headers` instead). */
export const asSession = (cookie: string, headers: Record<string, string> = { origin: 'http://localhost' }) => ({
  token: null,
  headers: { cookie, ...headers },
})
