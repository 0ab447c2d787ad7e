/**
 * GET /api/admin/search/features (Unleash's searchFeatures): one page of the live flags the caller
 * sees, filtered, sorted and cut on the server, so a table of thousands of flags loads a page at a time.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import { errorOf, expectOk, freshApiPerTest, tokenFor, type Api } from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Page {
  features: { name: string; project: string; type: string; environments: { name: string; enabled: boolean }[] }[]
  total: number
}

async function search(query: string, token?: string): Promise<Page> {
  const response = await api.get<Page>(
    `/api/admin/search/features${query}`,
    token === undefined ? undefined : { token },
  )
  expectOk(response)
  return response.body
}
const names = (page: Page) => page.features.map(flag => flag.name)

describe('searchFeatures', () => {
  test('pages through the matches in the order asked for; total counts them all', async () => {
    // One second apart, so that the default order (createdAt) differs from the name order.
    let second = 0
    for (const name of ['delta', 'alpha', 'charlie', 'bravo', 'echo']) {
      setSystemTime(new Date(Date.UTC(2026, 0, 1, 0, 0, second++)))
      await api.newFlag('default', name)
    }
    const byName = await search('?project=IS:default&sortBy=name&limit=2')
    expect(byName).toMatchObject({ total: 5 })
    expect(names(byName)).toEqual(['alpha', 'bravo'])
    expect(names(await search('?project=IS:default&sortBy=name&limit=2&offset=2'))).toEqual(['charlie', 'delta'])
    expect(names(await search('?project=IS:default&sortBy=name&limit=2&offset=4'))).toEqual(['echo'])
    expect(names(await search('?project=IS:default&sortBy=name&sortOrder=desc&limit=3'))).toEqual([
      'echo',
      'delta',
      'charlie',
    ])
    // The default order is the flag list's: createdAt, then name.
    expect(names(await search('?project=IS:default'))).toEqual(['delta', 'alpha', 'charlie', 'bravo', 'echo'])
  })

  test('each flag is as the flag list shows it, switches per environment included', async () => {
    await api.newFlag('default', 'shown')
    expectOk(await api.post('/api/admin/projects/default/features/shown/environments/development/on'))
    const listed = (await api.get<{ features: unknown[] }>('/api/admin/projects/default/features')).body.features[0]
    const [found] = (await search('?query=shown')).features
    expect(found).toEqual(listed as Page['features'][number])
    expect(found.environments.find(entry => entry.name === 'development')?.enabled).toBe(true)
  })

  test('query matches the name or the description in any case; project narrows; archived flags are not found', async () => {
    await api.newProject('shop')
    await api.newFlag('default', 'new-Checkout')
    await api.newFlag('shop', 'basket', { description: 'The CHECKOUT basket' })
    await api.newFlag('shop', 'checkout-old')
    expectOk(await api.delete('/api/admin/projects/shop/features/checkout-old'), 202)
    expect(names(await search('?query=checkout&sortBy=name')).sort()).toEqual(['basket', 'new-Checkout'])
    const inShop = await search('?query=checkout&project=IS:shop')
    expect([names(inShop), inShop.total]).toEqual([['basket'], 1])
    expect((await search('?project=IS_ANY_OF:shop,default')).total).toBe(2)
    expect(await search('?query=nothing-like-it')).toEqual({ features: [], total: 0 })
  })

  test("a token limited to a project finds only that project's flags", async () => {
    await api.newProject('shop')
    await api.newFlag('default', 'elsewhere')
    await api.newFlag('shop', 'here')
    const token = await tokenFor(api, 'shop-reader', { projects: ['shop'] })
    expect(names(await search('', token))).toEqual(['here'])
    expect((await search('?project=IS:default', token)).total).toBe(0)
  })

  test('a malformed parameter is a 400 naming it', async () => {
    for (const [query, path] of [
      ['?limit=0', '/limit'],
      ['?limit=1001', '/limit'],
      ['?offset=-1', '/offset'],
      ['?project=default', '/project'],
      ['?sortBy=colour', '/sortBy'],
      ['?sortOrder=up', '/sortOrder'],
    ]) {
      const response = await api.get(`/api/admin/search/features${query}`)
      expect([query, response.status]).toEqual([query, 400])
      expect(JSON.stringify(errorOf(response))).toContain(path)
    }
  })
})
