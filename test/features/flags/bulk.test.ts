/**
 * Bulk changes to a project's flags, with Unleash's paths: POST /projects/:projectId/archive,
 * /delete and /stale, PUT /features/:featureName/tags (updateTags) and PUT /projects/:projectId/tags
 * (addTagToFeatures). Each is one write, all or nothing, recording the events of its single operation.
 */
import { describe, expect, test } from 'bun:test'
import {
  type Api,
  type FlagBody,
  type TagListBody,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  tokenFor,
  expectRefused,
} from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const PROJECT = 'bulk'
const archive = (features: unknown, project = PROJECT, token?: string) =>
  api.post(`/api/admin/projects/${project}/archive`, { features }, { token })
const remove = (features: unknown, project = PROJECT) => api.post(`/api/admin/projects/${project}/delete`, { features })
const stale = (features: unknown, value: unknown, project = PROJECT) =>
  api.post(`/api/admin/projects/${project}/stale`, { features, stale: value })
const updateTags = (flag: string, body: unknown, token?: string) =>
  api.put<TagListBody>(`/api/admin/features/${flag}/tags`, body, { token })
const tagFlags = (body: unknown, project = PROJECT) => api.put(`/api/admin/projects/${project}/tags`, body)

async function setup(...flags: string[]) {
  await api.newProject(PROJECT)
  await api.newProject('other')
  await api.newFlag('other', 'elsewhere')
  for (const flag of flags) await api.newFlag(PROJECT, flag)
}

async function flag(name: string, project = PROJECT): Promise<FlagBody> {
  const response = await api.getFlag(project, name)
  expectOk(response)
  return response.body
}

describe('POST /api/admin/projects/:projectId/archive (archiveFeatures)', () => {
  test('archives every named flag in one write, answers 202 with no body, and records feature-archived for each, as archiveFeature does', async () => {
    await setup('a', 'b', 'c')
    const since = api.lastEventId()
    const response = await archive(['a', 'b', 'a'])
    expectOk(response, 202)
    expect(response.text).toBe('')
    expect((await flag('a')).archived).toBe(true)
    expect((await flag('b')).archived).toBe(true)
    expect((await flag('b')).lifecycle.stage).toBe('archived')
    expect((await flag('c')).archived).toBe(false)
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.featureName, event.project, event.createdBy])).toEqual([
      ['feature-archived', 'a', PROJECT, 'admin-bootstrap'],
      ['feature-archived', 'b', PROJECT, 'admin-bootstrap'],
    ])
    expect(events[0].data).toMatchObject({ name: 'a', archived: true })
    expect(events[0].preData).toMatchObject({ name: 'a', archived: false })
    // One commit: both events have one time.
    expect(events[0].createdAt).toBe(events[1].createdAt)
    // The single operation writes the same event.
    const single = api.lastEventId()
    expectOk(await api.delete('/api/admin/projects/bulk/features/c'), 202)
    const [alone] = await api.eventsAfter(single)
    expect({ ...alone, id: 0, createdAt: '', featureName: '', data: null, preData: null }).toEqual({
      ...events[0],
      id: 0,
      createdAt: '',
      featureName: '',
      data: null,
      preData: null,
    })
  })

  test('a parent archived together with its children is allowed, whatever the order named', async () => {
    await setup('parent', 'child')
    expectOk(await api.post('/api/admin/projects/bulk/features/child/dependencies', { feature: 'parent' }))
    expectOk(await archive(['parent', 'child']), 202)
    expect((await flag('parent')).archived).toBe(true)
    expect((await flag('child')).archived).toBe(true)
  })

  test('an unknown flag, a flag of another project or an unknown project is 404; an archived flag or a parent of a live flag is 400; nothing changes', async () => {
    await setup('a', 'b', 'parent', 'child')
    expectOk(await api.post('/api/admin/projects/bulk/features/child/dependencies', { feature: 'parent' }))
    expectOk(await archive(['b']), 202)
    await expectRefused(api, () => archive(['a', 'missing']), 404, 'NotFoundError', ['missing'])
    await expectRefused(api, () => archive(['a', 'elsewhere']), 404, 'NotFoundError', ['elsewhere'])
    await expectRefused(api, () => archive(['a'], 'nowhere'), 404, 'NotFoundError', ['nowhere'])
    await expectRefused(api, () => archive(['a', 'b']), 400, 'ValidationError', ['"b"', 'already archived'])
    await expectRefused(api, () => archive(['a', 'parent']), 400, 'ValidationError', ['"parent"', '"child"'])
    // The first problem in request order answers.
    await expectRefused(api, () => archive(['b', 'missing']), 400, 'ValidationError', ['"b"'])
  })

  test('needs DELETE_FEATURE in the project: a viewer, or a token of another project, gets 403 and nothing changes', async () => {
    await setup('a')
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const otherProject = await tokenFor(api, 'other-editor', { role: 'editor', projects: ['other'] })
    const refused = await archive(['a'], PROJECT, viewer)
    expectError(refused, 403, 'NoAccessError')
    expect(refused.body).toMatchObject({ permissions: ['DELETE_FEATURE'] })
    expectError(await archive(['a'], PROJECT, otherProject), 403, 'NoAccessError')
    expect((await flag('a')).archived).toBe(false)
  })

  test('a body that is not a list of names is 400 naming the field', async () => {
    await setup('a')
    const response = await api.post('/api/admin/projects/bulk/archive', { features: 'a' })
    expectError(response, 400, 'ValidationError')
    expect(JSON.stringify(response.body)).toContain('/features')
  })
})

