/**
 * Context fields (Unleash's /api/admin/context): the seeded fields, create, validate, update,
 * legal values and delete with their events and permissions; strategy constraints checked against
 * legal values where Unleash checks them; usage counts within the token's projects; durability.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  BOOTSTRAP,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  makeApi,
  paths,
  tempDir,
  tokenFor,
  type Api,
  type StrategyBody,
} from '../helpers'
import { STATE_FILE } from '../../src/services'
import type { Static } from '@sinclair/typebox'
import type { ContextField } from '../../src/features/context/context.model'

type FieldBody = Static<typeof ContextField>

let api: Api
freshApiPerTest(fresh => (api = fresh))

const BASE = '/api/admin/context'
const BUILT_INS = ['appName', 'currentTime', 'environment', 'sessionId', 'userId']
const region = {
  name: 'region',
  description: 'Where the user is',
  legalValues: [{ value: 'eu-west', description: 'Ireland' }, { value: 'us-east' }],
  stickiness: false,
  sortOrder: 10,
}

async function fields(app = api, token?: string): Promise<FieldBody[]> {
  const response = await app.get<FieldBody[]>(BASE, token === undefined ? undefined : { token })
  expectOk(response)
  return response.body
}

async function createRegion(): Promise<FieldBody> {
  const response = await api.post<FieldBody>(BASE, region)
  expectOk(response, 201)
  return response.body
}

/** Only what a field holds, without its creation time. */
const content = ({ createdAt: _, ...rest }: FieldBody) => rest

describe('reading context fields', () => {
  test("a new service has Unleash's five seeded fields, by name, userId and sessionId for stickiness", async () => {
    const list = await fields()
    expect(list.map(field => field.name)).toEqual(BUILT_INS)
    expect(list.map(content)).toEqual([
      {
        name: 'appName',
        description: 'Allows you to constrain on application name',
        stickiness: false,
        sortOrder: 2,
        legalValues: [],
      },
      {
        name: 'currentTime',
        description: 'Allows you to constrain on date values',
        stickiness: false,
        sortOrder: 3,
        legalValues: [],
      },
      {
        name: 'environment',
        description: 'Allows you to constrain on application environment',
        stickiness: false,
        sortOrder: 0,
        legalValues: [],
      },
      {
        name: 'sessionId',
        description: 'Allows you to constrain on sessionId',
        stickiness: true,
        sortOrder: 4,
        legalValues: [],
      },
      {
        name: 'userId',
        description: 'Allows you to constrain on userId',
        stickiness: true,
        sortOrder: 1,
        legalValues: [],
      },
    ])
    const one = await api.get<FieldBody>(`${BASE}/userId`)
    expectOk(one)
    expect(one.body).toEqual(list[4])
  })

  test('an unknown field answers 404', async () => {
    expectError(await api.get(`${BASE}/nothing`), 404, 'NotFoundError', ['nothing'])
  })
})

describe('creating context fields', () => {
  test('answers 201 with the field and its location, and records context-field-created', async () => {
    const before = api.lastEventId()
    const response = await api.post<FieldBody>(BASE, region)
    expectOk(response, 201)
    expect(content(response.body)).toEqual(region)
    expect(response.headers.get('location')).toBe('context/region')
    expect((await api.get(`${BASE}/region`)).body).toEqual(response.body)
    expect((await fields()).map(field => field.name)).toEqual([
      ...BUILT_INS.slice(0, 3),
      'region',
      ...BUILT_INS.slice(3),
    ])
    expect(api.eventsSince(before)).toEqual([
      expect.objectContaining({ type: 'context-field-created', data: response.body, preData: null, ...BOOTSTRAP }),
    ])
  })

  test('only the name is needed: no description or legal values, not for stickiness, sortOrder 0', async () => {
    const response = await api.post<FieldBody>(BASE, { name: 'tenant' })
    expectOk(response, 201)
    expect(content(response.body)).toEqual({
      name: 'tenant',
      description: '',
      stickiness: false,
      sortOrder: 0,
      legalValues: [],
    })
  })

  test('a bad name, a taken name, a repeated or over-long legal value is refused and nothing is written', async () => {
    const before = api.lastEventId()
    const cases: [unknown, number, string][] = [
      [{ name: '' }, 400, '/name'],
      [{ name: 'has space' }, 400, '/name'],
      [{ name: 'x'.repeat(101) }, 400, '/name'],
      [{ name: 'dupes', legalValues: [{ value: 'a' }, { value: 'b' }, { value: 'a' }] }, 400, '/legalValues/2/value'],
      // The value itself, inside the list (which may also be null): the rule it breaks is named where it is broken.
      [{ name: 'long', legalValues: [{ value: 'v'.repeat(101) }] }, 400, '/legalValues/0/value'],
      [{ name: 'wordy', description: 'd'.repeat(251) }, 400, '/description'],
    ]
    for (const [body, status, path] of cases) {
      const response = await api.post(BASE, body)
      expectError(response, status, 'ValidationError')
      expect(errorOf(response).details?.[0]?.path).toBe(path)
    }
    expectError(await api.post(BASE, { name: 'userId' }), 409, 'NameExistsError', ['userId'])
    expect(api.eventsSince(before)).toEqual([])
    expect((await fields()).map(field => field.name)).toEqual(BUILT_INS)
  })

  test('validate answers 200 for a free name, 409 for a taken one, 400 for a bad one, and creates nothing', async () => {
    const before = api.lastEventId()
    const free = await api.post(`${BASE}/validate`, { name: 'region' })
    expectOk(free)
    expect(free.text).toBe('')
    expectError(await api.post(`${BASE}/validate`, { name: 'appName' }), 409, 'NameExistsError')
    expectError(await api.post(`${BASE}/validate`, { name: 'not valid' }), 400, 'ValidationError')
    expect(api.eventsSince(before)).toEqual([])
  })
})

