/**
 * The server-side SDK API (sdk-api-contract §1, §5): shape, scope, ETag, register and metrics,
 * and which tokens may call it.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { type Api, BODY_LIMIT, expectError, freshApiPerTest, paths } from '../helpers'
import { seededRandom } from '../random'
import { buildAnswer, scopeOf } from '../../src/features/client/client.service'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface ClientFeature {
  name: string
  enabled: boolean
  project: string
  strategies: Record<string, unknown>[]
  variants: Record<string, unknown>[]
  dependencies?: unknown[]
  [key: string]: unknown
}
interface ClientFeatures {
  version: number
  features: ClientFeature[]
  query: Record<string, unknown>
  meta: { revisionId: number; etag: string; queryHash: string }
}

async function sdkToken(
  type: 'client' | 'frontend' | 'admin',
  projects: string[] = ['*'],
  environment = 'development',
): Promise<string> {
  const name = `${type}-${projects.join('-').replace('*', 'all')}-${environment}-${Math.random().toString(36).slice(2, 8)}`
  const response = await api.createToken({
    tokenName: name,
    type,
    projects,
    ...(type === 'admin' ? {} : { environment }),
  })
  expect(response.status).toBe(201)
  return response.body.secret
}

const features = (token: string, query = '', headers: Record<string, string> = {}) =>
  api.get<ClientFeatures>(`/api/client/features${query}`, { token, headers })
const names = (body: ClientFeatures) => body.features.map(feature => feature.name)

async function addStrategy(project: string, flag: string, environment: string, body: Record<string, unknown>) {
  const response = await api.post(paths.strategies(flag, environment, project), body)
  expect(response.status).toBe(200)
  return response.body as { id: string }
}

describe('GET /api/client/features: shape and what is served', () => {
  test('an enabled flag with strategies and variants, an off flag, a disabled strategy, an archived flag, dependencies', async () => {
    const client = await sdkToken('client')
    await api.newFlag('default', 'on-flag', { description: 'the on one' })
    await addStrategy('default', 'on-flag', 'development', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'on-flag' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }],
    })
    await addStrategy('default', 'on-flag', 'development', {
      name: 'userWithId',
      parameters: { userIds: '7' },
      disabled: true,
    })
    expect((await api.toggle('default', 'on-flag', 'development', true)).status).toBe(200)
    const variants = await api.put(paths.variants('on-flag'), [
      { name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default' },
    ])
    expect(variants.status).toBe(200)
    await api.newFlag('default', 'off-flag')
    await addStrategy('default', 'off-flag', 'development', { name: 'default' })
    await api.newFlag('default', 'gone-flag')
    expect((await api.delete(paths.flag('gone-flag'))).status).toBe(202)
    await api.newFlag('default', 'child-flag')
    expect(
      (await api.post(`${paths.flag('child-flag')}/dependencies`, { feature: 'on-flag', variants: ['blue'] })).status,
    ).toBe(200)

    const response = await features(client)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const body = response.body
    expect(body.version).toBe(2)
    expect(names(body)).toEqual(['child-flag', 'off-flag', 'on-flag'])
    const on = body.features.find(feature => feature.name === 'on-flag')!
    expect(on).toEqual({
      name: 'on-flag',
      type: 'release',
      enabled: true,
      project: 'default',
      stale: false,
      strategies: [
        {
          name: 'flexibleRollout',
          constraints: [
            { contextName: 'userId', operator: 'IN', values: ['1', '2'], caseInsensitive: false, inverted: false },
          ],
          parameters: { rollout: '50', stickiness: 'default', groupId: 'on-flag' },
          variants: [],
        },
      ],
      variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default', overrides: [] }],
      description: 'the on one',
      impressionData: false,
    })
    const off = body.features.find(feature => feature.name === 'off-flag')!
    expect(off.enabled).toBe(false)
    expect(off.strategies).toEqual([{ name: 'default', constraints: [], parameters: {}, variants: [] }])
    expect(off).not.toHaveProperty('dependencies')
    const child = body.features.find(feature => feature.name === 'child-flag')!
    expect(child.dependencies).toEqual([{ feature: 'on-flag', enabled: true, variants: ['blue'] }])
    expect(body.query).toEqual({ project: ['*'], environment: 'development' })
    expect(body.meta.etag).toBe(response.headers.get('etag')!)
    expect(body.meta.queryHash).toMatch(/^[0-9a-f]+$/)
    expect(body.meta.revisionId).toBeGreaterThan(0)

    // The same flags in production: nothing enabled there, no variants.
    const production = await features(await sdkToken('client', ['*'], 'production'))
    const onInProduction = production.body.features.find(feature => feature.name === 'on-flag')!
    expect({
      enabled: onInProduction.enabled,
      strategies: onInProduction.strategies,
      variants: onInProduction.variants,
    }).toEqual({ enabled: false, strategies: [], variants: [] })
  })

  test('GET /api/client/features/:name answers the same object; unknown, archived and other-project flags are 404', async () => {
    await api.newProject('other')
    const client = await sdkToken('client', ['default'])
    await api.newFlag('default', 'single')
    await api.newFlag('default', 'archived-one')
    await api.delete(paths.flag('archived-one'))
    await api.newFlag('other', 'elsewhere')
    const one = await api.get<ClientFeature>('/api/client/features/single', { token: client })
    expect(one.status).toBe(200)
    const list = await features(client)
    expect(one.body).toEqual(list.body.features.find(feature => feature.name === 'single')!)
    for (const name of ['nope', 'archived-one', 'elsewhere']) {
      expectError(await api.get(`/api/client/features/${name}`, { token: client }), 404, 'NotFoundError', [name])
    }
  })
})

describe('scope', () => {
  beforeEach(async () => {
    await api.newProject('shop')
    await api.newFlag('default', 'app.one')
    await api.newFlag('default', 'web.two')
    await api.newFlag('shop', 'app.cart')
  })

  test('a project token sees its project; a conflicting ?project= is ignored', async () => {
    const shop = await sdkToken('client', ['shop'])
    expect(names((await features(shop)).body)).toEqual(['app.cart'])
    const conflicting = await features(shop, '?project=default')
    expect(names(conflicting.body)).toEqual(['app.cart'])
    expect(conflicting.body.query.project).toEqual(['shop'])
  })

  test('a * token is narrowed by repeatable ?project=; an unknown project lists nothing', async () => {
    const all = await sdkToken('client')
    expect(names((await features(all)).body)).toEqual(['app.cart', 'app.one', 'web.two'])
    expect(names((await features(all, '?project=shop')).body)).toEqual(['app.cart'])
    const both = await features(all, '?project=shop&project=default')
    expect(names(both.body)).toEqual(['app.cart', 'app.one', 'web.two'])
    expect(both.body.query.project).toEqual(['default', 'shop'])
    expect((await features(all, '?project=missing')).body.features).toEqual([])
  })

  test('namePrefix filters by plain prefix and is echoed in query', async () => {
    const all = await sdkToken('client')
    const response = await features(all, '?namePrefix=app.')
    expect(names(response.body)).toEqual(['app.cart', 'app.one'])
    expect(response.body.query).toEqual({ project: ['*'], environment: 'development', namePrefix: 'app.' })
    expect(names((await features(all, '?namePrefix=a%2A')).body)).toEqual([])
  })

  test('a token for two projects is narrowed to one of them by ?project=, not widened', async () => {
    await api.newProject('third')
    await api.newFlag('third', 'third.flag')
    const two = await sdkToken('client', ['default', 'shop'])
    expect(names((await features(two)).body)).toEqual(['app.cart', 'app.one', 'web.two'])
    expect(names((await features(two, '?project=shop&project=third')).body)).toEqual(['app.cart'])
    expect(names((await features(two, '?project=third')).body)).toEqual(['app.cart', 'app.one', 'web.two'])
  })

  test('?tag= (repeatable) serves flags with any of the tags; a tag change is a new ETag for that filter', async () => {
    const all = await sdkToken('client')
    expect((await api.post(paths.tags('app.one'), { type: 'simple', value: 'sdk' })).status).toBe(201)
    const tagged = await features(all, '?tag=simple:sdk')
    expect(names(tagged.body)).toEqual(['app.one'])
    expect(tagged.body.query.tag).toEqual(['simple:sdk'])
    const untagged = (await features(all)).headers.get('etag')!
    expect((await api.post(paths.tags('web.two'), { type: 'simple', value: 'sdk' })).status).toBe(201)
    const after = await features(all, '?tag=simple:sdk', { 'if-none-match': tagged.headers.get('etag')! })
    expect(after.status).toBe(200)
    expect(names(after.body)).toEqual(['app.one', 'web.two'])
    // The unfiltered list serves no tags: its ETag stays.
    expect((await features(all, '', { 'if-none-match': untagged })).status).toBe(304)
    expectError(await features(all, '?tag=no-colon'), 400, 'ValidationError', ['tag'])
    expectError(await features(all, '?unknown=1'), 400, 'ValidationError', ['unknown'])
  })

  test('the token environment decides enabled', async () => {
    await api.toggle('default', 'app.one', 'production', true)
    const production = await features(await sdkToken('client', ['default'], 'production'))
    const development = await features(await sdkToken('client', ['default'], 'development'))
    expect(production.body.features.find(feature => feature.name === 'app.one')!.enabled).toBe(true)
    expect(development.body.features.find(feature => feature.name === 'app.one')!.enabled).toBe(false)
  })
})

describe('ETag', () => {
  test('If-None-Match with the ETag (plain, weak, in a list) answers 304 with no body; another ETag answers 200', async () => {
    const client = await sdkToken('client')
    await api.newFlag('default', 'etag-flag')
    const first = await features(client)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^".+"$/)
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await features(client, '', { 'if-none-match': header })
      expect({ status: again.status, text: again.text, etag: again.headers.get('etag') }).toEqual({
        status: 304,
        text: '',
        etag,
      })
    }
    const other = await features(client, '', { 'if-none-match': '"something-else"' })
    expect(other.status).toBe(200)
    expect(other.text).toBe(first.text)
  })

  test('a write to the scope gives a new ETag on the very next request; writes elsewhere keep it', async () => {
    await api.newProject('shop')
    await api.newFlag('default', 'watched')
    await api.newFlag('shop', 'elsewhere')
    const client = await sdkToken('client', ['default'], 'development')
    const etag = (await features(client)).headers.get('etag')!

    // Another project, another environment, a flag outside the namePrefix scope is tested below.
    await api.toggle('shop', 'elsewhere', 'development', true)
    await addStrategy('default', 'watched', 'production', { name: 'default' })
    await api.toggle('default', 'watched', 'production', true)
    const unchanged = await features(client, '', { 'if-none-match': etag })
    expect(unchanged.status).toBe(304)

    await api.toggle('default', 'watched', 'development', true)
    const changed = await features(client, '', { 'if-none-match': etag })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect(changed.body.features.find(feature => feature.name === 'watched')!.enabled).toBe(true)

    // A new flag, an archived flag: each a new ETag at once.
    const afterToggle = changed.headers.get('etag')!
    await api.newFlag('default', 'added')
    const added = await features(client, '', { 'if-none-match': afterToggle })
    expect(added.status).toBe(200)
    expect(names(added.body)).toContain('added')
    await api.delete(paths.flag('added'))
    const archived = await features(client, '', { 'if-none-match': added.headers.get('etag')! })
    expect(archived.status).toBe(200)
    expect(names(archived.body)).not.toContain('added')
  })

  test('a namePrefix scope keeps its ETag when a flag outside the prefix changes', async () => {
    await api.newFlag('default', 'app.kept')
    await api.newFlag('default', 'web.changed')
    const client = await sdkToken('client')
    const etag = (await features(client, '?namePrefix=app.')).headers.get('etag')!
    const all = (await features(client)).headers.get('etag')!
    await api.toggle('default', 'web.changed', 'development', true)
    expect((await features(client, '?namePrefix=app.', { 'if-none-match': etag })).status).toBe(304)
    expect((await features(client, '', { 'if-none-match': all })).status).toBe(200)
  })

  test('the ETag depends on the content: the same flags after a restart of the cache give the same ETag, other flags another', async () => {
    const client = await sdkToken('client')
    await api.newFlag('default', 'stable')
    const first = (await features(client)).headers.get('etag')!
    // Many other scopes push this one out of the cache; rebuilt, it keeps its ETag.
    for (let index = 0; index < 70; index++) await features(client, `?namePrefix=p${index}`)
    expect((await features(client, '', { 'if-none-match': first })).status).toBe(304)
  })
})

describe('one token cannot turn the cache off for others (issue 18 item 13)', () => {
  /** sdk_answers_total of the client API by source, read from the Prometheus endpoint. */
  async function sources(): Promise<Record<string, number>> {
    const text = (await api.get<string>('/internal-backstage/prometheus')).text
    const found: Record<string, number> = {}
    for (const match of text.matchAll(/^sdk_answers_total\{api="client",source="(\w+)"\} (\d+)$/gm))
      found[match[1]] = Number(match[2])
    return found
  }

  test('a flood of varied ?namePrefix=, ?tag= and ?project= from one token leaves the answers kept for other tokens, with or without a filter, in place', async () => {
    await api.newProject('shop')
    for (let i = 0; i < 20; i++) await api.newFlag(i % 2 ? 'shop' : 'default', `f-${i}`)
    const flooder = await sdkToken('client', ['default'])
    const sameScope = await sdkToken('client', ['default'])
    const other = await sdkToken('client', ['*'])
    const asked = [
      [sameScope, ''],
      [other, ''],
      [other, '?namePrefix=f-1'],
      [other, '?project=shop'],
    ] as const
    const before = new Map<string, string>()
    for (const [token, query] of asked) before.set(token + query, (await features(token, query)).headers.get('etag')!)
    const start = await sources()
    expect(start.compiled).toBe(2)

    for (let i = 0; i < 200; i++) {
      const query = [
        `?namePrefix=x${i}`,
        `?tag=simple:${i}`,
        `?project=default&project=p${i}`,
        `?namePrefix=f-${i}&tag=a:${i}`,
      ][i % 4]
      expect((await features(flooder, query)).status).toBe(200)
    }
    const flooded = await sources()
    // The flood's token scope was kept already (sameScope's): it compiled nothing, only filtered; a
    // ?project= beyond a project token narrows nothing and is the kept unfiltered answer.
    expect(flooded.compiled).toBe(start.compiled)
    expect([flooded.filtered - start.filtered, flooded.kept - start.kept]).toEqual([150, 50])

    for (const [token, query] of asked) {
      const response = await features(token, query, { 'if-none-match': before.get(token + query)! })
      expect({ query, status: response.status }).toEqual({ query, status: 304 })
    }
    const after = await sources()
    // All four found kept, none made again.
    expect(after).toEqual({ ...flooded, kept: flooded.kept + asked.length })
  })

  test('filtered answers are made from the kept token scope and equal a fresh build; a tag change reaches ?tag= answers at once', async () => {
    for (let i = 0; i < 12; i++) await api.newFlag('default', `g-${i}`)
    expect((await api.post(paths.tags('g-3'), { type: 'simple', value: 'blue' })).status).toBe(201)
    const token = await sdkToken('client')
    const queries = ['', '?namePrefix=g-1', '?tag=simple:blue', '?project=default', '?namePrefix=g-1&tag=simple:blue']
    for (const query of queries) {
      const params = new URLSearchParams(query)
      const expected = buildAnswer(
        api.services.store.state,
        scopeOf(
          { projects: ['*'], environment: 'development' },
          {
            project: params.getAll('project'),
            namePrefix: params.get('namePrefix') ?? undefined,
            tag: params.getAll('tag'),
          },
        ),
      )
      const response = await features(token, query)
      expect(response.headers.get('etag')).toBe(expected.etag)
      const { meta: _meta, ...body } = response.body
      const { meta: _expectedMeta, ...expectedBody } = JSON.parse(new TextDecoder().decode(expected.bytes))
      expect(body).toEqual(expectedBody)
    }
    expect(names((await features(token, '?tag=simple:blue')).body)).toEqual(['g-3'])
    expect((await api.post(paths.tags('g-10'), { type: 'simple', value: 'blue' })).status).toBe(201)
    expect(names((await features(token, '?tag=simple:blue')).body)).toEqual(['g-10', 'g-3'])
  })
})

