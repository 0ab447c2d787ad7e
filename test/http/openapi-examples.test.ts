/**
 * What Swagger UI's "Try it out" sends works: for every operation of /swagger/json, its documented
 * example request body, sent as is to a fresh service, gets the documented success status (the
 * lowest 2xx), once whatever the path names has been created. Each operation has a world of its own
 * (a store, services and seeding), all served by one app built for the file (helpers/shared-app.ts:
 * building an app per operation was most of the file's time). The test reads only the document,
 * so routes added later are covered without editing it. The convention a route must follow:
 *
 * - A body schema carries `examples: [body]` (the document shows it as the body's `example`).
 * - A path parameter is created by the POST on the path before it (`/api/admin/segments/{id}`:
 *   `POST /api/admin/segments` with its example); its value is the created resource's property of
 *   the parameter's name, else its `id`, else `name` (from the answer, then from the example sent),
 *   else `feature`. With no such POST, the resource the parameter last named on the way is read
 *   (`.../tags/{type}/{value}`), then FALLBACKS below decide.
 * - Flags a body names under `features` (a list) or `feature` are created first, in the path's project.
 * - Anything more an operation needs (an archived flag, a completed one, a query parameter only the
 *   service can give) is a PREPARE entry here.
 * - A route for SDK tokens declares `{ tokenType }`; it gets a token of that type for every project.
 *
 * The same bodies with an unknown property added to every object the schema describes are then
 * accepted too, and the property is stored nowhere (Unleash ignores properties it does not know).
 */
// Store-independent: it is about the document and the routes; their writes take the one commit path that
// the feature tests run again on PostgreSQL.
import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import type { TSchema } from '@sinclair/typebox'
import { ADMIN_SECRET, openApiSpec, sharedApp, type Api } from '../helpers'

type Json = Record<string, any>

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const

interface Operation {
  method: string
  path: string
  label: string
  op: Json
}

const spec: Json = await openApiSpec()

const operations: Operation[] = Object.entries<Json>(spec.paths).flatMap(([path, item]) =>
  METHODS.filter(method => item[method]).map(method => ({
    method,
    path,
    op: item[method],
    label: `${item[method].operationId} (${method.toUpperCase()} ${path})`,
  })),
)
const byId = (operationId: string) => operations.find(operation => operation.op.operationId === operationId)!

function resolve(schema: Json | undefined): Json | undefined {
  let current = schema
  while (current && typeof current.$ref === 'string')
    current = spec.components.schemas[current.$ref.replace('#/components/schemas/', '')]
  return current
}

const mediaOf = (operation: Operation): Json | undefined => operation.op.requestBody?.content?.['application/json']
const exampleOf = (operation: Operation): unknown => mediaOf(operation)?.example
/** The lowest 2xx, or for a browser's step that succeeds with a redirect, its 3xx. */
const successOf = (operation: Operation) => {
  const statuses = Object.keys(operation.op.responses).map(Number)
  const ok = statuses.filter(status => status >= 200 && status < 300)
  return Math.min(...(ok.length > 0 ? ok : statuses.filter(status => status >= 300 && status < 400)))
}

/**
 * Operations that need an identity provider to succeed: sent end to end against a real one by
 * test/features/sso/sso.test.ts (and the Chromium test), not from here.
 */
const NEEDS_PROVIDER = new Set(['oidcLogin', 'oidcCallback'])

/** Path parameters no POST creates: those seeded at first start, or fixed by the service. */
const FALLBACKS: Record<string, string> = {
  '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}': 'development',
  '/api/admin/feature-types/{id}': 'release',
  // Registered by an SDK (PREPARE below), under the name of the register example.
  '/api/admin/metrics/applications/{appName}': 'checkout-service',
  // Made by PREPARE below (the bulk evaluation before it in the path makes nothing).
  '/ofrep/v1/evaluate/flags/{key}': 'checkout',
  // The first event of the seeding; PREPARE below gives the integration a dead letter of it.
  '/api/admin/addons/{id}/events/{eventId}': '1',
  // A change request and its first change, made by changeRequestMade below.
  '/api/admin/projects/{projectId}/change-requests/{changeRequestId}': '1',
  '/api/admin/projects/{projectId}/change-requests/{changeRequestId}/changes/{changeId}': '1',
}
/** Parameters created through another path when the path they appear in has no POST before them. */
const CREATED_AS: Record<string, string> = {
  featureName: '/api/admin/projects/{projectId}/features/{featureName}',
  environment: '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}',
}

