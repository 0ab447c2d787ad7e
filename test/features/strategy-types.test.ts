/**
 * Strategy definitions (sdk-api-contract §4): /api/admin/strategies with its events and permissions,
 * the built-ins' protection, and strategies on flags of SDK-known and user-defined types.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  errorOf,
  expectError,
  expectOk,
  makeApi,
  paths,
  tempDir,
  tokenFor,
  type Api,
  type StrategyBody,
  freshApiPerTest,
} from '../helpers'
import { STATE_FILE } from '../../src/services'
import type { Static } from '@sinclair/typebox'
import type { StrategyType, StrategyTypeList } from '../../src/features/strategy-types/strategy-types.model'

type TypeBody = Static<typeof StrategyType>
type TypeListBody = Static<typeof StrategyTypeList>

let api: Api
freshApiPerTest(fresh => (api = fresh))

const BASE = '/api/admin/strategies'
const BUILT_INS = [
  'default',
  'flexibleRollout',
  'userWithId',
  'remoteAddress',
  'applicationHostname',
  'gradualRolloutUserId',
  'gradualRolloutSessionId',
  'gradualRolloutRandom',
]
const region = {
  name: 'region',
  title: 'Regions',
  description: 'On in the listed regions',
  parameters: [{ name: 'regions', type: 'list', description: 'Region codes', required: true }],
}

async function defineRegion(): Promise<TypeBody> {
  const response = await api.post<TypeBody>(BASE, region)
  expectOk(response, 201)
  return response.body
}

/** Checks a refusal wrote nothing and left the definitions as they were. */
async function expectUnchanged(before: number, list: TypeListBody) {
  expect(api.eventsSince(before)).toEqual([])
  expect((await api.get<TypeListBody>(BASE)).body).toEqual(list)
}

describe('listing and reading strategy types', () => {
  test('the list answers {version: 1, strategies} with the eight built-ins, not editable, then defined types by name', async () => {
    await api.post(BASE, { name: 'zeta', parameters: [] })
    await api.post(BASE, { name: 'alpha', parameters: [] })
    const response = await api.get<TypeListBody>(BASE)
    expect(response.status).toBe(200)
    expect(response.body.version).toBe(1)
    expect(response.body.strategies.map(s => s.name)).toEqual([...BUILT_INS, 'alpha', 'zeta'])
    expect(response.body.strategies.slice(0, 8).every(s => !s.editable && !s.deprecated)).toBe(true)
    expect(response.body.strategies.slice(8).every(s => s.editable)).toBe(true)
    const flexible = response.body.strategies[1]
    expect(flexible.parameters.map(p => p.name)).toEqual(['rollout', 'stickiness', 'groupId'])
  })

  test('one type by name, built-in or defined; an unknown name answers 404', async () => {
    await defineRegion()
    const builtIn = await api.get<TypeBody>(`${BASE}/gradualRolloutUserId`)
    expect(builtIn.status).toBe(200)
    expect(builtIn.body).toMatchObject({ name: 'gradualRolloutUserId', editable: false, deprecated: false })
    expect(builtIn.body.parameters.map(p => p.name)).toEqual(['percentage', 'groupId'])
    const defined = await api.get<TypeBody>(`${BASE}/region`)
    expect(defined.body).toEqual({
      name: 'region',
      displayName: 'Regions',
      title: 'Regions',
      description: 'On in the listed regions',
      editable: true,
      deprecated: false,
      parameters: [{ name: 'regions', type: 'list', description: 'Region codes', required: true }],
    })
    expectError(await api.get(`${BASE}/nowhere`), 404, 'NotFoundError', ['nowhere'])
  })
})