describe('ETag under random writes (seed 12)', () => {
  test('after every write, each scope answers 304 exactly when a freshly built answer has the ETag it last got', async () => {
    const random = seededRandom(12)
    await api.newProject('shop')
    const flags = ['a.one', 'a.two', 'b.three'].flatMap(
      name =>
        [
          ['default', name],
          ['shop', `shop-${name}`],
        ] as const,
    )
    for (const [project, name] of flags) await api.newFlag(project, name)
    const scopes: { token: string; query: string; projects: string[]; environment: string; etag?: string }[] = []
    for (const environment of ['development', 'production']) {
      for (const projects of [['*'], ['default'], ['shop']]) {
        const token = await sdkToken('client', projects, environment)
        for (const query of ['', '?namePrefix=a.', '?namePrefix=shop-b', '?tag=simple:xx', '?project=shop'])
          scopes.push({ token, query, projects, environment })
      }
    }
    for (const scope of scopes) scope.etag = (await features(scope.token, scope.query)).headers.get('etag')!
    let changes = 0
    for (let step = 0; step < 60; step++) {
      const [project, name] = random.pick(flags)
      const environment = random.pick(['development', 'production'])
      const operation = random.int(0, 4)
      const response =
        operation === 0
          ? await api.toggle(project, name, environment, random.chance(0.5))
          : operation === 1
            ? await api.post(paths.strategies(name, environment, project), {
                name: 'default',
                disabled: random.chance(0.3),
              })
            : operation === 2
              ? await api.post(paths.tags(name), { type: 'simple', value: random.pick(['xx', 'yy']) })
              : operation === 3
                ? await api.put(paths.variants(name, environment, project), [
                    { name: random.pick(['red', 'blue']), weightType: 'variable', weight: 1000, stickiness: 'default' },
                  ])
                : await api.patchFlag(project, name, [{ op: 'replace', path: '/stale', value: random.chance(0.5) }])
      // A tag given twice is a 409; every other write is made.
      expect({
        step,
        operation,
        status: response.status < 300 || (operation === 2 && response.status === 409),
      }).toEqual({ step, operation, status: true })
      for (const scope of scopes) {
        const params = new URLSearchParams(scope.query)
        const query = {
          project: params.getAll('project'),
          namePrefix: params.get('namePrefix') ?? undefined,
          tag: params.getAll('tag'),
        }
        // Built without any kept answer, from the state as it is now.
        const expected = buildAnswer(
          api.services.store.state,
          scopeOf({ projects: scope.projects, environment: scope.environment }, query),
        ).etag
        const response = await features(scope.token, scope.query, { 'if-none-match': scope.etag! })
        expect({ step, query: scope.query, status: response.status }).toEqual({
          step,
          query: scope.query,
          status: expected === scope.etag ? 304 : 200,
        })
        if (response.status === 200) {
          changes++
          expect(response.headers.get('etag')).toBe(expected)
          scope.etag = expected
        }
      }
    }
    // The walk saw both answers many times.
    expect(changes).toBeGreaterThan(20)
  })
})

