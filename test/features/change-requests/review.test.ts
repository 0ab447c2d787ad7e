/** The four-eyes rules, void-on-edit, and conflicts for each action, through HTTP. */
import { describe, expect, test } from 'bun:test'
import {
  asSession,
  expectError,
  expectOk,
  expectRefused,
  newUser,
  paths,
  signIn,
  type ApiResponse,
} from '../../helpers'
import {
  add,
  api,
  approved,
  crBase,
  enabledIn,
  getRequest,
  PASSWORD,
  people,
  type RequestBody,
  requireRequests,
  setState,
  useFreshApi,
  TURN_ON,
} from './change-requests.setup'

useFreshApi()

describe('four eyes', () => {
  test('the author cannot approve; nobody approves twice; the number of approvals is the setting', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests(2)
    const id = (await add(TURN_ON, people.alice)).body.id
    expectError(await setState(id, { state: 'Approved' }, people.bob), 409, 'ConflictError', ['Draft'])
    expectError(await setState(id, { state: 'In review' }, people.bob), 403, 'NoAccessError')
    expectOk(await setState(id, { state: 'In review' }, people.alice))
    await expectRefused(api, () => setState(id, { state: 'Approved' }, people.alice), 403, 'NoAccessError', [
      'someone else',
    ])
    const first = await setState(id, { state: 'Approved' }, people.bob)
    expect(first.body).toMatchObject({
      state: 'In review',
      minApprovals: 2,
      approvals: [{ createdBy: { username: 'bob' } }],
    })
    await expectRefused(api, () => setState(id, { state: 'Approved' }, people.bob), 409, 'ConflictError')
    expectError(await setState(id, { state: 'Applied' }, people.bob), 409, 'ConflictError', ['In review'])
    const second = await setState(id, { state: 'Approved' }, people.carol)
    expect(second.body.state).toBe('Approved')
    expect(second.body.approvals.map(a => a.createdBy.username)).toEqual(['bob', 'carol'])
    expectOk(await setState(id, { state: 'Applied' }, people.alice))
    expect(await enabledIn('checkout')).toBe(true)
  })

  test('only the author or an approver applies; a viewer cannot approve', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    await newUser(api, { username: 'victor', rootRole: 'Viewer', password: PASSWORD })
    const victor = asSession(await signIn(api, 'victor', PASSWORD))
    const id = (await add(TURN_ON, people.alice)).body.id
    expectOk(await setState(id, { state: 'In review' }, people.alice))
    await expectRefused(api, () => setState(id, { state: 'Approved' }, victor), 403, 'NoAccessError')
    expectOk(await setState(id, { state: 'Approved' }, people.bob))
    await expectRefused(api, () => setState(id, { state: 'Applied' }, people.carol), 403, 'NoAccessError')
    expectOk(await setState(id, { state: 'Applied' }, people.bob))
  })

  test('a revert is a change like any other: reviewed too', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    const id = await approved(TURN_ON)
    expectOk(await setState(id, { state: 'Applied' }, people.alice))
    await expectRefused(
      api,
      () => api.toggle('default', 'checkout', 'production', false, people.alice),
      409,
      'ConflictError',
    )
    const revert = (await add({ ...TURN_ON, payload: { enabled: false } }, people.alice)).body.id
    expectOk(await setState(revert, { state: 'In review' }, people.alice))
    expect(await enabledIn('checkout')).toBe(true)
  })
})

describe('void on edit', () => {
  test('editing a change of an approved request voids its approvals and sends it back to review', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    const id = await approved(TURN_ON)
    const before = api.lastEventId()
    expectOk(await api.put(`${crBase()}/${id}/title`, { title: 'Renamed' }, people.alice), 204)
    expect((await getRequest(id)).body.state).toBe('Approved')
    const edited = await api.put(`${crBase()}/${id}/changes/1`, { payload: { enabled: false } }, people.alice)
    expectOk(edited)
    expect(edited.body).toMatchObject({ state: 'In review', approvals: [] })
    const events = await api.eventsAfter(before)
    expect(events.map(e => e.type)).toEqual(['change-request-title-updated', 'change-request-added'])
    expect(events[1].data).toMatchObject({ changeRequestId: id, approvalsVoided: true })
    expectError(await setState(id, { state: 'Applied' }, people.alice), 409, 'ConflictError')
    await expectRefused(
      api,
      () => api.put(`${crBase()}/${id}/changes/1`, { payload: { enabled: true } }, people.bob),
      403,
      'NoAccessError',
    )
  })

  test('removing a change of a scheduled request unschedules it', async () => {
    await api.newFlag('default', 'checkout')
    await api.newFlag('default', 'search')
    await requireRequests()
    const id = await approved([TURN_ON, { ...TURN_ON, feature: 'search' }])
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const scheduled = await setState(id, { state: 'Scheduled', scheduledAt: later }, people.alice)
    expect(scheduled.body).toMatchObject({ state: 'Scheduled', schedule: { scheduledAt: later, status: 'pending' } })
    const before = api.lastEventId()
    expectOk(await api.delete(`${crBase()}/${id}/changes/2`, people.alice))
    const after = (await getRequest(id)).body
    expect(after).toMatchObject({ state: 'In review', approvals: [] })
    expect(after.schedule).toBeUndefined()
    expect((await api.eventsAfter(before)).map(e => e.type)).toEqual([
      'change-request-added',
      'change-request-unscheduled',
    ])
  })
})