describe('POST /api/admin/projects/:projectId/delete (deleteFeatures)', () => {
  test('deletes archived flags for good, frees their names and records feature-deleted for each', async () => {
    await setup('a', 'b', 'kept')
    expectOk(await archive(['a', 'b']), 202)
    const since = api.lastEventId()
    const response = await remove(['a', 'b'])
    expectOk(response)
    expect(response.text).toBe('')
    expectError(await api.getFlag(PROJECT, 'a'), 404, 'NotFoundError')
    expectError(await api.getFlag(PROJECT, 'b'), 404, 'NotFoundError')
    expectOk(await api.validateName({ name: 'a' }))
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.featureName, event.project])).toEqual([
      ['feature-deleted', 'a', PROJECT],
      ['feature-deleted', 'b', PROJECT],
    ])
    expect(events[0].preData).toMatchObject({ name: 'a', archived: true })
  })

  test('deleting a parent drops the dependency of its archived child on it', async () => {
    await setup('parent', 'child')
    expectOk(await api.post('/api/admin/projects/bulk/features/child/dependencies', { feature: 'parent' }))
    expectOk(await archive(['child', 'parent']), 202)
    expectOk(await remove(['parent']))
    expect((await flag('child')).dependencies).toEqual([])
  })

  test('a live flag is 400, an unknown or foreign one 404, and nothing is deleted', async () => {
    await setup('a', 'live')
    expectOk(await archive(['a']), 202)
    await expectRefused(api, () => remove(['a', 'live']), 400, 'ValidationError', ['"live"', 'not archived'])
    await expectRefused(api, () => remove(['a', 'missing']), 404, 'NotFoundError', ['missing'])
    await expectRefused(api, () => remove(['a', 'elsewhere']), 404, 'NotFoundError')
    expect((await flag('a')).archived).toBe(true)
  })
})

describe('POST /api/admin/projects/:projectId/stale (staleFeatures)', () => {
  test('marks the flags stale, answers 202, and records feature-metadata-updated and feature-stale-on for each flag that changed, as patchFeature does', async () => {
    await setup('a', 'b', 'already')
    expectOk(await api.patchFlag(PROJECT, 'already', [{ op: 'replace', path: '/stale', value: true }]))
    const since = api.lastEventId()
    const response = await stale(['a', 'b', 'already'], true)
    expectOk(response, 202)
    expect(response.text).toBe('')
    for (const name of ['a', 'b', 'already']) expect((await flag(name)).stale).toBe(true)
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.featureName])).toEqual([
      ['feature-metadata-updated', 'a'],
      ['feature-stale-on', 'a'],
      ['feature-metadata-updated', 'b'],
      ['feature-stale-on', 'b'],
    ])
    expect(events[0]).toMatchObject({ data: { stale: true }, preData: { stale: false } })

    const back = api.lastEventId()
    expectOk(await stale(['a'], false), 202)
    expect((await flag('a')).stale).toBe(false)
    expect((await api.eventsAfter(back)).map(event => event.type)).toEqual([
      'feature-metadata-updated',
      'feature-stale-off',
    ])
  })

  test('an unknown or foreign flag is 404 and no flag is marked; stale must be a boolean (400)', async () => {
    await setup('a')
    await expectRefused(api, () => stale(['a', 'missing'], true), 404, 'NotFoundError', ['missing'])
    await expectRefused(api, () => stale(['a', 'elsewhere'], true), 404, 'NotFoundError')
    await expectRefused(api, () => stale(['a'], 'yes'), 400, 'ValidationError')
    expect((await flag('a')).stale).toBe(false)
  })
})

