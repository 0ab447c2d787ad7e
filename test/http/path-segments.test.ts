/**
 * Issue 18 item 8: no value that can be stored is unreachable or aliased through its route.
 *
 * A `.` or `..` path segment, even sent as %2E%2E, is resolved before the router sees the path (by
 * the client and by Bun), so such a value can never be addressed: every collection whose values
 * land in a path parameter refuses them, and no request naming one changes anything. Every other
 * value that is accepted (%, /, spaces, unicode, "%2E"…) is read and deleted through its routes,
 * percent-encoded, as exactly that record. The tests walk the OpenAPI document, so a new route with
 * a path parameter must say here which values land in it.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { ADMIN_SECRET, errorOf, expectOk, makeApi, openApiSpec, tempDir, type Api, type ApiResponse } from '../helpers'

/** Values a caller may try to store: the dot segments in every spelling, and characters that mean something in a URL. */
const VALUES = [
  '.',
  '..',
  '%2E',
  '%2e%2E',
  '.%2E',
  '%',
  '%25',
  '%2F',
  'a/b',
  '/',
  'a b',
  ' padded ',
  'ünïcødé',
  '日本語',
  'a?b',
  'a#b',
  'a\\b',
  '+1',
  '~x',
  '..x',
  'x..',
  '.x',
  "it's(1)!*",
]
const DOTS = ['.', '..']
/** How each dot segment may be sent in a path. */
const DOT_SPELLINGS = ['.', '..', '%2E', '%2e', '%2E%2E', '.%2E', '%2e.']

type Template = string
type Operation = { method: string; template: Template; params: string[]; body: unknown }

let document: Record<string, any>
let operations: Operation[]
beforeAll(async () => {
  document = await openApiSpec()
  operations = Object.entries<Record<string, any>>(document.paths)
    .flatMap(([template, methods]) =>
      Object.entries<any>(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        params: [...template.matchAll(/\{([^}]+)\}/g)].map(match => match[1]),
        body: exampleBody(operation),
      })),
    )
    .filter(operation => operation.params.length > 0)
})

function exampleBody(operation: any): unknown {
  const content = operation.requestBody?.content?.['application/json']
  if (!content) return undefined
  return content.example ?? content.schema?.examples?.[0] ?? resolve(content.schema)?.examples?.[0] ?? {}
}

function resolve(schema: any): any {
  const ref = schema?.$ref
  return typeof ref === 'string' ? document.components.schemas[ref.split('/').at(-1)!] : schema
}

/** The values stored by callers, by the path parameters they land in (template, parameter). */
const KIND_OF: ((template: Template, param: string) => string | undefined)[] = [
  (_, param) => (param === 'projectId' ? 'project' : undefined),
  (_, param) => (param === 'featureName' || param === 'parent' ? 'flag' : undefined),
  (_, param) => (param === 'environment' ? 'environment' : undefined),
  (template, param) =>
    (template.startsWith('/api/admin/tag-types/') && param === 'name') ||
    (template.includes('/tags/') && param === 'type')
      ? 'tag type'
      : undefined,
  (template, param) => (template.includes('/tags/') && param === 'value' ? 'tag value' : undefined),
  (_, param) => (param === 'tokenName' ? 'token' : undefined),
  (template, param) =>
    template.startsWith('/api/admin/strategies/') && param === 'name' ? 'strategy type' : undefined,
  (_, param) => (param === 'contextField' ? 'context field' : undefined),
  (_, param) => (param === 'legalValue' ? 'legal value' : undefined),
  (_, param) => (param === 'appName' ? 'application' : undefined),
  (template, param) => (template.startsWith('/ofrep/') && param === 'key' ? 'flag' : undefined),
]
/** Parameters whose values no caller chooses: the service makes them, or they are a fixed set. */
const NOT_CHOSEN: ((template: Template, param: string) => boolean)[] = [
  (_, param) => param === 'strategyId', // a UUID the service makes
  (template, param) => template.startsWith('/api/admin/segments/') && param === 'id', // a number the service counts
  (template, param) => template.startsWith('/api/admin/feature-types/') && param === 'id', // the five flag types
  (template, param) => template.startsWith('/api/admin/user-admin/') && param === 'id', // a number the service counts
  // Integrations, their deliveries, personal and service-account tokens, service accounts: numbers the service counts.
  (template, param) => template.startsWith('/api/admin/addons/') && (param === 'id' || param === 'eventId'),
  (template, param) => template.startsWith('/api/admin/user/tokens/') && param === 'id',
  (template, param) => template.startsWith('/api/admin/service-account/') && (param === 'id' || param === 'tokenId'),
  // A change request and its changes: numbers the service counts.
  (_, param) => param === 'changeRequestId' || param === 'changeId',
]

