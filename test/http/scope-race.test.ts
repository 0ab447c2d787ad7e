/**
 * A token limited to project A never writes outside A, whatever happens between its request's
 * arrival and the moment its write is applied (issue 18, item 1): every write route of the OpenAPI
 * document is run with such a token against a flag that is created in, or moved to, project B after
 * the request arrived and before its transaction runs. Deterministically (the move is queued in the
 * store just ahead of the write) and under concurrent load (the move at a random moment, with other
 * writers in flight). Afterwards no event of the token names B or the moved flags, and B's flags
 * are exactly as they were moved. The same routes also run with the token deleted just ahead of
 * its write: each answers 401 and writes nothing.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { SYSTEM_ACTOR } from '../../src/domain/events'
import type { FlagRecord } from '../../src/features/flags/flags.records'
import type { EventAuthor, Tx } from '../../src/storage/store'
import { seededRandom } from '../random'
import {
  type Api,
  type ApiResponse,
  type StrategyBody,
  expectOk,
  makeApi,
  openApiSpec,
  tokenFor,
  paths,
} from '../helpers'

const A = 'mine'
const B = 'theirs'
const NOISE = 'noise'
const ENV = 'development'
const SCOPED = 'scoped-to-mine'

/** The flags one round acts on: `flag`, with a tag, a strategy and a parent `parent`, all in A at first. */
interface Round {
  flag: string
  parent: string
  strategyId: string
  /** An export of `flag`, for the import. */
  exported: { features: { description?: string | null }[] } & Record<string, unknown>
  n: number
}

interface WriteCase {
  /** The state `flag` must be in for the write to succeed when nothing races it. */
  archived?: boolean
  completed?: boolean
  request(round: Round): { path: string; body?: unknown }
  /** The status the write answers when nothing races it: it would have written (default 2xx). */
  control?: number
}

const variant = (name: string) => ({ name, weight: 1000, weightType: 'variable', stickiness: 'default' })
/** A route of a change request of A that does not exist (404): it names no flag, and must write nothing anywhere. */
const atUnknownRequest = (path: string, body?: unknown): WriteCase => ({
  request: () => ({ path: `/api/admin/projects/${A}/change-requests/999999${path}`, body }),
  control: 404,
})

/**
 * Every non-GET route of the document under /api/admin: a write case, or what else it is. A route
 * added later fails the walk until it is classified here.
 */
