/**
 * Fuzz: thousands of generated bad requests across every route (seeded, so a failure can be
 * replayed). Each must get a 4xx JSON error (reads may also answer 200), never a 500 or a hang, and
 * afterwards the data files are byte-identical, Object.prototype is clean and /health is fine.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../../src/services'
import { seededRandom, type Random } from '../random'
import { ADMIN_SECRET, bodyText, makeApi, tempDir, type Api, type StrategyBody } from '../helpers'

const REQUESTS = 12_000
const SEED = 6061
const BODY_LIMIT = 20_000

const dir = tempDir('fuzz-')
let api: Api
let strategyId = ''
let viewer = ''

beforeAll(async () => {
  api = await makeApi({ dataDir: dir.path, bodyLimit: BODY_LIMIT })
  const ok = (response: { status: number; text: string }) => {
    if (response.status >= 300) throw new Error(`setup failed: ${response.status} ${response.text}`)
  }
  ok(await api.createProject('fz-project'))
  ok(await api.createFlag('fz-project', 'fz-flag'))
  ok(await api.createFlag('fz-project', 'fz-parent'))
  ok(await api.post('/api/admin/features/fz-flag/tags', { value: 'fz-tag' }))
  const strategy = await api.post<StrategyBody>(
    '/api/admin/projects/fz-project/features/fz-flag/environments/development/strategies',
    { name: 'default' },
  )
  ok(strategy)
  strategyId = strategy.body.id
  const token = await api.createToken({ tokenName: 'fz-viewer', type: 'admin', role: 'viewer' })
  ok(token)
  viewer = token.body.secret
  await api.services.store.flush()
})

afterAll(async () => {
  await api.close()
  dir.remove()
})

/** Values that name nothing that exists, and are hard on parsers. */
const HOSTILE = [
  '',
  ' ',
  '..',
  '../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  '%00',
  '\u0000',
  '\u0007',
  '\u202e',
  '\ufeff',
  'ä',
  '😀',
  'ｆｕｌｌ',
  'x'.repeat(300),
  'y'.repeat(5000),
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile input, not a template
  '${jndi:ldap://x}',
  '\r\nX-Injected: 1',
  'NaN',
  '-1',
  '1e309',
  'null',
  'true',
  '{}',
  '[]',
  '%',
  '%%',
  '%zz',
  '\\',
  '/',
  '?',
  '#',
]
const EXISTING: Record<string, string[]> = {
  projectId: ['fz-project', 'default'],
  featureName: ['fz-flag', 'fz-parent'],
  environment: ['development', 'production'],
  type: ['simple'],
  value: ['fz-tag'],
  parent: ['fz-parent'],
  tokenName: ['fz-viewer'],
}
const STRING_KEYS = [
  'id',
  'name',
  'type',
  'description',
  'tokenName',
  'environment',
  'value',
  'feature',
  'status',
  'projectId',
  'stickiness',
  'contextName',
  'operator',
  'title',
  'role',
  'expiresAt',
  'appName',
  'instanceId',
  'sdkVersion',
  'project',
  'tag',
  'icon',
  'color',
]
const BOOLEAN_KEYS = [
  'stale',
  'archived',
  'impressionData',
  'enabled',
  'disabled',
  'caseInsensitive',
  'inverted',
  'downloadFile',
]
const ARRAY_KEYS = [
  'features',
  'projects',
  'constraints',
  'variants',
  'segments',
  'values',
  'overrides',
  'legalValues',
  'addedTags',
  'removedTags',
  'strategies',
  'tags',
]
const OBJECT_KEYS = ['featureNaming', 'parameters', 'payload', 'context', 'bucket', 'data']

function randomJson(random: Random, depth = 0): unknown {
  const kind = random.int(0, depth > 3 ? 3 : 6)
  switch (kind) {
    case 0:
      return random.pick(HOSTILE)
    case 1:
      return random.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 1000, 1001])
    case 2:
      return random.pick([true, false, null])
    case 3:
      return random.pick(['', 'a', 'ok-name'])
    case 4:
      return Array.from({ length: random.int(0, 4) }, () => randomJson(random, depth + 1))
    default: {
      const object: Record<string, unknown> = {}
      for (let i = random.int(0, 4); i > 0; i--)
        object[random.pick([...STRING_KEYS, ...BOOLEAN_KEYS, ...HOSTILE])] = randomJson(random, depth + 1)
      return object
    }
  }
}