function kindOf(template: Template, param: string): string | undefined {
  for (const rule of KIND_OF) {
    const kind = rule(template, param)
    if (kind) return kind
  }
  return undefined
}

/** A world where every path parameter has something to name: these fill the parameters a test does not vary. */
async function world(api: Api) {
  await api.newFlag('default', 'f')
  await api.newFlag('default', 'parent')
  expectOk(await api.post('/api/admin/projects/default/features/f/dependencies', { feature: 'parent' }))
  await api.newTagTypes('kind')
  expectOk(await api.post('/api/admin/features/f/tags', { type: 'simple', value: 'beta' }), 201)
  const strategy = await api.post<{ id: string }>(
    '/api/admin/projects/default/features/f/environments/development/strategies',
    { name: 'default' },
  )
  expectOk(strategy)
  expectOk(await api.post('/api/admin/context', { name: 'plan', legalValues: [{ value: 'pro' }] }), 201)
  expectOk(await api.post('/api/admin/strategies', { name: 'custom', parameters: [] }), 201)
  const segment = await api.post<{ id: number }>('/api/admin/segments', { name: 's', constraints: [] })
  expectOk(segment, 201)
  const client = await api.createToken({ tokenName: 'tok', type: 'client', environment: 'development' })
  expectOk(client, 201)
  expectOk(await api.post('/api/client/register', { appName: 'web' }, { token: client.body.secret }), 202)
  // The registration is committed by the next metrics flush: now, so no snapshot below sees it land.
  await api.services.metrics.flush()
  const fixtures: Record<string, string> = {
    projectId: 'default',
    featureName: 'f',
    parent: 'parent',
    environment: 'development',
    strategyId: strategy.body.id,
    type: 'simple',
    value: 'beta',
    tokenName: 'tok',
    contextField: 'plan',
    legalValue: 'pro',
    appName: 'web',
  }
  const named = (template: Template, param: string): string => {
    if (param === 'id') return template.startsWith('/api/admin/feature-types/') ? 'release' : String(segment.body.id)
    if (param === 'name') return template.startsWith('/api/admin/tag-types/') ? 'kind' : 'custom'
    return fixtures[param]
  }
  return { client: client.body.secret, named }
}

/** The stored state without the counters every write moves. */
function storedCollections(api: Api): Record<string, unknown> {
  const {
    lastEventId: _a,
    commitSeq: _b,
    nextUserId: _c,
    segmentSequence: _d,
    changeRequestSequence: _e,
    ...collections
  } = api.services.store.state as unknown as Record<string, unknown>
  return structuredClone(collections)
}

function pathOf(template: Template, values: (param: string) => string): string {
  return template.replace(/\{([^}]+)\}/g, (_, param: string) => values(param))
}

test('every path parameter of the OpenAPI document is either filled by a stored value kind tested below or made by the service', () => {
  const unclaimed = operations.flatMap(operation =>
    operation.params
      .filter(param => !kindOf(operation.template, param) && !NOT_CHOSEN.some(rule => rule(operation.template, param)))
      .map(param => `${operation.template} {${param}}`),
  )
  expect(unclaimed).toEqual([])
  expect(operations.length).toBeGreaterThan(50)
})

describe('a "." or ".." in a path parameter', () => {
  // In process, a request's URL is already resolved (new Request does it, as every client's URL
  // parser does): a dot segment last leaves a trailing "/", which is all the app can see. One
  // elsewhere is only visible over a socket, to Bun's router (test/system/raw-paths.test.ts).
  test('that ends the path, of any write, in every spelling, changes nothing and writes no event', async () => {
    const api = await makeApi()
    try {
      const { client, named } = await world(api)
      const before = JSON.stringify(api.services.store.state)
      const lastEvent = api.lastEventId()
      let sent = 0
      for (const operation of operations) {
        if (operation.method === 'GET') continue
        for (const param of operation.params.filter(name => operation.template.endsWith(`{${name}}`))) {
          for (const dots of DOT_SPELLINGS) {
            const path = pathOf(operation.template, other =>
              other === param ? dots : encodeURIComponent(named(operation.template, other)),
            )
            const token = operation.template.startsWith('/api/client') ? client : ADMIN_SECRET
            const response = await api.request(operation.method, path, { token, body: operation.body })
            expect({ operation: `${operation.method} ${path}`, status: response.status }).toEqual({
              operation: `${operation.method} ${path}`,
              status: 400,
            })
            // OFREP's routes say it in their own shape (errorDetails).
            const error = response.body as { message?: string; errorDetails?: string }
            expect(error.message ?? error.errorDetails).toContain('"." or ".."')
            sent++
          }
        }
      }
      expect(sent).toBeGreaterThan(100)
      expect(JSON.stringify(api.services.store.state)).toBe(before)
      expect(api.lastEventId()).toBe(lastEvent)
    } finally {
      await api.close()
    }
  })

  test('DELETE /api/admin/context/plan/legal-values/%2E%2E no longer deletes the context field, and says why', async () => {
    const api = await makeApi()
    try {
      expectOk(await api.post('/api/admin/context', { name: 'plan', legalValues: [{ value: 'pro' }] }), 201)
      const before = api.lastEventId()
      const response = await api.delete('/api/admin/context/plan/legal-values/%2E%2E')
      expect(response.status).toBe(400)
      expect(errorOf(response).message).toContain('"." or ".."')
      expect(api.services.store.reader.get('contextFields', 'plan')?.legalValues).toEqual([{ value: 'pro' }])
      expect(api.lastEventId()).toBe(before)
    } finally {
      await api.close()
    }
  })
})

