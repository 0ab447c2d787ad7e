/**
 * A project outside a token's scope answers exactly as if it did not exist (issue 18, item 2), on
 * every route that is not a GET (the GETs: project-scope.test.ts): each operation of the OpenAPI
 * document is sent, with the same request, to a service where the hidden project exists and to one
 * where it never did, by tokens limited to another project, and the answers must be the same
 * (status and body, but for the error id). The requests name the hidden project, its flags, its
 * archived flag and its strategy wherever a route takes a project, a flag or a strategy: in the path
 * and in the body. Where the contract itself tells a taken flag name apart (409), the answer may
 * differ but must not name the hidden project.
 */
// Store-independent: a scope refusal is decided on the in-memory state, the same on either store, before
// any write.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Api, type StrategyBody, expectOk, makeApi, openApiSpec, tokenFor, withoutErrorId } from '../helpers'

const MINE = 'mine'
const HIDDEN = 'theirs'
const ENV = 'development'
/** What only the hidden project's data holds: none of it may show in an answer to the scoped tokens. */
const HIDDEN_FACTS = [
  'theirs-[a-z',
  'theirs-example',
  'theirs-description',
  'theirs-tag',
  'theirs-title',
  'theirs-segment',
  `project ${HIDDEN}`,
  `"${HIDDEN}"`,
]

interface World {
  api: Api
  scoped: string
  viewer: string
  strategyId: string
}

async function world(withHidden: boolean): Promise<World> {
  const api = await makeApi()
  expectOk(await api.createProject(MINE), 201)
  expectOk(await api.createFlag(MINE, 'mine-flag'), 201)
  let strategyId = '00000000-0000-4000-8000-000000000000'
  if (withHidden) {
    const featureNaming = { pattern: 'theirs-[a-z-]+', example: 'theirs-example', description: 'theirs-description' }
    expectOk(await api.createProject(HIDDEN, { featureNaming }), 201)
    for (const name of ['theirs-flag', 'theirs-parent', 'theirs-archived'])
      expectOk(await api.createFlag(HIDDEN, name, { tags: [{ type: 'simple', value: 'theirs-tag' }] }), 201)
    const strategy = await api.post<StrategyBody>(
      `/api/admin/projects/${HIDDEN}/features/theirs-flag/environments/${ENV}/strategies`,
      { name: 'default', title: 'theirs-title' },
    )
    expectOk(strategy)
    strategyId = strategy.body.id
    expectOk(await api.delete(`/api/admin/projects/${HIDDEN}/features/theirs-archived`), 202)
    // Segment 1 here; in the other world there is none.
    expectOk(
      await api.post('/api/admin/segments', {
        name: 'theirs-segment',
        project: HIDDEN,
        description: 'theirs-description',
        constraints: [],
      }),
      201,
    )
  }
  const scoped = await tokenFor(api, 'scoped', { role: 'admin', projects: [MINE] })
  const viewer = await tokenFor(api, 'scoped-viewer', { role: 'viewer', projects: [MINE] })
  return { api, scoped, viewer, strategyId }
}

const variant = { name: 'v', weight: 1000, weightType: 'variable', stickiness: 'default' }
const addon = {
  provider: 'webhook',
  enabled: true,
  parameters: { url: 'https://hooks.example.com/flags' },
  events: ['feature-created'],
  projects: [HIDDEN],
}
/** A flag of the hidden project, listed where a body names flags. */
const features = { features: ['theirs-flag'] }
const importData = {
  features: [{ name: 'theirs-new', project: HIDDEN, type: 'release' }],
  featureStrategies: [],
  featureEnvironments: [],
  featureTags: [],
  tagTypes: [],
  contextFields: [],
  segments: [],
  dependencies: [],
}

/**
 * The body each operation is sent with: one that names the hidden project or its flags where it
 * can. Every operation with a body is listed (undefined: it takes none), so that a new one fails
 * the walk until it is given one.
 */
