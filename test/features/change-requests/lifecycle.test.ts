/** A change request from draft to applied, through HTTP, with its events; the direct-change guard. */
import { describe, expect, test } from 'bun:test'
import { expectError, expectOk, expectRefused, makeApi, tokenFor } from '../../helpers'
import {
  add,
  api,
  approved,
  crBase,
  enabledIn,
  envBase,
  getRequest,
  people,
  requireRequests,
  setState,
  useFreshApi,
} from './change-requests.setup'

useFreshApi()

describe('configuration', () => {
  test('is per project × environment, needs the admin permission, and is an event', async () => {
    const before = api.lastEventId()
    await requireRequests(2)
    const config = await api.get<
      { environment: string; type: string; changeRequestEnabled: boolean; requiredApprovals: number }[]
    >(`${crBase()}/config`)
    expectOk(config)
    expect(config.body).toContainEqual({
      environment: 'production',
      type: 'production',
      changeRequestEnabled: true,
      requiredApprovals: 2,
    })
    expect(config.body.find(c => c.environment === 'development')?.changeRequestEnabled).toBe(false)
    const events = await api.eventsAfter(before)
    expect(events.map(e => e.type)).toEqual(['change-request-configuration-updated'])
    await expectRefused(
      api,
      () => api.put(`${envBase()}/config`, { changeRequestsEnabled: false }, people.alice),
      403,
      'NoAccessError',
    )
    const bad = await api.put(`${envBase()}/config`, { changeRequestsEnabled: true, requiredApprovals: 11 })
    expectError(bad, 400, 'ValidationError')
  })
})

describe('direct changes in an environment under change requests', () => {
  test('a person gets 409 naming the route, for a toggle, a strategy, variants and archiving', async () => {
    await api.flagOn('checkout', { name: 'default' }, 'production')
    await requireRequests()
    const strategies = `/api/admin/projects/default/features/checkout/environments/production/strategies`
    const sends = [
      () => api.toggle('default', 'checkout', 'production', false, people.alice),
      () => api.post(strategies, { name: 'default' }, people.alice),
      () =>
        api.put(
          `${strategies.replace('/strategies', '/variants')}`,
          [{ name: 'blue', weight: 1000, stickiness: 'default' }],
          people.alice,
        ),
      () => api.delete('/api/admin/projects/default/features/checkout', people.alice),
    ]
    for (const send of sends) await expectRefused(api, send, 409, 'ConflictError', ['change request', `${envBase()}`])
    // Elsewhere the person still changes it directly.
    expectOk(await api.toggle('default', 'checkout', 'development', true, people.alice))
  })

  test('an admin API token skips it, and its events say so; enforce takes that away', async () => {
    await api.flagOn('checkout', { name: 'default' }, 'production')
    await requireRequests()
    const before = api.lastEventId()
    expectOk(await api.toggle('default', 'checkout', 'production', false))
    const [event] = await api.eventsAfter(before)
    expect(event).toMatchObject({ type: 'feature-environment-disabled', data: { changeRequestSkipped: true } })
    const strict = await makeApi({ changeRequestsForAdminTokens: 'enforce' })
    try {
      await strict.flagOn('checkout', { name: 'default' }, 'production')
      expectOk(await strict.put(`${envBase()}/config`, { changeRequestsEnabled: true, requiredApprovals: 1 }), 204)
      await expectRefused(strict, () => strict.toggle('default', 'checkout', 'production', false), 409, 'ConflictError')
    } finally {
      await strict.close()
    }
  })

  test('a token limited to the project, and a personal session, are told apart', async () => {
    await api.flagOn('checkout', { name: 'default' }, 'production')
    await requireRequests()
    const token = await tokenFor(api, 'ci', { projects: ['default'] })
    expectOk(await api.toggle('default', 'checkout', 'production', false, { token }))
    await expectRefused(
      api,
      () => api.toggle('default', 'checkout', 'production', true, people.bob),
      409,
      'ConflictError',
    )
  })
})

