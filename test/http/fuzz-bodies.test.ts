/**
 * Fuzz: thousands of generated bad requests across every route (seeded, so a failure can be
 * replayed). Each must get a 4xx JSON error (reads may also answer 200), never a 500 or a hang, and
 * afterwards the data files are byte-identical, Object.prototype is clean and /health is fine.
 */
import { expect, test } from 'bun:test'

import { seededRandom } from '../random'
import { ADMIN_SECRET, bodyText } from '../helpers'
import {
  REQUESTS,
  SEED,
  api,
  strategyId,
  viewer,
  useFuzzedApp,
  HOSTILE,
  EXISTING,
  badBody,
  encodePathValue,
  storeFileBytes,
  isJsonError,
  bodyProperties,
  READING_POSTS,
} from './fuzz.setup'

useFuzzedApp()

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
