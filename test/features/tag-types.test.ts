/**
 * Tag types (Unleash's /api/admin/tag-types): the seeded `simple`, create, validate, update and
 * delete with their events and permissions; tags need a known type; durability, also for a data
 * directory made before tag types existed.
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
  type TagListBody,
} from '../helpers'
import { STATE_FILE } from '../../src/services'
import { backupDataDir, restoreBackup } from '../../src/backup/backup'
import type { Static } from '@sinclair/typebox'
import type { TagType, TagTypeAnswer, TagTypeList } from '../../src/features/tag-types/tag-types.model'

type TagTypeBody = Static<typeof TagType>

let api: Api
freshApiPerTest(fresh => (api = fresh))

const BASE = '/api/admin/tag-types'
const SIMPLE = { name: 'simple', description: 'Used to simplify filtering of features', icon: '#', color: null }
const location = { name: 'location', description: 'Where the flag is used', icon: 'pin', color: '#FF5733' }

async function list(app = api): Promise<TagTypeBody[]> {
  const response = await app.get<Static<typeof TagTypeList>>(BASE)
  expectOk(response)
  expect(response.body.version).toBe(1)
  return response.body.tagTypes
}

describe('reading tag types', () => {
  test('a new service has one tag type, simple, as Unleash seeds it', async () => {
    expect(await list()).toEqual([SIMPLE])
    const one = await api.get<Static<typeof TagTypeAnswer>>(`${BASE}/simple`)
    expectOk(one)
    expect(one.body).toEqual({ version: 1, tagType: SIMPLE })
  })

  test('an unknown tag type answers 404', async () => {
    expectError(await api.get(`${BASE}/nothing-here`), 404, 'NotFoundError', ['nothing-here'])
  })
})

describe('creating tag types', () => {
  test('answers 201 with the type and its location, lists it by name, and records tag-type-created', async () => {
    const before = api.lastEventId()
    const response = await api.post<TagTypeBody>(BASE, location)
    expectOk(response, 201)
    expect(response.body).toEqual(location)
    expect(response.headers.get('location')).toBe('tag-types/location')
    expect((await list()).map(type => type.name)).toEqual(['location', 'simple'])
    expect(api.eventsSince(before)).toEqual([
      expect.objectContaining({
        type: 'tag-type-created',
        data: location,
        preData: null,
        project: null,
        featureName: null,
        ...BOOTSTRAP,
      }),
    ])
  })

  test('only the name is needed: description empty, icon and colour null', async () => {
    const response = await api.post<TagTypeBody>(BASE, { name: 'bare' })
    expectOk(response, 201)
    expect(response.body).toEqual({ name: 'bare', description: '', icon: null, color: null })
  })

  test('a name that is not 2 to 50 URL-safe characters, a colour that is not one, or a taken name is refused and nothing is written', async () => {
    const before = api.lastEventId()
    for (const name of ['a', 'x'.repeat(51), 'with space', 'slash/name']) {
      const response = await api.post(BASE, { name })
      expectError(response, 400, 'ValidationError')
      expect(errorOf(response).details?.[0]?.path).toBe('/name')
    }
    const badColor = await api.post(BASE, { name: 'painted', color: 'not a colour' })
    expectError(badColor, 400, 'ValidationError')
    expect(errorOf(badColor).details?.[0]?.path).toBe('/color')
    expectError(await api.post(BASE, { name: 'simple' }), 409, 'NameExistsError', ['simple'])
    expect(api.eventsSince(before)).toEqual([])
    expect(await list()).toEqual([SIMPLE])
  })

  test('validate answers {valid, tagType} for a free name, 409 for a taken one, 400 for a bad one, and creates nothing', async () => {
    const before = api.lastEventId()
    const valid = await api.post(`${BASE}/validate`, { name: 'something', description: 'A fancy description' })
    expectOk(valid)
    expect(valid.body).toEqual({
      valid: true,
      tagType: { name: 'something', description: 'A fancy description', icon: null, color: null },
    })
    expectError(await api.post(`${BASE}/validate`, { name: 'simple' }), 409, 'NameExistsError')
    expectError(await api.post(`${BASE}/validate`, { name: 'Something url unsafe' }), 400, 'ValidationError', ['URL'])
    expect(api.eventsSince(before)).toEqual([])
    expect(await list()).toEqual([SIMPLE])
  })
})

describe('changing and deleting tag types', () => {
  test('PUT changes the given properties, leaves the others, answers the type and records tag-type-updated', async () => {
    expectOk(await api.post(BASE, location), 201)
    const before = api.lastEventId()
    const response = await api.put<TagTypeBody>(`${BASE}/location`, { description: 'Regions', color: null })
    expectOk(response)
    const updated = { ...location, description: 'Regions', color: null }
    expect(response.body).toEqual(updated)
    expect((await api.get(`${BASE}/location`)).body).toEqual({ version: 1, tagType: updated })
    expect(api.eventsSince(before)).toEqual([
      expect.objectContaining({ type: 'tag-type-updated', data: updated, preData: location }),
    ])
  })

  test('PUT or DELETE of an unknown type answers 404 and writes nothing', async () => {
    const before = api.lastEventId()
    expectError(await api.put(`${BASE}/missing`, { description: 'x' }), 404, 'NotFoundError')
    expectError(await api.delete(`${BASE}/missing`), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test("DELETE answers 200, takes the type's tags off every flag, and records tag-type-deleted then feature-untagged per tag", async () => {
    await api.newTagTypes('team')
    await api.newFlag('default', 'tagged-one')
    await api.newFlag('default', 'tagged-two')
    expectOk(await api.post(paths.tags('tagged-one'), { type: 'team', value: 'payments' }), 201)
    expectOk(await api.post(paths.tags('tagged-one'), { value: 'kept' }), 201)
    expectOk(await api.post(paths.tags('tagged-two'), { type: 'team', value: 'search' }), 201)
    const before = api.lastEventId()
    const response = await api.delete(`${BASE}/team`)
    expectOk(response)
    expect(response.text).toBe('')
    expectError(await api.get(`${BASE}/team`), 404, 'NotFoundError')
    expect((await api.get<TagListBody>(paths.tags('tagged-one'))).body.tags).toEqual([
      { type: 'simple', value: 'kept' },
    ])
    expect((await api.get<TagListBody>(paths.tags('tagged-two'))).body.tags).toEqual([])
    const events = api.eventsSince(before)
    expect(events.map(event => [event.type, event.featureName])).toEqual([
      ['tag-type-deleted', null],
      ['feature-untagged', 'tagged-one'],
      ['feature-untagged', 'tagged-two'],
    ])
    expect(events[0]).toMatchObject({ preData: { name: 'team', description: '', icon: null, color: null }, data: null })
    expect(events[1]).toMatchObject({
      project: 'default',
      preData: { type: 'team', value: 'payments' },
      tags: [{ type: 'simple', value: 'kept' }],
    })
  })
})

describe('tags need a known type', () => {
  test('a tag of an unknown type answers 400 at /type and is not added; once the type exists it is', async () => {
    await api.newFlag('default', 'needs-type')
    const before = api.lastEventId()
    const refused = await api.post(paths.tags('needs-type'), { type: 'team', value: 'payments' })
    expectError(refused, 400, 'ValidationError', ['team', 'POST /api/admin/tag-types'])
    expect(errorOf(refused).details?.[0]?.path).toBe('/type')
    expect(api.eventsSince(before)).toEqual([])
    expect((await api.get<TagListBody>(paths.tags('needs-type'))).body.tags).toEqual([])
    await api.newTagTypes('team')
    expectOk(await api.post(paths.tags('needs-type'), { type: 'team', value: 'payments' }), 201)
  })

  test('with simple deleted, a tag without a type (which defaults to simple) is refused too', async () => {
    await api.newFlag('default', 'no-simple')
    expectOk(await api.delete(`${BASE}/simple`))
    expectError(await api.post(paths.tags('no-simple'), { value: 'plain' }), 400, 'ValidationError', ['simple'])
  })
})

describe('permissions', () => {
  test("viewers read but cannot write; editors may write (as Unleash's Editor role); a project-limited token cannot make service-wide changes", async () => {
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    const limited = await tokenFor(api, 'limited', { projects: ['default'] })
    expectOk(await api.get(BASE, { token: viewer }))
    expectOk(await api.get(`${BASE}/simple`, { token: limited }))
    const refusals: [string, Promise<{ status: number; body: unknown }>][] = [
      ['CREATE_TAG_TYPE', api.post(BASE, { name: 'by-viewer' }, { token: viewer })],
      ['UPDATE_TAG_TYPE', api.put(`${BASE}/simple`, { description: 'x' }, { token: viewer })],
      ['DELETE_TAG_TYPE', api.delete(`${BASE}/simple`, { token: viewer })],
      ['CREATE_TAG_TYPE', api.post(BASE, { name: 'by-limited' }, { token: limited })],
    ]
    for (const [permission, pending] of refusals) {
      const response = await pending
      expect({
        status: response.status,
        permissions: (response.body as { permissions?: string[] }).permissions,
      }).toEqual({ status: 403, permissions: [permission] })
    }
    expectOk(await api.post(BASE, { name: 'by-editor' }, { token: editor }), 201)
    expectOk(await api.put(`${BASE}/by-editor`, { icon: 'e' }, { token: editor }))
    expectOk(await api.delete(`${BASE}/by-editor`, { token: editor }))
    expect((await list()).map(type => type.name)).toEqual(['simple'])
  })
})

describe('durability', () => {
  test('tag types survive a restart; an older data directory gets simple; a deleted simple stays deleted', async () => {
    const dir = tempDir('flags-tag-types-')
    try {
      let app = await makeApi({ dataDir: dir.path })
      expectOk(await app.post(BASE, location), 201)
      app.abandon()
      app = await makeApi({ dataDir: dir.path })
      expect(await list(app)).toEqual([location, SIMPLE])
      await app.close()
      const state = JSON.parse(readFileSync(join(dir.path, STATE_FILE), 'utf8'))
      expect(Object.keys(state.tagTypes)).toEqual(['simple', 'location'])
      // As a data directory made before tag types existed: no key at all, tags of type simple.
      delete state.tagTypes
      writeFileSync(join(dir.path, STATE_FILE), JSON.stringify(state))
      app = await makeApi({ dataDir: dir.path })
      expect(await list(app)).toEqual([SIMPLE])
      await app.newFlag('default', 'after-upgrade')
      expectOk(await app.post(paths.tags('after-upgrade'), { value: 'still-works' }), 201)
      expectOk(await app.delete(`${BASE}/simple`))
      app.abandon()
      app = await makeApi({ dataDir: dir.path })
      expect(await list(app)).toEqual([])
      await app.close()
      app = await makeApi({ dataDir: dir.path })
      expect(await list(app)).toEqual([])
      await app.close()
    } finally {
      dir.remove()
    }
  })

  test('a backup of a data directory made before tag types holds simple, and so does the directory restored from it', async () => {
    const dir = tempDir('flags-tag-types-backup-')
    try {
      const app = await makeApi({ dataDir: dir.path })
      await app.close()
      const state = JSON.parse(readFileSync(join(dir.path, STATE_FILE), 'utf8'))
      delete state.tagTypes
      writeFileSync(join(dir.path, STATE_FILE), JSON.stringify(state))
      const file = join(dir.path, 'backup.jsonl')
      await backupDataDir(dir.path, file)
      const restored = join(dir.path, 'restored')
      await restoreBackup(file, restored)
      expect(Object.keys(JSON.parse(readFileSync(join(restored, STATE_FILE), 'utf8')).tagTypes)).toEqual(['simple'])
      const reopened = await makeApi({ dataDir: restored })
      expect(await list(reopened)).toEqual([SIMPLE])
      await reopened.close()
    } finally {
      dir.remove()
    }
  })
})