describe('defining, updating, deprecating and reactivating', () => {
  test('POST answers 201 with the type, records strategy-created with it, and the defaults fill in', async () => {
    const before = api.lastEventId()
    const created = await defineRegion()
    expect(created).toMatchObject({ name: 'region', editable: true, deprecated: false })
    const bare = await api.post<TypeBody>(BASE, { name: 'bare', parameters: [{ name: 'p', type: 'number' }] })
    expectOk(bare, 201)
    expect(bare.body).toMatchObject({
      title: null,
      displayName: null,
      description: '',
      parameters: [{ name: 'p', type: 'number', description: '', required: false }],
    })
    const events = await api.eventsAfter(before)
    expect(events.map(e => [e.type, e.createdBy])).toEqual([
      ['strategy-created', 'admin-bootstrap'],
      ['strategy-created', 'admin-bootstrap'],
    ])
    expect(events[0].data).toEqual(created)
  })

  test('a name already defined or built in answers 409; a bad name, parameter type or duplicate parameter 400; nothing is recorded', async () => {
    await defineRegion()
    const list = (await api.get<TypeListBody>(BASE)).body
    const before = api.lastEventId()
    expectError(await api.post(BASE, region), 409, 'NameExistsError', ['region'])
    expectError(await api.post(BASE, { name: 'flexibleRollout', parameters: [] }), 409, 'NameExistsError')
    expectError(await api.post(BASE, { name: 'gradualRolloutRandom', parameters: [] }), 409, 'NameExistsError')
    expectError(await api.post(BASE, { name: 'has space', parameters: [] }), 400, 'ValidationError')
    expectError(await api.post(BASE, { name: 'x', parameters: [{ name: 'p', type: 'date' }] }), 400, 'ValidationError')
    expectError(await api.post(BASE, { name: 'x' }), 400, 'ValidationError')
    const twice = await api.post(BASE, {
      name: 'x',
      parameters: [
        { name: 'p', type: 'string' },
        { name: 'p', type: 'list' },
      ],
    })
    expectError(twice, 400, 'ValidationError', ['"p"'])
    expect(errorOf(twice).details?.[0]?.path).toBe('/parameters/1/name')
    await expectUnchanged(before, list)
  })

  test('PUT replaces the definition, answers it and records strategy-updated with data and preData', async () => {
    const created = await defineRegion()
    const before = api.lastEventId()
    const response = await api.put<TypeBody>(`${BASE}/region`, {
      description: 'Listed regions only',
      parameters: [{ name: 'codes', type: 'string' }],
    })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({
      name: 'region',
      title: 'Regions',
      description: 'Listed regions only',
      parameters: [{ name: 'codes', type: 'string', description: '', required: false }],
    })
    expect((await api.get<TypeBody>(`${BASE}/region`)).body).toEqual(response.body)
    const events = await api.eventsAfter(before)
    expect(events.map(e => e.type)).toEqual(['strategy-updated'])
    expect(events[0].data).toEqual(response.body)
    expect(events[0].preData).toEqual(created)
  })

  test('PUT of an unknown type answers 404, of another name in the body 400, of a built-in 400; nothing changes', async () => {
    await defineRegion()
    const list = (await api.get<TypeListBody>(BASE)).body
    const before = api.lastEventId()
    expectError(await api.put(`${BASE}/nowhere`, { parameters: [] }), 404, 'NotFoundError')
    expectError(await api.put(`${BASE}/region`, { name: 'other', parameters: [] }), 400, 'ValidationError', ['renamed'])
    for (const name of ['default', 'flexibleRollout', 'gradualRolloutUserId']) {
      expectError(await api.put(`${BASE}/${name}`, { parameters: [] }), 400, 'ValidationError', ['built-in'])
    }
    await expectUnchanged(before, list)
  })

  test('deprecate and reactivate answer 200 with the type and record strategy-deprecated / strategy-reactivated; repeating records nothing', async () => {
    await defineRegion()
    const before = api.lastEventId()
    const deprecated = await api.post<TypeBody>(`${BASE}/region/deprecate`)
    expect(deprecated.status).toBe(200)
    expect(deprecated.body.deprecated).toBe(true)
    expect((await api.get<TypeBody>(`${BASE}/region`)).body.deprecated).toBe(true)
    const again = api.lastEventId()
    expectOk(await api.post(`${BASE}/region/deprecate`))
    expect(api.eventsSince(again)).toEqual([])
    const reactivated = await api.post<TypeBody>(`${BASE}/region/reactivate`)
    expect(reactivated.body.deprecated).toBe(false)
    const events = await api.eventsAfter(before)
    expect(events.map(e => [e.type, e.data])).toEqual([
      ['strategy-deprecated', { name: 'region' }],
      ['strategy-reactivated', { name: 'region' }],
    ])
  })

  test('built-in types cannot be deprecated or reactivated (400); unknown ones answer 404; nothing is recorded', async () => {
    const list = (await api.get<TypeListBody>(BASE)).body
    const before = api.lastEventId()
    for (const name of BUILT_INS) {
      expectError(await api.post(`${BASE}/${name}/deprecate`), 400, 'ValidationError', ['built-in'])
      expectError(await api.post(`${BASE}/${name}/reactivate`), 400, 'ValidationError', ['built-in'])
    }
    expectError(await api.post(`${BASE}/nowhere/deprecate`), 404, 'NotFoundError')
    await expectUnchanged(before, list)
  })
})

