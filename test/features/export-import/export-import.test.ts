/**
 * Export and import between instances (features-batch): what an export holds and selects, and
 * that an export of one service imported into another, into another project and environment,
 * makes the same flags there, with the events of the single changes in one commit.
 */
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import type { Static } from '@sinclair/typebox'
import { createHash } from 'node:crypto'
import type { ExportResult } from '../../../src/features/export-import/export-import.model'
import { EXPORT_EVENTS_PER_HOUR } from '../../../src/features/export-import/export-import.service'
import { type Api, errorOf, expectError, expectOk, freshApiPerTest, makeApi, paths, tokenFor } from '../../helpers'

type ExportBody = Static<typeof ExportResult>

const EXPORT = '/api/admin/features-batch/export'
const IMPORT = '/api/admin/features-batch/import'

let api: Api
freshApiPerTest(fresh => (api = fresh))
const others: Api[] = []
afterEach(async () => {
  setSystemTime()
  for (const other of others.splice(0)) await other.close()
})

async function exportOf(target: Api, query: Record<string, unknown>, token?: string): Promise<ExportBody> {
  const response = await target.post<ExportBody>(EXPORT, query, token === undefined ? undefined : { token })
  expectOk(response)
  return response.body
}

/** Project `shop` with: a parent and a child flag, strategies with a constraint and a segment, variants, tags, on in development. */
async function seedShop(target: Api) {
  await target.newProject('shop')
  const segment = await target.post<{ id: number }>('/api/admin/segments', {
    name: 'europe',
    constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
  })
  expectOk(segment, 201)
  await target.newFlag('shop', 'checkout', { description: 'New checkout', type: 'experiment', impressionData: true })
  await target.newFlag('shop', 'checkout-banner')
  expectOk(
    await target.post(paths.strategies('checkout', 'development', 'shop'), {
      name: 'flexibleRollout',
      title: 'Half of Europe',
      parameters: { rollout: '50', stickiness: 'userId', groupId: 'checkout' },
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
      segments: [segment.body.id],
    }),
  )
  expectOk(
    await target.post(paths.strategies('checkout', 'development', 'shop'), {
      name: 'default',
      disabled: true,
      sortOrder: 5,
    }),
  )
  expectOk(
    await target.put(paths.variants('checkout', 'development', 'shop'), [
      { name: 'blue', weight: 300, weightType: 'fix', stickiness: 'default', payload: { type: 'string', value: 'b' } },
      { name: 'green', weight: 0, overrides: [{ contextName: 'userId', values: ['7'] }] },
    ]),
  )
  expectOk(await target.post(paths.tags('checkout'), { type: 'simple', value: 'payments' }), 201)
  expectOk(await target.post(paths.tags('checkout-banner'), { value: 'ui' }), 201)
  expectOk(await target.toggle('shop', 'checkout', 'development', true))
  expectOk(
    await target.post(`${paths.flag('checkout-banner', 'shop')}/dependencies`, {
      feature: 'checkout',
      variants: ['blue'],
    }),
  )
  return { segmentId: segment.body.id }
}

/** An export without what differs between instances by design: ids, the project and the environment names. */
function comparable(result: ExportBody) {
  return {
    ...result,
    features: result.features.map(({ project: _project, ...flag }) => flag),
    featureStrategies: result.featureStrategies.map(({ id: _id, segments, ...strategy }) => ({
      ...strategy,
      segments: segments.length,
    })),
    featureEnvironments: result.featureEnvironments.map(({ environment: _environment, ...entry }) => entry),
    segments: result.segments.map(({ id: _id, ...segment }) => segment),
  }
}

