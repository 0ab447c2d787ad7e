/**
 * The OpenAPI description served at /swagger/json documents every route: an operationId, a summary,
 * tags, a response entry for each status the route can answer with, and a description on every
 * parameter and every property of every schema it uses. The five operations of the seed are there
 * with the statuses the seed lists.
 */
// Store-independent: about the OpenAPI document, made from the routes' declarations.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { makeApi, type Api } from './helpers'

let api: Api
let spec: any

beforeEach(async () => {
  api = await makeApi()
  const response = await api.get('/swagger/json', { token: null })
  expect(response.status).toBe(200)
  spec = response.body
})
afterEach(async () => api?.close())

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'] as const

interface Operation {
  method: string
  path: string
  label: string
  op: any
}

function operations(): Operation[] {
  const result: Operation[] = []
  for (const [path, item] of Object.entries<any>(spec.paths ?? {})) {
    for (const method of METHODS) {
      if (item[method]) result.push({ method, path, label: `${method.toUpperCase()} ${path}`, op: item[method] })
    }
  }
  return result
}

function rawParametersOf(operation: Operation): any[] {
  const shared = spec.paths[operation.path].parameters ?? []
  return [...shared, ...(operation.op.parameters ?? [])].map(resolve)
}

/** Follows a local `$ref` (`#/components/...`); returns the value itself otherwise. */
function resolve(value: any): any {
  let current = value
  const seen = new Set<string>()
  while (current && typeof current === 'object' && typeof current.$ref === 'string') {
    const ref: string = current.$ref
    if (seen.has(ref)) throw new Error(`circular $ref ${ref}`)
    seen.add(ref)
    if (!ref.startsWith('#/')) throw new Error(`non-local $ref ${ref}`)
    let target: any = spec
    for (const part of ref.slice(2).split('/')) target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')]
    if (target === undefined) throw new Error(`$ref ${ref} points nowhere`)
    current = target
  }
  return current
}

/**
 * Walks a schema (through $ref, properties, items, anyOf/oneOf/allOf, additionalProperties,
 * patternProperties) and reports each property without a description. A property that is a
 * `$ref` counts as described when the referenced schema has a description.
 */
