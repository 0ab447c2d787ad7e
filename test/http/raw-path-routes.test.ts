/**
 * Bun's router over a socket (http/routing.ts): every path the app routes without a parameter is a
 * static route handed straight to the app, every other target goes through the comparison of the
 * segments sent with the resolved path. test/system/raw-paths.test.ts sends the raw targets.
 */
// Store-independent: it is about the routes the app declares.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { exactPaths, RAW_PATH_DEPTH, rawPathRoutes } from '../../src/http/routing'
import { BODY_LIMIT, makeApi, type Api } from '../helpers'

let api: Api
beforeAll(async () => {
  api = await makeApi()
})
afterAll(async () => api.close())

const withoutParameters = (paths: string[]) => [...new Set(paths.filter(path => !/[:*]/.test(path)))].sort()

test('the exact paths are the paths the app routes without a parameter, under the base path too', () => {
  for (const basePath of ['', '/flags/v1']) {
    const app = createApp(api.services, { bodyLimit: BODY_LIMIT, basePath })
    const paths = app.routes.map(route => route.path)
    const exact = exactPaths(app.routes)
    expect(exact.sort()).toEqual(withoutParameters(paths))
    for (const path of [
      '/api/frontend',
      '/api/client/features',
      '/api/client/metrics',
      '/ofrep/v1/evaluate/flags',
      '/health',
    ])
      expect(exact).toContain(basePath + path)
  }
  // A path that a client would send otherwise than written (a dot segment, an encoded character) is never exact.
  expect(
    exactPaths([{ path: '/a/../b' }, { path: '/a/./b' }, { path: '/a b' }, { path: '/ü' }, { path: '/a/b' }]),
  ).toEqual(['/a/b'])
})

test('an exact path is handed to the app as it is; the patterns check the segments of every other target', () => {
  const handle = (request: Request) => new Response(request.url)
  const routes = rawPathRoutes(handle, ['/api/frontend', '/health'])
  expect(routes['/api/frontend']).toBe(handle)
  expect(routes['/health']).toBe(handle)
  const patterns = Object.keys(routes).filter(path => path.includes(':'))
  expect(patterns).toHaveLength(RAW_PATH_DEPTH)
  for (const pattern of patterns) expect(routes[pattern]).not.toBe(handle)
})