/** A value of the wrong type for the key. */
function wrongTyped(random: Random, key: string): unknown {
  if (STRING_KEYS.includes(key)) return random.pick([42, true, [], { nested: 'x' }, [random.pick(HOSTILE)]])
  if (BOOLEAN_KEYS.includes(key)) return random.pick(['true', 'yes', 1, 0, [], {}])
  if (ARRAY_KEYS.includes(key)) return random.pick(['a,b', 7, { 0: 'x' }, true])
  return random.pick(['not-an-object', 3, [1, 2], true])
}

/**
 * A JSON object that certainly breaks its schema: at least one key the route's schema lists (`known`)
 * holds the wrong type. Other keys may be anything: unknown ones are dropped, as Unleash ignores them.
 */
function badObject(random: Random, known: string[]): Record<string, unknown> {
  const object = (random.chance(0.5) ? randomJson(random, 2) : {}) as Record<string, unknown>
  const body: Record<string, unknown> =
    typeof object === 'object' && object !== null && !Array.isArray(object) ? { ...object } : {}
  const all = [...STRING_KEYS, ...BOOLEAN_KEYS, ...ARRAY_KEYS, ...OBJECT_KEYS]
  const typed = all.filter(key => known.includes(key))
  // A route without a body schema ignores the body: any key will do.
  const key = random.pick(typed.length > 0 ? typed : all)
  body[key] = wrongTyped(random, key)
  if (random.chance(0.3))
    Object.defineProperty(body, '__proto__', { value: { polluted: 'yes', isAdmin: true }, enumerable: true })
  if (random.chance(0.2))
    Object.defineProperty(body, 'constructor', { value: { prototype: { polluted: 'yes' } }, enumerable: true })
  if (random.chance(0.2)) body[random.pick(STRING_KEYS)] = 'z'.repeat(random.int(3000, 9000))
  return body
}

/** An array body whose items are certainly malformed (JSON Patch operations, variants). */
function badArray(random: Random): unknown[] {
  return Array.from({ length: random.int(1, 5) }, () =>
    random.pick([
      { op: random.pick(['bogus', 'REPLACE', '', 42]), path: '/description', value: 'x' },
      {
        op: 'replace',
        path: random.pick([
          'description',
          '',
          '/__proto__/polluted',
          '/constructor/prototype/x',
          '/variants',
          '/nope',
          42,
        ]),
        value: 1,
      },
      { op: 'replace', path: '/stale', value: random.pick(['yes', 1, null, []]) },
      { op: 'move', from: random.pick([undefined, '/nope', '/__proto__']), path: '/description' },
      { name: random.pick([42, null, []]), weight: random.pick([-1, 1001, 'heavy']) },
      random.pick(HOSTILE),
      null,
    ]),
  )
}

type Body = { raw: string; contentType: string | null }

function badBody(random: Random, arrayBody: boolean, known: string[]): Body {
  const json = (value: unknown) => ({ raw: JSON.stringify(value), contentType: 'application/json' })
  switch (random.int(0, 9)) {
    case 0:
      // One leading byte-order mark is ignored as RFC 8259 allows (TextDecoder strips it), so '\ufeff{}'
      // is a valid empty object; a second one is not whitespace to JSON.
      return {
        raw: random.pick([
          '{',
          '[',
          '{"a":',
          '{"a":1,}',
          "{'a':1}",
          'nul',
          '"unterminated',
          '{"a":1}}',
          '\u0000',
          '\ufeff\ufeff{}',
        ]),
        contentType: 'application/json',
      }
    case 1:
      return { raw: '['.repeat(9000) + ']'.repeat(9000), contentType: 'application/json' }
    case 2:
      return {
        raw: JSON.stringify({ name: 'ok-name' }),
        contentType: random.pick([
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/jsonx',
          null,
        ]),
      }
    case 3:
      return json(random.pick([null, 1, 'string', true, arrayBody ? { not: 'an array' } : [1, 2, 3]]))
    case 4:
      return { raw: JSON.stringify({ name: 'x'.repeat(BODY_LIMIT) }), contentType: 'application/json' }
    case 5:
      return { raw: '{"name":"\\ud800","id":"\\udfff"}', contentType: 'application/json' }
    default:
      return json(arrayBody ? badArray(random) : badObject(random, known))
  }
}

