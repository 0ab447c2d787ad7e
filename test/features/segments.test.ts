/**
 * Segments (SDK contract §3): the admin API, its events, validation, limits, project scoping, the
 * 409s, strategies referring to segments, durability and permissions.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  errorOf,
  expectError,
  expectOk,
  expectStatus,
  freshApiPerTest,
  ISO_MS,
  makeApi,
  paths,
  tempDir,
  tokenFor,
  type Api,
  type StrategyBody,
} from '../helpers'
import { LIMITS } from '../../src/features/limits'
import { STATE_FILE } from '../../src/services'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface SegmentBody {
  id: number
  name: string
  description: string | null
  project: string | null
  constraints: {
    contextName: string
    operator: string
    values: string[]
    value?: string
    caseInsensitive: boolean
    inverted: boolean
  }[]
  createdAt: string
  createdBy: string
}

const EUROPE = { contextName: 'region', operator: 'IN', values: ['eu-west', 'eu-north'] }

function createSegment(body: Record<string, unknown>, token?: string) {
  return api.post<SegmentBody>('/api/admin/segments', body, token === undefined ? undefined : { token })
}

async function newSegment(name: string, extra: Record<string, unknown> = {}): Promise<SegmentBody> {
  const response = await createSegment({ name, constraints: [EUROPE], ...extra })
  expectOk(response, 201)
  return response.body
}

async function segmentList(token?: string): Promise<SegmentBody[]> {
  const response = await api.get<{ segments: SegmentBody[] }>(
    '/api/admin/segments',
    token === undefined ? undefined : { token },
  )
  expectOk(response)
  return response.body.segments
}

function addStrategy(flag: string, body: Record<string, unknown>, project = 'default') {
  return api.post<StrategyBody>(paths.strategies(flag, 'development', project), body)
}

describe('creating, reading, updating and deleting segments', () => {
  test("POST answers 201 with the segment in Unleash's shape; GET by id and the list answer the same", async () => {
    const response = await createSegment({ name: 'europe', description: 'Users in Europe', constraints: [EUROPE] })
    expectOk(response, 201)
    expect(response.body).toEqual({
      id: 1,
      name: 'europe',
      description: 'Users in Europe',
      project: null,
      constraints: [{ ...EUROPE, caseInsensitive: false, inverted: false }],
      createdAt: expect.stringMatching(ISO_MS),
      createdBy: 'admin-bootstrap',
    })
    const one = await api.get<SegmentBody>('/api/admin/segments/1')
    expectOk(one)
    expect(one.body).toEqual(response.body)
    expect(await segmentList()).toEqual([response.body])
  })

  test('ids count up and are never reused after a delete', async () => {
    const a = await newSegment('a')
    const b = await newSegment('b')
    expect([a.id, b.id]).toEqual([1, 2])
    expectStatus(await api.delete('/api/admin/segments/2'), 204)
    const c = await newSegment('c')
    expect(c.id).toBe(3)
    expect((await segmentList()).map(segment => segment.id)).toEqual([1, 3])
  })

  test('PUT replaces the segment whole and answers 204; DELETE answers 204 and the segment is gone', async () => {
    const segment = await newSegment('beta', { description: 'old' })
    const put = await api.put(`/api/admin/segments/${segment.id}`, {
      name: 'beta-users',
      constraints: [{ contextName: 'userId', operator: 'STR_STARTS_WITH', values: ['beta-'] }],
    })
    expectStatus(put, 204)
    expect(put.text).toBe('')
    const after = (await api.get<SegmentBody>(`/api/admin/segments/${segment.id}`)).body
    expect(after).toMatchObject({
      id: segment.id,
      name: 'beta-users',
      description: null,
      project: null,
      createdAt: segment.createdAt,
    })
    expect(after.constraints).toEqual([
      {
        contextName: 'userId',
        operator: 'STR_STARTS_WITH',
        values: ['beta-'],
        caseInsensitive: false,
        inverted: false,
      },
    ])
    expectStatus(await api.delete(`/api/admin/segments/${segment.id}`), 204)
    expectError(await api.get(`/api/admin/segments/${segment.id}`), 404, 'NotFoundError', [`Segment ${segment.id}`])
    expect(await segmentList()).toEqual([])
  })

  test('an unknown id answers 404 on GET, PUT and DELETE, and a non-numeric one 400 naming the parameter', async () => {
    const before = api.lastEventId()
    expectError(await api.get('/api/admin/segments/42'), 404, 'NotFoundError', ['42'])
    expectError(await api.put('/api/admin/segments/42', { name: 'x', constraints: [] }), 404, 'NotFoundError', ['42'])
    expectError(await api.delete('/api/admin/segments/42'), 404, 'NotFoundError', ['42'])
    const bad = await api.get('/api/admin/segments/abc')
    expectError(bad, 400, 'ValidationError')
    expect(JSON.stringify(errorOf(bad).details)).toContain('id')
    expect(api.eventsSince(before)).toEqual([])
  })
})

describe('segment events', () => {
  test('segment-created, segment-updated (data and preData) and segment-deleted record the segment', async () => {
    const start = api.lastEventId()
    const segment = await newSegment('europe', { project: 'default' })
    expectStatus(
      await api.put(`/api/admin/segments/${segment.id}`, {
        name: 'europe',
        project: 'default',
        description: 'now described',
        constraints: [],
      }),
      204,
    )
    expectStatus(await api.delete(`/api/admin/segments/${segment.id}`), 204)
    const written = await api.eventsAfter(start)
    expect(written.map(event => event.type)).toEqual(['segment-created', 'segment-updated', 'segment-deleted'])
    const [created, updated, deleted] = written
    expect(created).toMatchObject({ project: 'default', createdBy: 'admin-bootstrap', data: segment, preData: null })
    expect(updated).toMatchObject({
      project: 'default',
      data: { ...segment, description: 'now described', constraints: [] },
      preData: segment,
    })
    expect(deleted).toMatchObject({
      project: 'default',
      data: null,
      preData: { ...segment, description: 'now described', constraints: [] },
    })
    // Event search filters them by type like any other.
    const found = await api.searchEvents('?type=IS:segment-updated')
    expectOk(found)
    expect(found.body.events.map(event => event.id)).toEqual([updated.id])
  })
})

describe('segment validation', () => {
  // The refusals change nothing, so the cases share one app.
  test('a missing, empty, blank or long name, a long description, missing or malformed constraints, an unknown project: each answers 400 naming the field, and nothing is written', async () => {
    for (const [label, body, path] of [
      ['a missing name', { constraints: [] }, '/name'],
      ['an empty name', { name: '', constraints: [] }, '/name'],
      ['a blank name', { name: '   ', constraints: [] }, '/name'],
      ['a name over 100 characters', { name: 'x'.repeat(101), constraints: [] }, '/name'],
      [
        'a description over 2,000 characters',
        { name: 'x', description: 'd'.repeat(2001), constraints: [] },
        '/description',
      ],
      ['missing constraints', { name: 'x' }, '/constraints'],
      [
        'an unknown operator',
        { name: 'x', constraints: [{ contextName: 'a', operator: 'LIKE', values: ['b'] }] },
        '/constraints/0/operator',
      ],
      [
        'a NUM_ operator without a number',
        { name: 'x', constraints: [{ contextName: 'a', operator: 'NUM_GT', value: 'many' }] },
        '/constraints/0/value',
      ],
      [
        'a SEMVER_ operator with a v prefix',
        { name: 'x', constraints: [{ contextName: 'a', operator: 'SEMVER_EQ', value: 'v2.0.0' }] },
        '/constraints/0/value',
      ],
      [
        'an IN constraint without values',
        { name: 'x', constraints: [{ contextName: 'a', operator: 'IN', values: [] }] },
        '/constraints/0/values',
      ],
      ['an unknown project', { name: 'x', project: 'nowhere', constraints: [] }, '/project'],
    ] as const) {
      const before = api.lastEventId()
      const response = await createSegment(body)
      expect({ label, status: response.status }).toEqual({ label, status: 400 })
      expectError(response, 400, 'ValidationError')
      expect(errorOf(response).details?.map(detail => detail.path)).toContain(path)
      expect(api.eventsSince(before)).toEqual([])
      expect(await segmentList()).toEqual([])
    }
  })

  test('a duplicate name answers 409 NameExistsError on create and on update', async () => {
    await newSegment('europe')
    const other = await newSegment('asia')
    const before = api.lastEventId()
    expectError(await createSegment({ name: 'europe', constraints: [] }), 409, 'NameExistsError', ['europe'])
    expectError(
      await api.put(`/api/admin/segments/${other.id}`, { name: 'europe', constraints: [] }),
      409,
      'NameExistsError',
      ['europe'],
    )
    expect(api.eventsSince(before)).toEqual([])
    // Keeping its own name on update is no clash.
    expectStatus(await api.put(`/api/admin/segments/${other.id}`, { name: 'asia', constraints: [] }), 204)
  })
})

describe('segment limits', () => {
  test(`more than ${LIMITS.constraintsPerSegment.max} constraints answers 400`, async () => {
    const constraints = Array.from({ length: LIMITS.constraintsPerSegment.max + 1 }, () => EUROPE)
    const response = await createSegment({ name: 'many', constraints })
    expectError(response, 400, 'ValidationError')
    expect(errorOf(response).details?.[0].path).toBe('/constraints')
    expectOk(await createSegment({ name: 'enough', constraints: constraints.slice(1) }), 201)
  })

  test(`more than ${LIMITS.valuesPerSegment.max} values across the constraints answers 400 naming valuesPerSegment`, async () => {
    const values = Array.from({ length: 250 }, (_, i) => `v${i}`)
    const constraints = Array.from({ length: 4 }, () => ({ contextName: 'userId', operator: 'IN', values }))
    expectOk(await createSegment({ name: 'at-limit', constraints }), 201)
    const over = await createSegment({
      name: 'over',
      constraints: [...constraints, { contextName: 'userId', operator: 'IN', values: ['one-more'] }],
    })
    expectError(over, 400, 'ValidationError', ['valuesPerSegment'])
  })

  test(`the ${LIMITS.segments.max + 1}th segment answers 400 naming the limit`, async () => {
    for (let i = 0; i < LIMITS.segments.max; i++) expectOk(await createSegment({ name: `s${i}`, constraints: [] }), 201)
    expectError(await createSegment({ name: 'one-too-many', constraints: [] }), 400, 'ValidationError', ['segments'])
  })
})

describe('strategies refer to segments', () => {
  test('a strategy stores and shows the segment ids it refers to', async () => {
    await api.newFlag('default', 'checkout')
    const a = await newSegment('a')
    const b = await newSegment('b', { project: 'default' })
    const response = await addStrategy('checkout', { name: 'default', segments: [b.id, a.id] })
    expectOk(response)
    expect(response.body.segments).toEqual([b.id, a.id])
    const flag = (await api.getFlag('default', 'checkout')).body
    expect(flag.environments.find(e => e.name === 'development')!.strategies![0].segments).toEqual([b.id, a.id])
  })

  test('an unknown segment id answers 400 naming /segments/<i>, on add and on update, and nothing is written', async () => {
    await api.newFlag('default', 'checkout')
    const a = await newSegment('a')
    const strategy = (await addStrategy('checkout', { name: 'default', segments: [a.id] })).body
    const before = api.lastEventId()
    const added = await addStrategy('checkout', { name: 'default', segments: [a.id, 99] })
    expectError(added, 400, 'ValidationError', ['99'])
    expect(errorOf(added).details?.[0].path).toBe('/segments/1')
    const updated = await api.put(`${paths.strategies('checkout')}/${strategy.id}`, { name: 'default', segments: [99] })
    expectError(updated, 400, 'ValidationError', ['99'])
    expect(errorOf(updated).details?.[0].path).toBe('/segments/0')
    expect(api.eventsSince(before)).toEqual([])
  })

  test("a segment of another project answers 400 exactly as one that does not exist; one of the flag's project or a global one is accepted", async () => {
    await api.newProject('alpha')
    await api.newFlag('default', 'checkout')
    const alphaOnly = await newSegment('alpha-only', { project: 'alpha' })
    const response = await addStrategy('checkout', { name: 'default', segments: [alphaOnly.id] })
    expectError(response, 400, 'ValidationError', ['default'])
    expect(errorOf(response).details?.[0].path).toBe('/segments/0')
    // Neither the other project nor the segment is named: a token limited to `default` cannot tell it from a missing one.
    expect(response.text).not.toContain('alpha')
    const missing = await addStrategy('checkout', { name: 'default', segments: [alphaOnly.id + 100] })
    expect(errorOf(missing).message).toBe(
      errorOf(response).message.replace(String(alphaOnly.id), String(alphaOnly.id + 100)),
    )
    await api.newFlag('alpha', 'alpha-flag')
    expectOk(await addStrategy('alpha-flag', { name: 'default', segments: [alphaOnly.id] }, 'alpha'))
  })

  test('a segment listed twice answers 400', async () => {
    await api.newFlag('default', 'checkout')
    const a = await newSegment('a')
    const response = await addStrategy('checkout', { name: 'default', segments: [a.id, a.id] })
    expectError(response, 400, 'ValidationError', ['twice'])
    expect(errorOf(response).details?.[0].path).toBe('/segments/1')
  })

  test(`more than ${LIMITS.segmentsPerStrategy.max} segments on a strategy answers 400`, async () => {
    await api.newFlag('default', 'checkout')
    const ids: number[] = []
    for (let i = 0; i <= LIMITS.segmentsPerStrategy.max; i++) ids.push((await newSegment(`s${i}`)).id)
    expectError(await addStrategy('checkout', { name: 'default', segments: ids }), 400, 'ValidationError')
    expectOk(await addStrategy('checkout', { name: 'default', segments: ids.slice(1) }))
  })

  test('deleting a segment in use answers 409 naming the flags, archived ones included; once unused it can be deleted', async () => {
    await api.newFlag('default', 'checkout')
    await api.newFlag('default', 'old-flag')
    const a = await newSegment('a')
    const strategy = (await addStrategy('checkout', { name: 'default', segments: [a.id] })).body
    expectOk(await addStrategy('old-flag', { name: 'default', segments: [a.id] }))
    expectStatus(await api.delete(paths.flag('old-flag')), 202)
    const before = api.lastEventId()
    expectError(await api.delete(`/api/admin/segments/${a.id}`), 409, 'ConflictError', ['"checkout"', '"old-flag"'])
    expect(api.eventsSince(before)).toEqual([])
    expectStatus(await api.get(`/api/admin/segments/${a.id}`), 200)
    expectStatus(
      await api.put(`${paths.strategies('checkout')}/${strategy.id}`, { name: 'default', segments: [] }),
      200,
    )
    expectStatus(await api.delete(`/api/admin/archive/old-flag`), 200)
    expectStatus(await api.delete(`/api/admin/segments/${a.id}`), 204)
  })

  test('moving a segment into a project while flags of another project use it answers 409', async () => {
    await api.newProject('alpha')
    await api.newFlag('default', 'checkout')
    const a = await newSegment('a')
    expectOk(await addStrategy('checkout', { name: 'default', segments: [a.id] }))
    expectError(
      await api.put(`/api/admin/segments/${a.id}`, { name: 'a', project: 'alpha', constraints: [] }),
      409,
      'ConflictError',
      ['checkout'],
    )
    expectStatus(await api.put(`/api/admin/segments/${a.id}`, { name: 'a', project: 'default', constraints: [] }), 204)
  })
})

describe('project scoping and permissions', () => {
  test('a project that still has segments cannot be deleted (400 naming them); once they are global it can', async () => {
    await api.newProject('alpha')
    const segment = await newSegment('alpha-seg', { project: 'alpha' })
    const before = api.lastEventId()
    expectError(await api.delete('/api/admin/projects/alpha'), 400, 'ValidationError', ['"alpha-seg"'])
    expect(api.eventsSince(before)).toEqual([])
    expectStatus(
      await api.put(`/api/admin/segments/${segment.id}`, { name: 'alpha-seg', project: null, constraints: [] }),
      204,
    )
    expectOk(await api.delete('/api/admin/projects/alpha'))
  })

  test("a token limited to a project lists the global segments and its project's, and gets 404 for another project's", async () => {
    await api.newProject('alpha')
    await api.newProject('beta')
    const global = await newSegment('global')
    const alpha = await newSegment('alpha-seg', { project: 'alpha' })
    const beta = await newSegment('beta-seg', { project: 'beta' })
    const alphaToken = await tokenFor(api, 'alpha-editor', { role: 'editor', projects: ['alpha'] })
    expect((await segmentList(alphaToken)).map(segment => segment.name)).toEqual(['global', 'alpha-seg'])
    expectStatus(await api.get(`/api/admin/segments/${alpha.id}`, { token: alphaToken }), 200)
    expectStatus(await api.get(`/api/admin/segments/${global.id}`, { token: alphaToken }), 200)
    expectError(await api.get(`/api/admin/segments/${beta.id}`, { token: alphaToken }), 404, 'NotFoundError')
  })

  test('a token limited to some projects cannot create, update or delete segments (service-wide writes): 403', async () => {
    await api.newProject('alpha')
    const alpha = await newSegment('alpha-seg', { project: 'alpha' })
    const alphaToken = await tokenFor(api, 'alpha-editor', { role: 'editor', projects: ['alpha'] })
    const before = api.lastEventId()
    expectError(
      await createSegment({ name: 'mine', project: 'alpha', constraints: [] }, alphaToken),
      403,
      'NoAccessError',
    )
    expectError(
      await api.put(`/api/admin/segments/${alpha.id}`, { name: 'x', constraints: [] }, { token: alphaToken }),
      403,
      'NoAccessError',
    )
    expectError(await api.delete(`/api/admin/segments/${alpha.id}`, { token: alphaToken }), 403, 'NoAccessError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a viewer reads segments and gets 403 on writes; an editor may write; a client token gets 403 everywhere', async () => {
    const segment = await newSegment('europe')
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    const client = (await api.createToken({ tokenName: 'sdk', type: 'client' })).body.secret
    expect((await segmentList(viewer)).map(s => s.id)).toEqual([segment.id])
    expectStatus(await api.get(`/api/admin/segments/${segment.id}`, { token: viewer }), 200)
    expectError(await createSegment({ name: 'v', constraints: [] }, viewer), 403, 'NoAccessError', ['CREATE_SEGMENT'])
    expectError(
      await api.put(`/api/admin/segments/${segment.id}`, { name: 'v', constraints: [] }, { token: viewer }),
      403,
      'NoAccessError',
      ['UPDATE_SEGMENT'],
    )
    expectError(await api.delete(`/api/admin/segments/${segment.id}`, { token: viewer }), 403, 'NoAccessError', [
      'DELETE_SEGMENT',
    ])
    for (const response of [
      await api.get('/api/admin/segments', { token: client }),
      await api.get(`/api/admin/segments/${segment.id}`, { token: client }),
      await createSegment({ name: 'c', constraints: [] }, client),
      await api.delete(`/api/admin/segments/${segment.id}`, { token: client }),
    ])
      expectError(response, 403, 'NoAccessError')
    expectError(await api.get('/api/admin/segments', { token: null }), 401, 'AuthenticationRequired')
    expectOk(await createSegment({ name: 'by-editor', constraints: [] }, editor), 201)
    expectStatus(await api.delete(`/api/admin/segments/${segment.id}`, { token: editor }), 204)
  })
})

describe('segments on disk', () => {
  test('segments and the id counter survive a restart', async () => {
    const dir = tempDir('segments-')
    try {
      await api.close()
      api = await makeApi({ dataDir: dir.path })
      const a = await newSegment('a', { description: 'kept' })
      const b = await newSegment('b')
      expectStatus(await api.delete(`/api/admin/segments/${b.id}`), 204)
      await api.close()
      api = await makeApi({ dataDir: dir.path })
      expect(await segmentList()).toEqual([a])
      expect((await newSegment('c')).id).toBe(3)
    } finally {
      await api.close()
      dir.remove()
    }
  })

  test('a data directory made before segments existed (no segments in state.json) starts, with none', async () => {
    const dir = tempDir('segments-old-')
    try {
      await api.close()
      api = await makeApi({ dataDir: dir.path })
      await api.newFlag('default', 'from-before')
      await api.close()
      const statePath = join(dir.path, STATE_FILE)
      const state = JSON.parse(readFileSync(statePath, 'utf8'))
      expect(state.segments).toEqual({})
      delete state.segments
      delete state.segmentSequence
      writeFileSync(statePath, JSON.stringify(state))
      api = await makeApi({ dataDir: dir.path })
      expect(await segmentList()).toEqual([])
      expectStatus(await api.getFlag('default', 'from-before'), 200)
      expect((await newSegment('first')).id).toBe(1)
    } finally {
      await api.close()
      dir.remove()
    }
  })
})
