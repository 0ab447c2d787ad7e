/**
 * GET /api/admin/projects/:projectId/features (seed 2.1, 2.3, 4.2, 9; contract §3, §5).
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import {
  errorOf,
  makeApi,
  tokenFor,
  type Api,
  expectOk,
  type EnvironmentBody,
  ISO_MS,
  expectError,
  named,
  FLAG_FIELDS,
  freshApiPerTest,
} from '../../helpers'

const ENVIRONMENT_FIELDS = [
  'name',
  'environment',
  'featureName',
  'type',
  'enabled',
  'sortOrder',
  'variantCount',
  'lastSeenAt',
  'hasStrategies',
  'hasEnabledStrategies',
]

let api: Api
freshApiPerTest(fresh => (api = fresh))

async function tag(flag: string, type: string, value: string) {
  if ((await api.get(`/api/admin/tag-types/${type}`)).status === 404) await api.newTagTypes(type)
  expectOk(await api.post(`/api/admin/features/${flag}/tags`, { type, value }), 201)
}

async function list(project: string, query = '', token?: string) {
  const response = await api.listFlags(project, query, token === undefined ? undefined : { token })
  expectOk(response)
  return response.body
}

async function names(project: string, query = '') {
  return (await list(project, query)).features.map((feature: { name: string }) => feature.name)
}

async function addStrategy(project: string, flag: string, environment: string, body: Record<string, unknown>) {
  const response = await api.post(
    `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`,
    body,
  )
  expect(response.status).toBeLessThan(300)
  return response.body
}

describe('getFeatures: response shape', () => {
  test('getFeatures: the answer is {version: 2, features} with version an integer', async () => {
    await api.newFlag('default', 'shape-one')
    const body = await list('default')
    expect(Object.keys(body).sort()).toEqual(['features', 'version'])
    expect(body.version).toBe(2)
    expect(Number.isInteger(body.version)).toBe(true)
    expect(Array.isArray(body.features)).toBe(true)
    expect(body.features).toHaveLength(1)
  })

  test('getFeatures: every feature carries every field of seed 2.1 with its type', async () => {
    await api.newFlag('default', 'shape-fields', { type: 'experiment', description: 'described', impressionData: true })
    const [feature] = (await list('default')).features
    for (const field of FLAG_FIELDS) expect(feature).toHaveProperty(field)
    expect(feature).toMatchObject({
      name: 'shape-fields',
      type: 'experiment',
      description: 'described',
      project: 'default',
      enabled: false,
      stale: false,
      favorite: false,
      impressionData: true,
      archived: false,
      archivedAt: null,
      lastSeenAt: null,
      variants: [],
      strategies: [],
      tags: [],
      children: [],
      dependencies: [],
    })
    expect(feature.createdAt).toMatch(ISO_MS)
    expect(feature.createdBy).toEqual({ id: -42, name: 'admin-bootstrap', imageUrl: expect.any(String) })
    expect(Number.isInteger(feature.createdBy.id)).toBe(true)
    expect(feature.lifecycle).toEqual({ stage: 'initial', enteredStageAt: expect.stringMatching(ISO_MS) })
  })

  test('getFeatures: a flag without description lists description null', async () => {
    await api.newFlag('default', 'shape-nodesc')
    const [feature] = (await list('default')).features
    expect(feature.description).toBeNull()
    expect(feature.type).toBe('release')
  })

  test('getFeatures: each environment entry carries the fields of seed 2.3', async () => {
    await api.newFlag('default', 'shape-env')
    const [feature] = (await list('default')).features
    expect(feature.environments).toHaveLength(2)
    for (const entry of feature.environments) {
      for (const field of ENVIRONMENT_FIELDS) expect(entry).toHaveProperty(field)
      expect(entry.name).toBe(entry.environment)
      expect(entry.featureName).toBe('shape-env')
      expect(typeof entry.enabled).toBe('boolean')
      expect(typeof entry.sortOrder).toBe('number')
      expect(entry.variantCount).toBe(0)
      expect(entry.lastSeenAt).toBeNull()
      expect(entry.hasStrategies).toBe(false)
      expect(entry.hasEnabledStrategies).toBe(false)
    }
    expect(feature.environments.map(e => [e.name, e.type, e.sortOrder, e.enabled])).toEqual([
      ['development', 'development', 100, false],
      ['production', 'production', 200, false],
    ])
  })

  test('getFeatures: environment entries are ordered by sortOrder, then name', async () => {
    for (const [name, sortOrder] of [
      ['zz-late', 300],
      ['zz-early', 50],
      ['aa-early', 50],
      ['mm-mid', 150],
    ] as const) {
      expectOk(await api.post<EnvironmentBody>('/api/admin/environments', { name, type: 'test', sortOrder }), 201)
    }
    await api.newProject('env-order')
    await api.newFlag('env-order', 'env-order-flag')
    const [feature] = (await list('env-order')).features
    expect(feature.environments.map((e: { name: string }) => e.name)).toEqual([
      'aa-early',
      'zz-early',
      'development',
      'mm-mid',
      'production',
      'zz-late',
    ])
    expect(feature.environments.map((e: { sortOrder: number }) => e.sortOrder)).toEqual([50, 50, 100, 150, 200, 300])
    expect(named(feature.environments, 'mm-mid').type).toBe('test')
  })

  test('getFeatures: variantCount counts the variants of the environment', async () => {
    await api.newFlag('default', 'variant-count')
    const response = await api.put(
      '/api/admin/projects/default/features/variant-count/environments/production/variants',
      [
        { name: 'a', weight: 500 },
        { name: 'b', weight: 500 },
      ],
    )
    expectOk(response)
    const [feature] = (await list('default')).features
    const byName = Object.fromEntries(
      feature.environments.map((e: { name: string; variantCount: number }) => [e.name, e.variantCount]),
    )
    expect(byName).toEqual({ development: 0, production: 2 })
  })
})

describe('getFeatures: which flags and in which order', () => {
  test('getFeatures: archived flags are excluded', async () => {
    await api.newFlag('default', 'arch-live')
    await api.newFlag('default', 'arch-deleted')
    await api.newFlag('default', 'arch-patched')
    expect((await api.delete('/api/admin/projects/default/features/arch-deleted')).status).toBe(202)
    expectOk(await api.patchFlag('default', 'arch-patched', [{ op: 'replace', path: '/archived', value: true }]))
    expect(await names('default')).toEqual(['arch-live'])
  })

  test('getFeatures: a revived flag is listed again', async () => {
    await api.newFlag('default', 'revived-one')
    expect((await api.delete('/api/admin/projects/default/features/revived-one')).status).toBe(202)
    expect(await names('default')).toEqual([])
    expectOk(await api.post('/api/admin/projects/default/revive', { features: ['revived-one'] }))
    expect(await names('default')).toEqual(['revived-one'])
  })

  test('getFeatures: only the flags of the project in the path are listed', async () => {
    await api.newProject('other-list')
    await api.newFlag('default', 'mine')
    await api.newFlag('other-list', 'theirs')
    expect(await names('default')).toEqual(['mine'])
    expect(await names('other-list')).toEqual(['theirs'])
  })

  test('getFeatures: flags are ordered by createdAt, oldest first', async () => {
    setSystemTime(new Date('2030-01-01T10:00:00.000Z'))
    await api.newFlag('default', 'zz-oldest')
    setSystemTime(new Date('2030-01-01T10:00:01.000Z'))
    await api.newFlag('default', 'mm-middle')
    setSystemTime(new Date('2030-01-01T10:00:02.000Z'))
    await api.newFlag('default', 'aa-newest')
    setSystemTime()
    expect(await names('default')).toEqual(['zz-oldest', 'mm-middle', 'aa-newest'])
  })

  test('getFeatures: flags with the same createdAt are ordered by name', async () => {
    setSystemTime(new Date('2030-02-01T10:00:00.000Z'))
    for (const name of ['same-c', 'same-a', 'same-b2', 'same-b']) await api.newFlag('default', name)
    setSystemTime(new Date('2030-01-01T00:00:00.000Z'))
    await api.newFlag('default', 'same-z-earlier')
    setSystemTime()
    const features = (await list('default')).features
    expect(features.map((f: { name: string }) => f.name)).toEqual([
      'same-z-earlier',
      'same-a',
      'same-b',
      'same-b2',
      'same-c',
    ])
    expect(new Set(features.slice(1).map(f => f.createdAt)).size).toBe(1)
  })

  test('getFeatures: an unknown project answers 200 with an empty list', async () => {
    await api.newFlag('default', 'exists-elsewhere')
    const response = await api.listFlags('no-such-project')
    expectOk(response)
    expect(response.body).toEqual({ version: 2, features: [] })
  })
})

describe('getFeatures: filters', () => {
  async function taggedFlags() {
    await api.newFlag('default', 'red-one')
    await api.newFlag('default', 'blue-one')
    await api.newFlag('default', 'red-blue')
    await api.newFlag('default', 'untagged')
    await api.newFlag('default', 'other-type')
    await tag('red-one', 'simple', 'red')
    await tag('blue-one', 'simple', 'blue')
    await tag('red-blue', 'simple', 'red')
    await tag('red-blue', 'simple', 'blue')
    await tag('other-type', 'color', 'red')
  }

  test('getFeatures: tag=type:value keeps only flags carrying that tag', async () => {
    await taggedFlags()
    expect((await names('default', '?tag=simple:red')).sort()).toEqual(['red-blue', 'red-one'])
  })

  test('getFeatures: the tag filter matches type as well as value', async () => {
    await taggedFlags()
    expect(await names('default', '?tag=color:red')).toEqual(['other-type'])
    expect(await names('default', '?tag=simple:green')).toEqual([])
    expect(await names('default', '?tag=simple:RED')).toEqual([])
  })

  test('getFeatures: repeated tag filters are ORed', async () => {
    await taggedFlags()
    expect((await names('default', '?tag=simple:red&tag=simple:blue')).sort()).toEqual([
      'blue-one',
      'red-blue',
      'red-one',
    ])
    expect((await names('default', '?tag=simple:blue&tag=color:red')).sort()).toEqual([
      'blue-one',
      'other-type',
      'red-blue',
    ])
  })

  test('getFeatures: a tag value may itself contain a colon', async () => {
    await api.newFlag('default', 'colon-tag')
    await tag('colon-tag', 'simple', 'a:b')
    expect(await names('default', '?tag=simple:a:b')).toEqual(['colon-tag'])
  })

  test('getFeatures: namePrefix keeps flags whose name starts with it, ignoring case', async () => {
    await api.newFlag('default', 'Checkout-New')
    await api.newFlag('default', 'checkout-old')
    await api.newFlag('default', 'my-checkout')
    await api.newFlag('default', 'search')
    expect((await names('default', '?namePrefix=CHECKOUT')).sort()).toEqual(['Checkout-New', 'checkout-old'])
    expect((await names('default', '?namePrefix=checkout-n')).sort()).toEqual(['Checkout-New'])
    expect(await names('default', '?namePrefix=out')).toEqual([])
  })

  test('getFeatures: namePrefix is taken literally, not as a pattern', async () => {
    await api.newFlag('default', 'a.b')
    await api.newFlag('default', 'axb')
    expect(await names('default', '?namePrefix=a.')).toEqual(['a.b'])
    expect(await names('default', '?namePrefix=a*')).toEqual([])
  })

  test('getFeatures: tag and namePrefix are ANDed', async () => {
    await taggedFlags()
    expect(await names('default', '?tag=simple:red&namePrefix=RED-O')).toEqual(['red-one'])
    expect((await names('default', '?tag=simple:red&tag=simple:blue&namePrefix=red')).sort()).toEqual([
      'red-blue',
      'red-one',
    ])
    expect(await names('default', '?tag=color:red&namePrefix=red')).toEqual([])
  })

  test('getFeatures: filters do not show archived flags', async () => {
    await api.newFlag('default', 'gone-tagged')
    await tag('gone-tagged', 'simple', 'gone')
    expect((await api.delete('/api/admin/projects/default/features/gone-tagged')).status).toBe(202)
    expect(await names('default', '?tag=simple:gone')).toEqual([])
    expect(await names('default', '?namePrefix=gone')).toEqual([])
  })

  test('getFeatures: a tag filter without type:value form answers 400 ValidationError', async () => {
    const response = await api.listFlags('default', '?tag=nocolon')
    expectError(response, 400, 'ValidationError')
    expect(errorOf(response).message).toContain('tag')
  })
})

describe('getFeatures: enabled and strategies', () => {
  test('getFeatures: enabled is true when the flag is enabled in any environment', async () => {
    await api.newFlag('default', 'on-prod')
    await api.newFlag('default', 'on-none')
    expectOk(await api.toggle('default', 'on-prod', 'production', true))
    const features = (await list('default')).features
    const byName = Object.fromEntries(features.map(f => [f.name, f]))
    expect(byName['on-prod'].enabled).toBe(true)
    expect(byName['on-none'].enabled).toBe(false)
    expect(byName['on-prod'].environments.map(e => [e.name, e.enabled])).toEqual([
      ['development', false],
      ['production', true],
    ])
    expectOk(await api.toggle('default', 'on-prod', 'production', false))
    const after = named((await list('default')).features, 'on-prod')
    expect(after.enabled).toBe(false)
  })

  test('getFeatures: hasStrategies and hasEnabledStrategies; a disabled strategy does not count as enabled', async () => {
    await api.newFlag('default', 'strats')
    await addStrategy('default', 'strats', 'development', { name: 'default', disabled: true })
    let entry = (await list('default')).features[0].environments.find(e => e.name === 'development')
    expect(entry).toMatchObject({ hasStrategies: true, hasEnabledStrategies: false })
    let production = (await list('default')).features[0].environments.find(e => e.name === 'production')
    expect(production).toMatchObject({ hasStrategies: false, hasEnabledStrategies: false })
    await addStrategy('default', 'strats', 'development', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'strats' },
    })
    entry = (await list('default')).features[0].environments.find(e => e.name === 'development')
    expect(entry).toMatchObject({ hasStrategies: true, hasEnabledStrategies: true })
    await addStrategy('default', 'strats', 'production', { name: 'default', disabled: false })
    production = (await list('default')).features[0].environments.find(e => e.name === 'production')
    expect(production).toMatchObject({ hasStrategies: true, hasEnabledStrategies: true })
  })

  test('getFeatures: the list leaves out nothing of what seed 2.3 requires even when strategies exist', async () => {
    await api.newFlag('default', 'strats-shape')
    expectOk(await api.toggle('default', 'strats-shape', 'development', true))
    const [feature] = (await list('default')).features
    for (const entry of feature.environments)
      for (const field of ENVIRONMENT_FIELDS) expect(entry).toHaveProperty(field)
    expect(feature.environments[0]).toMatchObject({
      name: 'development',
      enabled: true,
      hasStrategies: true,
      hasEnabledStrategies: true,
    })
  })

  test('getFeatures: tags, children and dependencies of each flag are listed', async () => {
    await api.newFlag('default', 'parent-flag')
    await api.newFlag('default', 'child-flag')
    await tag('child-flag', 'simple', 'kid')
    expectOk(await api.post('/api/admin/projects/default/features/child-flag/dependencies', { feature: 'parent-flag' }))
    const features = Object.fromEntries((await list('default')).features.map(f => [f.name, f]))
    expect(features['parent-flag'].children).toEqual(['child-flag'])
    expect(features['child-flag'].dependencies).toEqual([{ feature: 'parent-flag', enabled: true, variants: [] }])
    expect(features['child-flag'].tags).toEqual([{ type: 'simple', value: 'kid' }])
  })
})

describe('getFeatures: authentication', () => {
  test('getFeatures: without a token it answers 401 AuthenticationRequired', async () => {
    expectError(await api.listFlags('default', '', { token: null }), 401, 'AuthenticationRequired')
    expectError(await api.listFlags('default', '', { token: '*:*.not-a-token' }), 401, 'AuthenticationRequired')
  })

  test('getFeatures: a viewer token may list', async () => {
    await api.newFlag('default', 'viewer-sees')
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    expect((await list('default', '', viewer)).features.map((f: { name: string }) => f.name)).toEqual(['viewer-sees'])
  })

  test('getFeatures: a token limited to other projects lists nothing (200, empty)', async () => {
    await api.newProject('scoped-other')
    await api.newFlag('default', 'hidden-from-scoped')
    const scoped = await tokenFor(api, 'scoped', { role: 'viewer', projects: ['scoped-other'] })
    expect(await list('default', '', scoped)).toEqual({ version: 2, features: [] })
  })

  test('getFeatures: a client token answers 403 NoAccessError', async () => {
    const client = await tokenFor(api, 'sdk', { type: 'client', project: 'default', environment: 'development' })
    expectError(await api.listFlags('default', '', { token: client }), 403, 'NoAccessError')
  })
})

describe('getFeatures: the cached list follows every change', () => {
  test('after each kind of change the list answers what a fresh build would', async () => {
    const local = await makeApi()
    try {
      const list = async () => (await local.listFlags('default')).body.features
      await local.createFlag('default', 'cache-a')
      await local.createFlag('default', 'cache-b')
      expect((await list()).map(f => f.name)).toEqual(['cache-a', 'cache-b'])
      await local.toggle('default', 'cache-a', 'development', true)
      expect((await list())[0].enabled).toBe(true)
      await local.post('/api/admin/projects/default/features/cache-b/dependencies', { feature: 'cache-a' })
      expect((await list())[0].children).toEqual(['cache-b'])
      await local.post('/api/admin/features/cache-b/tags', { value: 'cached' })
      expect((await list())[1].tags).toEqual([{ type: 'simple', value: 'cached' }])
      await local.post<EnvironmentBody>('/api/admin/environments', { name: 'staging', type: 'test', sortOrder: 150 })
      await local.post('/api/admin/projects/default/environments', { environment: 'staging' })
      expect((await list())[0].environments.map(e => e.name)).toEqual(['development', 'staging', 'production'])
      await local.delete('/api/admin/projects/default/features/cache-b/dependencies')
      await local.delete('/api/admin/projects/default/features/cache-b')
      expect((await list()).map(f => f.name)).toEqual(['cache-a'])
      // A filtered list and another project are answered apart from the cached one.
      expect((await local.listFlags('default', '?namePrefix=nope')).body.features).toEqual([])
      expect((await local.listFlags('no-such-project')).body).toEqual({ version: 2, features: [] })
    } finally {
      await local.close()
    }
  })

  test('a project deleted and made again under the same id lists its own flags, not the old list', async () => {
    const local = await makeApi()
    try {
      const names = async () => (await local.listFlags('again')).body.features.map((f: any) => f.name)
      expectOk(await local.createProject('again'), 201)
      expectOk(await local.createFlag('again', 'again-old'), 201)
      expect(await names()).toEqual(['again-old'])
      expectOk(await local.delete('/api/admin/projects/again/features/again-old'), 202)
      expectOk(await local.delete('/api/admin/archive/again-old'), 200)
      expectOk(await local.delete('/api/admin/projects/again'), 200)
      expect(await names()).toEqual([])
      expectOk(await local.createProject('again'), 201)
      expect(await names()).toEqual([])
      expectOk(await local.createFlag('again', 'again-new'), 201)
      expect(await names()).toEqual(['again-new'])
    } finally {
      await local.close()
    }
  })
})
