/**
 * Flag types (Unleash's /api/admin/feature-types): the five types with Unleash's lifetimes, changing
 * a lifetime (event, permission, validation), durability, and `potentiallyStale` on flags and lists,
 * which follows the clock even while the list answer is cached.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  BOOTSTRAP,
  FLAG_TYPES,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  makeApi,
  named,
  tempDir,
  tokenFor,
  type Api,
  type FlagListBody,
} from '../helpers'
import { STATE_FILE } from '../../src/services'
import type { Static } from '@sinclair/typebox'
import type { FlagType, FlagTypeList } from '../../src/features/feature-types/feature-types.model'

type FlagTypeBody = Static<typeof FlagType>

let api: Api
freshApiPerTest(fresh => (api = fresh))

const BASE = '/api/admin/feature-types'
const DAY = 24 * 60 * 60 * 1000
const DEFAULT_LIFETIMES = { release: 40, experiment: 40, operational: 7, 'kill-switch': null, permission: null }

async function types(app = api): Promise<FlagTypeBody[]> {
  const response = await app.get<Static<typeof FlagTypeList>>(BASE)
  expectOk(response)
  expect(response.body.version).toBe(1)
  return response.body.types
}

async function lifetimes(app = api) {
  return Object.fromEntries((await types(app)).map(type => [type.id, type.lifetimeDays]))
}

describe('listing flag types', () => {
  test("the five types a flag may have, in Unleash's order, with its names and default lifetimes", async () => {
    const list = await types()
    expect(list.map(type => type.id)).toEqual(FLAG_TYPES)
    expect(await lifetimes()).toEqual(DEFAULT_LIFETIMES)
    expect(list.map(type => type.name)).toEqual(['Release', 'Experiment', 'Operational', 'Kill switch', 'Permission'])
    for (const type of list) expect(type.description.length).toBeGreaterThan(20)
  })
})

describe('changing a lifetime', () => {
  test('answers the type, keeps it, and records feature-type-updated with data and preData', async () => {
    const before = api.lastEventId()
    const response = await api.put<FlagTypeBody>(`${BASE}/release/lifetime`, { lifetimeDays: 7 })
    expectOk(response)
    const release = { id: 'release', name: 'Release', description: response.body.description, lifetimeDays: 7 }
    expect(response.body).toEqual(release)
    expect(await lifetimes()).toEqual({ ...DEFAULT_LIFETIMES, release: 7 })
    expect(api.eventsSince(before)).toEqual([
      expect.objectContaining({
        type: 'feature-type-updated',
        data: release,
        preData: { ...release, lifetimeDays: 40 },
        project: null,
        ...BOOTSTRAP,
      }),
    ])
  })

  test('0 and null both mean never stale, stored as null; the id is matched in lower case; the same lifetime again records nothing', async () => {
    expectOk(await api.put(`${BASE}/RELEASE/lifetime`, { lifetimeDays: 0 }))
    expect((await lifetimes()).release).toBeNull()
    const before = api.lastEventId()
    const again = await api.put<FlagTypeBody>(`${BASE}/release/lifetime`, { lifetimeDays: null })
    expectOk(again)
    expect(again.body.lifetimeDays).toBeNull()
    expect(api.eventsSince(before)).toEqual([])
    expectOk(await api.put(`${BASE}/kill-switch/lifetime`, { lifetimeDays: 365 }))
    expect((await lifetimes())['kill-switch']).toBe(365)
  })

  test('an unknown type answers 404; a lifetime that is not a whole number from 0 is a 400 at /lifetimeDays; nothing is written', async () => {
    const before = api.lastEventId()
    expectError(await api.put(`${BASE}/feature/lifetime`, { lifetimeDays: 3 }), 404, 'NotFoundError', [
      'release, experiment',
    ])
    for (const lifetimeDays of [-1, 1.5, 'seven', true, 2147483648]) {
      const response = await api.put(`${BASE}/release/lifetime`, { lifetimeDays })
      expectError(response, 400, 'ValidationError')
      expect(errorOf(response).details?.[0]?.path).toBe('/lifetimeDays')
    }
    expectError(await api.put(`${BASE}/release/lifetime`, {}), 400, 'ValidationError')
    expect(api.eventsSince(before)).toEqual([])
    expect(await lifetimes()).toEqual(DEFAULT_LIFETIMES)
  })

  test('needs ADMIN, as in Unleash: an editor or a viewer gets 403 and may read', async () => {
    for (const role of ['editor', 'viewer']) {
      const token = await tokenFor(api, role, { role })
      const response = await api.put(`${BASE}/release/lifetime`, { lifetimeDays: 1 }, { token })
      expectError(response, 403, 'NoAccessError')
      expect((response.body as { permissions: string[] }).permissions).toEqual(['ADMIN'])
      expectOk(await api.get(BASE, { token }))
    }
    expect(await lifetimes()).toEqual(DEFAULT_LIFETIMES)
  })
})

describe('potentiallyStale', () => {
  const start = new Date('2026-01-01T00:00:00.000Z').getTime()

  async function staleness(project = 'default') {
    const response = await api.listFlags(project)
    expectOk(response)
    return Object.fromEntries(response.body.features.map(flag => [flag.name, flag.potentiallyStale]))
  }

  test("a flag is potentially stale once older than its type's lifetime, in the list and in the flag, stale or not", async () => {
    setSystemTime(new Date(start))
    await api.newFlag('default', 'a-release', { type: 'release' })
    await api.newFlag('default', 'an-operational', { type: 'operational' })
    await api.newFlag('default', 'a-kill-switch', { type: 'kill-switch' })
    expect(await staleness()).toEqual({ 'a-release': false, 'an-operational': false, 'a-kill-switch': false })
    setSystemTime(new Date(start + 7 * DAY))
    expect(await staleness()).toEqual({ 'a-release': false, 'an-operational': false, 'a-kill-switch': false })
    setSystemTime(new Date(start + 7 * DAY + 1))
    expect(await staleness()).toEqual({ 'a-release': false, 'an-operational': true, 'a-kill-switch': false })
    setSystemTime(new Date(start + 1000 * DAY))
    expect(await staleness()).toEqual({ 'a-release': true, 'an-operational': true, 'a-kill-switch': false })
    const flag = await api.getFlag('default', 'a-release')
    expect({ stale: flag.body.stale, potentiallyStale: flag.body.potentiallyStale }).toEqual({
      stale: false,
      potentiallyStale: true,
    })
    expectOk(await api.patchFlag('default', 'a-release', [{ op: 'replace', path: '/stale', value: true }]))
    expect((await api.getFlag('default', 'a-release')).body.potentiallyStale).toBe(true)
  })

  test('the cached list follows the clock with no write in between, and a lifetime change judges flags again at once', async () => {
    setSystemTime(new Date(start))
    await api.newFlag('default', 'ageing', { type: 'operational' })
    await api.newFlag('default', 'young', { type: 'operational' })
    // Twice at each moment: the second answer is the cached one.
    for (let i = 0; i < 2; i++) expect(await staleness()).toEqual({ ageing: false, young: false })
    setSystemTime(new Date(start + 8 * DAY))
    for (let i = 0; i < 2; i++) expect(await staleness()).toEqual({ ageing: true, young: true })
    expectOk(await api.put(`${BASE}/operational/lifetime`, { lifetimeDays: 30 }))
    for (let i = 0; i < 2; i++) expect(await staleness()).toEqual({ ageing: false, young: false })
    expectOk(await api.put(`${BASE}/operational/lifetime`, { lifetimeDays: 0 }))
    setSystemTime(new Date(start + 10_000 * DAY))
    expect(await staleness()).toEqual({ ageing: false, young: false })
  })

  test('the list of archived flags shows it too', async () => {
    setSystemTime(new Date(start))
    await api.newFlag('default', 'archived-old', { type: 'operational' })
    expectOk(await api.delete('/api/admin/projects/default/features/archived-old'), 202)
    setSystemTime(new Date(start + 8 * DAY))
    const archived = await api.get<FlagListBody>('/api/admin/archive/features')
    expect(named(archived.body.features, 'archived-old').potentiallyStale).toBe(true)
  })
})

describe('durability', () => {
  test("a changed lifetime survives a restart; an older data directory gets Unleash's defaults", async () => {
    const dir = tempDir('flags-feature-types-')
    try {
      let app = await makeApi({ dataDir: dir.path })
      expectOk(await app.put(`${BASE}/experiment/lifetime`, { lifetimeDays: 90 }))
      app.abandon()
      app = await makeApi({ dataDir: dir.path })
      expect(await lifetimes(app)).toEqual({ ...DEFAULT_LIFETIMES, experiment: 90 })
      await app.close()
      const state = JSON.parse(readFileSync(join(dir.path, STATE_FILE), 'utf8'))
      expect(state.flagTypes.experiment.lifetimeDays).toBe(90)
      delete state.flagTypes
      writeFileSync(join(dir.path, STATE_FILE), JSON.stringify(state))
      app = await makeApi({ dataDir: dir.path })
      expect(await lifetimes(app)).toEqual(DEFAULT_LIFETIMES)
      await app.close()
    } finally {
      dir.remove()
    }
  })
})