interface Kind {
  /** Stores `value`; answers the response and the value as stored (a tag value is trimmed), plus parameters to use with it. */
  create(
    api: Api,
    value: string,
    client: string,
  ): Promise<{ response: ApiResponse; stored: string; fixtures?: Record<string, string> }>
  /** Reads it through its own route; the answer must name exactly it. */
  read?(api: Api, encoded: string, client: string): Promise<{ response: ApiResponse; name: unknown }>
  /** Deletes it through its own route(s); afterwards the state is as before `create`. */
  remove?(api: Api, encoded: string, stored: string): Promise<ApiResponse[]>
}

async function newStrategy(api: Api, flagEnvironment: string): Promise<string> {
  const created = await api.post<{ id: string }>(`${flagEnvironment}/strategies`, { name: 'default' })
  expectOk(created)
  return created.body.id
}

/** The change request made in each tricky project, by the project as encoded in a path. */
const changeRequests = new Map<string, string>()

const KINDS: Record<string, Kind> = {
  project: {
    async create(api, value) {
      const response = await api.post('/api/admin/projects', { id: value, name: 'tricky' })
      if (response.status !== 201) return { response, stored: value }
      await api.newFlag(value, 'in-tricky-project')
      const strategyId = await newStrategy(
        api,
        `/api/admin/projects/${encodeURIComponent(value)}/features/in-tricky-project/environments/development`,
      )
      // A change request of the project, for the routes that read one.
      const draft = await api.post<{ id: number }>(
        `/api/admin/projects/${encodeURIComponent(value)}/environments/development/change-requests`,
        { feature: 'in-tricky-project', action: 'updateEnabled', payload: { enabled: true } },
      )
      expectOk(draft)
      const changeRequestId = String(draft.body.id)
      changeRequests.set(encodeURIComponent(value), changeRequestId)
      return { response, stored: value, fixtures: { featureName: 'in-tricky-project', strategyId, changeRequestId } }
    },
    read: async (api, encoded) => {
      const response = await api.get<{ id: string }>(`/api/admin/projects/${encoded}`)
      return { response, name: response.body.id }
    },
    remove: async (api, encoded) => [
      await api.delete(`/api/admin/projects/${encoded}/change-requests/${changeRequests.get(encoded)}`),
      await api.delete(`/api/admin/projects/${encoded}/features/in-tricky-project`),
      await api.delete('/api/admin/archive/in-tricky-project'),
      await api.delete(`/api/admin/projects/${encoded}`),
    ],
  },
  flag: {
    async create(api, value) {
      const response = await api.post('/api/admin/projects/default/features', { name: value })
      if (response.status !== 201) return { response, stored: value }
      expectOk(await api.post('/api/admin/projects/default/features/f/dependencies', { feature: value }))
      const strategyId = await newStrategy(
        api,
        `/api/admin/projects/default/features/${encodeURIComponent(value)}/environments/development`,
      )
      return { response, stored: value, fixtures: { parent: value, strategyId } }
    },
    read: async (api, encoded) => {
      const response = await api.get<{ name: string }>(`/api/admin/projects/default/features/${encoded}`)
      return { response, name: response.body.name }
    },
    remove: async (api, encoded) => [
      await api.delete(`/api/admin/projects/default/features/f/dependencies/${encoded}`),
      await api.delete(`/api/admin/projects/default/features/${encoded}`),
      await api.delete(`/api/admin/archive/${encoded}`),
    ],
  },
  environment: {
    // Environments cannot be deleted (no route, as in Unleash); one is taken out of a project.
    async create(api, value) {
      const response = await api.post('/api/admin/environments', { name: value, type: 'test' })
      if (response.status !== 201) return { response, stored: value }
      expectOk(await api.post('/api/admin/projects/default/environments', { environment: value }))
      const strategyId = await newStrategy(
        api,
        `/api/admin/projects/default/features/f/environments/${encodeURIComponent(value)}`,
      )
      return { response, stored: value, fixtures: { strategyId } }
    },
    read: async (api, encoded) => {
      const response = await api.get<{ name: string }>(`/api/admin/projects/default/features/f/environments/${encoded}`)
      return { response, name: response.body.name }
    },
  },
  'tag type': {
    async create(api, value) {
      const response = await api.post('/api/admin/tag-types', { name: value })
      if (response.status === 201)
        expectOk(await api.post('/api/admin/features/f/tags', { type: value, value: 'beta' }), 201)
      return { response, stored: value }
    },
    read: async (api, encoded) => {
      const response = await api.get<{ tagType: { name: string } }>(`/api/admin/tag-types/${encoded}`)
      return { response, name: response.body.tagType?.name }
    },
    remove: async (api, encoded) => [
      await api.delete(`/api/admin/features/f/tags/${encoded}/beta`),
      await api.delete(`/api/admin/tag-types/${encoded}`),
    ],
  },
  'tag value': {
    async create(api, value) {
      const response = await api.post<{ value: string }>('/api/admin/features/f/tags', { type: 'simple', value })
      return { response, stored: response.body?.value ?? value }
    },
    remove: async (api, encoded) => [await api.delete(`/api/admin/features/f/tags/simple/${encoded}`)],
  },
  token: {
    create: async (api, value) => ({
      response: await api.createToken({ tokenName: value, type: 'client', environment: 'development' }),
      stored: value,
    }),
    remove: async (api, encoded) => [await api.delete(`/api/admin/api-tokens/${encoded}`)],
  },
  'strategy type': {
    // Strategy types are deprecated, not deleted (as in Unleash).
    create: async (api, value) => ({
      response: await api.post('/api/admin/strategies', { name: value, parameters: [] }),
      stored: value,
    }),
    read: async (api, encoded) => {
      const response = await api.get<{ name: string }>(`/api/admin/strategies/${encoded}`)
      return { response, name: response.body.name }
    },
  },
  'context field': {
    create: async (api, value) => ({ response: await api.post('/api/admin/context', { name: value }), stored: value }),
    read: async (api, encoded) => {
      const response = await api.get<{ name: string }>(`/api/admin/context/${encoded}`)
      return { response, name: response.body.name }
    },
    remove: async (api, encoded) => [await api.delete(`/api/admin/context/${encoded}`)],
  },
  'legal value': {
    create: async (api, value) => ({
      response: await api.post('/api/admin/context/plan/legal-values', { value }),
      stored: value,
    }),
    remove: async (api, encoded) => [await api.delete(`/api/admin/context/plan/legal-values/${encoded}`)],
  },
  application: {
    // Applications are not deleted through the API; they age out.
    create: async (api, value, client) => ({
      response: await api.post('/api/client/register', { appName: value }, { token: client }),
      stored: value,
    }),
    read: async (api, encoded) => {
      const response = await api.get<{ appName: string; links: { self: string } }>(
        `/api/admin/metrics/applications/${encoded}`,
      )
      expect((await api.get<{ appName: string }>(response.body.links?.self ?? '/none')).body.appName).toBe(
        response.body.appName,
      )
      return { response, name: response.body.appName }
    },
  },
}

