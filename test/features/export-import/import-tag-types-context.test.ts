/**
 * Export and import of tag types and context fields, as Unleash does them: the export lists those
 * its tags and strategies use; the import creates the missing ones, through the routes' writes and
 * with their events, in the import's one commit; a context field we have must hold every imported
 * legal value; constraints are checked against the field as it is once imported; creating them
 * needs CREATE_TAG_TYPE / CREATE_CONTEXT_FIELD on a token for all projects.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import type { Static } from '@sinclair/typebox'
import type { ExportResult, ImportTogglesValidate } from '../../../src/features/export-import/export-import.model'
import {
  type Api,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  makeApi,
  paths,
  tokenFor,
  storeSnapshot,
} from '../../helpers'

type ExportBody = Static<typeof ExportResult>

const EXPORT = '/api/admin/features-batch/export'
const VALIDATE = '/api/admin/features-batch/validate'
const IMPORT = '/api/admin/features-batch/import'
const CLASH = 'We detected the following context fields that do not have matching legal values with the imported ones:'
const MISSING = 'We detected you are missing the following permissions:'

type Validation = Static<typeof ImportTogglesValidate>

let api: Api
freshApiPerTest(fresh => (api = fresh))
const others: Api[] = []
afterEach(async () => {
  for (const other of others.splice(0)) await other.close()
})

async function fresh(): Promise<Api> {
  const target = await makeApi()
  others.push(target)
  return target
}

async function exportOf(target: Api, query: Record<string, unknown>): Promise<ExportBody> {
  const response = await target.post<ExportBody>(EXPORT, query)
  expectOk(response)
  return response.body
}

async function validate(target: Api, body: unknown, token?: string): Promise<Validation> {
  const response = await target.post<Validation>(VALIDATE, body, token === undefined ? undefined : { token })
  expectOk(response)
  return response.body
}

const REGION = {
  name: 'region',
  description: 'Where the user is',
  stickiness: true,
  sortOrder: 7,
  legalValues: [{ value: 'eu', description: 'Europe' }, { value: 'us' }],
}
const TEAM = { name: 'team', description: 'Owning team', icon: 'people', color: '#FF5733' }

/** A flag `checkout` in default with a tag of the custom type `team` and a constraint on the custom field `region`, with legal values. */
async function seedCustom(target: Api) {
  expectOk(await target.post('/api/admin/tag-types', TEAM), 201)
  expectOk(await target.post('/api/admin/context', REGION), 201)
  await target.newFlag('default', 'checkout')
  expectOk(await target.post(paths.tags('checkout'), { type: 'team', value: 'payments' }), 201)
  expectOk(
    await target.post(paths.strategies('checkout', 'development'), {
      name: 'default',
      constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
    }),
  )
  expectOk(await target.toggle('default', 'checkout', 'development', true))
}

/** An import of flag `checkout` into default/development with a constraint on `region` IN `values`, bringing `fields`. */
function importWithRegion(fields: unknown[], values = ['eu'], extra: Record<string, unknown> = {}) {
  return {
    project: 'default',
    environment: 'development',
    data: {
      features: [{ name: 'checkout' }],
      featureStrategies: [
        { name: 'default', featureName: 'checkout', constraints: [{ contextName: 'region', operator: 'IN', values }] },
      ],
      featureEnvironments: [{ name: 'checkout', enabled: true }],
      featureTags: [],
      tagTypes: [],
      contextFields: fields,
      ...extra,
    },
  }
}

describe('export', () => {
  test('lists the tag types the tags use and the context fields the constraints, stickiness and variant overrides name, as defined here', async () => {
    await seedCustom(api)
    expectOk(await api.post('/api/admin/tag-types', { name: 'unused-type' }), 201)
    expectOk(await api.post('/api/admin/context', { name: 'unused-field' }), 201)
    expectOk(await api.post('/api/admin/context', { name: 'tenant', stickiness: true }), 201)
    expectOk(await api.post('/api/admin/context', { name: 'device' }), 201)
    await api.newFlag('default', 'banner')
    expectOk(await api.post(paths.tags('banner'), { value: 'ui' }), 201)
    expectOk(
      await api.post(paths.strategies('banner', 'development'), {
        name: 'flexibleRollout',
        parameters: { rollout: '50', stickiness: 'tenant', groupId: 'banner' },
      }),
    )
    expectOk(
      await api.put(paths.variants('banner', 'development'), [
        { name: 'a', weight: 1000, overrides: [{ contextName: 'device', values: ['ios'] }] },
      ]),
    )
    // A constraint on a field that is not defined is exported, the field is not.
    expectOk(
      await api.post(paths.strategies('banner', 'development'), {
        name: 'default',
        constraints: [{ contextName: 'undefined-field', operator: 'IN', values: ['x'] }],
      }),
    )

    const result = await exportOf(api, { environment: 'development', project: 'default' })
    expect(result.tagTypes).toEqual([
      { name: 'simple', description: 'Used to simplify filtering of features', icon: '#', color: null },
      { name: 'team', description: 'Owning team', icon: 'people', color: '#FF5733' },
    ])
    expect(result.contextFields).toEqual([
      { name: 'device', description: '', stickiness: false, sortOrder: 0, legalValues: [] },
      REGION,
      { name: 'tenant', description: '', stickiness: true, sortOrder: 0, legalValues: [] },
    ])
    // Only those of the exported flags.
    const one = await exportOf(api, { environment: 'development', features: ['banner'] })
    expect(one.tagTypes.map(t => t.name)).toEqual(['simple'])
    expect(one.contextFields.map(f => f.name)).toEqual(['device', 'tenant'])
  })
})

