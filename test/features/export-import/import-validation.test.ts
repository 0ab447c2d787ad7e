/**
 * The import's validation step, its all-or-nothing refusals, its permissions and its limits: what
 * validate reports is what import meets, and a refused import leaves the state and the event log
 * exactly as they were.
 */
import { describe, expect, test } from 'bun:test'
import { SYSTEM_ACTOR } from '../../../src/domain/events'
import type { FlagRecord } from '../../../src/features/flags/flags.records'
import { LIMITS } from '../../../src/features/limits'
import {
  type Api,
  BODY_LIMIT,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  paths,
  tokenFor,
  storeSnapshot,
  expectRefused,
} from '../../helpers'
import type { Static } from '@sinclair/typebox'
import type { ImportTogglesValidate } from '../../../src/features/export-import/export-import.model'

const VALIDATE = '/api/admin/features-batch/validate'
const IMPORT = '/api/admin/features-batch/import'

type Validation = Static<typeof ImportTogglesValidate>

let api: Api
freshApiPerTest(fresh => (api = fresh))

const strategy = (featureName: string, extra: Record<string, unknown> = {}) => ({
  name: 'default',
  featureName,
  parameters: {},
  constraints: [],
  ...extra,
})

/** An import of `names` into default/development, each with a default strategy and on. */
function importOf(names: string[], data: Record<string, unknown> = {}, target: Record<string, unknown> = {}) {
  return {
    project: 'default',
    environment: 'development',
    ...target,
    data: {
      features: names.map(name => ({ name, project: 'elsewhere' })),
      featureStrategies: names.map(name => strategy(name)),
      featureEnvironments: names.map(name => ({ name, enabled: true })),
      featureTags: [],
      tagTypes: [],
      segments: [],
      contextFields: [],
      dependencies: [],
      ...data,
    },
  }
}

async function validate(body: unknown, token?: string): Promise<Validation> {
  const response = await api.post<Validation>(VALIDATE, body, token === undefined ? undefined : { token })
  expectOk(response)
  return response.body
}

/** A refused import: 400 (or `status`), and nothing changed, no event. */
async function importRefused(
  body: unknown,
  mentions: string[],
  status = 400,
  name = 'ValidationError',
  token?: string,
) {
  const response = await expectRefused(
    api,
    () => api.post(IMPORT, body, token === undefined ? undefined : { token }),
    status,
    name,
    mentions,
  )
  return errorOf(response)
}

