/**
 * A personal access token under change requests: it is its person, so it is held to review like a
 * signed-in session, adds to that person's draft, and cannot approve that person's request (four
 * eyes count people, not credentials).
 */
import { describe, expect, test } from 'bun:test'
import { expectError, expectOk, expectRefused } from '../../helpers'
import {
  add,
  api,
  crBase,
  enabledIn,
  getRequest,
  people,
  requireRequests,
  setState,
  useFreshApi,
  TURN_ON,
} from './change-requests.setup'

useFreshApi()

const FUTURE = '2099-01-01T00:00:00.000Z'
const turnOff = { feature: 'checkout', action: 'updateEnabled', payload: { enabled: false } }

/** A personal access token of the person signed in with `session`, as request options. */
async function patOf(session: (typeof people)['alice']) {
  const made = await api.post<{ secret: string }>(
    '/api/admin/user/tokens',
    { description: 'script', expiresAt: FUTURE },
    session,
  )
  expectOk(made, 201)
  return { token: made.body.secret }
}

describe('a personal access token under change requests', () => {
  test('gets the 409 on a guarded environment, with nothing written', async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    const pat = await patOf(people.alice)
    await expectRefused(api, () => api.toggle('default', 'checkout', 'production', true, pat), 409, 'ConflictError', [
      'change-requests',
    ])
    expect(await enabledIn('checkout')).toBe(false)
  })

  test("adds to its person's draft, and cannot approve its own person's request", async () => {
    await api.newFlag('default', 'checkout')
    await requireRequests()
    const alicePat = await patOf(people.alice)
    const bobPat = await patOf(people.bob)
    const first = await add(TURN_ON, people.alice)
    expectOk(first)
    const since = api.lastEventId()
    const second = await add(turnOff, alicePat)
    expectOk(second)
    // One draft per person × environment: the token's change lands in alice's draft.
    expect(second.body.id).toBe(first.body.id)
    expect(second.body.createdBy.username).toBe('alice')
    expect(second.body.features[0].changes.map(c => c.action)).toEqual(['updateEnabled', 'updateEnabled'])
    const [added] = api.eventsSince(since)
    expect(added).toMatchObject({ type: 'change-request-added', createdBy: 'alice' })
    const id = first.body.id
    // The token sends its person's request to review, and cannot approve it.
    expectOk(await setState(id, { state: 'In review' }, alicePat))
    await expectRefused(api, () => setState(id, { state: 'Approved' }, alicePat), 403, 'NoAccessError', [
      'someone else',
    ])
    expect((await getRequest(id)).body).toMatchObject({ state: 'In review', approvals: [] })
    // Another person's token approves; the author's token applies.
    const approvedByBob = await setState(id, { state: 'Approved' }, bobPat)
    expectOk(approvedByBob)
    expect(approvedByBob.body.approvals.map(a => a.createdBy.username)).toEqual(['bob'])
    // bob approved once, by session or token alike.
    expectError(await setState(id, { state: 'Approved' }, people.bob), 409, 'ConflictError')
    expectOk(await setState(id, { state: 'Applied' }, alicePat))
    expect(await enabledIn('checkout')).toBe(false)
    expect((await api.get<{ state: string }>(`${crBase()}/${id}`)).body.state).toBe('Applied')
  })
})