describe('import', () => {
  test("round trip into a fresh service creates the tag type and the context field, with their events, in the import's one commit, then the tag and the strategy", async () => {
    await seedCustom(api)
    const exported = await exportOf(api, { environment: 'development', features: ['checkout'] })
    const target = await fresh()
    const body = { project: 'default', environment: 'production', data: exported }
    const before = storeSnapshot(target)
    expect(await validate(target, body)).toEqual({ errors: [], warnings: [], permissions: [] })
    expect(storeSnapshot(target)).toEqual(before)

    const since = target.lastEventId()
    expectOk(await target.post(IMPORT, body))
    const { name: _n, ...team } = TEAM
    expect(target.services.store.state.tagTypes.team).toMatchObject(team)
    expect((await target.get('/api/admin/context/region')).body).toMatchObject(REGION)
    expect(target.services.store.state.flags.checkout.tags).toEqual([{ type: 'team', value: 'payments' }])
    expect(target.services.store.state.flags.checkout.environments.production.strategies[0].constraints).toMatchObject([
      { contextName: 'region', values: ['eu'] },
    ])

    const events = target.eventsSince(since)
    expect(events.map(e => e.type)).toEqual([
      'feature-created',
      'tag-type-created',
      'feature-tagged',
      'context-field-created',
      'feature-strategy-add',
      'feature-environment-enabled',
      'features-imported',
    ])
    expect(new Set(events.map(e => e.createdAt)).size).toBe(1)
    expect(events[1].data).toEqual(TEAM)
    expect(events[3].data).toMatchObject(REGION)
    expect(events.every(e => e.createdBy === 'admin-bootstrap')).toBe(true)
    // And back: the same tag types and context fields.
    const again = await exportOf(target, { environment: 'production', features: ['checkout'] })
    expect({ tagTypes: again.tagTypes, contextFields: again.contextFields }).toEqual({
      tagTypes: exported.tagTypes,
      contextFields: exported.contextFields,
    })
  })

  test('tag types and fields that exist are left as they are; listed tag types no imported tag uses are not created (as Unleash)', async () => {
    expectOk(await api.post('/api/admin/tag-types', { name: 'team', description: 'Ours' }), 201)
    expectOk(
      await api.post('/api/admin/context', {
        name: 'region',
        description: 'Ours',
        legalValues: [{ value: 'eu' }, { value: 'us' }, { value: 'asia' }],
      }),
      201,
    )
    const body = importWithRegion([{ ...REGION, description: 'Theirs' }], ['us'], {
      featureTags: [{ featureName: 'checkout', tagType: 'team', tagValue: 'payments' }],
      tagTypes: [{ ...TEAM, description: 'Theirs' }, { name: 'unused-type' }],
    })
    expect(await validate(api, body)).toEqual({ errors: [], warnings: [], permissions: [] })
    const since = api.lastEventId()
    expectOk(await api.post(IMPORT, body))
    expect(api.eventsSince(since).map(e => e.type)).toEqual([
      'feature-created',
      'feature-tagged',
      'feature-strategy-add',
      'feature-environment-enabled',
      'features-imported',
    ])
    expect(api.services.store.state.tagTypes.team.description).toBe('Ours')
    expect(api.services.store.state.tagTypes['unused-type']).toBeUndefined()
    expect(api.services.store.state.contextFields.region).toMatchObject({
      description: 'Ours',
      legalValues: [{ value: 'eu' }, { value: 'us' }, { value: 'asia' }],
    })
  })

  test('a context field of ours lacking an imported legal value (or having none) is reported by validate and refuses the import, nothing written', async () => {
    expectOk(await api.post('/api/admin/context', { name: 'region', legalValues: [{ value: 'eu' }] }), 201)
    expectOk(await api.post('/api/admin/context', { name: 'tier' }), 201)
    const body = importWithRegion([
      REGION,
      { name: 'tier', legalValues: [{ value: 'gold' }] },
      { name: 'userId', legalValues: [] },
      { name: 'brand-new', legalValues: [{ value: 'x' }] },
    ])
    const before = storeSnapshot(api)
    expect((await validate(api, body)).errors).toEqual([{ message: CLASH, affectedItems: ['region', 'tier'] }])
    const response = await api.post(IMPORT, body)
    expectError(response, 400, 'ValidationError', ['nothing was changed', 'region, tier'])
    expect(storeSnapshot(api)).toEqual(before)
    expect(api.services.store.state.contextFields['brand-new']).toBeUndefined()
  })

  test('constraints are checked against the legal values of the field the import creates, as Unleash adds strategies after creating fields', async () => {
    const fields = [{ name: 'region', legalValues: [{ value: 'eu' }] }]
    const refused = importWithRegion(fields, ['us'])
    const before = storeSnapshot(api)
    expect((await validate(api, refused)).errors).toEqual([
      {
        message: expect.stringContaining('"us" is not a legal value of context field "region"'),
        affectedItems: ['/data/featureStrategies/0/constraints/0/values/0'],
      },
    ])
    expect(errorOf(await api.post(IMPORT, refused)).details).toMatchObject([
      { path: '/data/featureStrategies/0/constraints/0/values/0' },
    ])
    expect(storeSnapshot(api)).toEqual(before)
    expectOk(await api.post(IMPORT, importWithRegion(fields, ['eu'])))
    expect(api.services.store.state.contextFields.region.legalValues).toEqual([{ value: 'eu' }])
  })

  test('a tag type or context field the routes would refuse is refused at its path; a tag of a type neither here nor created is refused', async () => {
    const badType = importWithRegion([], ['eu'], {
      featureTags: [{ featureName: 'checkout', tagType: 'x', tagValue: 'ok' }],
      tagTypes: [{ name: 'x' }],
    })
    const before = storeSnapshot(api)
    expect((await validate(api, badType)).errors).toEqual([
      { message: expect.stringContaining('Tag type "x"'), affectedItems: ['/data/tagTypes/0/name'] },
    ])
    expect(errorOf(await api.post(IMPORT, badType)).details).toMatchObject([{ path: '/data/tagTypes/0/name' }])
    const badField = importWithRegion([{ name: 'region', legalValues: [{ value: 'eu' }, { value: 'eu' }] }])
    expect(errorOf(await api.post(IMPORT, badField)).details).toMatchObject([
      { path: '/data/contextFields/0/legalValues/1/value', message: expect.stringContaining('unique') },
    ])
    const unknownType = importWithRegion([], ['eu'], {
      featureTags: [{ featureName: 'checkout', tagType: 'nowhere', tagValue: 'ok' }],
    })
    expectError(await api.post(IMPORT, unknownType), 400, 'ValidationError', ['There is no tag type "nowhere"'])
    expectError(await api.post(IMPORT, importWithRegion([{ name: 'region', sortOrder: 1.5 }])), 400, 'ValidationError')
    expect(storeSnapshot(api)).toEqual(before)
  })
})

