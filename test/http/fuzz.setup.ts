/**
 * What the fuzz tests share: the fuzzed app, values that are hard on parsers, generators of bad
 * bodies, and the checks every answer must pass.
 */
import { afterAll, beforeAll } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../../src/services'
import type { Random } from '../random'
import { makeApi, tempDir, type Api, type StrategyBody } from '../helpers'

export const REQUESTS = 12_000
export const SEED = 6061
export const BODY_LIMIT = 20_000

/** Where the fuzzed app keeps its files (a data directory of its own, made by `useFuzzedApp`). */
let dir: { path: string; remove(): void }
export let api: Api
export let strategyId = ''
export let viewer = ''

/**
 * The app the calling file fuzzes, on a data directory of its own, with a project, two flags, a
 * tag, a strategy and a viewer token to aim at; made before the file's tests and removed after them.
 */
export function useFuzzedApp(): void {
  beforeAll(async () => {
    dir = tempDir('fuzz-')
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
}

export const HOSTILE = [
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
export const EXISTING: Record<string, string[]> = {
  projectId: ['fz-project', 'default'],
  featureName: ['fz-flag', 'fz-parent'],
  environment: ['development', 'production'],
  type: ['simple'],
  value: ['fz-tag'],
  parent: ['fz-parent'],
  tokenName: ['fz-viewer'],
}
export const STRING_KEYS = [
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
export const BOOLEAN_KEYS = [
  'stale',
  'archived',
  'impressionData',
  'enabled',
  'disabled',
  'caseInsensitive',
  'inverted',
  'downloadFile',
]
export const ARRAY_KEYS = [
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
export const OBJECT_KEYS = ['featureNaming', 'parameters', 'payload', 'context', 'bucket', 'data']

export function randomJson(random: Random, depth = 0): unknown {
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
export function wrongTyped(random: Random, key: string): unknown {
  if (STRING_KEYS.includes(key)) return random.pick([42, true, [], { nested: 'x' }, [random.pick(HOSTILE)]])
  if (BOOLEAN_KEYS.includes(key)) return random.pick(['true', 'yes', 1, 0, [], {}])
  if (ARRAY_KEYS.includes(key)) return random.pick(['a,b', 7, { 0: 'x' }, true])
  return random.pick(['not-an-object', 3, [1, 2], true])
}

/**
 * A JSON object that certainly breaks its schema: at least one key the route's schema lists (`known`)
 * holds the wrong type. Other keys may be anything: unknown ones are dropped, as Unleash ignores them.
 */
export function badObject(random: Random, known: string[]): Record<string, unknown> {
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
export function badArray(random: Random): unknown[] {
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

export type Body = { raw: string; contentType: string | null }

export function badBody(random: Random, arrayBody: boolean, known: string[]): Body {
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

export function encodePathValue(random: Random, value: string) {
  // Mostly percent-encoded; sometimes raw, so that the URL parser sees traversal and odd characters too.
  return random.chance(0.8) ? encodeURIComponent(value) : value.replace(/[\s#?]/g, '_')
}

export function storeFileBytes() {
  return [STATE_FILE, JOURNAL_FILE, EVENTS_FILE].map(file => readFileSync(join(dir.path, file)).toString('base64'))
}

/** Whether an error answer is our JSON error body: {id, name, message} as application/json. */
export function isJsonError(response: Response, text: string): boolean {
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
export async function bodyProperties(): Promise<Map<string, { properties: string[]; array: boolean } | null>> {
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
export const READING_POSTS = new Set([
  'POST /api/admin/features/validate',
  'POST /api/frontend',
  'POST /api/admin/features-batch/export',
  'POST /api/admin/features-batch/validate',
])