function encodePathValue(random: Random, value: string) {
  // Mostly percent-encoded; sometimes raw, so that the URL parser sees traversal and odd characters too.
  return random.chance(0.8) ? encodeURIComponent(value) : value.replace(/[\s#?]/g, '_')
}

function storeFileBytes() {
  return [STATE_FILE, JOURNAL_FILE, EVENTS_FILE].map(file => readFileSync(join(dir.path, file)).toString('base64'))
}

/** Whether an error answer is our JSON error body: {id, name, message} as application/json. */
function isJsonError(response: Response, text: string): boolean {
  let error: { id?: unknown; name?: unknown; message?: unknown } = {}
  try {
    error = JSON.parse(text)
  } catch {}
  return (
    response.headers.get('content-type') === 'application/json' &&
    typeof error.name === 'string' &&
    typeof error.message === 'string' &&
    typeof error.id === 'string'
  )
}

/** Per route (`METHOD /path/:param`), the top-level properties its documented body schema lists and whether it is an array; null without a body. */
async function bodyProperties(): Promise<Map<string, { properties: string[]; array: boolean } | null>> {
  type Document = {
    components: { schemas: Record<string, { type?: string; properties?: Record<string, unknown> }> }
    paths: Record<string, Record<string, any>>
  }
  const document = (await api.get<Document>('/swagger/json')).body
  const known = new Map<string, { properties: string[]; array: boolean } | null>()
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const body = operation.requestBody?.content?.['application/json']?.schema
      const ref: string | undefined = body?.$ref
      const schema = ref ? document.components.schemas[ref.replace('#/components/schemas/', '')] : body
      known.set(
        `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
        body ? { properties: Object.keys(schema?.properties ?? {}), array: schema?.type === 'array' } : null,
      )
    }
  }
  return known
}

/** Writes by method that only read: they may answer 200 to a body the generator did not manage to break. */
const READING_POSTS = new Set([
  'POST /api/admin/features/validate',
  'POST /api/frontend',
  'POST /api/admin/features-batch/export',
  'POST /api/admin/features-batch/validate',
])

test(`${REQUESTS} generated bad requests get 4xx JSON errors, never a 500 or a hang, and change nothing`, async () => {
  const random = seededRandom(SEED)
  const known = await bodyProperties()
  // The routes that take a JSON body, as documented: a new route is fuzzed without being listed here.
  const bodyRoutes = new Set([...known].filter(([, body]) => body !== null).map(([key]) => key))
  // SDK routes answer only tokens of their type: give them theirs, or the fuzz stops at the 403.
  const sdkTokens = {
    client: (
      await api.createToken({ tokenName: 'fz-client', type: 'client', projects: ['*'], environment: 'development' })
    ).body.secret,
    frontend: (
      await api.createToken({ tokenName: 'fz-frontend', type: 'frontend', projects: ['*'], environment: 'development' })
    ).body.secret,
  }
  await api.services.store.flush()
  const before = storeFileBytes()
  const routes = api.app.routes.filter(route => route.path.startsWith('/api/'))
  const arrayBodies = new Set([...known].filter(([, body]) => body?.array).map(([key]) => key))
  const failures: string[] = []
  const statuses = new Map<number, number>()
  for (let n = 0; n < REQUESTS && failures.length < 20; n++) {
    const route = random.pick(routes)
    const key = `${route.method} ${route.path}`
    const write = route.method !== 'GET'
    const takesBody = bodyRoutes.has(key)
    const sdkToken = route.path.startsWith('/api/client/')
      ? sdkTokens.client
      : route.path.startsWith('/api/frontend')
        ? sdkTokens.frontend
        : null
    // Existing names only where a bad body keeps the request bad; a bodiless write gets names that do not exist.
    const useExisting = takesBody && random.chance(0.6)
    const path = route.path.replace(/:(\w+)/g, (_, name: string) =>
      useExisting && EXISTING[name]
        ? random.pick(EXISTING[name])
        : name === 'strategyId' && useExisting
          ? strategyId
          : encodePathValue(random, random.pick(HOSTILE)),
    )
    const query = random.chance(0.3)
      ? `?${random.pick(['limit', 'offset', 'type', 'query', 'tag', 'namePrefix', 'from', '__proto__'])}=${encodeURIComponent(random.pick(HOSTILE))}`
      : ''
    const headers: Record<string, string> = {}
    const tokenRoll = random.next()
    if (tokenRoll < 0.85) headers.authorization = sdkToken ?? ADMIN_SECRET
    else if (tokenRoll < 0.92)
      headers.authorization = random.pick([
        viewer,
        `Bearer ${ADMIN_SECRET}`,
        '*:*.wrong',
        // biome-ignore lint/suspicious/noControlCharactersInRegex: removes the bytes a header cannot carry
        random.pick(HOSTILE).replace(/[\r\n\u0000]/g, ''),
      ])
    let body: string | undefined
    if (takesBody || random.chance(0.1)) {
      const generated = badBody(random, arrayBodies.has(key), known.get(key)?.properties ?? [])
      body = generated.raw
      if (generated.contentType) headers['content-type'] = generated.contentType
    }
    const url = `http://localhost${path}${query}`
    let request: Request
    try {
      request = new Request(url, { method: route.method, headers, body: route.method === 'GET' ? undefined : body })
    } catch {
      continue // Not even a request a client could send.
    }
    const response = await Promise.race([api.app.handle(request), Bun.sleep(5000).then(() => null)])
    if (response === null) {
      failures.push(`${n}: ${route.method} ${url} hung`)
      continue
    }
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    const text = await bodyText(response)
    const allowed =
      response.status >= 400 && response.status < 500
        ? true
        : !write || READING_POSTS.has(key)
          ? response.status === 200
          : false
    if (!allowed)
      failures.push(
        `${n}: ${route.method} ${url} body=${body?.slice(0, 120)} → ${response.status} ${text.slice(0, 200)}`,
      )
    if (response.status >= 400 && !isJsonError(response, text))
      failures.push(`${n}: ${route.method} ${url} → ${response.status} not a JSON error: ${text.slice(0, 200)}`)
  }
  expect(failures).toEqual([])
  // The mix reached deep into the service, not only the gates.
  for (const status of [400, 401, 403, 404, 413, 415]) expect(statuses.get(status) ?? 0).toBeGreaterThan(50)
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
  await api.services.store.flush()
  expect(storeFileBytes()).toEqual(before)
  const health = await api.get('/health')
  expect(health.status).toBe(200)
  expect((await api.getFlag('fz-project', 'fz-flag')).status).toBe(200)
}, 120_000)

/**
 * Query values as they appear in a URL, already percent-encoded (or broken): what the decoder, the
 * schema and a coercing transform each choke on. Long values and comma lists reach past the limits
 * of repeatable parameters, whose items Elysia once checked only after its own validation (a 500).
 */
const RAW_QUERY_VALUES = [
  '',
  ' ',
  '+',
  '%2B',
  '%',
  '%%',
  '%zz',
  '%2',
  '%ED%A0%80',
  '%ED%BF%BF',
  '%C0%AF',
  '%F0%9F%98',
  '%FF',
  '%00',
  '%0A%0D',
  '%E2%80%AE',
  '%EF%BB%BF',
  '%F0%9F%98%80',
  'a'.repeat(300),
  'b'.repeat(3000),
  'a,'.repeat(150),
  ',',
  ',,',
  'a,b',
  '[]',
  '[a,b]',
  '[' + 'x,'.repeat(120) + ']',
  '{"a":1}',
  '%7B%7D',
  ':',
  'a:',
  ':a',
  'simple:x',
  'simple:fz-tag',
  `simple:${'v'.repeat(250)}`,
  'simple:' + 'v,'.repeat(120),
  '0',
  '-1',
  '1.5',
  '1e309',
  'NaN',
  'Infinity',
  'true',
  'false',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'IS:',
  'IS:x',
  'IS_ANY_OF:a,b',
  'IS:2026-02-30',
  'IS_ANY_OF:' + 'a,'.repeat(200) + 'a!',
  '..%2F..%2Fetc%2Fpasswd',
  '%3Cscript%3E',
  '%26x%3D1',
  '%3D',
]
/** Names of parameters nobody declared, or declared names in the shapes other parsers give meaning to. */
function rawQueryKey(random: Random, declared: string[]): string {
  const name =
    declared.length > 0 && random.chance(0.8)
      ? random.pick(declared)
      : random.pick(['zz', '__proto__', 'constructor', '', '%zz', '%ED%A0%80', 'limit', 'tag'])
  return random.pick([
    name,
    name,
    name,
    name,
    `${name}[]`,
    `${name}[0]`,
    `${name}.x`,
    encodeURIComponent(name).replace(/^./, c => `%${c.charCodeAt(0).toString(16)}`),
  ])
}

/** Path values as they appear in a URL: broken escapes, encoded separators and invalid UTF-8. */
const RAW_PATH_VALUES = [
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%F0%9F%98',
  '%',
  '%zz',
  '%00',
  '%2F',
  '%252F',
  '%2E%2E',
  '.%2E',
  '%20',
  '+',
  'a'.repeat(300),
  'b'.repeat(5000),
  '__proto__',
  'constructor',
  'NaN',
  '-1',
  '1e309',
  '%E2%80%AE',
  '%EF%BB%BF',
]

interface Operation {
  method: string
  path: string
  query: { name: string; repeatable: boolean }[]
}

function operationsOf(document: {
  paths: Record<string, Record<string, { parameters?: { in: string; name: string; schema?: { type?: string } }[] }>>
}): Operation[] {
  const operations: Operation[] = []
  for (const [path, methods] of Object.entries(document.paths)) {
    if (!path.startsWith('/api/')) continue
    for (const [method, operation] of Object.entries(methods)) {
      const query = (operation.parameters ?? [])
        .filter(p => p.in === 'query')
        .map(p => ({ name: p.name, repeatable: p.schema?.type === 'array' }))
      operations.push({ method: method.toUpperCase(), path, query })
    }
  }
  return operations
}

const QUERY_REQUESTS = 5_000

test(`${QUERY_REQUESTS} hostile query strings and path parameters on every documented route get 2xx/4xx JSON, never a 5xx`, async () => {
  const random = seededRandom(SEED + 1)
  const before = storeFileBytes()
  const operations = operationsOf((await api.get<Parameters<typeof operationsOf>[0]>('/swagger/json')).body)
  // The routes that take query parameters are the ones this test is for; they get a larger share.
  const withQuery = operations.filter(operation => operation.query.length > 0)
  const withQueryKeys = withQuery.map(operation => `${operation.method} ${operation.path}`)
  for (const key of ['GET /api/admin/projects/{projectId}/features', 'GET /api/admin/search/events'])
    expect(withQueryKeys).toContain(key)
  const failures: string[] = []
  const statuses = new Map<number, number>()
  for (let n = 0; n < QUERY_REQUESTS && failures.length < 20; n++) {
    const operation = random.chance(0.6) ? random.pick(withQuery) : random.pick(operations)
    const write = operation.method !== 'GET'
    // Reads see existing names too, so that the query reaches the filters; writes only names that do not exist.
    let hostileParams = 0
    const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (!write && random.chance(0.7)) {
        if (name === 'strategyId') return strategyId
        if (EXISTING[name]) return random.pick(EXISTING[name])
      }
      hostileParams++
      return random.pick(RAW_PATH_VALUES)
    })
    if (write && hostileParams === 0) continue
    const pairs: string[] = []
    const declared = operation.query.map(parameter => parameter.name)
    for (let i = random.int(0, 4); i > 0; i--) {
      const key = rawQueryKey(random, declared)
      for (let times = random.chance(0.25) ? random.int(2, 3) : 1; times > 0; times--) {
        pairs.push(random.chance(0.05) ? key : `${key}=${random.pick(RAW_QUERY_VALUES)}`)
      }
    }
    if (random.chance(0.05)) pairs.push(random.pick(['', '&', '=', '==', '&&=&']))
    const url = `http://localhost${path}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`
    let request: Request
    try {
      request = new Request(url, { method: operation.method, headers: { authorization: ADMIN_SECRET } })
    } catch {
      continue
    }
    const response = await Promise.race([api.app.handle(request), Bun.sleep(5000).then(() => null)])
    if (response === null) {
      failures.push(`${n}: ${operation.method} ${url.slice(0, 300)} hung`)
      continue
    }
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    const text = await bodyText(response)
    const allowed = response.status >= 400 && response.status < 500 ? true : !write && response.status === 200
    if (!allowed)
      failures.push(`${n}: ${operation.method} ${url.slice(0, 300)} → ${response.status} ${text.slice(0, 200)}`)
    if (response.status >= 400 && !isJsonError(response, text)) {
      failures.push(
        `${n}: ${operation.method} ${url.slice(0, 300)} → ${response.status} not a JSON error: ${text.slice(0, 200)}`,
      )
    }
  }
  expect(failures).toEqual([])
  // Both outcomes were reached: queries that passed to the filters, and queries refused by name.
  for (const status of [200, 400, 404]) expect(statuses.get(status) ?? 0).toBeGreaterThan(100)
  await api.services.store.flush()
  expect(storeFileBytes()).toEqual(before)
}, 60_000)