/** Parameters whose value is a property of the body that created them, not of the answer (a legal value is answered inside its field). */
const FROM_BODY: Record<string, string> = { legalValue: 'value' }

/** Personal access tokens are a person's: a user is made and signed in, once per world. */
const asPerson = async (world: World) => {
  if (world.session) return
  const login = { username: 'examples-pat-person', password: 'Correct-horse-7' }
  await world.call('POST', '/api/admin/user-admin', { ...login, rootRole: 'Viewer' })
  const signedIn = await world.api.post('/auth/simple/login', login, { token: null })
  world.session = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]
}

/** What an operation needs beyond its path and the flags its body names. */
const archiveNamed = async (world: World, body: any) => {
  for (const name of body.features)
    await world.call('DELETE', `/api/admin/projects/${world.values.get('projectId')}/features/${name}`)
}
/** Change request 1 in the path's project, a draft of the admin token's with one change (updateEnabled of a flag). */
const changeRequestMade = async (world: World) => {
  const project = world.values.get('projectId') ?? 'default'
  const environment = world.api.services.store.reader.get('projects', project)?.environments[0]
  await world.call('POST', `/api/admin/projects/${project}/features`, { name: 'cr-flag' })
  await world.call('POST', `/api/admin/projects/${project}/environments/${environment}/change-requests`, {
    feature: 'cr-flag',
    action: 'updateEnabled',
    payload: { enabled: true },
  })
}
const PREPARE: Record<string, (world: World, body: any) => Promise<void>> = {
  getChangeRequest: changeRequestMade,
  deleteChangeRequest: changeRequestMade,
  changeRequestStateChange: changeRequestMade,
  updateChangeRequestTitle: changeRequestMade,
  addChangeRequestComment: changeRequestMade,
  updateChangeRequestChange: changeRequestMade,
  deleteChange: changeRequestMade,
  reviveFeatures: archiveNamed,
  // Unleash's POST /api/admin/projects/{projectId}/delete: archived flags only.
  deleteFeatures: archiveNamed,
  deleteFeature: async world => {
    await world.call(
      'DELETE',
      `/api/admin/projects/${world.values.get('projectId')}/features/${world.values.get('featureName')}`,
    )
  },
  uncomplete: async world => void (await world.send(byId('complete'))),
  addEnvironmentToProject: async world => void (await world.send(byId('createEnvironment'))),
  reactivateStrategy: async world => void (await world.send(byId('deprecateStrategy'))),
  getApplication: async world => void (await world.send(byId('registerClientApplication'))),
  // The example names a strategy of the path's flag: one is added, and the body names it.
  setStrategySortOrder: async (world, body) => {
    const flagEnvironment = `/api/admin/projects/${world.values.get('projectId')}/features/${world.values.get('featureName')}/environments/${world.values.get('environment')}`
    const added = await world.call('POST', `${flagEnvironment}/strategies`, { name: 'default' })
    for (const order of body) order.id = added.body.id
  },
  // A signed-in user's own password: the user the example's oldPassword is theirs, sending with their session.
  changeMyPassword: async (world, body) => {
    await world.call('POST', '/api/admin/user-admin', {
      username: 'examples-person',
      rootRole: 'Viewer',
      password: body.oldPassword,
    })
    const signedIn = await world.api.post(
      '/auth/simple/login',
      { username: 'examples-person', password: body.oldPassword },
      { token: null },
    )
    world.session = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]
  },
  // The user the sign-in example names, with its password.
  login: async (world, body) =>
    void (await world.call('POST', '/api/admin/user-admin', {
      username: body.username,
      rootRole: 'Viewer',
      password: body.password,
    })),
  // The channel is the bulk evaluation's to give (eventStreams): asked with a frontend token, as a web provider does.
  getOfrepEvents: async world => {
    const bulk = await world.call(
      'POST',
      '/ofrep/v1/evaluate/flags',
      exampleOf(byId('ofrepEvaluateFlags')),
      await world.tokenFor('frontend'),
    )
    world.query = new URL(bulk.body.eventStreams[0].endpoint.requestUri, 'http://localhost').search
  },
  retryAddonDelivery: async world => {
    const addonId = Number(world.values.get('id'))
    await world.api.services.store.transact({ name: 'examples', userId: null }, tx =>
      tx.put('addonDeliveries', `${addonId}:${String(1).padStart(12, '0')}`, {
        id: crypto.randomUUID(),
        addonId,
        eventId: 1,
        attempts: 1,
        nextAt: 0,
        firstAttemptAt: 0,
        dead: true,
        lastError: 'HTTP 400',
      }),
    )
  },
  getPats: asPerson,
  createPat: asPerson,
  deletePat: asPerson,
  ofrepEvaluateFlag: async world => {
    if (!world.api.services.store.reader.get('flags', 'checkout'))
      await world.call('POST', '/api/admin/projects/default/features', { name: 'checkout' })
  },
}