describe('export', () => {
  test('by name: the flags with their strategies, variants and state in the environment, tags, segments and parents; records features-exported', async () => {
    const { segmentId } = await seedShop(api)
    await api.newFlag('default', 'unrelated')
    const since = api.lastEventId()
    const result = await exportOf(api, {
      environment: 'development',
      features: ['checkout', 'checkout-banner', 'no-such-flag'],
    })
    expect(result.features).toEqual([
      {
        name: 'checkout',
        description: 'New checkout',
        type: 'experiment',
        project: 'shop',
        stale: false,
        impressionData: true,
        archived: false,
      },
      {
        name: 'checkout-banner',
        description: null,
        type: 'release',
        project: 'shop',
        stale: false,
        impressionData: false,
        archived: false,
      },
    ])
    expect(result.featureStrategies.map(s => [s.featureName, s.name, s.sortOrder, s.disabled, s.segments])).toEqual([
      ['checkout', 'flexibleRollout', 0, false, [segmentId]],
      ['checkout', 'default', 5, true, []],
    ])
    expect(result.featureStrategies[0]).toMatchObject({
      title: 'Half of Europe',
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
    })
    expect(result.featureEnvironments).toEqual([
      {
        name: 'checkout',
        featureName: 'checkout',
        environment: 'development',
        enabled: true,
        variants: [
          {
            name: 'blue',
            weight: 300,
            weightType: 'fix',
            stickiness: 'default',
            payload: { type: 'string', value: 'b' },
            overrides: [],
          },
          {
            name: 'green',
            weight: 700,
            weightType: 'variable',
            stickiness: 'default',
            overrides: [{ contextName: 'userId', values: ['7'] }],
          },
        ],
      },
      {
        name: 'checkout-banner',
        featureName: 'checkout-banner',
        environment: 'development',
        enabled: false,
        variants: [],
      },
    ])
    expect(result.featureTags).toEqual([
      { featureName: 'checkout', tagType: 'simple', tagValue: 'payments' },
      { featureName: 'checkout-banner', tagType: 'simple', tagValue: 'ui' },
    ])
    expect(result.segments).toEqual([{ id: segmentId, name: 'europe' }])
    expect(result.tagTypes).toEqual([
      { name: 'simple', description: 'Used to simplify filtering of features', icon: '#', color: null },
    ])
    // The fields the constraint (appName), the stickiness and the override (userId) name; not `default`, nor the segment's `region`.
    expect(result.contextFields).toEqual([
      {
        name: 'appName',
        description: 'Allows you to constrain on application name',
        stickiness: false,
        sortOrder: 2,
        legalValues: [],
      },
      {
        name: 'userId',
        description: 'Allows you to constrain on userId',
        stickiness: true,
        sortOrder: 1,
        legalValues: [],
      },
    ])
    expect(result.dependencies).toEqual([
      { feature: 'checkout-banner', dependencies: [{ feature: 'checkout', enabled: true, variants: ['blue'] }] },
    ])
    const events = api.eventsSince(since)
    expect(events.map(e => [e.type, e.project, e.environment, e.data])).toEqual([
      [
        'features-exported',
        null,
        'development',
        {
          environment: 'development',
          selectedBy: 'features',
          requested: 3,
          scope: ['*'],
          count: 2,
          flagsHash: createHash('sha256').update('checkout\ncheckout-banner').digest('hex'),
        },
      ],
    ])
  })

  test('selects by tag (a value of any type, or type:value) before names, by names before project, by project, and all live flags otherwise', async () => {
    await seedShop(api)
    await api.newFlag('default', 'plain')
    await api.newFlag('default', 'old')
    expectOk(await api.delete(paths.flag('old')), 202)
    const names = async (query: Record<string, unknown>) =>
      (await exportOf(api, { environment: 'production', ...query })).features.map(f => f.name)
    expect(await names({ tag: 'payments', features: ['plain'] })).toEqual(['checkout'])
    expect(await names({ tag: 'simple:ui' })).toEqual(['checkout-banner'])
    expect(await names({ tag: 'nothing' })).toEqual([])
    expect(await names({ features: ['plain', 'old'], project: 'shop' })).toEqual(['plain'])
    expect(await names({ features: [], project: 'shop' })).toEqual(['checkout', 'checkout-banner'])
    expect(await names({ project: 'nowhere' })).toEqual([])
    expect(await names({})).toEqual(['checkout', 'checkout-banner', 'plain'])
    // Production: connected, nothing on and no strategies there.
    const production = await exportOf(api, { environment: 'production', project: 'shop' })
    expect(production.featureStrategies).toEqual([])
    expect(production.featureEnvironments.map(e => [e.featureName, e.enabled, e.variants])).toEqual([
      ['checkout', false, []],
      ['checkout-banner', false, []],
    ])
  })

  test('a token limited to some projects exports only their flags; a viewer may export', async () => {
    await seedShop(api)
    await api.newFlag('default', 'plain')
    const viewer = await tokenFor(api, 'shop-viewer', { role: 'viewer', projects: ['default'] })
    expect((await exportOf(api, { environment: 'development' }, viewer)).features.map(f => f.name)).toEqual(['plain'])
    expect((await exportOf(api, { environment: 'development', project: 'shop' }, viewer)).features).toEqual([])
  })

  test('exports are audited in small events: 100 of 300 flags by a viewer add a bounded number of bytes, each saying who, what scope and how many', async () => {
    await api.newProject('shop')
    for (let i = 0; i < 300; i++)
      await api.newFlag(
        i % 2 ? 'shop' : 'default',
        `a-rather-long-flag-name-to-make-names-weigh-${String(i).padStart(4, '0')}`,
      )
    const viewer = await tokenFor(api, 'auditor', { role: 'viewer', projects: ['shop'] })
    const other = await tokenFor(api, 'other-viewer', { role: 'viewer', projects: ['*'] })
    const since = api.lastEventId()
    // Within one clock hour whatever the time the test runs at.
    setSystemTime(new Date('2026-03-01T10:00:00.000Z'))
    for (let i = 0; i < 100; i++)
      expect((await exportOf(api, { environment: 'development', project: 'shop' }, viewer)).features).toHaveLength(150)
    let events = api.eventsSince(since)
    // Bounded per token and hour: the rest are plain reads, with no commit.
    expect(events).toHaveLength(EXPORT_EVENTS_PER_HOUR)
    const bytes = events.reduce((sum, event) => sum + JSON.stringify(event).length, 0)
    expect(bytes).toBeLessThan(EXPORT_EVENTS_PER_HOUR * 600)
    for (const event of events) {
      expect(event).toMatchObject({
        type: 'features-exported',
        createdBy: 'auditor',
        project: 'shop',
        environment: 'development',
      })
      expect(event.data).toMatchObject({ selectedBy: 'project', scope: ['shop'], count: 150 })
      expect(JSON.stringify(event)).not.toContain('a-rather-long-flag-name')
    }
    // Another token is not held back by the first; the first's next recorded export (next hour) says how many went unrecorded.
    expectOk(await api.post(EXPORT, { environment: 'production', tag: 'nothing' }, { token: other }))
    events = api.eventsSince(since)
    expect(events).toHaveLength(EXPORT_EVENTS_PER_HOUR + 1)
    expect(events.at(-1)).toMatchObject({
      createdBy: 'other-viewer',
      project: null,
      environment: 'production',
      data: { selectedBy: 'tag', tag: 'nothing', scope: ['*'], count: 0 },
    })
    setSystemTime(new Date('2026-03-01T11:00:00.000Z'))
    await exportOf(api, { environment: 'development' }, viewer)
    setSystemTime()
    expect(api.eventsSince(since).at(-1)).toMatchObject({
      createdBy: 'auditor',
      data: { selectedBy: 'all', count: 150, unrecorded: 100 - EXPORT_EVENTS_PER_HOUR },
    })
  })

  test('an unknown environment answers 404 and records nothing; downloadFile answers as an attachment', async () => {
    const since = api.lastEventId()
    expectError(await api.post(EXPORT, { environment: 'staging' }), 404, 'NotFoundError', ['staging'])
    expect(api.eventsSince(since)).toEqual([])
    const download = await api.post(EXPORT, { environment: 'development', downloadFile: true })
    expectOk(download)
    expect(download.headers.get('content-disposition')).toMatch(
      /^attachment; filename="export-\d{4}-\d{2}-\d{2}\.json"$/,
    )
    expectError(await api.post(EXPORT, { features: ['x'] }), 400, 'ValidationError')
  })
})

