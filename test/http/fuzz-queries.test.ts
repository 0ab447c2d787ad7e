/**
 * Fuzz: hostile query strings and path parameters on every documented route (seeded, so a failure
 * can be replayed) get 2xx/4xx JSON answers, never a 5xx, and change no data file.
 */
import { expect, test } from 'bun:test'

import { seededRandom, type Random } from '../random'
import { ADMIN_SECRET, bodyText } from '../helpers'
import { SEED, api, strategyId, useFuzzedApp, EXISTING, storeFileBytes, isJsonError } from './fuzz.setup'

useFuzzedApp()

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