describe('changing and deleting context fields', () => {
  test('PUT replaces the given properties, leaves the others, answers the field and records context-field-updated', async () => {
    const created = await createRegion()
    const before = api.lastEventId()
    const response = await api.put<FieldBody>(`${BASE}/region`, {
      name: 'region',
      legalValues: [{ value: 'ap-south' }],
      stickiness: true,
    })
    expectOk(response)
    const updated = { ...created, legalValues: [{ value: 'ap-south' }], stickiness: true }
    expect(response.body).toEqual(updated)
    expect((await api.get(`${BASE}/region`)).body).toEqual(updated)
    expect(api.eventsSince(before)).toEqual([
      expect.objectContaining({ type: 'context-field-updated', data: updated, preData: created }),
    ])
    const cleared = await api.put<FieldBody>(`${BASE}/region`, { description: null, legalValues: null })
    expect({
      description: cleared.body.description,
      legalValues: cleared.body.legalValues,
      sortOrder: cleared.body.sortOrder,
    }).toEqual({ description: '', legalValues: [], sortOrder: 10 })
  })

  test('PUT of an unknown field is a 404, a body naming another field a 400; nothing is written', async () => {
    await createRegion()
    const before = api.lastEventId()
    expectError(await api.put(`${BASE}/missing`, { description: 'x' }), 404, 'NotFoundError')
    const renamed = await api.put(`${BASE}/region`, { name: 'country' })
    expectError(renamed, 400, 'ValidationError', ['renamed'])
    expect(errorOf(renamed).details?.[0]?.path).toBe('/name')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('legal values are added, redescribed and removed one at a time, each recording context-field-updated', async () => {
    const created = await createRegion()
    const before = api.lastEventId()
    expectOk(await api.post(`${BASE}/region/legal-values`, { value: 'ap-south' }))
    const redescribed = await api.post<FieldBody>(`${BASE}/region/legal-values`, {
      value: 'eu-west',
      description: 'Dublin',
    })
    expectOk(redescribed)
    expect(redescribed.body.legalValues).toEqual([
      { value: 'eu-west', description: 'Dublin' },
      { value: 'us-east' },
      { value: 'ap-south' },
    ])
    expectOk(await api.delete(`${BASE}/region/legal-values/us-east`))
    expect((await api.get<FieldBody>(`${BASE}/region`)).body.legalValues).toEqual([
      { value: 'eu-west', description: 'Dublin' },
      { value: 'ap-south' },
    ])
    const events = api.eventsSince(before)
    expect(events.map(event => event.type)).toEqual([
      'context-field-updated',
      'context-field-updated',
      'context-field-updated',
    ])
    expect(events[0].preData).toEqual(created)
    expectError(await api.delete(`${BASE}/region/legal-values/us-east`), 404, 'NotFoundError', ['us-east'])
    expectError(await api.post(`${BASE}/nothing/legal-values`, { value: 'a' }), 404, 'NotFoundError')
  })

  test('DELETE answers 200 and records context-field-deleted; constraints on the field stay as they are', async () => {
    const created = await createRegion()
    await api.newFlag('default', 'by-region')
    const strategy = await api.post<StrategyBody>(paths.strategies('by-region'), {
      name: 'default',
      constraints: [{ contextName: 'region', operator: 'IN', values: ['eu-west'] }],
    })
    expectOk(strategy)
    const before = api.lastEventId()
    const response = await api.delete(`${BASE}/region`)
    expectOk(response)
    expect(response.text).toBe('')
    expectError(await api.get(`${BASE}/region`), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([
      expect.objectContaining({ type: 'context-field-deleted', preData: created, data: null }),
    ])
    const kept = await api.get<StrategyBody>(`${paths.strategies('by-region')}/${strategy.body.id}`)
    expect(kept.body.constraints).toEqual(strategy.body.constraints)
    expectError(await api.delete(`${BASE}/region`), 404, 'NotFoundError')
  })
})

describe('constraints and legal values', () => {
  const constraint = (values: string[], operator = 'IN', contextName = 'region') => ({
    name: 'default',
    constraints: [{ contextName, operator, values }],
  })

  test('a strategy constraint on a field with legal values may use only those; the first other value is a 400 naming it, nothing written', async () => {
    await createRegion()
    await api.newFlag('default', 'legal')
    expectOk(await api.post(paths.strategies('legal'), constraint(['eu-west', 'us-east'])))
    const before = api.lastEventId()
    const refused = await api.post(paths.strategies('legal'), constraint(['eu-west', 'mars']))
    expectError(refused, 400, 'ValidationError', ['"mars"', 'region', '"eu-west", "us-east"'])
    expect(errorOf(refused).details?.[0]?.path).toBe('/constraints/0/values/1')
    expect(api.eventsSince(before)).toEqual([])
    expect((await api.get<StrategyBody[]>(paths.strategies('legal'))).body).toHaveLength(1)
  })

  test("updating a strategy is checked too, and a single-value operator's value is checked against the legal values", async () => {
    expectOk(await api.post(BASE, { name: 'version', legalValues: [{ value: '1.0.0' }, { value: '2.0.0' }] }), 201)
    await api.newFlag('default', 'versioned')
    const strategy = await api.post<StrategyBody>(paths.strategies('versioned'), {
      name: 'default',
      constraints: [{ contextName: 'version', operator: 'SEMVER_EQ', value: '1.0.0' }],
    })
    expectOk(strategy)
    const refused = await api.put(`${paths.strategies('versioned')}/${strategy.body.id}`, {
      name: 'default',
      constraints: [{ contextName: 'version', operator: 'SEMVER_GT', value: '1.5.0' }],
    })
    expectError(refused, 400, 'ValidationError', ['1.5.0'])
    expect(errorOf(refused).details?.[0]?.path).toBe('/constraints/0/value')
  })

  test("as in Unleash: a field without legal values, an undefined field and segments' constraints take any value", async () => {
    await createRegion()
    await api.newFlag('default', 'free')
    expectOk(await api.post(paths.strategies('free'), constraint(['anyone'], 'IN', 'userId')))
    expectOk(await api.post(paths.strategies('free'), constraint(['anything'], 'IN', 'not-defined')))
    expectOk(
      await api.post('/api/admin/segments', {
        name: 'anywhere',
        constraints: [{ contextName: 'region', operator: 'IN', values: ['mars'] }],
      }),
      201,
    )
  })
})

describe('usage and permissions', () => {
  test('the list counts the live flags (and their projects) constraining on each field, only in projects the token sees', async () => {
    await createRegion()
    await api.newProject('other')
    for (const [project, flag] of [
      ['default', 'use-one'],
      ['default', 'use-two'],
      ['other', 'use-three'],
    ]) {
      await api.newFlag(project, flag)
      expectOk(
        await api.post(paths.strategies(flag, 'development', project), {
          name: 'default',
          constraints: [{ contextName: 'region', operator: 'IN', values: ['eu-west'] }],
        }),
      )
    }
    const counts = (list: FieldBody[]) => list.find(field => field.name === 'region')
    expect(counts(await fields())).toMatchObject({ usedInFeatures: 3, usedInProjects: 2 })
    expect((await fields()).find(field => field.name === 'userId')).not.toHaveProperty('usedInFeatures')
    const limited = await tokenFor(api, 'limited', { projects: ['other'] })
    expect(counts(await fields(api, limited))).toMatchObject({ usedInFeatures: 1, usedInProjects: 1 })
    expectOk(await api.delete('/api/admin/projects/other/features/use-three'), 202)
    expect(counts(await fields(api, limited))).not.toHaveProperty('usedInFeatures')
  })

  test('GET .../:contextField/strategies lists the strategies constraining on the field, of archived flags too, in the projects the token sees', async () => {
    await createRegion()
    await api.newProject('other')
    const regional = { contextName: 'region', operator: 'IN', values: ['eu-west'] }
    const made: Record<string, string> = {}
    const add = async (project: string, flag: string, environment: string, body: Record<string, unknown>) => {
      const response = await api.post<StrategyBody>(paths.strategies(flag, environment, project), body)
      expectOk(response)
      made[`${flag}/${environment}/${body.name}`] = response.body.id
    }
    await api.newFlag('default', 'b-flag')
    await api.newFlag('default', 'a-flag')
    await api.newFlag('other', 'c-flag')
    await add('default', 'b-flag', 'production', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'b-flag' },
      constraints: [regional],
    })
    await add('default', 'b-flag', 'development', {
      name: 'default',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }, regional],
    })
    // Not on the field: left out.
    await add('default', 'b-flag', 'development', {
      name: 'userWithId',
      parameters: { userIds: '1' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
    })
    await add('default', 'a-flag', 'development', { name: 'default', constraints: [regional] })
    await add('other', 'c-flag', 'development', { name: 'default', constraints: [regional] })
    expectOk(await api.delete(paths.flag('a-flag')), 202)
    const strategies = (name: string, token?: string) =>
      api.get<{ strategies: unknown[] }>(`${BASE}/${name}/strategies`, token === undefined ? undefined : { token })
    const all = await strategies('region')
    expectOk(all)
    const entry = (projectId: string, featureName: string, environment: string, strategyName: string) => ({
      id: made[`${featureName}/${environment}/${strategyName}`],
      projectId,
      featureName,
      strategyName,
      environment,
    })
    expect(all.body).toEqual({
      strategies: [
        entry('default', 'a-flag', 'development', 'default'),
        entry('default', 'b-flag', 'development', 'default'),
        entry('default', 'b-flag', 'production', 'flexibleRollout'),
        entry('other', 'c-flag', 'development', 'default'),
      ],
    })
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer', projects: ['other'] })
    expect((await strategies('region', viewer)).body).toEqual({
      strategies: [entry('other', 'c-flag', 'development', 'default')],
    })
    // As in Unleash: a field nobody defined is not a 404; constraints may name it all the same.
    expect((await strategies('nowhere')).body).toEqual({ strategies: [] })
    expectOk(await api.delete(`${BASE}/region`))
    expect((await strategies('region')).body.strategies).toHaveLength(4)
    expectError(await api.get(`${BASE}/region/strategies`, { token: null }), 401, 'AuthenticationRequired')
  })

  test("viewers and project-limited tokens read but cannot write; editors may (as Unleash's Editor role)", async () => {
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const limited = await tokenFor(api, 'limited', { projects: ['default'] })
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    for (const token of [viewer, limited]) {
      expectOk(await api.get(`${BASE}/userId`, { token }))
      const attempts: [string, Promise<{ status: number; body: unknown }>][] = [
        ['CREATE_CONTEXT_FIELD', api.post(BASE, { name: 'nope' }, { token })],
        ['UPDATE_CONTEXT_FIELD', api.put(`${BASE}/userId`, { description: 'x' }, { token })],
        ['UPDATE_CONTEXT_FIELD', api.post(`${BASE}/userId/legal-values`, { value: 'x' }, { token })],
        ['DELETE_CONTEXT_FIELD', api.delete(`${BASE}/userId`, { token })],
      ]
      for (const [permission, pending] of attempts) {
        const response = await pending
        expect({
          status: response.status,
          permissions: (response.body as { permissions?: string[] }).permissions,
        }).toEqual({ status: 403, permissions: [permission] })
      }
    }
    expectOk(await api.post(BASE, { name: 'by-editor' }, { token: editor }), 201)
    expectOk(await api.delete(`${BASE}/by-editor`, { token: editor }))
    expect((await fields()).map(field => field.name)).toEqual(BUILT_INS)
  })
})

describe('durability', () => {
  test('fields survive a restart; an older data directory gets the seeded ones; a deleted seeded field stays deleted', async () => {
    const dir = tempDir('flags-context-')
    try {
      let app = await makeApi({ dataDir: dir.path })
      expectOk(await app.post(BASE, region), 201)
      expectOk(await app.delete(`${BASE}/currentTime`))
      app.abandon()
      app = await makeApi({ dataDir: dir.path })
      const names = (await fields(app)).map(field => field.name)
      expect(names).toEqual(['appName', 'environment', 'region', 'sessionId', 'userId'])
      await app.close()
      app = await makeApi({ dataDir: dir.path })
      expect((await fields(app)).map(field => field.name)).toEqual(names)
      await app.close()
      const state = JSON.parse(readFileSync(join(dir.path, STATE_FILE), 'utf8'))
      expect(state.contextFields.region.legalValues).toEqual(region.legalValues)
      delete state.contextFields
      writeFileSync(join(dir.path, STATE_FILE), JSON.stringify(state))
      app = await makeApi({ dataDir: dir.path })
      expect((await fields(app)).map(field => field.name)).toEqual(BUILT_INS)
      await app.close()
    } finally {
      dir.remove()
    }
  })
})