describe('segments on the client API (sdk-api-contract §3)', () => {
  const SPEC = { 'unleash-client-spec': '5.1.9' }
  const segment = async (name: string, values: string[]) => {
    const response = await api.post<{ id: number }>('/api/admin/segments', {
      name,
      constraints: [{ contextName: 'region', operator: 'IN', values }],
    })
    expect(response.status).toBe(201)
    return response.body.id
  }
  const own = { contextName: 'userId', operator: 'IN', values: ['1'], caseInsensitive: false, inverted: false }
  const regionIn = (values: string[]) => ({
    contextName: 'region',
    operator: 'IN',
    values,
    caseInsensitive: false,
    inverted: false,
  })

  beforeEach(async () => {
    await api.newFlag('default', 'with-segments')
    await api.newFlag('default', 'plain')
  })

  test('Unleash-Client-Spec ≥ 4.2.0 gets ids and the referenced definitions once, by id; older or no header gets the constraints inlined', async () => {
    const client = await sdkToken('client')
    const unused = await segment('unused', ['nowhere'])
    const eu = await segment('eu', ['eu-west', 'eu-north'])
    const beta = await segment('beta', ['beta'])
    await addStrategy('default', 'with-segments', 'development', {
      name: 'default',
      constraints: [own],
      segments: [beta, eu],
    })
    await addStrategy('default', 'with-segments', 'development', { name: 'default', segments: [eu] })
    await addStrategy('default', 'plain', 'development', { name: 'default', constraints: [own] })

    for (const version of ['4.2.0', '5.1.9', '10.0.0', '4.10.0']) {
      const body = (await features(client, '', { 'unleash-client-spec': version })).body as ClientFeatures & {
        segments?: unknown[]
      }
      expect({ version, segments: body.segments }).toEqual({
        version,
        segments: [
          { id: eu, name: 'eu', constraints: [regionIn(['eu-west', 'eu-north'])] },
          { id: beta, name: 'beta', constraints: [regionIn(['beta'])] },
        ],
      })
      const flag = body.features.find(feature => feature.name === 'with-segments')!
      expect(flag.strategies.map(strategy => [strategy.constraints, strategy.segments])).toEqual([
        [[own], [beta, eu]],
        [[], [eu]],
      ])
      expect(body.features.find(feature => feature.name === 'plain')!.strategies[0]).not.toHaveProperty('segments')
    }
    expect(unused).toBeLessThan(eu)

    const older: Record<string, string>[] = [
      {},
      { 'unleash-client-spec': '4.1.9' },
      { 'unleash-client-spec': '3.0.0' },
      { 'unleash-client-spec': 'not a version' },
    ]
    for (const headers of older) {
      const body = (await features(client, '', headers)).body as ClientFeatures & { segments?: unknown[] }
      expect({ headers, segments: body.segments }).toEqual({ headers, segments: undefined })
      const flag = body.features.find(feature => feature.name === 'with-segments')!
      expect(flag.strategies.map(strategy => [strategy.constraints, strategy.segments])).toEqual([
        [[own, regionIn(['beta']), regionIn(['eu-west', 'eu-north'])], undefined],
        [[regionIn(['eu-west', 'eu-north'])], undefined],
      ])
    }

    // The single-flag route follows the same rule.
    const one = (headers: Record<string, string>) =>
      api.get<ClientFeature>('/api/client/features/with-segments', { token: client, headers })
    expect((await one(SPEC)).body.strategies[1]).toEqual({
      name: 'default',
      constraints: [],
      parameters: {},
      variants: [],
      segments: [eu],
    })
    expect((await one({})).body.strategies[1]).toEqual({
      name: 'default',
      constraints: [regionIn(['eu-west', 'eu-north'])],
      parameters: {},
      variants: [],
    })
  })

  test('both forms are kept as separate scopes: each keeps its own ETag and answers 304 to it only', async () => {
    const client = await sdkToken('client')
    const eu = await segment('eu', ['eu-west'])
    await addStrategy('default', 'with-segments', 'development', { name: 'default', segments: [eu] })
    const ids = await features(client, '', SPEC)
    const inlined = await features(client)
    const idsEtag = ids.headers.get('etag')!
    const inlinedEtag = inlined.headers.get('etag')!
    expect(idsEtag).not.toBe(inlinedEtag)
    expect((await features(client, '', { ...SPEC, 'if-none-match': idsEtag })).status).toBe(304)
    expect((await features(client, '', { 'if-none-match': inlinedEtag })).status).toBe(304)
    // Asked alternately, each form still gets its own content.
    const again = await features(client, '', { ...SPEC, 'if-none-match': inlinedEtag })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(ids.body)
    const againInlined = await features(client, '', { 'if-none-match': idsEtag })
    expect(againInlined.status).toBe(200)
    expect(againInlined.body).toEqual(inlined.body)
  })

  test('a segment update gives a new ETag and content on the very next request of a scope using it; a scope not using it keeps its ETag', async () => {
    await api.newProject('shop')
    await api.newFlag('shop', 'shop-flag')
    const client = await sdkToken('client', ['default'])
    const shop = await sdkToken('client', ['shop'])
    const eu = await segment('eu', ['eu-west'])
    await addStrategy('default', 'with-segments', 'development', { name: 'default', segments: [eu] })
    const before = {
      ids: await features(client, '', SPEC),
      inlined: await features(client),
      shop: await features(shop, '', SPEC),
    }

    const updated = await api.put(`/api/admin/segments/${eu}`, {
      name: 'eu',
      constraints: [{ contextName: 'region', operator: 'IN', values: ['eu-south'] }],
    })
    expect(updated.status).toBeLessThan(300)

    const ids = await features(client, '', { ...SPEC, 'if-none-match': before.ids.headers.get('etag')! })
    expect(ids.status).toBe(200)
    expect(ids.headers.get('etag')).not.toBe(before.ids.headers.get('etag'))
    expect((ids.body as ClientFeatures & { segments: unknown[] }).segments).toEqual([
      { id: eu, name: 'eu', constraints: [regionIn(['eu-south'])] },
    ])
    const inlined = await features(client, '', { 'if-none-match': before.inlined.headers.get('etag')! })
    expect(inlined.status).toBe(200)
    expect(inlined.body.features.find(feature => feature.name === 'with-segments')!.strategies[0].constraints).toEqual([
      regionIn(['eu-south']),
    ])
    expect((await features(shop, '', { ...SPEC, 'if-none-match': before.shop.headers.get('etag')! })).status).toBe(304)

    // A strategy taking the segment off is a flag write: the definition leaves the list.
    const strategies = (await api.get<{ id: string }[]>(paths.strategies('with-segments', 'development', 'default')))
      .body
    const put = await api.put(`${paths.strategies('with-segments', 'development', 'default')}/${strategies[0].id}`, {
      name: 'default',
      segments: [],
    })
    expect(put.status).toBe(200)
    const after = await features(client, '', { ...SPEC, 'if-none-match': ids.headers.get('etag')! })
    expect(after.status).toBe(200)
    expect(after.body).not.toHaveProperty('segments')
  })
})

