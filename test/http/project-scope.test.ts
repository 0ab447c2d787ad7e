/**
 * A token limited to some projects reads nothing of the others (contract §3), on every read route.
 * The routes are taken from the app itself, so a GET route added later is walked too, and the test
 * fails until it is classified here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CONSOLE_FILES } from '../../src/http/console-assets'
import {
  type Api,
  expectError,
  expectOk,
  makeApi,
  tokenFor,
  type StrategyBody,
  errorOf,
  withoutErrorId,
} from '../helpers'

/** Everything that belongs to the hidden project carries this marker, so a leak shows in any answer. */
const HIDDEN = 'theirs'
const MINE = 'mine'
const ENVIRONMENT = 'development'
/** What only the hidden project's data holds (its id and flag name are also in the paths asked for). */
const HIDDEN_DATA = ['title', 'variant', 'tag', 'description', 'archived', 'token'].map(what => `${HIDDEN}-${what}`)
const leaks = (text: string) => HIDDEN_DATA.some(marker => text.includes(marker))

interface World {
  api: Api
  /** A viewer limited to project `mine`. */
  scoped: string
  strategyIds: Record<string, string>
}

/** A project with a live flag (tag, strategy, variants, on) and an archived flag. */
async function populate(api: Api, project: string, strategyIds: Record<string, string>) {
  expectOk(await api.createProject(project), 201)
  const flag = `${project}-flag`
  expectOk(await api.createFlag(project, flag, { description: `${project}-description` }), 201)
  expectOk(await api.post(`/api/admin/features/${flag}/tags`, { type: 'simple', value: `${project}-tag` }), 201)
  const environmentPath = `/api/admin/projects/${project}/features/${flag}/environments/${ENVIRONMENT}`
  const strategy = await api.post<StrategyBody>(`${environmentPath}/strategies`, {
    name: 'flexibleRollout',
    title: `${project}-title`,
    parameters: { rollout: '50', stickiness: 'default', groupId: flag },
    // On the field the walk reads the strategies of (fill: contextField).
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
  })
  expectOk(strategy)
  strategyIds[project] = strategy.body.id
  expectOk(
    await api.put(`${environmentPath}/variants`, [
      { name: `${project}-variant`, weight: 1000, weightType: 'variable', stickiness: 'default' },
    ]),
  )
  // And in every environment, so that the flag-level variant read (production's) has some too.
  expectOk(
    await api.put(`/api/admin/projects/${project}/features/${flag}/variants`, [
      { name: `${project}-variant`, weight: 1000, weightType: 'variable', stickiness: 'default' },
    ]),
  )
  expectOk(await api.toggle(project, flag, ENVIRONMENT, true))
  // A change request turning the flag off (change request 1 is MINE's, see fill).
  expectOk(
    await api.post(`/api/admin/projects/${project}/environments/${ENVIRONMENT}/change-requests`, {
      feature: flag,
      action: 'updateEnabled',
      payload: { enabled: false },
    }),
  )
  expectOk(await api.createFlag(project, `${project}-archived`), 201)
  expectOk(await api.delete(`/api/admin/projects/${project}/features/${project}-archived`), 202)
  expectOk(
    await api.post('/api/admin/segments', {
      name: `${project}-segment`,
      project,
      description: `${project}-description`,
      constraints: [],
    }),
    201,
  )
  // A token limited to the project: its api-token-created event has no project but names it.
  expectOk(
    await api.createToken({ tokenName: `${project}-token`, type: 'admin', role: 'viewer', projects: [project] }),
    201,
  )
  // An application of the project's SDK that registered and reported the flag.
  const client = await api.createToken({
    tokenName: `${project}-client`,
    type: 'client',
    projects: [project],
    environment: ENVIRONMENT,
  })
  expectOk(client, 201)
  const sdk = { token: (client.body as { secret: string }).secret }
  expectOk(
    await api.post(
      '/api/client/register',
      { appName: `${project}-app`, instanceId: `${project}-instance`, strategies: ['default'] },
      sdk,
    ),
    202,
  )
  expectOk(
    await api.post(
      '/api/client/metrics',
      { appName: `${project}-app`, bucket: { start: 0, stop: 0, toggles: { [flag]: { yes: 1, no: 0 } } } },
      sdk,
    ),
    202,
  )
}