const ROUTES: Record<string, WriteCase | 'service-wide' | 'read'> = {
  createProject: 'service-wide',
  updateProject: {
    request: () => ({ path: `/api/admin/projects/${A}`, body: { name: 'Mine, renamed', description: 'changed' } }),
  },
  // A has flags: refused, and nothing changes either way.
  deleteProject: { request: () => ({ path: `/api/admin/projects/${A}` }), control: 400 },
  addEnvironmentToProject: {
    request: r => ({ path: `/api/admin/projects/${A}/environments`, body: { environment: `env-${r.n}` } }),
  },
  removeEnvironmentFromProject: { request: () => ({ path: `/api/admin/projects/${A}/environments/staging` }) },
  createEnvironment: 'service-wide',
  createFeature: {
    request: r => ({ path: `/api/admin/projects/${A}/features`, body: { name: `${r.flag}-new` } }),
    control: 201,
  },
  updateFeature: { request: r => ({ path: paths.flag(r.flag, A), body: { description: 'changed', type: 'release' } }) },
  patchFeature: {
    request: r => ({ path: paths.flag(r.flag, A), body: [{ op: 'replace', path: '/description', value: 'changed' }] }),
  },
  archiveFeature: { request: r => ({ path: paths.flag(r.flag, A) }), control: 202 },
  reviveFeatures: {
    archived: true,
    request: r => ({ path: `/api/admin/projects/${A}/revive`, body: { features: [r.flag] } }),
  },
  deleteFeature: { archived: true, request: r => ({ path: `/api/admin/archive/${r.flag}` }) },
  validateFeature: 'read',
  toggleFeatureEnvironmentOn: { request: r => ({ path: `${paths.flag(r.flag, A)}/environments/${ENV}/on` }) },
  toggleFeatureEnvironmentOff: { request: r => ({ path: `${paths.flag(r.flag, A)}/environments/production/off` }) },
  bulkToggleFeaturesEnvironmentOn: {
    request: r => ({
      path: `/api/admin/projects/${A}/bulk_features/environments/${ENV}/on`,
      body: { features: [r.flag] },
    }),
  },
  bulkToggleFeaturesEnvironmentOff: {
    request: r => ({
      path: `/api/admin/projects/${A}/bulk_features/environments/production/off`,
      body: { features: [r.flag] },
    }),
  },
  addFeatureStrategy: {
    request: r => ({ path: `${paths.flag(r.flag, A)}/environments/${ENV}/strategies`, body: { name: 'default' } }),
  },
  updateFeatureStrategy: {
    request: r => ({
      path: `${paths.flag(r.flag, A)}/environments/${ENV}/strategies/${r.strategyId}`,
      body: { name: 'default', title: 'changed' },
    }),
  },
  setStrategySortOrder: {
    request: r => ({
      path: `${paths.flag(r.flag, A)}/environments/${ENV}/strategies/set-sort-order`,
      body: [{ id: r.strategyId, sortOrder: 7 }],
    }),
  },
  deleteFeatureStrategy: {
    request: r => ({ path: `${paths.flag(r.flag, A)}/environments/${ENV}/strategies/${r.strategyId}` }),
  },
  overwriteEnvironmentFeatureVariants: {
    request: r => ({ path: `${paths.flag(r.flag, A)}/environments/${ENV}/variants`, body: [variant('blue')] }),
  },
  patchEnvironmentsFeatureVariants: {
    request: r => ({
      path: `${paths.flag(r.flag, A)}/environments/${ENV}/variants`,
      body: [{ op: 'add', path: '/-', value: variant('blue') }],
    }),
  },
  addTag: {
    request: r => ({ path: `/api/admin/features/${r.flag}/tags`, body: { type: 'simple', value: 't-new' } }),
    control: 201,
  },
  updateTags: {
    request: r => ({
      path: `/api/admin/features/${r.flag}/tags`,
      body: { addedTags: [{ type: 'simple', value: 't-new' }], removedTags: [{ type: 'simple', value: 't-old' }] },
    }),
  },
  removeTag: { request: r => ({ path: `/api/admin/features/${r.flag}/tags/simple/t-old` }) },
  addFeatureDependency: {
    request: r => ({ path: `${paths.flag(r.flag, A)}/dependencies`, body: { feature: r.parent, enabled: false } }),
  },
  deleteFeatureDependencies: { request: r => ({ path: `${paths.flag(r.flag, A)}/dependencies` }) },
  deleteFeatureDependency: { request: r => ({ path: `${paths.flag(r.flag, A)}/dependencies/${r.parent}` }) },
  complete: { request: r => ({ path: `${paths.flag(r.flag, A)}/lifecycle/complete`, body: { status: 'kept' } }) },
  uncomplete: { completed: true, request: r => ({ path: `${paths.flag(r.flag, A)}/lifecycle/uncomplete` }) },
  archiveFeatures: { request: r => ({ path: `/api/admin/projects/${A}/archive`, body: { features: [r.flag] } }) },
  deleteFeatures: {
    archived: true,
    request: r => ({ path: `/api/admin/projects/${A}/delete`, body: { features: [r.flag] } }),
  },
  staleFeatures: {
    request: r => ({ path: `/api/admin/projects/${A}/stale`, body: { features: [r.flag], stale: true } }),
  },
  addTagToFeatures: {
    request: r => ({
      path: `/api/admin/projects/${A}/tags`,
      body: { features: [r.flag], tags: { addedTags: [{ type: 'simple', value: 't-new' }], removedTags: [] } },
    }),
  },
  overwriteFeatureVariants: { request: r => ({ path: `${paths.flag(r.flag, A)}/variants`, body: [variant('blue')] }) },
  patchFeatureVariants: {
    request: r => ({
      path: `${paths.flag(r.flag, A)}/variants`,
      body: [{ op: 'add', path: '/-', value: variant('blue') }],
    }),
  },
  overwriteFeatureVariantsOnEnvironments: {
    request: r => ({
      path: `${paths.flag(r.flag, A)}/variants-batch`,
      body: { variants: [variant('blue')], environments: [ENV] },
    }),
  },
  createApiToken: 'service-wide',
  deleteApiToken: 'service-wide',
  createSegment: 'service-wide',
  updateSegment: 'service-wide',
  removeSegment: 'service-wide',
  createStrategy: 'service-wide',
  updateStrategy: 'service-wide',
  deprecateStrategy: 'service-wide',
  reactivateStrategy: 'service-wide',
  removeStrategy: 'service-wide',
  createTagType: 'service-wide',
  createUser: 'service-wide',
  updateUser: 'service-wide',
  deleteUser: 'service-wide',
  changeUserPassword: 'service-wide',
  // The caller's own password: a token has none (403), so no token's write can land anywhere.
  changeMyPassword: 'read',
  validateTagType: 'read',
  updateTagType: 'service-wide',
  deleteTagType: 'service-wide',
  updateFeatureTypeLifetime: 'service-wide',
  createContextField: 'service-wide',
  validateContextField: 'read',
  updateContextField: 'service-wide',
  deleteContextField: 'service-wide',
  updateContextFieldLegalValue: 'service-wide',
  deleteContextFieldLegalValue: 'service-wide',
  exportFeatures: 'read',
  validateImport: 'read',
  getPlayground: 'read',
  getAdvancedPlayground: 'read',
  // Integrations, service accounts and sign-on settings are the admin's, service-wide.
  createAddon: 'service-wide',
  updateAddon: 'service-wide',
  deleteAddon: 'service-wide',
  retryAddonDelivery: 'service-wide',
  testAddon: 'service-wide',
  // The caller's own tokens: an API token is not a person (403), so no token's write can land anywhere.
  createPat: 'read',
  deletePat: 'read',
  createServiceAccount: 'service-wide',
  updateServiceAccount: 'service-wide',
  deleteServiceAccount: 'service-wide',
  createServiceAccountToken: 'service-wide',
  deleteServiceAccountToken: 'service-wide',
  setOidcSettings: 'service-wide',
  setSimpleSettings: 'service-wide',
  updateProjectChangeRequestConfig: {
    request: () => ({
      path: `/api/admin/projects/${A}/environments/${ENV}/change-requests/config`,
      body: { changeRequestsEnabled: false },
    }),
  },
  addChangeToDraft: {
    request: r => ({
      path: `/api/admin/projects/${A}/environments/${ENV}/change-requests`,
      body: { feature: r.flag, action: 'updateEnabled', payload: { enabled: true } },
    }),
  },
  // A change request's own routes (applying one whose flag moved: the change-requests tests).
  deleteChangeRequest: atUnknownRequest(''),
  changeRequestStateChange: atUnknownRequest('/state', { state: 'In review' }),
  updateChangeRequestTitle: atUnknownRequest('/title', { title: 'x' }),
  addChangeRequestComment: atUnknownRequest('/comments', { text: 'x' }),
  updateChangeRequestChange: atUnknownRequest('/changes/1', { payload: { enabled: false } }),
  deleteChange: atUnknownRequest('/changes/1'),
  importToggles: {
    request: r => ({
      path: '/api/admin/features-batch/import',
      body: {
        project: A,
        environment: ENV,
        data: { ...r.exported, features: r.exported.features.map(flag => ({ ...flag, description: 'imported' })) },
      },
    }),
  },
}

