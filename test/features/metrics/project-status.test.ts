/**
 * GET /api/admin/projects/:projectId/status: a project's flags by lifecycle stage and its stale and
 * potentially stale flags, as the console's overview shows them without the project's flag list.
 */
import { expect, setSystemTime, test } from 'bun:test'
import { type Api, expectError, expectOk, freshApiPerTest, tokenFor } from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Stage {
  currentFlags: number
  averageDays: number | null
  last30Days?: number
  flags: string[]
}
interface Status {
  lifecycleSummary: Record<'initial' | 'preLive' | 'live' | 'completed' | 'archived', Stage>
  staleFlags: { total: number; flags: string[] }
  potentiallyStaleFlags: { total: number; flags: string[] }
}

const DAY = 86_400_000
const flagPath = (name: string) => `/api/admin/projects/default/features/${name}`

test("counts the project's flags by stage with the first names, its stale and potentially stale ones, and writes nothing", async () => {
  const start = Date.parse('2026-03-01T10:00:00.000Z')
  // Made 50 days ago: a release flag's expected lifetime (40 days) is past.
  setSystemTime(new Date(start - 50 * DAY))
  await api.newFlag('default', 'old-release')
  setSystemTime(new Date(start))
  for (const name of ['fresh', 'on-in-prod', 'marked-stale', 'done', 'gone']) await api.newFlag('default', name)
  await api.newProject('other')
  await api.newFlag('other', 'elsewhere')
  setSystemTime(new Date(start + 2 * DAY))
  expectOk(await api.post(`${flagPath('on-in-prod')}/environments/production/on`, {}))
  expectOk(await api.patch(flagPath('marked-stale'), [{ op: 'replace', path: '/stale', value: true }]), 200)
  expectOk(await api.post(`${flagPath('done')}/lifecycle/complete`, { status: 'kept' }))
  expectOk(await api.delete(flagPath('gone')), 202)
  setSystemTime(new Date(start + 5 * DAY))
  const before = api.lastEventId()

  const answer = await api.get<Status>('/api/admin/projects/default/status')
  expect(answer.status).toBe(200)
  expect(answer.body).toEqual({
    lifecycleSummary: {
      // initial: old-release 55 days, fresh and marked-stale 5 days each; the others left it after 2.
      initial: {
        currentFlags: 3,
        averageDays: Math.round((55 + 5 + 5 + 2 + 2 + 2) / 6),
        flags: ['fresh', 'marked-stale', 'old-release'],
      },
      preLive: { currentFlags: 0, averageDays: 0, flags: [] },
      live: { currentFlags: 1, averageDays: 3, flags: ['on-in-prod'] },
      completed: { currentFlags: 1, averageDays: 3, flags: ['done'] },
      archived: { currentFlags: 1, averageDays: 3, last30Days: 1, flags: ['gone'] },
    },
    staleFlags: { total: 1, flags: ['marked-stale'] },
    potentiallyStaleFlags: { total: 1, flags: ['old-release'] },
  })
  expect(api.eventsSince(before)).toEqual([])
})

test('an unknown project is a 404; a token of another project gets the same 404', async () => {
  expectError(await api.get('/api/admin/projects/nope/status'), 404, 'NotFoundError', ['nope'])
  await api.newProject('other')
  const scoped = await tokenFor(api, 'other-reader', { projects: ['other'] })
  expectOk(await api.get('/api/admin/projects/other/status', { token: scoped }))
  expectError(await api.get('/api/admin/projects/default/status', { token: scoped }), 404, 'NotFoundError')
})