describe('each stored value kind, with each tricky value', () => {
  for (const [kind, spec] of Object.entries(KINDS)) {
    test(`${kind}: "." and ".." are refused with a 400 naming the field; any value accepted is read through every GET route it lands in and deleted through its own, as exactly that record, with events naming it`, async () => {
      const api = await makeApi()
      try {
        const { client, named } = await world(api)
        const accepted: string[] = []
        for (const value of VALUES) {
          const before = storedCollections(api)
          const lastEvent = api.lastEventId()
          const { response, stored, fixtures } = await spec.create(api, value, client)
          if (response.status >= 400) {
            // Refused: said plainly, where, and nothing stored.
            expect({ value, status: response.status }).toEqual({ value, status: 400 })
            expect(errorOf(response).details?.[0]?.path).toBeString()
            expect(storedCollections(api)).toEqual(before)
            expect(api.lastEventId()).toBe(lastEvent)
            continue
          }
          expect({ value, ok: response.status < 300 }).toEqual({ value, ok: true })
          expect(DOTS).not.toContain(stored)
          accepted.push(value)
          const encoded = encodeURIComponent(stored)
          if (spec.read) {
            const read = await spec.read(api, encoded, client)
            expect({ value, status: read.response.status, name: read.name }).toEqual({
              value,
              status: 200,
              name: stored,
            })
          }
          // Every GET route the kind lands in answers for it (reachable), with the other parameters from the world.
          for (const operation of operations.filter(candidate => candidate.method === 'GET')) {
            const mine = operation.params.filter(param => kindOf(operation.template, param) === kind)
            if (mine.length === 0) continue
            const path = pathOf(operation.template, param =>
              mine.includes(param)
                ? encoded
                : encodeURIComponent(fixtures?.[param] ?? named(operation.template, param)),
            )
            const token = operation.template.startsWith('/api/client') ? client : ADMIN_SECRET
            const answer = await api.get(path, { token })
            expect({ value, path, status: answer.status }).toEqual({ value, path, status: 200 })
          }
          if (spec.remove) {
            const createdEvents = api.lastEventId()
            for (const removal of await spec.remove(api, encoded, stored))
              expect({ value, ok: removal.status < 300, text: removal.text }).toMatchObject({ value, ok: true })
            // Exactly it is gone: everything else is as before it was made.
            expect(storedCollections(api)).toEqual(before)
            const removedEvents = api.eventsSince(createdEvents)
            expect(removedEvents.length).toBeGreaterThan(0)
            for (const event of removedEvents)
              expect({
                value,
                type: event.type,
                names: JSON.stringify(event).includes(JSON.stringify(stored).slice(1, -1)),
              }).toEqual({ value, type: event.type, names: true })
          }
        }
        // The characters that mean something in a URL are storable for the kinds without the name rules.
        if (['tag value', 'legal value', 'application'].includes(kind)) expect(accepted).toContain('a/b')
        expect(accepted.length).toBeGreaterThan(3)
      } finally {
        await api.close()
      }
    })
  }
})