const BODIES: Record<string, unknown> = {
  createProject: { id: HIDDEN, name: HIDDEN },
  updateProject: { name: HIDDEN },
  addEnvironmentToProject: { environment: 'production' },
  createEnvironment: { name: 'other', type: 'test' },
  createFeature: { name: 'theirs-new' },
  updateFeature: { description: 'x', type: 'release' },
  patchFeature: [{ op: 'replace', path: '/description', value: 'x' }],
  reviveFeatures: { features: ['theirs-archived'] },
  // No pattern of a hidden project applies: the name does not match it, and the answer is the same.
  validateFeature: { name: 'Fresh_Name', projectId: HIDDEN },
  bulkToggleFeaturesEnvironmentOn: features,
  bulkToggleFeaturesEnvironmentOff: features,
  addFeatureStrategy: { name: 'default' },
  updateFeatureStrategy: { name: 'default' },
  setStrategySortOrder: [{ id: 'theirs-strategy-id', sortOrder: 0 }],
  overwriteEnvironmentFeatureVariants: [variant],
  patchEnvironmentsFeatureVariants: [{ op: 'add', path: '/-', value: variant }],
  addTag: { type: 'simple', value: 'new-tag' },
  updateTags: { addedTags: [{ type: 'simple', value: 'new-tag' }], removedTags: [] },
  addFeatureDependency: { feature: 'theirs-parent' },
  complete: { status: 'kept' },
  archiveFeatures: features,
  deleteFeatures: { features: ['theirs-archived'] },
  staleFeatures: { ...features, stale: true },
  addTagToFeatures: { ...features, tags: { addedTags: [{ type: 'simple', value: 'new-tag' }], removedTags: [] } },
  overwriteFeatureVariants: [variant],
  patchFeatureVariants: [{ op: 'add', path: '/-', value: variant }],
  overwriteFeatureVariantsOnEnvironments: { variants: [variant], environments: [ENV] },
  createApiToken: { tokenName: 'new', type: 'admin', projects: [HIDDEN] },
  createSegment: { name: 'theirs-segment', project: HIDDEN, constraints: [] },
  updateSegment: { name: 'theirs-segment', project: HIDDEN, constraints: [] },
  createStrategy: { name: 'theirs-strategy', parameters: [] },
  updateStrategy: { name: 'theirs-strategy', parameters: [] },
  deprecateStrategy: undefined,
  reactivateStrategy: undefined,
  createTagType: { name: 'theirs-type' },
  createUser: { username: 'theirs-user', rootRole: 'Viewer', password: 'Theirs-Password-1!' },
  updateUser: { name: 'theirs' },
  changeUserPassword: { password: 'Theirs-Password-1!' },
  changeMyPassword: { oldPassword: 'Theirs-Password-1!', password: 'Theirs-Password-2!' },
  validateTagType: { name: 'theirs-type' },
  updateTagType: { name: 'theirs-type', description: 'x' },
  updateFeatureTypeLifetime: { lifetimeDays: 7 },
  createContextField: { name: 'theirs-field' },
  validateContextField: { name: 'theirs-field' },
  updateContextField: { name: 'theirs-field' },
  updateContextFieldLegalValue: { value: 'x' },
  exportFeatures: { project: HIDDEN, environment: ENV },
  validateImport: { project: HIDDEN, environment: ENV, data: importData },
  // Every project: the hidden one's flags must not be evaluated (a list naming it would be echoed in `input`).
  getPlayground: { environment: ENV, projects: '*', context: { userId: 'someone' } },
  getAdvancedPlayground: { environments: [ENV], projects: '*', context: { userId: 'someone' } },
  importToggles: { project: HIDDEN, environment: ENV, data: importData },
  // An integration filtered on the hidden project: admin-only, refused alike to the scoped tokens.
  createAddon: addon,
  updateAddon: addon,
  retryAddonDelivery: undefined,
  testAddon: undefined,
  createPat: { description: 'theirs', expiresAt: '2099-01-01T00:00:00.000Z' },
  createServiceAccount: { username: 'theirs-bot', name: 'theirs', rootRole: 'Viewer' },
  updateServiceAccount: { name: 'theirs' },
  createServiceAccountToken: { description: 'theirs', expiresAt: '2099-01-01T00:00:00.000Z' },
  setOidcSettings: { enabled: false },
  setSimpleSettings: { disabled: false },
  updateProjectChangeRequestConfig: { changeRequestsEnabled: true, requiredApprovals: 1 },
  addChangeToDraft: { feature: 'theirs-flag', action: 'updateEnabled', payload: { enabled: true } },
  changeRequestStateChange: { state: 'In review' },
  updateChangeRequestTitle: { title: 'theirs' },
  addChangeRequestComment: { text: 'theirs' },
  updateChangeRequestChange: { payload: { enabled: false } },
}

/** Operations sent again, aimed at the token's own project but naming the hidden project's flags in the body. */
const INTO_MINE: Record<string, unknown> = {
  bulkToggleFeaturesEnvironmentOn: features,
  archiveFeatures: features,
  staleFeatures: { ...features, stale: true },
  addTagToFeatures: { ...features, tags: { addedTags: [{ type: 'simple', value: 'new-tag' }], removedTags: [] } },
  reviveFeatures: { features: ['theirs-archived'] },
  deleteFeatures: { features: ['theirs-archived'] },
  addFeatureDependency: { feature: 'theirs-parent' },
  // The hidden project's segment, on the own flag.
  addFeatureStrategy: { name: 'default', segments: [1] },
  exportFeatures: { features: ['theirs-flag'], environment: ENV },
  validateFeature: { name: 'Fresh_Name', projectId: MINE },
}