describe('PUT /api/admin/features/:featureName/tags (updateTags)', () => {
  test('adds then removes, answers the tags afterwards, and records feature-tagged / feature-untagged per change', async () => {
    await setup('a')
    expectOk(await api.post('/api/admin/features/a/tags', { type: 'simple', value: 'old' }), 201)
    const since = api.lastEventId()
    const response = await updateTags('a', {
      addedTags: [{ type: 'simple', value: 'new' }, { value: 'second' }, { type: 'simple', value: 'old' }],
      removedTags: [
        { type: 'simple', value: 'old' },
        { type: 'simple', value: 'never-there' },
      ],
    })
    expectOk(response)
    expect(response.body).toEqual({
      version: 1,
      tags: [
        { type: 'simple', value: 'new' },
        { type: 'simple', value: 'second' },
      ],
    })
    expect((await flag('a')).tags).toEqual(response.body.tags)
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.featureName, event.project, event.data ?? event.preData])).toEqual([
      ['feature-tagged', 'a', PROJECT, { type: 'simple', value: 'new' }],
      ['feature-tagged', 'a', PROJECT, { type: 'simple', value: 'second' }],
      ['feature-untagged', 'a', PROJECT, { type: 'simple', value: 'old' }],
    ])
    // Each event carries the flag's tags at that moment.
    expect(events.at(-1)!.tags).toEqual(response.body.tags)
  })

  test('a bad tag anywhere in the request is 400 and none of the others is added or removed', async () => {
    await setup('a')
    expectOk(await api.post('/api/admin/features/a/tags', { value: 'old' }), 201)
    await expectRefused(
      api,
      () => updateTags('a', { addedTags: [{ value: 'fine' }, { value: 'x' }], removedTags: [{ value: 'old' }] }),
      400,
      'ValidationError',
    )
    await expectRefused(api, () => updateTags('a', { addedTags: [{ value: 'fine' }] }), 400, 'ValidationError')
    const tooMany = Array.from({ length: 50 }, (_, i) => ({ value: `tag-${i}` }))
    const response = await updateTags('a', { addedTags: tooMany, removedTags: [] })
    expectError(response, 400, 'ValidationError')
    expect((await flag('a')).tags).toEqual([{ type: 'simple', value: 'old' }])
  })

  test("an unknown flag is 404; a token without the flag's project gets exactly the same 404", async () => {
    await setup('a')
    const missing = await updateTags('missing', { addedTags: [{ value: 'new' }], removedTags: [] })
    expectError(missing, 404, 'NotFoundError')
    const otherProject = await tokenFor(api, 'other-editor', { role: 'editor', projects: ['other'] })
    const hidden = await updateTags('a', { addedTags: [{ value: 'new' }], removedTags: [] }, otherProject)
    expectError(hidden, 404, 'NotFoundError')
    expect(errorOf(hidden).message).toBe(errorOf(missing).message.replace('missing', 'a'))
    expect(hidden.text).not.toContain(PROJECT)
    expect((await flag('a')).tags).toEqual([])
  })
})

describe('PUT /api/admin/projects/:projectId/tags (addTagToFeatures)', () => {
  test('applies the tag changes to every named flag in one write, with one event per change', async () => {
    await setup('a', 'b')
    expectOk(await api.post('/api/admin/features/b/tags', { value: 'old' }), 201)
    const since = api.lastEventId()
    const response = await tagFlags({
      features: ['a', 'b'],
      tags: { addedTags: [{ value: 'team-x' }], removedTags: [{ value: 'old' }] },
    })
    expectOk(response)
    expect(response.text).toBe('')
    expect((await flag('a')).tags).toEqual([{ type: 'simple', value: 'team-x' }])
    expect((await flag('b')).tags).toEqual([{ type: 'simple', value: 'team-x' }])
    const events = await api.eventsAfter(since)
    expect(events.map(event => [event.type, event.featureName])).toEqual([
      ['feature-tagged', 'a'],
      ['feature-tagged', 'b'],
      ['feature-untagged', 'b'],
    ])
  })

  test('an unknown or foreign flag is 404 and no flag is tagged', async () => {
    await setup('a')
    await expectRefused(
      api,
      () => tagFlags({ features: ['a', 'missing'], tags: { addedTags: [{ value: 'team-x' }], removedTags: [] } }),
      404,
      'NotFoundError',
      ['missing'],
    )
    await expectRefused(
      api,
      () => tagFlags({ features: ['a', 'elsewhere'], tags: { addedTags: [{ value: 'team-x' }], removedTags: [] } }),
      404,
      'NotFoundError',
    )
    await expectRefused(
      api,
      () => tagFlags({ features: ['a'], tags: { addedTags: [{ value: 'x' }], removedTags: [] } }),
      400,
      'ValidationError',
    )
  })
})