test('an older data directory holding "." and ".." values loads, and they can be removed through the routes that take a body', async () => {
  const dir = tempDir()
  try {
    const dataDir = `${dir.path}/data`
    mkdirSync(dataDir)
    // Written as an older version could: straight into the store, past today's rules.
    let api = await makeApi({ dataDir })
    await api.newFlag('default', 'f')
    expectOk(await api.post('/api/admin/context', { name: 'plan', legalValues: [{ value: 'pro' }] }), 201)
    await api.services.store.transact({ createdBy: 'old-version', createdByUserId: -1 } as never, tx => {
      const plan = tx.get('contextFields', 'plan')!
      tx.put('contextFields', 'plan', { ...plan, legalValues: [...plan.legalValues, { value: '.' }, { value: '..' }] })
      const flag = tx.get('flags', 'f')!
      tx.put('flags', 'f', { ...flag, tags: [...flag.tags, { type: 'simple', value: '..' }] })
    })
    await api.close()
    api = await makeApi({ dataDir })
    try {
      expect(api.services.store.reader.get('contextFields', 'plan')?.legalValues.map(legal => legal.value)).toEqual([
        'pro',
        '.',
        '..',
      ])
      // The field can still be updated with the values it holds…
      expectOk(
        await api.put('/api/admin/context/plan', {
          legalValues: [{ value: 'pro' }, { value: '.' }, { value: '..' }],
          description: 'kept',
        }),
      )
      // Removing them: the field's PUT with the list without them, and the tags' PUT with removedTags (docs/api.md, Names in paths).
      expectOk(await api.put('/api/admin/context/plan', { legalValues: [{ value: 'pro' }] }))
      expect(api.services.store.reader.get('contextFields', 'plan')?.legalValues).toEqual([{ value: 'pro' }])
      expectOk(
        await api.put('/api/admin/features/f/tags', { addedTags: [], removedTags: [{ type: 'simple', value: '..' }] }),
      )
      expect(api.services.store.reader.get('flags', 'f')?.tags).toEqual([])
      // Adding them back is refused.
      expect(
        (await api.put('/api/admin/features/f/tags', { addedTags: [{ type: 'simple', value: '..' }], removedTags: [] }))
          .status,
      ).toBe(400)
      expect(
        (await api.put('/api/admin/context/plan', { legalValues: [{ value: 'pro' }, { value: '..' }] })).status,
      ).toBe(400)
    } finally {
      await api.close()
    }
  } finally {
    dir.remove()
  }
})