describe('validate', () => {
  test('a clean import: no errors, warnings or missing permissions, and nothing changed', async () => {
    const before = storeSnapshot(api)
    expect(await validate(importOf(['alpha', 'beta']))).toEqual({ errors: [], warnings: [], permissions: [] })
    expect(storeSnapshot(api)).toEqual(before)
  })

  test("reports every error Unleash reports, and ours, in Unleash's words; the import meets the same and changes nothing", async () => {
    await api.newProject('other')
    await api.newFlag('other', 'taken')
    expectOk(
      await api.put('/api/admin/projects/default', {
        name: 'Default',
        featureNaming: { pattern: 'app\\..+', example: 'app.new' },
      }),
    )
    const body = importOf(['app.one', 'app.one', 'taken', 'nope'], {
      featureStrategies: [
        strategy('app.one', { name: 'no-such-strategy' }),
        strategy('ghost'),
        strategy('app.one', { segments: [9] }),
      ],
      segments: [{ id: 1, name: 'missing-segment' }],
      dependencies: [{ feature: 'app.one', dependencies: [{ feature: 'missing-parent' }] }],
    })
    const before = storeSnapshot(api)
    const { errors, warnings } = await validate(body)
    expect(errors).toEqual([
      {
        message: 'We detected the following custom strategy that needs to be created first:',
        affectedItems: ['no-such-strategy'],
      },
      {
        message: expect.stringContaining('defined outside of project default:'),
        affectedItems: ['taken (in project other)'],
      },
      { message: 'We detected the following features are duplicate in your import data:', affectedItems: ['app.one'] },
      {
        message: expect.stringMatching(
          /^Features imported into this project must match the naming pattern \^app\\\.\.\+\$.*app\.new.*The following features do not match the pattern:$/,
        ),
        affectedItems: ['nope', 'taken'],
      },
      {
        message: 'We detected the following segments that need to be created first:',
        affectedItems: ['missing-segment'],
      },
      {
        message: 'We detected the following dependencies that need to be created first:',
        affectedItems: ['missing-parent'],
      },
      { message: expect.stringContaining('not in its features'), affectedItems: ['ghost'] },
      { message: expect.stringContaining('segment ids that the import does not list'), affectedItems: ['9'] },
    ])
    expect(warnings).toEqual([])
    expect(storeSnapshot(api)).toEqual(before)
    const refused = await importRefused(body, [
      'nothing was changed',
      'no-such-strategy',
      'taken (in project other)',
      'missing-parent',
    ])
    expect(refused.details).toHaveLength(8)
  })

  test('warns of flags that will be overwritten, archived flags left out and custom strategy types used; the import does so', async () => {
    await api.newFlag('default', 'existing', { description: 'old' })
    await api.newFlag('default', 'archived-one')
    expectOk(await api.delete(paths.flag('archived-one')), 202)
    expectOk(await api.post('/api/admin/strategies', { name: 'by-country', parameters: [] }), 201)
    const body = importOf(['existing', 'archived-one', 'fresh'], {
      features: [{ name: 'existing', description: 'new' }, { name: 'archived-one' }, { name: 'fresh' }],
      featureStrategies: [strategy('fresh', { name: 'by-country' }), strategy('archived-one')],
    })
    const { errors, warnings, permissions } = await validate(body)
    expect({ errors, permissions }).toEqual({ errors: [], permissions: [] })
    expect(warnings).toEqual([
      { message: expect.stringContaining('strategy types will be used in import'), affectedItems: ['by-country'] },
      {
        message: expect.stringContaining('will not be imported as they are currently archived'),
        affectedItems: ['archived-one'],
      },
      {
        message: 'The following features already exist in this project and will be overwritten:',
        affectedItems: ['existing'],
      },
    ])
    expectOk(await api.post(IMPORT, body))
    expect(api.services.store.state.flags['archived-one']).toMatchObject({
      archived: true,
      environments: { development: { strategies: [] } },
    })
    expect(api.services.store.state.flags.existing.description).toBe('new')
    expect(api.services.store.state.flags.fresh.environments.development.strategies.map(s => s.name)).toEqual([
      'by-country',
    ])
  })

  test('reports what the single routes would refuse, found by making the import in a transaction that is rolled back', async () => {
    const body = importOf(['alpha', 'beta'], {
      featureStrategies: [
        strategy('alpha'),
        strategy('beta', { constraints: [{ contextName: 'age', operator: 'NUM_GT', value: 'old' }] }),
      ],
    })
    const before = storeSnapshot(api)
    expect((await validate(body)).errors).toEqual([
      {
        message: expect.stringMatching(/^Strategy default of flag "beta": NUM_GT needs a numeric value/),
        affectedItems: ['/data/featureStrategies/1/constraints/0/value'],
      },
    ])
    expect(storeSnapshot(api)).toEqual(before)
  })

  test('lists the permissions a viewer or a token of another project lacks; an editor lacks none', async () => {
    await api.newFlag('default', 'existing')
    expectOk(await api.post(paths.strategies('existing'), { name: 'default' }))
    const body = importOf(['existing', 'fresh'], {
      featureEnvironments: [{ name: 'fresh', enabled: true, variants: [{ name: 'a', weight: 1000 }] }],
    })
    const missing = [
      'UPDATE_FEATURE',
      'DELETE_FEATURE_STRATEGY',
      'CREATE_FEATURE_STRATEGY',
      'UPDATE_FEATURE_VARIANTS',
      'CREATE_FEATURE',
    ]
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    expect((await validate(body, viewer)).permissions).toEqual([
      { message: 'We detected you are missing the following permissions:', affectedItems: missing },
    ])
    await api.newProject('other')
    const outsider = await tokenFor(api, 'outsider', { role: 'editor', projects: ['other'] })
    expectError(await api.post(VALIDATE, body, { token: outsider }), 404, 'NotFoundError', ['default'])
    const editor = await tokenFor(api, 'editor', { role: 'editor', projects: ['default'] })
    expect((await validate(body, editor)).permissions).toEqual([])
  })
})

