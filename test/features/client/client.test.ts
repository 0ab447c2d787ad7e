/**
 * The server-side SDK API (sdk-api-contract §1, §5): shape, scope, ETag, register and metrics,
 * and which tokens may call it.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { expectError, paths } from '../../helpers'
import { seededRandom } from '../../random'
import { buildAnswer, scopeOf } from '../../../src/features/client/client.service'
import { api, useFreshApi, type ClientFeature, sdkToken, features, names, addStrategy } from './client.setup'

useFreshApi()

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