describe('tokens on the client API (sdk-api-contract §5)', () => {
  test('no token or an unknown one → 401; admin and frontend tokens → 403; client tokens get 403 on the admin API', async () => {
    const client = await sdkToken('client')
    const frontend = await sdkToken('frontend')
    const admin = await sdkToken('admin')
    await api.newFlag('default', 'auth-flag')
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/client/features'],
      ['GET', '/api/client/features/auth-flag'],
      ['POST', '/api/client/register', { appName: 'app' }],
      ['POST', '/api/client/metrics', { appName: 'app' }],
    ]
    for (const [method, path, body] of routes) {
      expectError(await api.request(method, path, { token: null, body }), 401, 'AuthenticationRequired')
      expectError(
        await api.request(method, path, { token: 'default:development.unknown', body }),
        401,
        'AuthenticationRequired',
      )
      for (const token of [frontend, admin])
        expectError(await api.request(method, path, { token, body }), 403, 'NoAccessError', ['client'])
      expect((await api.request(method, path, { token: client, body })).status).toBe(method === 'GET' ? 200 : 202)
    }
    expectError(await api.get('/api/admin/projects', { token: client }), 403, 'NoAccessError')
    expectError(await api.get(paths.flag('auth-flag'), { token: client }), 403, 'NoAccessError')
  })
})