describe('deleting', () => {
  test('a user-defined type no strategy uses is deleted: 200, gone from the list, strategy-deleted with what it was', async () => {
    const created = await defineRegion()
    const before = api.lastEventId()
    expectOk(await api.delete(`${BASE}/region`))
    expectError(await api.get(`${BASE}/region`), 404, 'NotFoundError')
    expect((await api.get<TypeListBody>(BASE)).body.strategies.map(s => s.name)).toEqual(BUILT_INS)
    const events = await api.eventsAfter(before)
    expect(events.map(e => [e.type, e.preData, e.data])).toEqual([['strategy-deleted', created, null]])
    // The name is free again.
    await defineRegion()
  })

  test('a type used by a strategy of any flag, archived ones too, is refused with 400 naming the flags; built-ins 400, unknown 404; nothing recorded', async () => {
    await defineRegion()
    await api.newFlag('default', 'regional')
    expectOk(await api.post(paths.strategies('regional'), { name: 'region', parameters: { regions: 'eu' } }))
    expectOk(await api.delete(paths.flag('regional')), 202)
    const list = (await api.get<TypeListBody>(BASE)).body
    const before = api.lastEventId()
    expectError(await api.delete(`${BASE}/region`), 400, 'ValidationError', ['"regional"', 'deprecate'])
    for (const name of BUILT_INS) expectError(await api.delete(`${BASE}/${name}`), 400, 'ValidationError', ['built-in'])
    expectError(await api.delete(`${BASE}/nowhere`), 404, 'NotFoundError')
    await expectUnchanged(before, list)
  })

  test('viewers may not delete (403 DELETE_STRATEGY); editors may', async () => {
    await defineRegion()
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    const refused = await api.delete(`${BASE}/region`, { token: viewer })
    expectError(refused, 403, 'NoAccessError')
    expect((refused.body as { permissions: string[] }).permissions).toEqual(['DELETE_STRATEGY'])
    expectOk(await api.delete(`${BASE}/region`, { token: editor }))
  })
})

describe('permissions', () => {
  test('viewers may read but not define, update, deprecate or reactivate (403 with the permission); editors may', async () => {
    await defineRegion()
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    const client = (await api.createToken({ tokenName: 'sdk', type: 'client' })).body.secret
    expect((await api.get(BASE, { token: viewer })).status).toBe(200)
    const before = api.lastEventId()
    const refused: [ReturnType<typeof api.post>, string][] = [
      [api.post(BASE, { name: 'v', parameters: [] }, { token: viewer }), 'CREATE_STRATEGY'],
      [api.put(`${BASE}/region`, { parameters: [] }, { token: viewer }), 'UPDATE_STRATEGY'],
      [api.post(`${BASE}/region/deprecate`, undefined, { token: viewer }), 'UPDATE_STRATEGY'],
      [api.post(`${BASE}/region/reactivate`, undefined, { token: viewer }), 'UPDATE_STRATEGY'],
    ]
    for (const [request, permission] of refused) {
      const response = await request
      expectError(response, 403, 'NoAccessError')
      expect(errorOf(response).permissions).toEqual([permission])
    }
    expect((await api.get(BASE, { token: client })).status).toBe(403)
    expect((await api.get(BASE, { token: null })).status).toBe(401)
    expect(api.eventsSince(before)).toEqual([])
    expectOk(await api.post(BASE, { name: 'by-editor', parameters: [] }, { token: editor }), 201)
    expectOk(await api.post(`${BASE}/by-editor/deprecate`, undefined, { token: editor }))
    expect((await api.eventsAfter(before)).map(e => [e.type, e.createdBy])).toEqual([
      ['strategy-created', 'editor'],
      ['strategy-deprecated', 'editor'],
    ])
  })
})