function fill(path: string, operationId: string, w: World, project: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    switch (name) {
      case 'projectId':
        return project
      case 'featureName':
        if (operationId === 'deleteFeature') return 'theirs-archived'
        // Into the own project: the own flag, with the hidden parent in the body.
        return project === MINE ? 'mine-flag' : 'theirs-flag'
      case 'environment':
        return ENV
      case 'strategyId':
        return w.strategyId
      case 'type':
        return 'simple'
      case 'value':
        return 'theirs-tag'
      case 'parent':
        return 'theirs-parent'
      default:
        return 'theirs-thing'
    }
  })
}

let hidden: World
let absent: World
beforeAll(async () => {
  hidden = await world(true)
  absent = await world(false)
}, 30_000)
afterAll(async () => {
  await hidden?.api.close()
  await absent?.api.close()
})

describe("a project outside the token's scope answers as one that does not exist", () => {
  test('every non-GET operation of the document, aimed at the hidden project or its flags', async () => {
    const document = await openApiSpec()
    const unlisted: string[] = []
    let compared = 0
    for (const [path, methods] of Object.entries(
      document.paths as Record<string, Record<string, { operationId: string }>>,
    )) {
      if (!path.startsWith('/api/admin/')) continue
      for (const [method, operation] of Object.entries(methods)) {
        if (method === 'get') continue
        const id = operation.operationId
        const hasBody = method !== 'delete' && !/\/(on|off|uncomplete)$/.test(path)
        if (hasBody && !(id in BODIES)) unlisted.push(id)
        const requests: [string, unknown][] = [[fill(path, id, hidden, HIDDEN), BODIES[id]]]
        if (id in INTO_MINE) requests.push([fill(path, id, hidden, MINE), INTO_MINE[id]])
        for (const [target, body] of requests) {
          for (const who of ['scoped', 'viewer'] as const) {
            const inHidden = await hidden.api.request(method.toUpperCase(), target, { token: hidden[who], body })
            const inAbsent = await absent.api.request(method.toUpperCase(), target, { token: absent[who], body })
            const label = `${who} ${method.toUpperCase()} ${target} ${JSON.stringify(body) ?? ''}`
            expect({ label, ...withoutErrorId(inHidden) }).toEqual({ label, ...withoutErrorId(inAbsent) })
            expect({ label, leaks: HIDDEN_FACTS.filter(fact => inHidden.text.includes(fact)) }).toEqual({
              label,
              leaks: [],
            })
            compared++
          }
        }
      }
    }
    expect(unlisted).toEqual([])
    expect(compared).toBeGreaterThan(100)
    // Nothing the scoped tokens sent changed the hidden project.
    expect(
      hidden.api.events().filter(event => event.project === HIDDEN && event.createdBy.startsWith('scoped')),
    ).toEqual([])
  }, 60_000)

  test('where the contract tells a taken flag name apart (409), the answer does not name the hidden project', async () => {
    const { api, scoped } = hidden
    const validate = await api.validateName({ name: 'theirs-flag', projectId: MINE }, { token: scoped })
    expect(validate.status).toBe(409)
    const create = await api.createFlag(MINE, 'theirs-flag', {}, { token: scoped })
    expect(create.status).toBe(409)
    const importBody = {
      project: MINE,
      environment: ENV,
      data: { ...importData, features: [{ name: 'theirs-flag', project: MINE, type: 'release' }] },
    }
    const review = await api.post<{ errors: { message: string; affectedItems: string[] }[] }>(
      '/api/admin/features-batch/validate',
      importBody,
      { token: scoped },
    )
    expectOk(review)
    // Told that the name is taken elsewhere, but not where.
    expect(review.body.errors.flatMap(error => error.affectedItems)).toContain('theirs-flag')
    const refused = await api.post('/api/admin/features-batch/import', importBody, { token: scoped })
    expect(refused.status).toBe(400)
    for (const response of [validate, create, review, refused])
      expect(HIDDEN_FACTS.filter(fact => response.text.includes(fact))).toEqual([])
    // A token that may see the other project is told where.
    const full = await api.post<{ errors: { affectedItems: string[] }[] }>(
      '/api/admin/features-batch/validate',
      importBody,
    )
    expect(full.body.errors.flatMap(error => error.affectedItems)).toContain(`theirs-flag (in project ${HIDDEN})`)
  }, 30_000)
})