/** `withHidden`: the hidden project exists; without, the world in which it never did. */
async function world(withHidden: boolean): Promise<World> {
  const api = await makeApi()
  const strategyIds: Record<string, string> = {}
  await populate(api, MINE, strategyIds)
  if (withHidden) await populate(api, HIDDEN, strategyIds)
  const scoped = await tokenFor(api, 'scoped', { role: 'viewer', projects: [MINE] })
  return { api, scoped, strategyIds }
}

/** GET routes with no project in their path, and what a token limited to `mine` gets from them. */
const SERVICE_WIDE: Record<string, 'redirect' | 'public' | 'global' | 'filtered' | 'all-projects-only' | 'sso-off'> = {
  // No token needed; nothing about projects in them.
  // The console's page and its assets.
  '/': 'public',
  '/console/assets/:asset': 'public',
  '/health': 'public',
  '/ready': 'public',
  '/internal-backstage/prometheus': 'public',
  '/swagger': 'public',
  '/swagger/plugin': 'public',
  '/swagger/source.json': 'public',
  '/swagger/json': 'public',
  '/swagger/assets/:file': 'public',
  // Single sign-on in the browser: the ways to sign in; the sign-out goes back to the console;
  // the sign-in's steps answer a 404 page while single sign-on is off, as it is here.
  '/auth/options': 'public',
  '/auth/oidc/logout': 'redirect',
  '/auth/oidc/login': 'sso-off',
  '/auth/oidc/callback': 'sso-off',
  // Single sign-on's settings are over the whole service, and need ADMIN.
  '/api/admin/auth/oidc/settings': 'all-projects-only',
  '/api/admin/auth/simple/settings': 'all-projects-only',
  // Shared by every project.
  '/api/admin/environments': 'global',
  '/api/admin/strategies': 'global',
  '/api/admin/strategies/:name': 'global',
  '/api/admin/tag-types': 'global',
  '/api/admin/tag-types/:name': 'global',
  '/api/admin/feature-types': 'global',
  // Its usedInFeatures/usedInProjects count the token's projects only (test/features/context.test.ts).
  '/api/admin/context': 'global',
  '/api/admin/context/:contextField': 'global',
  // The strategies constraining on userId (fill): those of the token's projects only.
  '/api/admin/context/:contextField/strategies': 'filtered',
  // Lists over all projects: only the token's projects are in them.
  '/api/admin/projects': 'filtered',
  '/api/admin/archive/features': 'filtered',
  '/api/admin/features': 'filtered',
  '/api/admin/search/events': 'filtered',
  '/api/admin/search/features': 'filtered',
  '/api/admin/search/change-requests': 'filtered',
  '/api/admin/segments': 'filtered',
  // The first project's segment (see fill): readable, and nothing of the hidden project in it.
  '/api/admin/segments/:id': 'global',
  // Applications used with the token's projects (or with all-projects tokens), and that usage only.
  '/api/admin/metrics/applications': 'filtered',
  // The first project's application (see fill): its flags of other projects are left out.
  '/api/admin/metrics/applications/:appName': 'global',
  // Counts of the token's projects' flags only, naming none (test/features/flags/lifecycle.test.ts).
  '/api/admin/lifecycle/count': 'global',
  // Service-wide administration: only for tokens over all projects.
  '/api/admin/api-tokens': 'all-projects-only',
  // The deprecated event list needs ADMIN, as in Unleash: a token limited to projects is refused.
  '/api/admin/events': 'all-projects-only',
  // Users are people over the whole service: only tokens over all projects manage them.
  '/api/admin/user-admin': 'all-projects-only',
  '/api/admin/addons': 'all-projects-only',
  '/api/admin/addons/:id': 'all-projects-only',
  '/api/admin/addons/:id/events': 'all-projects-only',
  '/api/admin/user-admin/:id': 'all-projects-only',
  // Service accounts are over the whole service, and need ADMIN.
  '/api/admin/service-account': 'all-projects-only',
  '/api/admin/service-account/:id/token': 'all-projects-only',
  // A person's own tokens: an API token is no person (403), whatever its projects.
  '/api/admin/user/tokens': 'all-projects-only',
  // The caller itself (the token as an API user).
  '/api/admin/user': 'global',
}

