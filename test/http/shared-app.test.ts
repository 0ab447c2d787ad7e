/**
 * One app for many fresh services (test/helpers/shared-app.ts, what freshApiPerTest and
 * openapi-examples use): each world is fresh, the app reaches the open world only, what building
 * the app did to its services is done to each world's, and what the app keeps at its edge (the
 * flag lists' serialised answers) is never served to another world.
 */
import { expect, test } from 'bun:test'
import { ADMIN_SECRET, expectOk, sharedApp, type Api } from '../helpers'

const shared = await sharedApp()

async function inWorld<T>(use: (api: Api) => Promise<T>): Promise<T> {
  const api = await shared.open()
  try {
    return await use(api)
  } finally {
    await api.close()
  }
}

test('each world is fresh: the same project made in two in turn, each store holds only its own', async () => {
  const stores = []
  for (const _ of [1, 2]) {
    stores.push(
      await inWorld(async api => {
        expectOk(await api.createProject('checkout'), 201)
        expect(api.events().map(event => event.type)).toContain('project-created')
        return api.services.store
      }),
    )
  }
  expect(stores[0]).not.toBe(stores[1])
  for (const store of stores) expect(Object.keys(store.state.projects).sort()).toEqual(['checkout', 'default'])
})

test('a request with no world open fails (500), it is not served from an earlier world', async () => {
  const request = () =>
    shared.app.handle(new Request('http://localhost/api/admin/projects', { headers: { authorization: ADMIN_SECRET } }))
  await inWorld(async api => expectOk(await api.createProject('earlier'), 201))
  expect((await request()).status).toBe(500)
  expect(await inWorld(async () => (await request()).status)).toBe(200)
})

test('a flag list answered in one world is not answered in the next, made by the same writes', async () => {
  const names = []
  for (const flag of ['first-world', 'second-world']) {
    names.push(
      await inWorld(async api => {
        expectOk(await api.createFlag('default', flag), 201)
        const list = await api.listFlags('default')
        expectOk(list)
        return list.body.features.map(feature => feature.name)
      }),
    )
  }
  expect(names).toEqual([['first-world'], ['second-world']])
})

test("the store subscriptions made while the app was built are made on each world's store", async () => {
  for (const _ of [1, 2]) {
    await inWorld(async api => {
      const scrape = async () => (await api.get('/internal-backstage/prometheus', { token: null })).text
      const written = (text: string) => Number(/^events_written_total (\d+)$/m.exec(text)?.[1])
      const before = written(await scrape())
      const last = api.lastEventId()
      expectOk(await api.createFlag('default', 'counted'), 201)
      expect(api.lastEventId()).toBeGreaterThan(last)
      expect(written(await scrape())).toBe(before + api.lastEventId() - last)
    })
  }
})
