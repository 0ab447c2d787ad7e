/**
 * Event search answers only with events about what the caller may read otherwise (issue 18,
 * item 3): a token that may not list tokens sees no token events, a token limited to some projects
 * sees no event of another project (nor the service-wide ones, which have none), by any filter or
 * free text, with totals and pages counting only what it sees. The exactness of totals and pages
 * over random logs, per kind of caller, is test/features/events/search/event-search.property.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { EventBody } from '../../helpers'
import { type Api, expectOk, makeApi, tokenFor } from '../../helpers'

let api: Api
const callers: Record<string, string> = {}

beforeAll(async () => {
  api = await makeApi()
  for (const project of ['mine', 'theirs']) {
    expectOk(await api.createProject(project), 201)
    expectOk(await api.createFlag(project, `${project}-flag`, { description: `${project}-secret-words` }), 201)
  }
  expectOk(
    await api.createToken({
      tokenName: 'ci-deployer',
      type: 'client',
      projects: ['theirs'],
      environment: 'production',
      expiresAt: '2099-01-01T00:00:00.000Z',
    }),
    201,
  )
  expectOk(await api.createToken({ tokenName: 'short-lived', type: 'admin', role: 'editor' }), 201)
  expectOk(await api.delete('/api/admin/api-tokens/short-lived'))
  expectOk(
    await api.post('/api/admin/user-admin', {
      username: 'auditor-ann',
      email: 'ann@example.com',
      rootRole: 'Viewer',
      password: 'Ann-Password-1!',
    }),
    201,
  )
  callers.admin = api.adminToken
  callers.viewer = await tokenFor(api, 'all-viewer', { role: 'viewer' })
  callers.editor = await tokenFor(api, 'all-editor', { role: 'editor' })
  callers.scopedAdmin = await tokenFor(api, 'mine-admin', { role: 'admin', projects: ['mine'] })
  callers.scopedViewer = await tokenFor(api, 'mine-viewer', { role: 'viewer', projects: ['mine'] })
}, 30_000)
afterAll(() => api.close())

/** Every event the search gives the caller, page by page, checking that totals agree with what is listed. */
async function everything(token: string, filter = ''): Promise<EventBody[]> {
  const found: EventBody[] = []
  let total = -1
  for (let offset = 0; ; offset += 7) {
    const page = await api.searchEvents(`?limit=7&offset=${offset}${filter}`, { token })
    expectOk(page)
    if (total === -1) total = page.body.total
    expect(page.body.total).toBe(total)
    found.push(...page.body.events)
    if (page.body.events.length < 7) break
  }
  expect(found.length).toBe(total)
  return found
}

describe('event search shows only what the caller may read otherwise', () => {
  test('each kind of caller: every event it finds is about something it can read through the other routes', async () => {
    const all = await everything(callers.admin)
    expect(all.some(event => event.type === 'api-token-created')).toBe(true)
    expect(all.some(event => event.type === 'user-created')).toBe(true)
    for (const [who, token] of Object.entries(callers)) {
      const listsTokens = (await api.get('/api/admin/api-tokens', { token })).status === 200
      const listsUsers = (await api.get('/api/admin/user-admin', { token })).status === 200
      const projects = (
        await api.get<{ projects: { id: string }[] }>('/api/admin/projects', { token })
      ).body.projects.map(project => project.id)
      const allProjects = projects.includes('theirs')
      const seen = await everything(token)
      // What it may read, and nothing else: the admin's list, less what it may not read.
      const readable = all.filter(
        event =>
          (listsTokens || !event.type.startsWith('api-token-')) &&
          (listsUsers || !event.type.startsWith('user-')) &&
          (allProjects || (event.project !== null && projects.includes(event.project))),
      )
      expect({ who, ids: seen.map(event => event.id) }).toEqual({ who, ids: readable.map(event => event.id) })
      expect({ who, some: seen.length > 0 }).toEqual({ who, some: true })
    }
  }, 30_000)

  test('a viewer asking for token or user events by type, by creator or by free text gets none, and total 0', async () => {
    const asked = [
      '?type=IS_ANY_OF:api-token-created,api-token-deleted',
      '?type=IS:user-created',
      '?query=auditor-ann',
      '?query=ci-deployer',
      '?query=2099-01-01',
      '?query=short-lived',
      '?type=IS:api-token-created&query=production',
    ]
    for (const query of asked) {
      const admin = await api.searchEvents(query)
      expect({ query, total: admin.body.total > 0 }).toEqual({ query, total: true })
      for (const token of [callers.viewer, callers.editor, callers.scopedViewer]) {
        const page = await api.searchEvents(query, { token })
        expectOk(page)
        expect({ query, total: page.body.total, events: page.body.events }).toEqual({ query, total: 0, events: [] })
        expect(page.text).not.toContain('ci-deployer')
        expect(page.text).not.toContain('auditor-ann')
      }
    }
  }, 30_000)

  test('a scoped token finds nothing of another project by project, flag, free text or id', async () => {
    const theirs = (await everything(callers.admin)).filter(event => event.project === 'theirs')
    expect(theirs.length).toBeGreaterThan(0)
    const ids = theirs.map(event => event.id).join(',')
    for (const query of [
      '?project=IS:theirs',
      '?feature=IS:theirs-flag',
      '?query=theirs-secret-words',
      `?id=IS_ANY_OF:${ids}`,
    ]) {
      for (const token of [callers.scopedAdmin, callers.scopedViewer]) {
        const page = await api.searchEvents(query, { token })
        expect({ query, total: page.body.total }).toEqual({ query, total: 0 })
      }
    }
    // Its own project's events it finds.
    expect(
      (await api.searchEvents('?query=mine-secret-words', { token: callers.scopedViewer })).body.total,
    ).toBeGreaterThan(0)
  }, 30_000)

  test('the deprecated per-flag event list leaves out the same events', async () => {
    for (const token of [callers.scopedAdmin, callers.scopedViewer]) {
      const response = await api.get<{ events: EventBody[]; totalEvents: number }>('/api/admin/events/theirs-flag', {
        token,
      })
      expectOk(response)
      expect(response.body).toMatchObject({ events: [], totalEvents: 0 })
    }
    const own = await api.get<{ events: EventBody[]; totalEvents: number }>('/api/admin/events/mine-flag', {
      token: callers.scopedViewer,
    })
    expect(own.body.totalEvents).toBeGreaterThan(0)
  }, 30_000)
})
