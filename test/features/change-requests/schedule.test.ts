/**
 * Scheduled change requests: applied at their time as their author, once; after a restart when the
 * time passed while the service was down (the delay in the event); by exactly one of two instances
 * on one PostgreSQL database; and a schedule that cannot apply becomes failed, nothing of it applied.
 */
import { describe, expect, test } from 'bun:test'
import {
  asSession,
  cleanupAfterEach,
  expectOk,
  makeApi,
  newUser,
  signIn,
  waitFor,
  type Api,
  type EventRecord,
} from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'
import { PASSWORD } from './change-requests.setup'

const cleanup = cleanupAfterEach()
async function open(options: Parameters<typeof makeApi>[0] = {}): Promise<Api> {
  const api = await makeApi(options)
  cleanup.later(() => api.close().catch(() => api.abandon()))
  return api
}

const base = '/api/admin/projects/default'

/**
 * On `api`: flag checkout, production under change requests, and a request by the admin token
 * turning checkout on there, approved by bob and scheduled `inMs` from now. Answers its id.
 */
async function scheduled(api: Api, inMs: number, flag = 'checkout'): Promise<number> {
  expectOk(await api.createFlag('default', flag), 201)
  expectOk(
    await api.put(`${base}/environments/production/change-requests/config`, { changeRequestsEnabled: true }),
    204,
  )
  await newUser(api, { username: 'bob', rootRole: 'Editor', password: PASSWORD })
  const bob = asSession(await signIn(api, 'bob', PASSWORD))
  const created = await api.post<{ id: number }>(`${base}/environments/production/change-requests`, {
    feature: flag,
    action: 'updateEnabled',
    payload: { enabled: true },
  })
  expectOk(created)
  const id = created.body.id
  expectOk(await api.put(`${base}/change-requests/${id}/state`, { state: 'In review' }))
  expectOk(await api.put(`${base}/change-requests/${id}/state`, { state: 'Approved' }, bob))
  const scheduledAt = new Date(Date.now() + inMs).toISOString()
  expectOk(await api.put(`${base}/change-requests/${id}/state`, { state: 'Scheduled', scheduledAt }))
  return id
}

/** A copy of the stored request (the store's records are frozen and are not handed to matchers). */
const stateOf = (api: Api, id: number) => structuredClone(api.services.store.reader.get('changeRequests', String(id)))

const typesOf = (events: EventRecord[]) => events.map(event => event.type)

/** Whether a commit after `before` with an event of `type` is durable (its events are heard only then). */
const committed = (api: Api, before: number, type: string) => typesOf(api.eventsSince(before)).includes(type)

describe('scheduled change requests', () => {
  test('are applied at their time, as their author, once, with the request id in every event', async () => {
    const api = await open()
    const id = await scheduled(api, 300)
    const before = api.lastEventId()
    expect(stateOf(api, id)?.state).toBe('Scheduled')
    // Readers see a commit's state before it is durable; its events are heard once it is.
    await waitFor(() => committed(api, before, 'change-request-applied'), 'the schedule applied, durably')
    expect(stateOf(api, id)?.state).toBe('Applied')
    const events = api.eventsSince(before)
    expect(typesOf(events)).toEqual(['feature-strategy-add', 'feature-environment-enabled', 'change-request-applied'])
    for (const event of events) {
      expect(event.createdBy).toBe('admin-bootstrap')
      expect(event.data).toMatchObject({ changeRequestId: id })
    }
    expect(events[2].data).toMatchObject({ scheduledAt: expect.any(String), delayMs: expect.any(Number) })
    expect(api.services.store.state.flags.checkout.environments.production.enabled).toBe(true)
  })

  test('a schedule that cannot apply becomes failed with its reason and an event, nothing applied', async () => {
    const api = await open()
    // Time enough for the move below to land first on a loaded machine; the answer to it may come
    // after the schedule has failed, so the events are counted from before it.
    const id = await scheduled(api, 2000)
    const before = api.lastEventId()
    // An admin token moves what the change changes before its time.
    expectOk(await api.post(`${base}/features/checkout/environments/production/strategies`, { name: 'default' }))
    await waitFor(() => committed(api, before, 'change-request-schedule-failed'), 'the schedule failed, durably')
    expect(stateOf(api, id)).toMatchObject({
      state: 'Scheduled',
      schedule: { failureReason: expect.stringContaining('checkout') },
    })
    expect(typesOf(api.eventsSince(before))).toEqual(['feature-strategy-add', 'change-request-schedule-failed'])
    expect(api.services.store.state.flags.checkout.environments.production.enabled).toBe(false)
    const shown = await api.get<{ schedule: { status: string; failureReason: string } }>(
      `${base}/change-requests/${id}`,
    )
    expect(shown.body.schedule).toMatchObject({ status: 'failed', failureReason: expect.stringContaining('conflicts') })
  })

  test('a time that passed while the service was down is applied at start, the delay in the event', async () => {
    const where = ON_POSTGRES ? { database: await freshDatabase() } : { dataDir: cleanup.newDir() }
    const first = await open(where)
    const id = await scheduled(first, 1000)
    await first.close()
    await Bun.sleep(1200)
    const second = await open(where)
    await waitFor(() => stateOf(second, id)?.state === 'Applied', 'the schedule applied after the restart')
    const applied = (await second.eventsAfter(0)).filter(event => event.type === 'change-request-applied')
    expect(applied).toHaveLength(1)
    expect((applied[0].data as { delayMs: number }).delayMs).toBeGreaterThan(0)
    expect(second.services.store.state.flags.checkout.environments.production.enabled).toBe(true)
  })
})

describe.skipIf(!ON_POSTGRES)('two instances on one database', () => {
  test('exactly one of them applies a schedule', async () => {
    const database = await freshDatabase()
    const a = await open({ database })
    const b = await open({ database })
    const id = await scheduled(a, 500)
    await waitFor(
      () => stateOf(a, id)?.state === 'Applied' && stateOf(b, id)?.state === 'Applied',
      'both instances see it applied',
    )
    await a.services.store.flush()
    await b.services.store.flush()
    await Bun.sleep(300)
    const events = a.events()
    expect(typesOf(events).filter(type => type === 'change-request-applied')).toHaveLength(1)
    expect(typesOf(events).filter(type => type === 'feature-environment-enabled')).toHaveLength(1)
    expect(typesOf(b.events()).filter(type => type === 'change-request-applied')).toHaveLength(1)
  })
})