describe('POST /api/client/register and /api/client/metrics', () => {
  const registration = {
    appName: 'checkout',
    instanceId: 'pod-1',
    sdkVersion: 'unleash-client-node:6.1.0',
    strategies: ['default', 'flexibleRollout'],
    started: '2026-01-01T00:00:00.000Z',
    interval: 15000,
    platformName: 'node',
    platformVersion: '22',
    yggdrasilVersion: null,
    specVersion: '5.1.9',
    connectionId: 'abc',
  }
  const metrics = {
    appName: 'checkout',
    instanceId: 'pod-1',
    environment: 'default',
    bucket: {
      start: '2026-01-01T00:00:00.000Z',
      stop: '2026-01-01T00:01:00.000Z',
      toggles: { a: { yes: 1, no: 2, variants: { blue: 1 } } },
    },
    platformName: 'node',
  }

  test('the SDK bodies → 202 with no body, and no event', async () => {
    const client = await sdkToken('client')
    const before = api.lastEventId()
    for (const [path, body] of [
      ['/api/client/register', registration],
      ['/api/client/metrics', metrics],
    ] as const) {
      const response = await api.post(path, body, { token: client })
      expect({ status: response.status, text: response.text }).toEqual({ status: 202, text: '' })
    }
    expect(api.eventsSince(before)).toEqual([])
  })

  test('missing or empty appName, not JSON, a prototype key, too large, too deep → 400/413 with the JSON error', async () => {
    const client = await sdkToken('client')
    for (const path of ['/api/client/register', '/api/client/metrics']) {
      const missing = await api.post(path, { instanceId: 'x' }, { token: client })
      expectError(missing, 400, 'ValidationError', ['appName'])
      expect((missing.body as { details: { path: string }[] }).details.map(detail => detail.path)).toContain('/appName')
      expectError(await api.post(path, { appName: '' }, { token: client }), 400, 'ValidationError', ['appName'])
      expectError(
        await api.request('POST', path, {
          token: client,
          raw: '{"appName": ',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'ValidationError',
      )
      expectError(
        await api.request('POST', path, { token: client, raw: 'appName=x', headers: { 'content-type': 'text/plain' } }),
        415,
        'ContentTypeerror',
      )
      expectError(
        await api.request('POST', path, {
          token: client,
          raw: JSON.stringify({ appName: 'x', padding: 'x'.repeat(BODY_LIMIT) }),
          headers: { 'content-type': 'application/json' },
        }),
        413,
        'ContentTooLarge',
      )
      const polluted = await api.request('POST', path, {
        token: client,
        raw: '{"appName":"x","extra":{"__proto__":{"isAdmin":true}}}',
        headers: { 'content-type': 'application/json' },
      })
      expectError(polluted, 400, 'ValidationError', ['__proto__'])
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
      let deep: unknown = 1
      for (let level = 0; level < 40; level++) deep = { deep }
      expectError(await api.post(path, { appName: 'x', deep }, { token: client }), 400, 'ValidationError')
    }
  })

  test('a huge toggles map is refused with 413 (over the body limit) or accepted within it, never a 5xx', async () => {
    const client = await sdkToken('client')
    const toggles = (count: number) =>
      Object.fromEntries(
        Array.from({ length: count }, (_, index) => [`flag-${index}`, { yes: index, no: 0, variants: {} }]),
      )
    const huge = await api.post(
      '/api/client/metrics',
      { ...metrics, bucket: { ...metrics.bucket, toggles: toggles(20_000) } },
      { token: client },
    )
    expectError(huge, 413, 'ContentTooLarge')
    const large = await api.post(
      '/api/client/metrics',
      { ...metrics, bucket: { ...metrics.bucket, toggles: toggles(1500) } },
      { token: client },
    )
    expect(large.status).toBe(202)
    const wrong = await api.post(
      '/api/client/metrics',
      { ...metrics, bucket: { start: 1, stop: 2, toggles: [1, 2] } },
      { token: client },
    )
    expectError(wrong, 400, 'ValidationError', ['toggles'])
  })
})