interface Operation {
  method: string
  path: string
  operationId: string
}

/** The document's non-GET operations of the admin API (the SDK APIs take no admin token). */
async function writeOperations(): Promise<Operation[]> {
  const document = await openApiSpec()
  const operations: Operation[] = []
  for (const [path, methods] of Object.entries(
    document.paths as Record<string, Record<string, { operationId: string }>>,
  )) {
    if (!path.startsWith('/api/admin/')) continue
    for (const [method, operation] of Object.entries(methods)) {
      if (method !== 'get') operations.push({ method: method.toUpperCase(), path, operationId: operation.operationId })
    }
  }
  return operations
}

interface World {
  api: Api
  scoped: string
  rounds: number
}

async function world(): Promise<World> {
  const api = await makeApi()
  for (const project of [A, B, NOISE]) expectOk(await api.createProject(project), 201)
  expectOk(await api.post('/api/admin/environments', { name: 'staging', type: 'test' }), 201)
  for (const project of [A, B])
    expectOk(await api.post(`/api/admin/projects/${project}/environments`, { environment: 'staging' }))
  for (let n = 0; n < 40; n++)
    expectOk(await api.post('/api/admin/environments', { name: `env-${n}`, type: 'test' }), 201)
  const scoped = await tokenFor(api, SCOPED, { role: 'admin', projects: [A] })
  return { api, scoped, rounds: 0 }
}