describe('strategies of SDK-known and user-defined types on flags', () => {
  test('gradualRolloutUserId and a user-defined type are stored and served with their parameters as given', async () => {
    await api.newFlag('default', 'typed')
    await defineRegion()
    const sdkKnown = await api.post<StrategyBody>(paths.strategies('typed'), {
      name: 'gradualRolloutUserId',
      parameters: { percentage: 30, groupId: 'typed' },
    })
    expectOk(sdkKnown)
    expect(sdkKnown.body).toMatchObject({
      name: 'gradualRolloutUserId',
      parameters: { percentage: '30', groupId: 'typed' },
    })
    const custom = await api.post<StrategyBody>(paths.strategies('typed'), {
      name: 'region',
      parameters: { regions: 'eu-west,us-east' },
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
    })
    expectOk(custom)
    expect(custom.body).toMatchObject({ name: 'region', parameters: { regions: 'eu-west,us-east' } })
    const flag = await api.getFlag('default', 'typed')
    const strategies = flag.body.environments.find(e => e.name === 'development')?.strategies
    expect(strategies?.map(s => [s.name, s.parameters])).toEqual([
      ['gradualRolloutUserId', { percentage: '30', groupId: 'typed' }],
      ['region', { regions: 'eu-west,us-east' }],
    ])
  })

  test('an unknown type answers 400 at /name and stores nothing', async () => {
    await api.newFlag('default', 'unknown-type')
    const before = api.lastEventId()
    const response = await api.post(paths.strategies('unknown-type'), { name: 'region', parameters: {} })
    expectError(response, 400, 'ValidationError', ['region'])
    expect(errorOf(response).details?.[0]?.path).toBe('/name')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a deprecated type cannot be given to a strategy, but strategies that have it stay, are served and can still be edited', async () => {
    await api.newFlag('default', 'deprecated-type')
    await defineRegion()
    const kept = await api.post<StrategyBody>(paths.strategies('deprecated-type'), {
      name: 'region',
      parameters: { regions: 'eu' },
    })
    expectOk(kept)
    const other = await api.post<StrategyBody>(paths.strategies('deprecated-type'), { name: 'default' })
    expectOk(await api.post(`${BASE}/region/deprecate`))
    const before = api.lastEventId()
    expectError(await api.post(paths.strategies('deprecated-type'), { name: 'region' }), 400, 'ValidationError', [
      'deprecated',
    ])
    expectError(
      await api.put(`${paths.strategies('deprecated-type')}/${other.body.id}`, { name: 'region' }),
      400,
      'ValidationError',
      ['deprecated'],
    )
    expect(api.eventsSince(before)).toEqual([])
    const edited = await api.put<StrategyBody>(`${paths.strategies('deprecated-type')}/${kept.body.id}`, {
      name: 'region',
      parameters: { regions: 'eu,us' },
    })
    expectOk(edited)
    expect(edited.body.parameters).toEqual({ regions: 'eu,us' })
    expectOk(await api.post(`${BASE}/region/reactivate`))
    expectOk(await api.post(paths.strategies('deprecated-type'), { name: 'region' }))
  })
})

describe('OpenAPI', () => {
  test("the seven operations are documented under Unleash's operationIds with their permission, and the bodies with an example", async () => {
    const document = (
      await api.get<{
        paths: Record<string, Record<string, { operationId: string; 'x-permission'?: string }>>
        components: { schemas: Record<string, { example?: unknown }> }
      }>('/swagger/json', { token: null })
    ).body
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/api/admin/strategies'))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.operationId]),
      )
    expect(Object.fromEntries(operations)).toEqual({
      'GET /api/admin/strategies': 'getAllStrategies',
      'POST /api/admin/strategies': 'createStrategy',
      'GET /api/admin/strategies/{name}': 'getStrategy',
      'PUT /api/admin/strategies/{name}': 'updateStrategy',
      'DELETE /api/admin/strategies/{name}': 'removeStrategy',
      'POST /api/admin/strategies/{name}/deprecate': 'deprecateStrategy',
      'POST /api/admin/strategies/{name}/reactivate': 'reactivateStrategy',
    })
    expect(document.components.schemas.createStrategySchema.example).toBeDefined()
    expect(document.components.schemas.updateStrategySchema.example).toBeDefined()
  })
})

describe('durability', () => {
  test('defined types survive a restart, through the journal and through the checkpoint; a state.json from before them starts with none', async () => {
    const dir = tempDir('flags-strategy-types-')
    try {
      let app = await makeApi({ dataDir: dir.path })
      expectOk(await app.post(BASE, region), 201)
      expectOk(await app.post(`${BASE}/region/deprecate`))
      app.abandon()
      app = await makeApi({ dataDir: dir.path })
      expect((await app.get<TypeBody>(`${BASE}/region`)).body).toMatchObject({
        name: 'region',
        deprecated: true,
        parameters: region.parameters,
      })
      await app.close()
      const state = JSON.parse(readFileSync(join(dir.path, STATE_FILE), 'utf8'))
      expect(Object.keys(state.strategyTypes)).toEqual(['region'])
      app = await makeApi({ dataDir: dir.path })
      expect((await app.get<TypeBody>(`${BASE}/region`)).status).toBe(200)
      await app.close()
      // As a data directory made before strategy types existed: no key at all.
      delete state.strategyTypes
      writeFileSync(join(dir.path, STATE_FILE), JSON.stringify(state))
      app = await makeApi({ dataDir: dir.path })
      expect((await app.get<TypeListBody>(BASE)).body.strategies.map(s => s.name)).toEqual(BUILT_INS)
      expectOk(await app.post(BASE, region), 201)
      await app.close()
    } finally {
      dir.remove()
    }
  })
})