function undocumentedProperties(schema: any, where: string, problems: string[], visited = new Set<any>()) {
  if (!schema || typeof schema !== 'object') return
  if (typeof schema.$ref === 'string') {
    let target: any
    try {
      target = resolve(schema)
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`)
      return
    }
    return undocumentedProperties(target, `${where} -> ${schema.$ref}`, problems, visited)
  }
  if (visited.has(schema)) return
  visited.add(schema)
  for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
    const described = (value: any) => typeof value?.description === 'string' && value.description.trim() !== ''
    let ok = described(property)
    if (!ok && typeof property?.$ref === 'string') {
      try {
        ok = described(resolve(property))
      } catch {}
    }
    if (!ok) problems.push(`${where}.properties.${name}`)
    undocumentedProperties(property, `${where}.properties.${name}`, problems, visited)
  }
  if (schema.items) {
    const items = Array.isArray(schema.items) ? schema.items : [schema.items]
    items.forEach((item: any, index: number) =>
      undocumentedProperties(
        item,
        `${where}.items${Array.isArray(schema.items) ? `[${index}]` : ''}`,
        problems,
        visited,
      ),
    )
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    ;(schema[key] ?? []).forEach((member: any, index: number) =>
      undocumentedProperties(member, `${where}.${key}[${index}]`, problems, visited),
    )
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    undocumentedProperties(schema.additionalProperties, `${where}.additionalProperties`, problems, visited)
  }
  for (const [pattern, value] of Object.entries<any>(schema.patternProperties ?? {})) {
    undocumentedProperties(value, `${where}.patternProperties[${pattern}]`, problems, visited)
  }
  if (schema.not) undocumentedProperties(schema.not, `${where}.not`, problems, visited)
}

/** Every schema an operation uses: request body, parameters and responses. */
function schemasOf(operation: Operation): { where: string; schema: any }[] {
  const result: { where: string; schema: any }[] = []
  const body = operation.op.requestBody ? resolve(operation.op.requestBody) : undefined
  for (const [type, media] of Object.entries<any>(body?.content ?? {})) {
    result.push({ where: `${operation.label} requestBody[${type}]`, schema: media.schema })
  }
  for (const parameter of rawParametersOf(operation)) {
    if (parameter.schema)
      result.push({ where: `${operation.label} parameter ${parameter.name}`, schema: parameter.schema })
  }
  for (const [status, response] of Object.entries<any>(operation.op.responses ?? {})) {
    for (const [type, media] of Object.entries<any>(resolve(response).content ?? {})) {
      result.push({ where: `${operation.label} ${status}[${type}]`, schema: media.schema })
    }
  }
  return result
}

/**
 * The error statuses every route must document, from the pipeline of the API contract (§1):
 * routes under /api need a token (401) with a permission (403); routes with a body can be too large
 * (413), of the wrong content type (415) or invalid (400); routes with query parameters can be
 * invalid (400); routes naming a resource in the path can miss it (404), except the project
 * feature list, which answers an unknown project with an empty list (contract §5).
 */
/** Reads whose path names something that, unknown, lists nothing (200) rather than 404, as in Unleash. */
const LISTS_NOTHING_FOR_UNKNOWN = new Set(['getFeatures', 'getEventsForToggle', 'getStrategiesByContextField'])

function requiredErrorStatuses(operation: Operation): string[] {
  const statuses = new Set<string>()
  if (operation.path.startsWith('/api/')) {
    statuses.add('401')
    statuses.add('403')
  }
  if (operation.op.requestBody) {
    statuses.add('400')
    statuses.add('413')
    statuses.add('415')
  }
  const parameters = rawParametersOf(operation)
  if (parameters.some(parameter => parameter.in === 'query')) statuses.add('400')
  if (parameters.some(parameter => parameter.in === 'path') && !LISTS_NOTHING_FOR_UNKNOWN.has(operation.op.operationId))
    statuses.add('404')
  return [...statuses].sort()
}

describe('GET /swagger/json', () => {
  test('is an OpenAPI 3 document with a title, a version and paths', () => {
    expect(spec.openapi).toMatch(/^3\./)
    expect(spec.info.title).toEqual(expect.any(String))
    expect(spec.info.version).toEqual(expect.any(String))
    expect(operations().length).toBeGreaterThan(30)
  })

  test('documents every route of the app', () => {
    const documented = new Set(operations().map(operation => `${operation.method.toUpperCase()} ${operation.path}`))
    const routes = (api.app as any).routes as { method: string; path: string }[]
    const missing = routes
      // The documentation itself and the console (`/` and its assets) are not operations of the API.
      .filter(
        route =>
          !route.path.startsWith('/swagger') &&
          !route.path.startsWith('/console/') &&
          route.path !== '/' &&
          route.method !== 'ALL',
      )
      .map(route => `${route.method.toUpperCase()} ${route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`)
      .filter(route => !documented.has(route))
    expect(missing).toEqual([])
  })

  test('every operation has a unique operationId, a summary and at least one tag', () => {
    const problems: string[] = []
    const ids = new Map<string, string>()
    for (const operation of operations()) {
      const { operationId, summary, tags } = operation.op
      if (typeof operationId !== 'string' || operationId.trim() === '')
        problems.push(`${operation.label}: no operationId`)
      else if (ids.has(operationId))
        problems.push(`${operation.label}: operationId ${operationId} also used by ${ids.get(operationId)}`)
      else ids.set(operationId, operation.label)
      if (typeof summary !== 'string' || summary.trim() === '') problems.push(`${operation.label}: no summary`)
      if (!Array.isArray(tags) || tags.length === 0 || tags.some(tag => typeof tag !== 'string' || tag.trim() === '')) {
        problems.push(`${operation.label}: no tags`)
      }
    }
    expect(problems).toEqual([])
  })

  test('every operation documents a success response and each error status it can answer with', () => {
    const problems: string[] = []
    for (const operation of operations()) {
      const statuses = Object.keys(operation.op.responses ?? {})
      // The browser's single sign-on steps succeed with a redirect (to the provider, or back to the console).
      const success = operation.path.startsWith('/auth/oidc/') ? /^[23]\d\d$/ : /^2\d\d$/
      if (!statuses.some(status => success.test(status))) problems.push(`${operation.label}: no 2xx response`)
      for (const status of requiredErrorStatuses(operation)) {
        if (!statuses.includes(status)) problems.push(`${operation.label}: no ${status} response`)
      }
    }
    expect(problems).toEqual([])
  })

  test("every response has a description, and every error response is the JSON error body (OFREP's own shapes under /ofrep)", () => {
    const problems: string[] = []
    const errorSchema = resolve({ $ref: '#/components/schemas/error' })
    // OFREP (open-feature/protocol) fixes its error bodies: 401 and 403 have none, the others are its failure shapes.
    const ofrepErrors = ['ofrepEvaluationFailure', 'ofrepBulkEvaluationFailure', 'ofrepGeneralError'].map(name =>
      resolve({ $ref: `#/components/schemas/${name}` }),
    )
    for (const operation of operations()) {
      for (const [status, raw] of Object.entries<any>(operation.op.responses ?? {})) {
        const response = resolve(raw)
        if (typeof response.description !== 'string' || response.description.trim() === '') {
          problems.push(`${operation.label} ${status}: no description`)
        }
        if (operation.path.startsWith('/ofrep/') && /^[45]\d\d$/.test(status)) {
          const schema = response.content?.['application/json']?.schema
          if (
            status === '401' || status === '403'
              ? response.content !== undefined
              : !schema || !ofrepErrors.includes(resolve(schema))
          ) {
            problems.push(`${operation.label} ${status}: not OFREP's error shape`)
          }
        } else if (/^[45]\d\d$/.test(status) && !operation.path.startsWith('/auth/oidc/')) {
          // (The browser's single sign-on steps answer a person with a page, not an API client.)
          const schema = response.content?.['application/json']?.schema
          if (!schema || resolve(schema) !== errorSchema)
            problems.push(`${operation.label} ${status}: not the application/json error schema`)
        }
      }
    }
    expect(problems).toEqual([])
  })

  test('every path and query parameter has a description', () => {
    const problems: string[] = []
    for (const operation of operations()) {
      for (const parameter of rawParametersOf(operation)) {
        if (typeof parameter.description !== 'string' || parameter.description.trim() === '') {
          problems.push(`${operation.label}: parameter ${parameter.in} ${parameter.name}`)
        }
      }
      // Every {name} in the path is declared as a path parameter.
      for (const [, name] of operation.path.matchAll(/\{([^}]+)\}/g)) {
        if (!rawParametersOf(operation).some(parameter => parameter.in === 'path' && parameter.name === name)) {
          problems.push(`${operation.label}: path parameter ${name} not declared`)
        }
      }
    }
    expect(problems).toEqual([])
  })

  test('every property of every schema an operation uses has a description', () => {
    const problems: string[] = []
    for (const operation of operations()) {
      for (const { where, schema } of schemasOf(operation)) undocumentedProperties(schema, where, problems)
    }
    expect([...new Set(problems)]).toEqual([])
  })

  test('every property of every schema in components.schemas has a description', () => {
    const problems: string[] = []
    for (const [name, schema] of Object.entries<any>(spec.components?.schemas ?? {})) {
      if (typeof schema.description !== 'string' || schema.description.trim() === '')
        problems.push(`components.schemas.${name}: no description`)
      undocumentedProperties(schema, `components.schemas.${name}`, problems)
    }
    expect(problems).toEqual([])
  })

  test('the request bodies and responses of body-taking writes are described', () => {
    const problems: string[] = []
    for (const operation of operations()) {
      if (!operation.op.requestBody) continue
      const body = resolve(operation.op.requestBody)
      const schema = body.content?.['application/json']?.schema
      if (!schema) {
        problems.push(`${operation.label}: request body has no application/json schema`)
        continue
      }
      const target = resolve(schema)
      if (
        !(typeof body.description === 'string' && body.description.trim() !== '') &&
        !(typeof target.description === 'string' && target.description.trim() !== '')
      ) {
        problems.push(`${operation.label}: request body has no description`)
      }
    }
    expect(problems).toEqual([])
  })
})

