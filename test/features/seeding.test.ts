/**
 * First-start seeding makes the environments and the default project the way the API makes them
 * (the same transaction-level functions), in one commit recorded as `system`.
 */
import { afterEach, expect, test } from 'bun:test'
import { makeApi, type Api, type EnvironmentListBody } from '../helpers'

let api: Api
afterEach(async () => api?.close())

test('a first start writes the two environments and the default project in one commit, as system', async () => {
  api = await makeApi()
  const seeded = api.events().filter(event => event.type !== 'api-token-created')
  expect(seeded.map(event => [event.type, event.project, event.environment])).toEqual([
    ['environment-created', null, 'development'],
    ['environment-created', null, 'production'],
    ['project-created', 'default', null],
    ['project-environment-added', 'default', 'development'],
    ['project-environment-added', 'default', 'production'],
  ])
  expect(new Set(seeded.map(event => `${event.createdBy} ${event.createdByUserId} ${event.createdAt}`)).size).toBe(1)
  expect(seeded[0]).toMatchObject({
    createdBy: 'system',
    createdByUserId: -1337,
    tags: [],
    featureName: null,
    preData: null,
  })
  const at = seeded[0].createdAt
  expect(seeded.map(event => event.data)).toEqual([
    { name: 'development', type: 'development', sortOrder: 100, createdAt: at },
    { name: 'production', type: 'production', sortOrder: 200, createdAt: at },
    { id: 'default', name: 'Default', description: 'Default project', featureNaming: null },
    { environment: 'development' },
    { environment: 'production' },
  ])
  const listed = (await api.get<EnvironmentListBody>('/api/admin/environments')).body.environments
  expect(
    listed.map((environment: { name: string; sortOrder: number }) => [environment.name, environment.sortOrder]),
  ).toEqual([
    ['development', 100],
    ['production', 200],
  ])
})

test('the seeded events have the shape of the events the API writes for the same changes', async () => {
  api = await makeApi()
  const seeded = api.events()
  const since = api.lastEventId()
  expect((await api.post('/api/admin/environments', { name: 'staging', type: 'test' })).status).toBe(201)
  expect((await api.createProject('shaped', { name: 'Shaped' })).status).toBe(201)
  const made = api.eventsSince(since)
  const shape = (event: Record<string, unknown> | undefined) => ({
    fields: Object.keys(event ?? {}),
    data: Object.keys((event?.data as object) ?? {}),
  })
  for (const type of ['environment-created', 'project-created', 'project-environment-added']) {
    expect({ type, ...shape(made.find(event => event.type === type)) }).toEqual({
      type,
      ...shape(seeded.find(event => event.type === type)),
    })
  }
})