describe('import', () => {
  test('round trip: exported from one service, imported into another project and environment of a fresh one, exports the same', async () => {
    await seedShop(api)
    const exported = await exportOf(api, { environment: 'development', project: 'shop' })

    const target = await makeApi()
    others.push(target)
    await target.newProject('store')
    // Segments are matched by name: here `europe` has another id, and belongs to the project.
    expectOk(await target.post('/api/admin/segments', { name: 'spare', constraints: [] }), 201)
    const europe = await target.post<{ id: number }>('/api/admin/segments', {
      name: 'europe',
      project: 'store',
      constraints: [],
    })
    expectOk(europe, 201)
    expect(europe.body.id).not.toBe(exported.segments[0].id)
    const since = target.lastEventId()
    const response = await target.post(IMPORT, { project: 'store', environment: 'production', data: exported })
    expectOk(response)
    expect(response.text).toBe('')

    const again = await exportOf(target, { environment: 'production', project: 'store' })
    expect(again.features.every(flag => flag.project === 'store')).toBe(true)
    expect(comparable(again)).toEqual(comparable(exported))
    expect(again.featureStrategies[0].segments).toEqual([europe.body.id])
    expect(again.segments).toEqual([{ id: europe.body.id, name: 'europe' }])
    expect((await target.getFlag('store', 'checkout')).body).toMatchObject({
      lifecycle: { stage: 'live' },
      environments: [
        { name: 'development', enabled: false },
        { name: 'production', enabled: true },
      ],
    })

    // The single changes' events, in one commit (one createdAt), then features-imported.
    const events = target.eventsSince(since).filter(e => e.type !== 'features-exported')
    expect(events.map(e => [e.type, e.featureName])).toEqual([
      ['feature-created', 'checkout'],
      ['feature-created', 'checkout-banner'],
      ['feature-environment-variants-updated', 'checkout'],
      ['feature-tagged', 'checkout'],
      ['feature-tagged', 'checkout-banner'],
      ['feature-strategy-add', 'checkout'],
      ['feature-strategy-add', 'checkout'],
      ['feature-environment-enabled', 'checkout'],
      ['feature-dependency-added', 'checkout-banner'],
      ['features-imported', null],
    ])
    expect(new Set(events.map(e => e.createdAt)).size).toBe(1)
    expect(events.at(-1)).toMatchObject({
      project: 'store',
      environment: 'production',
      data: { features: ['checkout', 'checkout-banner'] },
      createdBy: 'admin-bootstrap',
    })
    expect(events.every(e => e.project === 'store' && e.createdBy === 'admin-bootstrap')).toBe(true)
    expect(events.filter(e => e.environment !== null).every(e => e.environment === 'production')).toBe(true)
  })

  test('into flags that exist: metadata updated, variants and tags made as imported, strategies replaced, with the events of each change', async () => {
    await seedShop(api)
    const exported = await exportOf(api, { environment: 'development', features: ['checkout'] })
    expectOk(await api.patchFlag('shop', 'checkout', [{ op: 'replace', path: '/description', value: 'Changed here' }]))
    expectOk(await api.post(paths.tags('checkout'), { value: 'local' }), 201)
    const before = (await api.getFlag('shop', 'checkout')).body.environments.find(e => e.name === 'development')!
    const since = api.lastEventId()
    expectOk(
      await api.post(IMPORT, {
        project: 'shop',
        environment: 'development',
        data: { ...exported, features: [{ ...exported.features[0], stale: true }] },
      }),
    )
    const events = api.eventsSince(since)
    expect(events.map(e => e.type)).toEqual([
      'feature-metadata-updated',
      'feature-stale-on',
      'feature-untagged',
      'feature-strategy-remove',
      'feature-strategy-remove',
      'feature-strategy-add',
      'feature-strategy-add',
      'features-imported',
    ])
    expect(events[0]).toMatchObject({
      preData: { description: 'Changed here' },
      data: { description: 'New checkout', stale: true },
    })
    expect(events[2].preData).toEqual({ type: 'simple', value: 'local' })
    const after = (await api.getFlag('shop', 'checkout')).body
    expect(after).toMatchObject({
      description: 'New checkout',
      stale: true,
      tags: [{ type: 'simple', value: 'payments' }],
    })
    const development = after.environments.find(e => e.name === 'development')!
    expect(development.strategies!.map(s => s.id)).not.toContain(before.strategies![0].id)
    expect(development.strategies!.map(({ id: _id, ...s }) => s)).toEqual(
      before.strategies!.map(({ id: _id, ...s }) => s),
    )
    // The same import again changes nothing but its strategies (which Unleash always replaces).
    const second = api.lastEventId()
    expectOk(
      await api.post(IMPORT, {
        project: 'shop',
        environment: 'development',
        data: { ...exported, features: [{ ...exported.features[0], stale: true }] },
      }),
    )
    expect(api.eventsSince(second).map(e => e.type)).toEqual([
      'feature-strategy-remove',
      'feature-strategy-remove',
      'feature-strategy-add',
      'feature-strategy-add',
      'features-imported',
    ])
  })

  test("without featureTags the flags' tags are left as they are; with featureTags: [] they are removed", async () => {
    await api.newFlag('default', 'tagged')
    expectOk(await api.post(paths.tags('tagged'), { value: 'keep-me' }), 201)
    // As Unleash 8 exports it: with the flag links it has and we do not (ignored).
    const data = {
      features: [{ name: 'tagged' }],
      featureStrategies: [],
      tagTypes: [],
      links: [{ feature: 'tagged', links: [{ url: 'https://example.com' }] }],
    }
    expectOk(await api.post(IMPORT, { project: 'default', environment: 'development', data }))
    expect(api.services.store.state.flags.tagged.tags).toEqual([{ type: 'simple', value: 'keep-me' }])
    const since = api.lastEventId()
    expectOk(
      await api.post(IMPORT, { project: 'default', environment: 'development', data: { ...data, featureTags: [] } }),
    )
    expect(api.services.store.state.flags.tagged.tags).toEqual([])
    expect(api.eventsSince(since).map(e => [e.type, e.preData])).toEqual([
      ['feature-untagged', { type: 'simple', value: 'keep-me' }],
      ['features-imported', null],
    ])
  })

  test('the OpenAPI example imports into a fresh service as is, and the flag is there as described', async () => {
    const spec = (await api.get<any>('/swagger/json')).body
    const schema = spec.components.schemas.importTogglesSchema
    const example = schema.examples?.[0] ?? schema.example
    expectOk(await api.post(IMPORT, example))
    expect((await api.getFlag('default', 'imported-checkout')).body).toMatchObject({
      description: 'The new checkout',
      tags: [{ type: 'simple', value: 'checkout' }],
      environments: [
        {
          name: 'development',
          enabled: true,
          variantCount: 1,
          strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50' } }],
        },
        { name: 'production', enabled: false },
      ],
    })
    expect(errorOf(await api.post(IMPORT, { ...example, project: 'nowhere' })).name).toBe('NotFoundError')
  })
})
