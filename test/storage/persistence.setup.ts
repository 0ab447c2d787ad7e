/**
 * What the persistence tests share: data directories and apps on them, closed and removed after each
 * test (call `closeAfterEach()` at the top of a test file), the data files' paths and bytes, and a
 * scenario that fills every collection.
 */
import { afterEach, expect } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../../src/services'
import { openStore } from '../../src/open-store'
import { EventsService } from '../../src/features/events/events.service'
import type { Caller } from '../../src/features/tokens/permissions'
import { StoreLoadError } from '../../src/storage/files'
import { dirSnapshot, makeApi, tempDir, type Api, type EnvironmentBody } from '../helpers'

let dirs: { path: string; remove(): void }[] = []
let apis: Api[] = []

/** Closes the apps `open` made and removes the directories `newDir` made, after each test of the calling file. */
export function closeAfterEach(): void {
  afterEach(async () => {
    for (const api of apis) await api.close().catch(() => {})
    apis = []
    for (const dir of dirs) dir.remove()
    dirs = []
  })
}

export function newDir(): string {
  const dir = tempDir('flags-persistence-')
  dirs.push(dir)
  return dir.path
}

export async function open(dataDir: string): Promise<Api> {
  const api = await makeApi({ dataDir })
  track(api)
  return api
}

/** Closes `api` after the test (an app a test made itself). */
export function track(api: Api): void {
  apis.push(api)
}

/** No longer closes `api` after the test (a test that closed or abandoned it). */
export function untrack(api: Api): void {
  apis = apis.filter(a => a !== api)
}

/** Leaves `api` without a checkpoint and without closing its files, as a crash would. */
export function crash(api: Api): void {
  untrack(api)
  api.abandon()
}

export async function close(api: Api): Promise<void> {
  await api.close()
  untrack(api)
}

export const statePath = (dir: string) => join(dir, STATE_FILE)
export const journalPath = (dir: string) => join(dir, JOURNAL_FILE)
export const eventsPath = (dir: string) => join(dir, EVENTS_FILE)

export const readOrEmpty = (path: string) => (existsSync(path) ? readFileSync(path) : Buffer.alloc(0))

export function filesOf(dir: string) {
  return {
    state: readFileSync(statePath(dir)),
    journal: readOrEmpty(journalPath(dir)),
    events: readFileSync(eventsPath(dir)),
  }
}

export function expectFilesUnchanged(dir: string, before: { state: Buffer; journal: Buffer; events: Buffer }) {
  const after = filesOf(dir)
  expect(after.state.toString('utf8')).toBe(before.state.toString('utf8'))
  expect(after.journal.toString('utf8')).toBe(before.journal.toString('utf8'))
  expect(after.events.toString('utf8')).toBe(before.events.toString('utf8'))
}

export function eventLines(dir: string): string[] {
  const text = readFileSync(eventsPath(dir), 'utf8')
  expect(text.endsWith('\n')).toBe(true)
  return text.slice(0, -1).split('\n')
}

/**
 * Opening the store and loading its event log (what start-up does before /ready) must fail;
 * returns the error (or fails the test when it opened).
 */
export async function openError(dir: string): Promise<Error> {
  let opened = false
  try {
    const store = await openStore(dir)
    const events = new EventsService(store)
    try {
      await events.load()
    } finally {
      events.close()
    }
    opened = true
  } catch (error) {
    return error as Error
  }
  expect(opened).toBe(false)
  throw new Error('unreachable')
}

/** The start refuses the directory: a StoreLoadError (returned), and not a byte on disk changed. */
export async function refusal(dir: string): Promise<StoreLoadError> {
  const before = dirSnapshot(dir)
  const error = await openError(dir)
  expect(error).toBeInstanceOf(StoreLoadError)
  expect(dirSnapshot(dir)).toEqual(before)
  return error as StoreLoadError
}

export const ADMIN_CALLER: Caller = {
  tokenName: 'test-reader',
  kind: 'token',
  userId: 1,
  role: 'admin',
  projects: ['*'],
  credential: { check: () => 'admin' },
  permission: 'NONE',
}

/**
 * Projects (one with a naming pattern), an extra environment, flags with strategies, variants,
 * tags and a dependency, one archived, some toggled, and a project-limited editor token.
 * Returns the editor token's secret.
 */