class World {
  readonly values = new Map<string, string>()
  /** A session cookie a PREPARE entry opened: the operation is sent with it instead of a token. */
  session: string | undefined
  /** A query string a PREPARE entry found (`?name=value`), sent after the path. */
  query = ''
  private tokens = new Map<string, string>()

  constructor(readonly api: Api) {}

  async call(method: string, path: string, body?: unknown, token = ADMIN_SECRET) {
    const response = await this.api.request<any>(method, path, { body, token })
    if (response.status >= 300)
      throw new Error(`setup call ${method} ${path} answered ${response.status}: ${response.text}`)
    return response
  }

  /** `template` with each parameter replaced by the value of a resource made for it. */
  async fill(template: string): Promise<string> {
    let filled = template
    let lastResource: Json | undefined
    for (const match of template.matchAll(/\{(\w+)\}/g)) {
      const name = match[1]
      const prefix = template.slice(0, match.index)
      const upTo = template.slice(0, match.index! + match[0].length)
      let value = this.values.get(name)
      if (value === undefined) {
        const creator = operations.find(
          operation => operation.method === 'post' && operation.path === prefix.replace(/\/$/, ''),
        )
        if (creator && exampleOf(creator) !== undefined) {
          const { response, body } = await this.send(creator)
          value = [
            FROM_BODY[name] ? body?.[FROM_BODY[name]] : undefined,
            response.body?.[name],
            response.body?.id,
            response.body?.name,
            body?.[name],
            body?.id,
            body?.name,
            body?.feature,
          ]
            .find(v => v !== undefined && v !== null)
            ?.toString()
          lastResource = { ...body, ...response.body }
        } else if (lastResource?.[name] !== undefined) {
          value = String(lastResource[name])
        } else if (FALLBACKS[upTo] !== undefined) {
          value = FALLBACKS[upTo]
        } else if (CREATED_AS[name] && CREATED_AS[name] !== upTo) {
          const other = CREATED_AS[name]
          await this.fill(other)
          value = this.values.get(name) ?? FALLBACKS[other]
        }
        value ??= FALLBACKS[upTo]
        if (value === undefined) {
          throw new Error(
            `no way to make {${name}} of ${template}: no POST ${prefix} with an example body, nothing named ${name} before it, and no entry in FALLBACKS or CREATED_AS`,
          )
        }
        this.values.set(name, value)
      }
      filled = filled.replace(match[0], encodeURIComponent(value))
    }
    return filled
  }

  async tokenFor(type: string): Promise<string> {
    let secret = this.tokens.get(type)
    if (!secret) {
      const created = await this.call('POST', '/api/admin/api-tokens', {
        tokenName: `examples-${type}`,
        type,
        projects: ['*'],
        environment: 'development',
      })
      secret = created.body.secret as string
      this.tokens.set(type, secret)
    }
    return secret
  }

  /** Sends `operation` with `body` (its example by default), after making what it needs. */
  async send(operation: Operation, body: any = structuredClone(exampleOf(operation))) {
    const path = await this.fill(operation.path)
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      const named = [
        ...(Array.isArray(body.features) ? body.features : []),
        ...(typeof body.feature === 'string' ? [body.feature] : []),
      ]
      for (const name of named) {
        if (this.api.services.store.reader.get('flags', name)) continue
        const project = this.values.get('projectId') ?? 'default'
        await this.call('POST', `/api/admin/projects/${project}/features`, {
          ...(exampleOf(byId('createFeature')) as Json),
          name,
        })
      }
    }
    await PREPARE[operation.op.operationId]?.(this, body)
    // 'frontend or client' (OFREP): the first of them.
    const tokenType = operation.op['x-token-type']?.split(' or ')[0]
    const token = tokenType ? await this.tokenFor(tokenType) : ADMIN_SECRET
    const options = this.session
      ? { body, token: null, headers: { cookie: this.session, origin: 'http://localhost' } }
      : { body, token }
    const response = await this.api.request<any>(operation.method.toUpperCase(), path + this.query, options)
    return { response, body, path }
  }
}

