/**
 * Test helpers: an app on the real store (in memory, or on a temp directory), and a typed client
 * over `app.handle` that reads like the API reference.
 */
import { expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp, type App } from '../src/app'
import type { Logger } from '../src/log'
import type { EventRecord } from '../src/storage/records'
import type { FileSystem } from '../src/storage/files'
import { createServices, initialise, openStore, stopWorkers, type Services } from '../src/services'

export const ADMIN_SECRET = '*:*.test-admin-secret-0123456789abcdef'
export const BODY_LIMIT = 102400

export interface ApiResponse<T = any> {
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
  ) {
    services.store.onCommit((events) => this.log.push(...events))
  }

  /** Reads the events already in the log when the app was opened; call it before any write. */
  async loadLog(): Promise<void> {
    const existing: EventRecord[] = []
    await this.services.store.readEvents((event) => existing.push(event))
    this.log.unshift(...existing)
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
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
    const text = await response.text()
    let parsed: unknown = undefined
    if (text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    }
    return { status: response.status, body: parsed as T, text, headers: response.headers }
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options)
  post = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>('POST', path, { ...options, body })
  put = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>('PUT', path, { ...options, body })
  patch = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>('PATCH', path, { ...options, body })
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options)

  createProject(id: string, extra: Record<string, unknown> = {}, options?: RequestOptions) {
    return this.post('/api/admin/projects', { id, name: id, ...extra }, options)
  }
  createFlag(project: string, name: string, extra: Record<string, unknown> = {}, options?: RequestOptions) {
    return this.post(`/api/admin/projects/${project}/features`, { name, ...extra }, options)
  }
  getFlag(project: string, name: string, options?: RequestOptions) {
    return this.get(`/api/admin/projects/${project}/features/${name}`, options)
  }
  listFlags(project: string, query = '', options?: RequestOptions) {
    return this.get(`/api/admin/projects/${project}/features${query}`, options)
  }
  patchFlag(project: string, name: string, operations: unknown, options?: RequestOptions) {
    return this.patch(`/api/admin/projects/${project}/features/${name}`, operations, options)
  }
  toggle(project: string, name: string, environment: string, on: boolean, options?: RequestOptions) {
    return this.post(`/api/admin/projects/${project}/features/${name}/environments/${environment}/${on ? 'on' : 'off'}`, undefined, options)
  }
  bulkToggle(project: string, environment: string, features: string[], on: boolean, options?: RequestOptions) {
    return this.post(`/api/admin/projects/${project}/bulk_features/environments/${environment}/${on ? 'on' : 'off'}`, { features }, options)
  }
  validateName(body: unknown, options?: RequestOptions) {
    return this.post('/api/admin/features/validate', body, options)
  }
  searchEvents(query = '', options?: RequestOptions) {
    return this.get(`/api/admin/search/events${query}`, options)
  }
  createToken(body: Record<string, unknown>, options?: RequestOptions) {
    return this.post('/api/admin/api-tokens', body, options)
  }

  /** Every event in the log, oldest first. */
  events(): EventRecord[] {
    return [...this.log]
  }
  /** Events recorded after `sinceId`, oldest first. */
  eventsSince(sinceId: number): EventRecord[] {
    return this.log.filter((event) => event.id > sinceId)
  }
  lastEventId(): number {
    return this.services.store.lastEventId
  }

  async close() {
    await this.services.store.close()
    stopWorkers(this.services)
  }

  /** Leaves without closing the store (no checkpoint), as a crash would; stops the workers. */
  abandon() {
    stopWorkers(this.services)
  }
}

/** An app on the in-memory store, seeded as at first start, with ADMIN_SECRET as admin token. */
export async function makeApi(
  options: { dataDir?: string; bodyLimit?: number; adminTokens?: string[]; checkpointAfterBytes?: number; log?: Logger; fs?: FileSystem } = {},
): Promise<Api> {
  const store = await openStore(options.dataDir ?? null, { sync: true, checkpointAfterBytes: options.checkpointAfterBytes, fs: options.fs })
  const services = createServices(store)
  const app = createApp(services, { bodyLimit: options.bodyLimit ?? BODY_LIMIT }, options.log)
  const api = new Api(app, services, options.dataDir ?? null)
  await api.loadLog()
  await initialise(services, options.adminTokens ?? [ADMIN_SECRET])
  return api
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

/** Fails instead of hanging when the service never answers. */
export function withTimeout<T>(promise: Promise<T>, ms = 2000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function expectStatus(response: ApiResponse, status: number, name?: string) {
  expect({ status: response.status, body: response.body }).toMatchObject({ status, ...(name ? { body: { name } } : {}) })
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Asserts an error answer: status, name, a JSON body with a uuid id and a helpful message mentioning `mentions`. */
export function expectError(response: ApiResponse, status: number, name: string, mentions: (string | RegExp)[] = []) {
  expect({ status: response.status, name: response.body?.name }).toEqual({ status, name })
  expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
  expect(response.body.id).toMatch(UUID)
  expect(typeof response.body.message).toBe('string')
  expect(response.body.message.length).toBeGreaterThan(10)
  for (const mention of mentions) {
    if (typeof mention === 'string') expect(response.body.message).toContain(mention)
    else expect(response.body.message).toMatch(mention)
  }
}

/** Asserts a success status, showing the body when it is not. */
export function expectOk(response: ApiResponse, status = 200) {
  expect({ status: response.status, body: response.status === status ? undefined : response.body }).toEqual({ status, body: undefined })
}