export async function buildScenario(api: Api): Promise<string> {
  const expectStatus = (label: string, response: { status: number; text: string }, status: number) => {
    if (response.status !== status)
      throw new Error(`${label}: expected ${status}, got ${response.status} ${response.text}`)
  }
  expectStatus(
    'create project checkout',
    await api.createProject('checkout', {
      name: 'Checkout',
      description: 'Everything about paying',
      featureNaming: { pattern: 'co\\.[a-z-]+', example: 'co.new-flow', description: 'Flags start with co.' },
    }),
    201,
  )
  expectStatus('create project search', await api.createProject('search', { name: 'Search' }), 201)
  expectStatus(
    'create environment',
    await api.post<EnvironmentBody>('/api/admin/environments', { name: 'staging', type: 'test', sortOrder: 150 }),
    201,
  )
  expectStatus(
    'connect staging',
    await api.post('/api/admin/projects/checkout/environments', { environment: 'staging' }),
    200,
  )
  expectStatus(
    'create co.parent',
    await api.createFlag('checkout', 'co.parent', {
      type: 'release',
      description: 'Parent flag',
      impressionData: true,
    }),
    201,
  )
  expectStatus(
    'create co.child',
    await api.createFlag('checkout', 'co.child', { type: 'experiment', description: 'Child flag' }),
    201,
  )
  expectStatus('create co.old', await api.createFlag('checkout', 'co.old', { type: 'operational' }), 201)
  expectStatus('create search-flag', await api.createFlag('search', 'search-flag', { type: 'kill-switch' }), 201)
  expectStatus(
    'add strategy',
    await api.post('/api/admin/projects/checkout/features/co.parent/environments/staging/strategies', {
      name: 'flexibleRollout',
      title: 'Half of web and ios',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'co.parent' },
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web', 'ios'] }],
      variants: [{ name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default' }],
    }),
    200,
  )
  expectStatus(
    'set variants',
    await api.put('/api/admin/projects/checkout/features/co.parent/environments/production/variants', [
      { name: 'a', weight: 300, weightType: 'fix', stickiness: 'default', payload: { type: 'string', value: 'x' } },
      { name: 'b', weight: 0, weightType: 'variable', overrides: [{ contextName: 'userId', values: ['1', '2'] }] },
    ]),
    200,
  )
  expectStatus('tag 1', await api.post('/api/admin/features/co.parent/tags', { type: 'simple', value: 'team-a' }), 201)
  expectStatus('tag 2', await api.post('/api/admin/features/co.parent/tags', { value: 'payments' }), 201)
  expectStatus(
    'dependency',
    await api.post('/api/admin/projects/checkout/features/co.child/dependencies', {
      feature: 'co.parent',
      enabled: true,
      variants: ['a'],
    }),
    200,
  )
  expectStatus('toggle parent prod', await api.toggle('checkout', 'co.parent', 'production', true), 200)
  expectStatus('toggle child dev', await api.toggle('checkout', 'co.child', 'development', true), 200)
  expectStatus('toggle search-flag dev', await api.toggle('search', 'search-flag', 'development', true), 200)
  expectStatus('toggle search-flag dev off', await api.toggle('search', 'search-flag', 'development', false), 200)
  expectStatus(
    'stale',
    await api.patchFlag('checkout', 'co.child', [{ op: 'replace', path: '/stale', value: true }]),
    200,
  )
  expectStatus('archive co.old', await api.delete('/api/admin/projects/checkout/features/co.old'), 202)
  const token = await api.createToken({ tokenName: 'ci-bot', type: 'admin', role: 'editor', projects: ['checkout'] })
  expectStatus('token', token, 201)
  return token.body.secret
}

export const READS = [
  '/api/admin/projects',
  '/api/admin/projects/default',
  '/api/admin/projects/checkout',
  '/api/admin/projects/search',
  '/api/admin/environments',
  '/api/admin/projects/checkout/features',
  '/api/admin/projects/search/features',
  '/api/admin/projects/default/features',
  '/api/admin/projects/checkout/features/co.parent',
  '/api/admin/projects/checkout/features/co.child',
  '/api/admin/projects/checkout/features/co.old',
  '/api/admin/projects/search/features/search-flag',
  '/api/admin/archive/features',
  '/api/admin/projects/checkout/features/co.parent/environments/staging/strategies',
  '/api/admin/projects/checkout/features/co.parent/environments/production/strategies',
  '/api/admin/projects/checkout/features/co.parent/environments/production/variants',
  '/api/admin/features/co.parent/tags',
  '/api/admin/api-tokens',
  '/api/admin/search/events?limit=1000',
]

export async function readEverything(api: Api) {
  const result: Record<string, { status: number; body: unknown }> = {}
  for (const path of READS) {
    const response = await api.get(path)
    result[path] = { status: response.status, body: response.body }
  }
  return result
}