/** Makes the flags of a new round in A, in the state `write` needs. */
async function newRound(w: World, write: WriteCase): Promise<Round> {
  const { api } = w
  const n = w.rounds++
  const flag = `x-${n}`
  const parent = `p-${n}`
  expectOk(await api.createFlag(A, parent), 201)
  expectOk(await api.createFlag(A, flag, { tags: [{ type: 'simple', value: 't-old' }] }), 201)
  expectOk(await api.toggle(A, flag, 'production', true))
  const strategy = await api.post<StrategyBody>(`${paths.flag(flag, A)}/environments/${ENV}/strategies`, {
    name: 'flexibleRollout',
    parameters: { rollout: '50', stickiness: 'default', groupId: flag },
  })
  expectOk(strategy)
  expectOk(await api.post(`${paths.flag(flag, A)}/dependencies`, { feature: parent }))
  const exported = await api.post<Round['exported']>('/api/admin/features-batch/export', {
    features: [flag],
    environment: ENV,
  })
  expectOk(exported)
  if (write.completed) expectOk(await api.post(`${paths.flag(flag, A)}/lifecycle/complete`, { status: 'kept' }))
  if (write.archived) expectOk(await api.delete(paths.flag(flag, A)), 202)
  return { flag, parent, strategyId: strategy.body.id, exported: exported.body, n }
}

/** Moves the round's flags, as they are at that moment (or as `taken` holds them), to B; `taken` gets them as moved. */
function moveToB(tx: Tx, round: Round, taken: Map<string, FlagRecord>): void {
  for (const name of [round.parent, round.flag]) {
    const record = taken.get(name) ?? tx.get('flags', name)
    if (!record) continue
    const moved = { ...record, project: B }
    tx.put('flags', name, moved)
    taken.set(name, moved)
  }
}

/**
 * Runs `send` with the store's queue instrumented: the first write the scoped token queues is
 * preceded, in the same queue, by `before` (so it is applied first, whatever the request saw when
 * it arrived).
 */
async function withWriteAhead<T>(
  api: Api,
  before: (tx: Tx) => void,
  send: () => Promise<T>,
): Promise<{ result: T; ran: boolean }> {
  const store = api.services.store
  const transact = store.transact
  let ran = false
  store.transact = function <R>(this: typeof store, actor: EventAuthor, work: (tx: Tx) => R): Promise<R> {
    if (!ran && actor.name === SCOPED) {
      ran = true
      void transact.call(store, SYSTEM_ACTOR, before)
    }
    return transact.call(store, actor, work) as Promise<R>
  } as typeof store.transact
  try {
    return { result: await send(), ran }
  } finally {
    store.transact = transact
  }
}

function send(w: World, operation: Operation, round: Round, write: WriteCase): Promise<ApiResponse> {
  const { path, body } = write.request(round)
  return w.api.request(operation.method, path, { token: w.scoped, body })
}

/** Nothing the scoped token did since `since` is outside A, and B's flags are exactly as moved. */
function expectNothingOutsideA(
  w: World,
  label: string,
  since: number,
  _round: Round,
  moved: Map<string, FlagRecord>,
  response: ApiResponse,
) {
  const outside = w.api
    .eventsSince(since)
    .filter(event => event.createdBy === SCOPED)
    .filter(
      event =>
        (event.project !== null && event.project !== A) ||
        (moved.size > 0 && moved.has(event.featureName ?? '') && event.project !== A),
    )
  expect({ label, status: response.status, outside }).toEqual({ label, status: response.status, outside: [] })
  for (const [name, record] of moved) {
    expect({ label, name, record: w.api.services.store.reader.get('flags', name) }).toEqual({ label, name, record })
  }
  expect({ label, serverError: response.status >= 500 }).toEqual({ label, serverError: false })
}

const worlds: Api[] = []
afterAll(async () => {
  for (const api of worlds) await api.close()
})