/** Values for the path parameters of the walked routes; a parameter missing here fails the walk. */
function fill(path: string, project: string, strategyId: string): string {
  return path.replace(/:(\w+)/g, (_, name: string) => {
    switch (name) {
      case 'projectId':
        return project
      case 'featureName':
        return `${project}-flag`
      case 'environment':
        return ENVIRONMENT
      case 'strategyId':
        return strategyId
      case 'file':
        return 'swagger-ui.css'
      case 'asset':
        return CONSOLE_FILES[0]!.name
      case 'id':
        // A segment id: 1 is the segment of the project populated first (MINE).
        return '1'
      case 'changeRequestId':
        // Change request 1 is that of the project populated first (MINE).
        return '1'
      case 'name':
        return path.startsWith('/api/admin/tag-types/') ? 'simple' : 'flexibleRollout'
      case 'contextField':
        return 'userId'
      case 'appName':
        return `${MINE}-app`
      default:
        throw new Error(`The project-scope walk does not know the path parameter :${name} of ${path}; add it to fill()`)
    }
  })
}

/** True when the answer lists nothing: every array in it is empty. */
function listsNothing(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0
  if (value !== null && typeof value === 'object') return Object.values(value).every(listsNothing)
  return true
}

let hidden: World
let absent: World
beforeAll(async () => {
  hidden = await world(true)
  absent = await world(false)
})
afterAll(async () => {
  await hidden?.api.close()
  await absent?.api.close()
})

/** GET routes under a project whose answers name no project or flag. */
const NAMES_NOTHING = new Set([
  '/api/admin/projects/:projectId/features/:featureName/lifecycle',
  // Unleash's shape: each environment of the project and its setting.
  '/api/admin/projects/:projectId/change-requests/config',
])