describe('permissions', () => {
  const withNew = () =>
    importWithRegion([REGION], ['eu'], {
      featureTags: [{ featureName: 'checkout', tagType: 'team', tagValue: 'payments' }],
      tagTypes: [TEAM],
    })

  test("creating tag types and context fields needs CREATE_TAG_TYPE and CREATE_CONTEXT_FIELD, listed in Unleash's order; not needed when they exist", async () => {
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    expect((await validate(api, withNew(), viewer)).permissions).toEqual([
      {
        message: MISSING,
        affectedItems: [
          'UPDATE_FEATURE',
          'CREATE_TAG_TYPE',
          'CREATE_CONTEXT_FIELD',
          'CREATE_FEATURE_STRATEGY',
          'CREATE_FEATURE',
        ],
      },
    ])
    expectOk(await api.post('/api/admin/tag-types', TEAM), 201)
    expectOk(await api.post('/api/admin/context', REGION), 201)
    expect((await validate(api, withNew(), viewer)).permissions).toEqual([
      { message: MISSING, affectedItems: ['UPDATE_FEATURE', 'CREATE_FEATURE_STRATEGY', 'CREATE_FEATURE'] },
    ])
  })

  test('a token limited to the project lacks them, as on their routes: validate lists them, the import is a 403 with nothing written; a token for all projects imports', async () => {
    const limited = await tokenFor(api, 'limited-editor', { role: 'editor', projects: ['default'] })
    expect((await validate(api, withNew(), limited)).permissions).toEqual([
      { message: MISSING, affectedItems: ['CREATE_TAG_TYPE', 'CREATE_CONTEXT_FIELD'] },
    ])
    const before = storeSnapshot(api)
    expectError(await api.post(IMPORT, withNew(), { token: limited }), 403, 'NoAccessError', [
      'CREATE_TAG_TYPE, CREATE_CONTEXT_FIELD',
    ])
    expect(storeSnapshot(api)).toEqual(before)
    // Without anything to create, the same token imports.
    expectOk(await api.post(IMPORT, importWithRegion([]), { token: limited }))
    const editor = await tokenFor(api, 'editor', { role: 'editor' })
    expect((await validate(api, withNew(), editor)).permissions).toEqual([])
    expectOk(await api.post(IMPORT, withNew(), { token: editor }))
    expect(api.services.store.state.tagTypes.team).toBeDefined()
    expect(api.services.store.state.contextFields.region).toBeDefined()
  })
})