describe('a token limited to one project, racing moves of its target to another project', () => {
  test('every write route is classified, and every write case writes when nothing races it', async () => {
    const operations = await writeOperations()
    expect(operations.length).toBeGreaterThan(40)
    expect(
      operations.filter(operation => !(operation.operationId in ROUTES)).map(operation => operation.operationId),
    ).toEqual([])
    const w = await world()
    worlds.push(w.api)
    for (const operation of operations) {
      const write = ROUTES[operation.operationId]
      if (write === 'read') continue
      if (write === 'service-wide') {
        const response = await w.api.request(operation.method, operation.path.replace(/\{\w+\}/g, 'x'), {
          token: w.scoped,
          body: {},
        })
        expect({ id: operation.operationId, status: response.status }).toEqual({
          id: operation.operationId,
          status: 403,
        })
        continue
      }
      const round = await newRound(w, write)
      const since = w.api.lastEventId()
      const response = await send(w, operation, round, write)
      const wanted = write.control ?? (response.status >= 200 && response.status < 300 ? response.status : 200)
      expect({ id: operation.operationId, status: response.status, text: response.text }).toMatchObject({
        id: operation.operationId,
        status: wanted,
      })
      if (wanted < 300) {
        // It wrote, in A: so a refusal in the races below is the race's doing.
        expect({
          id: operation.operationId,
          wrote: w.api.eventsSince(since).some(event => event.createdBy === SCOPED && event.project === A),
        }).toEqual({ id: operation.operationId, wrote: true })
      }
    }
  }, 120_000)

  test('a target created or moved in B after arrival, just before the write: the write lands nowhere outside A', async () => {
    const operations = (await writeOperations()).filter(operation => typeof ROUTES[operation.operationId] === 'object')
    const w = await world()
    worlds.push(w.api)
    let raced = 0
    for (const operation of operations) {
      const write = ROUTES[operation.operationId] as WriteCase
      for (const variantName of ['created', 'moved'] as const) {
        const round = await newRound(w, write)
        if (variantName === 'created') {
          // At arrival the flags do not exist: a name-only route finds nothing to check the scope of.
          const records = new Map(
            [round.parent, round.flag].map(name => [name, w.api.services.store.reader.get('flags', name)!]),
          )
          await w.api.services.store.transact(SYSTEM_ACTOR, tx => {
            for (const name of records.keys()) tx.delete('flags', name)
          })
          // moveToB puts these, as they were, into B, and keeps what it put.
          const moved = new Map(records)
          const since = w.api.lastEventId()
          const { result, ran } = await withWriteAhead(
            w.api,
            tx => moveToB(tx, round, moved),
            () => send(w, operation, round, write),
          )
          if (ran) raced++
          else moved.clear()
          expectNothingOutsideA(w, `${operation.operationId} (${variantName})`, since, round, moved, result)
        } else {
          const moved = new Map<string, FlagRecord>()
          const since = w.api.lastEventId()
          const { result, ran } = await withWriteAhead(
            w.api,
            tx => moveToB(tx, round, moved),
            () => send(w, operation, round, write),
          )
          if (ran) raced++
          expectNothingOutsideA(w, `${operation.operationId} (${variantName})`, since, round, moved, result)
        }
      }
    }
    // Nearly every case reached its transaction (those refused at arrival do not).
    expect(raced).toBeGreaterThan(operations.length)
  }, 120_000)

  test('under concurrent load, moves at random moments never let a write land outside A', async () => {
    const operations = (await writeOperations()).filter(operation => typeof ROUTES[operation.operationId] === 'object')
    const w = await world()
    worlds.push(w.api)
    const random = seededRandom(1818)
    const ROUNDS = 3
    let noise = 0
    const writer = async () => {
      for (let i = 0; i < 3; i++) {
        const name = `noise-${noise++}`
        await w.api.createFlag(NOISE, name)
        await w.api.post(`/api/admin/features/${name}/tags`, { type: 'simple', value: 'busy' })
      }
    }
    for (const operation of operations) {
      const write = ROUTES[operation.operationId] as WriteCase
      for (let r = 0; r < ROUNDS; r++) {
        const round = await newRound(w, write)
        const since = w.api.lastEventId()
        const moved = new Map<string, FlagRecord>()
        const ticks = random.int(0, 6)
        const mover = (async () => {
          for (let t = 0; t < ticks; t++) await new Promise(resolve => setImmediate(resolve))
          await w.api.services.store.transact(SYSTEM_ACTOR, tx => moveToB(tx, round, moved))
        })()
        const [response] = await Promise.all([
          send(w, operation, round, write),
          mover,
          writer(),
          writer(),
          writer(),
          writer(),
        ])
        expectNothingOutsideA(w, `${operation.operationId} (round ${r}, ${ticks} ticks)`, since, round, moved, response)
      }
    }
  }, 300_000)
})

