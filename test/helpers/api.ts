/**
 * The app under test: a service on the real store (in memory, on a temp directory, or a PostgreSQL
 * schema, see test-store.ts) and a typed client over `app.handle` that reads like the API reference.
 */
import { expect } from 'bun:test'
import type { Static } from '@sinclair/typebox'
import { createApp, type App } from '../../src/app'
import type { DatabaseConfig } from '../../src/config'
import type { Environment, EnvironmentList } from '../../src/features/environments/environments.model'
import type { EventPage } from '../../src/features/events/events.model'
import type { Feature, FeatureList, Tag, TagList } from '../../src/features/flags/flags.model'
import type { Strategy, VariantList } from '../../src/features/flags/strategy.model'
import type { Project, ProjectList } from '../../src/features/projects/projects.model'
import type { CreatedToken, TokenList } from '../../src/features/tokens/tokens.model'
import type { ErrorSchema } from '../../src/http/schemas'
import type { Logger } from '../../src/log'
import { createServices, initialise, stopWorkers, type ServiceOptions, type Services } from '../../src/services'
import { openDatabaseStore } from '../../src/open-store'
import type { FileSystem } from '../../src/storage/files'
import type { EventRecord } from '../../src/storage/records'
import { openTestStore } from '../test-store'
import { expectOk } from './expect'
import { withTimeout } from './processes'
import { ADMIN_SECRET, paths } from './service'
// Argon2id cached by its arguments in a test process: passwords.ts says why it answers as argon2 does.
import './passwords'

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

export const BODY_LIMIT = 102400
/** The largest page the event search answers. */
const SEARCH_PAGE = 1000

/** Who the events of the bootstrap admin token (ADMIN_SECRET) name. */
export const BOOTSTRAP = { createdBy: 'admin-bootstrap', createdByUserId: -42 }
export const FLAG_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission']

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
  async newFlag(
    project: string,
    name: string,
    extra: Record<string, unknown> = {},
    options?: RequestOptions,
  ): Promise<FlagBody> {
    const response = await this.createFlag(project, name, extra, options)
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

/** What makeApi is given: where the store is, the app's settings, and the services' options. */
export type MakeApiOptions = {
  dataDir?: string
  /** Whether a store on `dataDir` makes each commit durable with fsync; by default only when `fs` is given. */
  sync?: boolean
  database?: DatabaseConfig
  bodyLimit?: number
  trustProxy?: boolean
  adminTokens?: string[]
  checkpointAfterBytes?: number
  log?: Logger
  fs?: FileSystem
} & ServiceOptions

/**
 * An app on the in-memory store, seeded as at first start, with ADMIN_SECRET as admin token. On a
 * data directory it skips fsync, as the tests' PostgreSQL clusters run with fsync off (a test whose
 * process is not killed loses nothing without it; test/system kills real processes), unless the
 * test injects file operations (`fs`, which sees every fsync) or asks for `sync: true`.
 */
export async function makeApi(options: MakeApiOptions = {}): Promise<Api> {
  const services = await openServices(options)
  return serve(appOver(services, options), services, options)
}

/** The store `options` name (see makeApi) and the services over it, not yet seeded. */
export async function openServices(options: MakeApiOptions = {}): Promise<Services> {
  const store = options.database
    ? await openDatabaseStore(options.database, {
        checkpointAfterBytes: options.checkpointAfterBytes,
        max: 3,
        idleTimeout: 5,
      })
    : await openTestStore(options.dataDir ?? null, {
        sync: options.sync ?? options.fs !== undefined,
        checkpointAfterBytes: options.checkpointAfterBytes,
        fs: options.fs,
      })
  return createServices(store, {
    metricsFlushMs: options.metricsFlushMs,
    streaming: options.streaming,
    streamingBufferChanges: options.streamingBufferChanges,
    liveReplayEvents: options.liveReplayEvents,
    segmentEvents: options.segmentEvents,
    segmentCheck: options.segmentCheck,
    searchCacheDir: options.searchCacheDir,
    search: options.search,
    session: options.session,
    addons: options.addons,
    sso: options.sso,
    changeRequestsForAdminTokens: options.changeRequestsForAdminTokens,
  })
}

/** The app over `services`, with the settings `options` gives (see makeApi). */
export function appOver(services: Services, options: MakeApiOptions = {}): App {
  return createApp(
    services,
    { bodyLimit: options.bodyLimit ?? BODY_LIMIT, trustProxy: options.trustProxy },
    options.log,
  )
}

/** The typed client over `app`, which serves `services`; the store is seeded as at first start. */
export async function serve(app: App, services: Services, options: MakeApiOptions = {}): Promise<Api> {
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

/** Closes every app still open (a store whose commit loop died is abandoned after a second). */
export async function closeOpenApps(): Promise<void> {
  for (const api of [...openApps]) {
    // A store whose commit loop died would never flush: do not let that hang the next tests.
    await withTimeout(api.close(), 1000).catch(() => api.abandon())
  }
}

/** A token of the given role/projects, created through the API; returns its secret. */
export async function tokenFor(api: Api, tokenName: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await api.createToken({ tokenName, type: 'admin', ...extra })
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${response.text}`)
  return response.body.secret
}