describe('the five operations of the seed', () => {
  const SEED: [string, string, string, string[]][] = [
    [
      'patchFeature',
      'patch',
      '/api/admin/projects/{projectId}/features/{featureName}',
      ['200', '401', '403', '404', '415'],
    ],
    ['getFeatures', 'get', '/api/admin/projects/{projectId}/features', ['200', '400', '401', '403']],
    ['searchEvents', 'get', '/api/admin/search/events', ['200']],
    [
      'bulkToggleFeaturesEnvironmentOff',
      'post',
      '/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off',
      ['200', '400', '401', '403', '404', '413', '415'],
    ],
    ['validateFeature', 'post', '/api/admin/features/validate', ['200', '400', '401', '409', '415']],
  ]

  test.each(SEED)(
    '%s is documented at its seed method and path with every status the seed lists',
    (operationId, method, path, statuses) => {
      const found = operations().filter(operation => operation.op.operationId === operationId)
      expect(found.map(operation => `${operation.method} ${operation.path}`)).toEqual([`${method} ${path}`])
      const documented = Object.keys(found[0].op.responses ?? {})
      expect(statuses.filter(status => !documented.includes(status))).toEqual([])
    },
  )

  test('searchEvents documents each query parameter of the seed', () => {
    const operation = operations().find(candidate => candidate.op.operationId === 'searchEvents')!
    const names = rawParametersOf(operation)
      .filter(parameter => parameter.in === 'query')
      .map(parameter => parameter.name)
    for (const name of [
      'query',
      'feature',
      'project',
      'type',
      'createdBy',
      'createdAtFrom',
      'createdAtTo',
      'offset',
      'limit',
    ]) {
      expect({ name, documented: names.includes(name) }).toEqual({ name, documented: true })
    }
  })

  test('patchFeature and bulkToggleFeaturesEnvironmentOff take application/json bodies', () => {
    for (const operationId of ['patchFeature', 'bulkToggleFeaturesEnvironmentOff', 'validateFeature']) {
      const operation = operations().find(candidate => candidate.op.operationId === operationId)!
      expect({
        operationId,
        json: Boolean(resolve(operation.op.requestBody)?.content?.['application/json']?.schema),
      }).toEqual({
        operationId,
        json: true,
      })
    }
  })
})