describe('import: all or nothing', () => {
  test('one refused entry, the last one, undoes everything before it and names its path', async () => {
    await api.newFlag('default', 'existing', { description: 'kept' })
    const body = importOf(['existing', 'alpha', 'beta'], {
      features: [{ name: 'existing', description: 'replaced' }, { name: 'alpha' }, { name: 'beta' }],
      featureTags: [{ featureName: 'alpha', tagType: 'simple', tagValue: 'ok' }],
      featureEnvironments: [
        { name: 'alpha', enabled: true, variants: [{ name: 'a', weight: 1000 }] },
        { name: 'beta', enabled: true },
      ],
      featureStrategies: [
        strategy('alpha'),
        strategy('beta', { constraints: [{ contextName: 'version', operator: 'SEMVER_GT', value: 'v1' }] }),
      ],
    })
    const error = await importRefused(body, ['beta', 'SEMVER_GT'])
    expect(error.details).toEqual([
      { message: expect.stringContaining('SEMVER_GT'), path: '/data/featureStrategies/1/constraints/0/value' },
    ])
    expect(api.services.store.state.flags.alpha).toBeUndefined()
    expect(api.services.store.state.flags.existing.description).toBe('kept')
  })

  test('bad entries of each kind are refused at their path: a variant list, a tag value, a dependency, a flag type', async () => {
    await importRefused(
      importOf(['alpha'], {
        featureEnvironments: [
          { name: 'alpha', enabled: true, variants: [{ name: 'a', weight: 500, weightType: 'fix' }] },
        ],
      }),
      ['Variants of flag "alpha"', '1000'],
    )
    const tag = await importRefused(importOf(['alpha'], { featureTags: [{ featureName: 'alpha', tagValue: 'x' }] }), [
      '2 to 50',
    ])
    expect(tag.details).toEqual([{ message: expect.any(String), path: '/data/featureTags/0/tagValue' }])
    const dependency = await importRefused(
      importOf(['alpha'], { dependencies: [{ feature: 'alpha', dependencies: [{ feature: 'alpha' }] }] }),
      ['cannot depend on itself'],
    )
    expect(dependency.details).toEqual([
      { message: expect.any(String), path: '/data/dependencies/0/dependencies/0/feature' },
    ])
    const type = await importRefused(importOf(['alpha'], { features: [{ name: 'alpha', type: 'toggle' }] }), [
      'Flag type must be one of',
    ])
    expect(type.details).toEqual([{ message: expect.any(String), path: '/data/features/0/type' }])
    await importRefused(
      importOf(['alpha'], { features: [{ name: 'alpha' }] }, { environment: 'staging' }),
      ['staging'],
      404,
      'NotFoundError',
    )
    // A new environment is not connected to the projects that exist.
    expectOk(await api.post('/api/admin/environments', { name: 'staging', type: 'test' }), 201)
    await importRefused(importOf(['alpha'], {}, { environment: 'staging' }), ['not enabled in project default'])
  })
})

describe('import: permissions and limits', () => {
  test("needs UPDATE_FEATURE on the body's project: a viewer and a token of another project get 403; one of that project imports", async () => {
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const refusedViewer = await importRefused(importOf(['alpha']), ['UPDATE_FEATURE'], 403, 'NoAccessError', viewer)
    expect(refusedViewer.permissions).toEqual(['UPDATE_FEATURE'])
    await api.newProject('other')
    const outsider = await tokenFor(api, 'outsider', { role: 'editor', projects: ['other'] })
    await importRefused(importOf(['alpha']), ['no access to project "default"'], 403, 'NoAccessError', outsider)
    const member = await tokenFor(api, 'member', { role: 'editor', projects: ['default'] })
    const since = api.lastEventId()
    expectOk(await api.post(IMPORT, importOf(['alpha']), { token: member }))
    expect(api.eventsSince(since).every(event => event.createdBy === 'member')).toBe(true)
  })

  test(`the flags limit (${LIMITS.flags.max.toLocaleString('en-US')}) counts the flags an import creates; validate reports it`, async () => {
    expectOk(await api.createFlag('default', 'template'), 201)
    const store = api.services.store
    const template = store.state.flags.template
    await store.transact(SYSTEM_ACTOR, tx => {
      for (let i = 1; i < LIMITS.flags.max - 1; i++) {
        const flag: FlagRecord = { ...template, name: `filler-${i}` }
        tx.put('flags', flag.name, flag)
      }
    })
    const body = importOf(['template', 'one-more', 'one-too-many'])
    expect((await validate(body)).errors).toEqual([
      {
        message: `We detected you want to create 2 new features to a project that already has ${LIMITS.flags.max - 1} existing features, exceeding the maximum limit of ${LIMITS.flags.max}.`,
        affectedItems: [],
      },
    ])
    await importRefused(body, ['exceeding the maximum limit'])
    expectOk(await api.post(IMPORT, importOf(['template', 'one-more'])))
  })

  test('a body over the body limit answers 413 and changes nothing', async () => {
    const names = Array.from({ length: 2000 }, (_, i) => `flag-with-a-rather-long-name-${i}`)
    const body = importOf(names)
    expect(JSON.stringify(body).length).toBeGreaterThan(BODY_LIMIT)
    await importRefused(body, [], 413, 'ContentTooLarge')
  })
})