describe('the tag race of issue 18', () => {
  test('tagging a name that does not exist at arrival and is created in B before the write answers 404 and writes nothing', async () => {
    const w = await world()
    worlds.push(w.api)
    expectOk(await w.api.createFlag(NOISE, 'template'), 201)
    for (const [method, path, body] of [
      ['POST', '/api/admin/features/late/tags', { type: 'simple', value: 'sneaky' }],
      ['PUT', '/api/admin/features/late/tags', { addedTags: [{ type: 'simple', value: 'sneaky' }], removedTags: [] }],
      ['DELETE', '/api/admin/features/late/tags/simple/existing', undefined],
    ] as const) {
      const since = w.api.lastEventId()
      const unknown = await w.api.request(method, path.replace('late', 'never'), { token: w.scoped, body })
      const { result, ran } = await withWriteAhead(
        w.api,
        tx => {
          // Made in B by someone else, with the tag the DELETE names, while the request waited in the queue.
          const template = w.api.services.store.reader.get('flags', 'template')
          if (!template) throw new Error('no template')
          tx.put('flags', 'late', {
            ...template,
            name: 'late',
            project: B,
            tags: [{ type: 'simple', value: 'existing' }],
          })
        },
        () => w.api.request(method, path, { token: w.scoped, body }),
      )
      expect(ran).toBe(true)
      expect(result.status).toBe(404)
      // Exactly what a name that never existed answers, but for the name.
      const strip = (response: ApiResponse) => ({ ...(response.body as object), id: '<id>' })
      expect(JSON.stringify(strip(result)).replaceAll('late', 'NAME')).toBe(
        JSON.stringify(strip(unknown)).replaceAll('never', 'NAME'),
      )
      expect(w.api.eventsSince(since).filter(event => event.createdBy === SCOPED)).toEqual([])
      expect(w.api.services.store.reader.get('flags', 'late')!.tags).toEqual([{ type: 'simple', value: 'existing' }])
      await w.api.services.store.transact(SYSTEM_ACTOR, tx => tx.delete('flags', 'late'))
    }
  }, 30_000)

  test("the same requests without the race write in A, so the refusal above is the race's doing", async () => {
    const w = await world()
    worlds.push(w.api)
    expectOk(await w.api.createFlag(A, 'late'), 201)
    expectOk(
      await w.api.post('/api/admin/features/late/tags', { type: 'simple', value: 'sneaky' }, { token: w.scoped }),
      201,
    )
    expect(w.api.services.store.reader.get('flags', 'late')!.tags).toEqual([{ type: 'simple', value: 'sneaky' }])
  }, 30_000)
})

describe('a token deleted while its write waits, on every write route', () => {
  test('each write queued behind the deletion answers 401 and writes nothing', async () => {
    const operations = (await writeOperations()).filter(operation => typeof ROUTES[operation.operationId] === 'object')
    const w = await world()
    worlds.push(w.api)
    for (const operation of operations) {
      const write = ROUTES[operation.operationId] as WriteCase
      const round = await newRound(w, write)
      const since = w.api.lastEventId()
      // The token's deletion is queued just ahead of its write: the request was let in, its write must not be.
      const { result, ran } = await withWriteAhead(
        w.api,
        tx => tx.delete('tokens', SCOPED),
        () => send(w, operation, round, write),
      )
      const written = w.api.eventsSince(since).filter(event => event.createdBy === SCOPED)
      expect({ id: operation.operationId, ran, status: result.status, written }).toEqual({
        id: operation.operationId,
        ran: true,
        status: 401,
        written: [],
      })
      // A token of the same name for the next route: a new secret, which the deleted one's is not.
      w.scoped = await tokenFor(w.api, SCOPED, { role: 'admin', projects: [A] })
    }
  }, 120_000)
})