describe('what the document tells readers', () => {
  test('no description or summary sends readers to a document they do not have (the seed, the contract, an issue, a section number such as 2.4)', () => {
    const found: string[] = []
    const walk = (value: unknown, path: string) => {
      if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${path}/${index}`))
      else if (value !== null && typeof value === 'object') {
        for (const [key, child] of Object.entries(value)) {
          if (
            (key === 'description' || key === 'summary') &&
            typeof child === 'string' &&
            /\bseed\b|contract|§|\bissue \d|\bsection\b|(?<![\d.:v])\d+\.\d+(?![\d.])/i.test(child)
          )
            found.push(`${path}/${key}: ${child}`)
          walk(child, `${path}/${key}`)
        }
      }
    }
    walk(spec, '')
    expect(found).toEqual([])
  })

  test('the event type of search answers lists every type the service wrote', async () => {
    const eventSchema = resolve(
      resolve(resolve(spec.components.schemas.eventSearchResponseSchema).properties.events).items,
    )
    const documented: string[] = resolve(eventSchema.properties.type).enum
    expect(new Set(documented).size).toBe(documented.length)
    await api.createProject('doc-events')
    await api.createFlag('doc-events', 'doc-flag')
    await api.toggle('doc-events', 'doc-flag', 'development', true)
    await api.patchFlag('doc-events', 'doc-flag', [{ op: 'replace', path: '/stale', value: true }])
    await api.post('/api/admin/features/doc-flag/tags', { value: 'documented' })
    await api.delete('/api/admin/projects/doc-events/features/doc-flag')
    const written = (await api.searchEvents('?limit=1000')).body.events.map((event: { type: string }) => event.type)
    expect(written.length).toBeGreaterThanOrEqual(10)
    expect(written.filter((type: string) => !documented.includes(type))).toEqual([])
  })
})

describe('GET /swagger', () => {
  test('answers the Swagger UI as HTML that loads /swagger/json', async () => {
    const response = await api.get('/swagger', { token: null })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/html/)
    expect(response.text).toMatch(/<html/i)
    // Swagger UI starts from a script of its own (no inline script under the page's policy), which names the document.
    expect(response.text).toContain('/swagger/assets/swagger-initializer.js')
    expect((await api.get('/swagger/assets/swagger-initializer.js', { token: null })).text).toContain('/swagger/json')
  })
})