/** The app every world is served by (see the header). */
const shared = await sharedApp()

async function fresh<T>(use: (world: World) => Promise<T>): Promise<T> {
  const api = await shared.open()
  try {
    return await use(new World(api))
  } finally {
    await api.close()
  }
}

/** The example with `key: marker` added to every object whose schema lists its properties and refuses none. */
function withUnknownProperty(value: unknown, schema: Json | undefined, key: string, marker: unknown): unknown {
  const target = resolve(schema)
  if (!target) return value
  if (Array.isArray(value)) return value.map(item => withUnknownProperty(item, target.items, key, marker))
  if (typeof value !== 'object' || value === null) return value
  const copy: Json = {}
  for (const [name, inner] of Object.entries(value))
    copy[name] = withUnknownProperty(inner, target.properties?.[name], key, marker)
  if (target.properties && target.additionalProperties === undefined && target.patternProperties === undefined)
    copy[key] = marker
  return copy
}

const withBodies = operations.filter(operation => operation.op.requestBody)

describe('the documented examples', () => {
  test('every request body has an example', () => {
    expect(
      withBodies
        .filter(operation => exampleOf(operation) === undefined)
        .map(operation => `${operation.label} has no example: give its body schema examples: [...]`),
    ).toEqual([])
    expect(withBodies.length).toBeGreaterThan(20)
  })

  test('the operations left to the single sign-on tests exist', () => {
    for (const id of NEEDS_PROVIDER) expect(byId(id)).toBeDefined()
  })

  test.each(
    operations
      .filter(operation => !NEEDS_PROVIDER.has(operation.op.operationId))
      .map(operation => [operation.label, operation] as const),
  )('%s: the example, sent as is, gets the documented success status', async (_, operation) => {
    await fresh(async world => {
      const { response, path, body } = await world.send(operation)
      expect({
        operation: operation.label,
        path,
        body,
        status: response.status,
        answer: response.status === successOf(operation) ? undefined : response.body,
      }).toEqual({
        operation: operation.label,
        path,
        body,
        status: successOf(operation),
        answer: undefined,
      })
    })
  })

  test('the examples of every named schema match the schema', async () => {
    await fresh(async world => {
      const models = (world.api.app as any).getGlobalDefinitions().type as Record<
        string,
        TSchema & { examples?: unknown[] }
      >
      const problems: string[] = []
      let checked = 0
      for (const [name, model] of Object.entries(models)) {
        for (const example of model.examples ?? []) {
          checked++
          for (const error of Value.Errors(model, example)) problems.push(`${name}: ${error.path} ${error.message}`)
        }
      }
      expect(problems).toEqual([])
      expect(checked).toBeGreaterThan(15)
    })
  })
})

describe('unknown properties in request bodies', () => {
  const MARKER = 'unleashOnlyProperty'
  test.each(withBodies.map(operation => [operation.label, operation] as const))(
    '%s: accepted at every depth and stored nowhere',
    async (_, operation) => {
      await fresh(async world => {
        const body = withUnknownProperty(structuredClone(exampleOf(operation)), mediaOf(operation)?.schema, MARKER, {
          sentBy: 'an Unleash script',
        })
        const { response } = await world.send(operation, body)
        expect({
          operation: operation.label,
          status: response.status,
          answer: response.status === successOf(operation) ? undefined : response.body,
        }).toEqual({
          operation: operation.label,
          status: successOf(operation),
          answer: undefined,
        })
        await world.api.services.store.flush()
        expect(JSON.stringify(world.api.services.store.state)).not.toContain(MARKER)
        expect(JSON.stringify(world.api.events())).not.toContain(MARKER)
        expect(response.text).not.toContain(MARKER)
      })
    },
  )

  test('the marker reaches nested objects: a strategy example gets it in its constraints and variants', () => {
    const strategy = byId('addFeatureStrategy')
    const body = withUnknownProperty(exampleOf(strategy), mediaOf(strategy)?.schema, MARKER, 1) as Json
    expect(body[MARKER]).toBe(1)
    expect(body.constraints[0][MARKER]).toBe(1)
    expect(body.variants[0][MARKER]).toBe(1)
    // Records take any name, so the marker is not added to them.
    expect(body.parameters[MARKER]).toBeUndefined()
  })
})
