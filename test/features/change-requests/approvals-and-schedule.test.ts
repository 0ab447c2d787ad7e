/**
 * `requiredApprovals` changed while requests are open: they are held to the setting as it is now,
 * not as it was when they went to review, each step an event naming the setting as its reason.
 * And a schedule cannot be set in the past.
 */
import { describe, expect, test } from 'bun:test'
import { errorOf, expectError, expectOk } from '../../helpers'
import {
  add,
  api,
  approved,
  enabledIn,
  getRequest,
  people,
  requireRequests,
  setState,
  useFreshApi,
  TURN_ON,
} from './change-requests.setup'

useFreshApi()

describe('requiredApprovals changed while a request is open', () => {
  test('lowered: a request in review with enough approvals is approved and applies', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests(2)
    const id = (await add(TURN_ON, people.alice)).body.id
    expectOk(await setState(id, { state: 'In review' }, people.alice))
    expectOk(await setState(id, { state: 'Approved' }, people.bob))
    expect((await getRequest(id)).body).toMatchObject({ state: 'In review', minApprovals: 2 })
    const before = api.lastEventId()
    await requireRequests(1)
    expect((await getRequest(id)).body).toMatchObject({
      state: 'Approved',
      minApprovals: 1,
      approvals: [{ createdBy: { username: 'bob' } }],
    })
    const events = await api.eventsAfter(before)
    expect(events.map(e => e.type)).toEqual(['change-request-configuration-updated', 'change-request-approved'])
    expect(events[1].data).toMatchObject({ changeRequestId: id, state: 'Approved', reason: expect.any(String) })
    expectOk(await setState(id, { state: 'Applied' }, people.alice))
    expect(await enabledIn('checkout')).toBe(true)
  })

  test('raised: an approved, scheduled request goes back to review, keeps its approvals, and needs more', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests(1)
    const id = await approved(TURN_ON)
    const later = new Date(Date.now() + 3_600_000).toISOString()
    expectOk(await setState(id, { state: 'Scheduled', scheduledAt: later }, people.alice))
    const before = api.lastEventId()
    await requireRequests(2)
    const after = (await getRequest(id)).body
    expect(after).toMatchObject({
      state: 'In review',
      minApprovals: 2,
      approvals: [{ createdBy: { username: 'bob' } }],
    })
    expect(after.schedule).toBeUndefined()
    expect((await api.eventsAfter(before)).map(e => e.type)).toEqual([
      'change-request-configuration-updated',
      'change-request-sent-to-review',
      'change-request-unscheduled',
    ])
    expectError(await setState(id, { state: 'Applied' }, people.alice), 409, 'ConflictError', ['In review'])
    expect(await enabledIn('checkout')).toBe(false)
    expectOk(await setState(id, { state: 'Approved' }, people.carol))
    expect((await getRequest(id)).body.state).toBe('Approved')
    expectOk(await setState(id, { state: 'Applied' }, people.alice))
    expect(await enabledIn('checkout')).toBe(true)
  })

  test('a setting that stays the same changes nothing and writes no event', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests(1)
    const id = await approved(TURN_ON)
    const before = api.lastEventId()
    await requireRequests(1)
    expect(await api.eventsAfter(before)).toEqual([])
    expect((await getRequest(id)).body).toMatchObject({ state: 'Approved', minApprovals: 1 })
  })
})

describe('scheduling', () => {
  test('a time in the past is refused with 400 naming scheduledAt, nothing changed', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests(1)
    const id = await approved(TURN_ON)
    const before = api.lastEventId()
    const past = new Date(Date.now() - 3_600_000).toISOString()
    const refused = await setState(id, { state: 'Scheduled', scheduledAt: past }, people.alice)
    expectError(refused, 400, 'ValidationError', ['in the past', past])
    expect(errorOf(refused).details?.[0]).toMatchObject({ path: '/scheduledAt' })
    expect(await api.eventsAfter(before)).toEqual([])
    const after = (await getRequest(id)).body
    expect(after.state).toBe('Approved')
    expect(after.schedule).toBeUndefined()
  })
})