describe('the lifecycle', () => {
  test('draft → review → approved → applied, one write with the request id in every event', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    const created = await add(
      [
        {
          feature: 'checkout',
          action: 'addStrategy',
          payload: { name: 'flexibleRollout', parameters: { rollout: '50' } },
        },
        { feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } },
      ],
      people.alice,
    )
    expectOk(created)
    expect(created.body).toMatchObject({ state: 'Draft', createdBy: { username: 'alice' } })
    expect(created.body.features[0].changes.map(c => c.action)).toEqual(['addStrategy', 'updateEnabled'])
    // A second add goes to the same draft.
    const again = await add({ feature: 'checkout', action: 'patchVariant', payload: { variants: [] } }, people.alice)
    expect(again.body.id).toBe(created.body.id)
    const id = created.body.id
    expectOk(await setState(id, { state: 'In review' }, people.alice))
    expect(await enabledIn('checkout')).toBe(false)
    const before = api.lastEventId()
    expectOk(await setState(id, { state: 'Approved' }, people.bob))
    const applied = await setState(id, { state: 'Applied' }, people.bob)
    expectOk(applied)
    expect(applied.body.state).toBe('Applied')
    expect(await enabledIn('checkout')).toBe(true)
    const events = await api.eventsAfter(before)
    expect(events.map(e => e.type)).toEqual([
      'change-request-approved',
      'feature-strategy-add',
      'feature-environment-enabled',
      'feature-environment-variants-updated',
      'change-request-applied',
    ])
    for (const event of events) {
      expect(event.createdBy).toBe('bob')
      expect(event.data).toMatchObject({ changeRequestId: id })
    }
    expect(new Set(events.slice(1).map(e => e.createdAt)).size).toBe(1)
  })

  test('a change is checked as its direct route checks it, and a bad one adds nothing', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    await expectRefused(
      api,
      () => add({ feature: 'checkout', action: 'addStrategy', payload: { name: 'no-such-type' } }, people.alice),
      400,
      'ValidationError',
      ['no-such-type'],
    )
    await expectRefused(
      api,
      () => add({ feature: 'checkout', action: 'updateEnabled', payload: { enabled: 'yes' } }, people.alice),
      400,
      'ValidationError',
    )
    await expectRefused(
      api,
      () => add({ feature: 'missing', action: 'updateEnabled', payload: { enabled: true } }, people.alice),
      404,
      'NotFoundError',
    )
  })

  test('comments, title, reject with a comment, cancel, discard', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    const id = (await add({ feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } }, people.alice))
      .body.id
    expectOk(await api.post(`${crBase()}/${id}/comments`, { text: 'Why now?' }, people.bob))
    expectOk(await api.put(`${crBase()}/${id}/title`, { title: 'Checkout on' }, people.alice), 204)
    expect((await getRequest(id)).body).toMatchObject({ title: 'Checkout on', comments: [{ text: 'Why now?' }] })
    expectOk(await setState(id, { state: 'In review' }, people.alice))
    expectError(await setState(id, { state: 'Rejected' }, people.bob), 400, 'ValidationError')
    expectOk(await setState(id, { state: 'Rejected', comment: 'Not on a Friday' }, people.bob))
    expectError(await setState(id, { state: 'Applied' }, people.alice), 409, 'ConflictError')
    const second = (
      await add({ feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } }, people.alice)
    ).body.id
    expect(second).not.toBe(id)
    expectOk(await api.delete(`${crBase()}/${second}`, people.alice))
    expectError(await getRequest(second), 404, 'NotFoundError')
    const third = await approved({ feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } })
    expectError(await setState(third, { state: 'Cancelled' }, people.bob), 403, 'NoAccessError')
    expectOk(await setState(third, { state: 'Cancelled' }, people.alice))
    expect(await enabledIn('checkout')).toBe(false)
  })

  test('lists: open, pending for a flag, search', async () => {
    await api.newFlag('default', 'checkout')
    await api.newFlag('default', 'search')
    await requireRequests()
    const id = (await add({ feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } }, people.alice))
      .body.id
    expectOk(await setState(id, { state: 'In review' }, people.alice))
    const open = await api.get<{ id: number }[]>(`${crBase()}/open`)
    expect(open.body.map(r => r.id)).toEqual([id])
    expect((await api.get<unknown[]>(`${crBase()}/pending/checkout`)).body).toHaveLength(1)
    expect((await api.get<unknown[]>(`${crBase()}/pending/search`)).body).toHaveLength(0)
    const search = (query: string) => api.get<{ id: number }[]>(`/api/admin/search/change-requests?${query}`)
    expect((await search('requiresApprovalBy=bob')).body.map(r => r.id)).toEqual([id])
    expect((await search('requiresApprovalBy=alice')).body).toEqual([])
    expect((await search('createdBy=alice&state=In%20review')).body.map(r => r.id)).toEqual([id])
  })
})