const strategiesOf = (flag: string) => paths.strategies(flag, 'production')

/** Each action: the change, and a direct write by an admin token that moves what it changes. */
const CASES: [string, (ids: Ids) => unknown, (ids: Ids) => Promise<ApiResponse>][] = [
  ['updateEnabled', () => ({ enabled: true }), () => api.post(strategiesOf('checkout'), { name: 'default' })],
  ['addStrategy', () => ({ name: 'default' }), () => api.toggle('default', 'checkout', 'production', true)],
  [
    'updateStrategy',
    ids => ({ id: ids.strategy, name: 'flexibleRollout', parameters: { rollout: '10' } }),
    ids => api.put(`${strategiesOf('checkout')}/${ids.strategy}`, { name: 'default', title: 'moved' }),
  ],
  [
    'deleteStrategy',
    ids => ({ id: ids.strategy }),
    ids => api.put(`${strategiesOf('checkout')}/${ids.strategy}`, { name: 'default', title: 'moved' }),
  ],
  [
    'reorderStrategy',
    ids => [{ id: ids.strategy, sortOrder: 5 }],
    () => api.post(strategiesOf('checkout'), { name: 'default' }),
  ],
  [
    'patchVariant',
    () => ({ variants: [{ name: 'blue', weight: 1000, stickiness: 'default' }] }),
    () => api.put(paths.variants('checkout', 'production'), [{ name: 'red', weight: 1000, stickiness: 'default' }]),
  ],
  ['archiveFeature', () => ({}), () => api.toggle('default', 'checkout', 'production', true)],
  [
    'addDependency',
    () => ({ feature: 'parent' }),
    () => api.post(`${paths.flag('checkout')}/dependencies`, { feature: 'other-parent' }),
  ],
  [
    'deleteDependency',
    () => ({ feature: 'parent' }),
    () => api.post(`${paths.flag('checkout')}/dependencies`, { feature: 'other-parent' }),
  ],
  [
    'updateSegment',
    ids => ({ id: ids.segment, name: 'europe', constraints: [] }),
    ids =>
      api.put(`/api/admin/segments/${ids.segment}`, {
        name: 'eu',
        constraints: [{ contextName: 'region', operator: 'IN', values: ['eu-north'] }],
      }),
  ],
]

interface Ids {
  strategy: string
  segment: number
}

describe('conflicts', () => {
  test.each(CASES)(
    '%s: a moved target shows conflict, applying is 409 with nothing applied; a refresh mends it',
    async (action, payload, move) => {
      await api.newFlag('default', 'parent')
      await api.newFlag('default', 'other-parent')
      await api.newFlag('default', 'checkout')
      const segment = await api.post<{ id: number }>('/api/admin/segments', { name: 'eu', constraints: [] })
      const strategy = await api.post<{ id: string }>(strategiesOf('checkout'), {
        name: 'default',
        segments: [segment.body.id],
      })
      if (action === 'deleteDependency')
        expectOk(await api.post(`${paths.flag('checkout')}/dependencies`, { feature: 'parent' }))
      await requireRequests()
      const ids = { strategy: strategy.body.id, segment: segment.body.id }
      const change = { feature: action === 'updateSegment' ? null : 'checkout', action, payload: payload(ids) }
      const id = await approved(change)
      expect((await move(ids)).status).toBeLessThan(300)
      const shown = (await getRequest(id)).body
      const group = action === 'updateSegment' ? shown.segments[0] : shown.features[0]
      expect(group.conflict).toContain('Changed since')
      await expectRefused(api, () => setState(id, { state: 'Applied' }, people.alice), 409, 'ConflictError', [
        action === 'updateSegment' ? `segment ${ids.segment}` : '"checkout"',
      ])
      // The author refreshes the change: it goes back to review, without the conflict.
      const refreshed = await api.put<RequestBody>(
        `${crBase()}/${id}/changes/1`,
        { payload: payload(ids) },
        people.alice,
      )
      expectOk(refreshed)
      expect(refreshed.body.state).toBe('In review')
      expect(JSON.stringify(refreshed.body)).not.toContain('"conflict"')
      expectOk(await setState(id, { state: 'Approved' }, people.bob))
      expectOk(await setState(id, { state: 'Applied' }, people.bob))
    },
  )
})