describe('a token limited to one project', () => {
  test("reads of another flag's strategies and variants answer 404 exactly as GET of that flag does", async () => {
    const { api, scoped, strategyIds } = hidden
    const base = `/api/admin/projects/${HIDDEN}/features/${HIDDEN}-flag`
    const flag = await api.get(base, { token: scoped })
    expectError(flag, 404, 'NotFoundError')
    for (const path of [
      `${base}/environments/${ENVIRONMENT}/strategies`,
      `${base}/environments/${ENVIRONMENT}/strategies/${strategyIds[HIDDEN]}`,
      `${base}/environments/${ENVIRONMENT}/variants`,
    ]) {
      const response = await api.get(path, { token: scoped })
      expectError(response, 404, 'NotFoundError')
      expect(errorOf(response).message).toBe(errorOf(flag).message)
      expect(response.text).not.toContain(`${HIDDEN}-title`)
      expect(response.text).not.toContain(`${HIDDEN}-variant`)
      // The full-access token still reads them.
      expectOk(await api.get(path))
    }
  })

  test('every GET route of the app answers for another project exactly as for one that does not exist', async () => {
    const routes = hidden.api.app.routes.filter(route => route.method === 'GET')
    expect(routes.length).toBeGreaterThan(10)
    const unclassified: string[] = []
    let scopedRoutes = 0
    for (const route of routes) {
      const path = route.path
      const names = [...path.matchAll(/:(\w+)/g)].map(match => match[1])
      if (path.startsWith('/api/client/') || path === '/api/frontend' || path.startsWith('/api/frontend/')) {
        // The SDK APIs take client or frontend tokens only: an admin token, scoped or not, is refused before
        // any project is looked at (the SDK tokens' own scope: test/features/client/client.test.ts, frontend.test.ts).
        expectError(await hidden.api.get(fill(path, MINE, ''), { token: hidden.scoped }), 403, 'NoAccessError')
        continue
      }
      if (path === '/ofrep/v1/events') {
        // OFREP's event stream takes no token (EventSource sends no header): the channel a frontend or client
        // token's bulk evaluation names stands for that token, and without one any caller is 401 with no body
        // (the channel's own scope: test/features/ofrep/ofrep.test.ts).
        const response = await hidden.api.get(path, { token: hidden.scoped })
        expect({ path, status: response.status, text: response.text }).toEqual({ path, status: 401, text: '' })
        continue
      }
      if (path === '/api/admin/live') {
        // The console's live channel is a stream that never ends; what a scoped token hears on it is
        // test/features/streaming/live.test.ts (a token limited to some projects).
        continue
      }
      if (names.includes('projectId') || names.includes('featureName')) {
        scopedRoutes++
        // Every such route needs a token (an unauthenticated read would bypass the scope).
        const permission = (route.hooks as { detail?: Record<string, unknown> }).detail?.['x-permission']
        expect({ path, permission }).toEqual({ path, permission: 'NONE' })

        const own = await hidden.api.get(fill(path, MINE, hidden.strategyIds[MINE]), { token: hidden.scoped })
        expect({ path, status: own.status }).toEqual({ path, status: 200 })
        // An answer that names its project or flag names the caller's; a flag's lifecycle names neither (its stages only).
        if (!NAMES_NOTHING.has(path)) expect({ path, own: own.text.includes(`"${MINE}`) }).toEqual({ path, own: true })

        const other = await hidden.api.get(fill(path, HIDDEN, hidden.strategyIds[HIDDEN]), { token: hidden.scoped })
        const never = await absent.api.get(fill(path, HIDDEN, hidden.strategyIds[HIDDEN]), { token: absent.scoped })
        expect({ path, ...withoutErrorId(other) }).toEqual({ path, ...withoutErrorId(never) })
        if (other.status === 200) expect({ path, nothing: listsNothing(other.body) }).toEqual({ path, nothing: true })
        else expectError(other, 404, 'NotFoundError')
        expect({ path, leaks: leaks(other.text) }).toEqual({ path, leaks: false })
        continue
      }
      const kind = SERVICE_WIDE[path]
      if (!kind) {
        unclassified.push(path)
        continue
      }
      const response = await hidden.api.get(fill(path, MINE, ''), { token: hidden.scoped })
      if (kind === 'all-projects-only') {
        expectError(response, 403, 'NoAccessError')
        continue
      }
      const status = kind === 'redirect' ? 302 : kind === 'sso-off' ? 404 : 200
      expect({ path, status: response.status }).toEqual({ path, status })
      const named =
        leaks(response.text) || response.text.includes(`${HIDDEN}-flag`) || response.text.includes(`"${HIDDEN}"`)
      expect({ path, leaks: named }).toEqual({ path, leaks: false })
      if (kind === 'filtered') {
        // What the token may see is there: the walk is not passing on an empty answer.
        expect({ path, own: response.text.includes(`"${MINE}`) }).toEqual({ path, own: true })
        const full = await hidden.api.get(fill(path, MINE, ''))
        expect({ path, hiddenForAdmin: full.text.includes(`${HIDDEN}-`) || full.text.includes(`"${HIDDEN}"`) }).toEqual(
          { path, hiddenForAdmin: true },
        )
      }
    }
    expect(unclassified).toEqual([])
    expect(scopedRoutes).toBeGreaterThanOrEqual(6)
  })
})
