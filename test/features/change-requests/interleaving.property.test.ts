/**
 * Random interleavings of direct writes by an admin API token (which skips change requests) with
 * change requests made, approved and applied in between: the flags end exactly as the same
 * operations applied directly, in the order they took effect, on a service without change
 * requests; a request whose target moved meanwhile is refused with 409 and leaves everything as it
 * was (nothing half applied).
 */
import { describe, expect, test } from 'bun:test'
import { expectOk, makeApi, storeSnapshot, type Api, type FlagBody } from '../../helpers'
import { seededRandom, type Random } from '../../random'
import { add, api, people, requireRequests, setState, useFreshApi } from './change-requests.setup'

useFreshApi()

const FLAGS = ['f0', 'f1', 'f2']
const ENV = 'production'

interface Change {
  feature: string
  action: 'updateEnabled' | 'addStrategy' | 'patchVariant'
  payload: Record<string, unknown>
}

function randomChange(random: Random): Change {
  const feature = random.pick(FLAGS)
  switch (random.int(0, 2)) {
    case 0:
      return { feature, action: 'updateEnabled', payload: { enabled: random.chance(0.6) } }
    case 1:
      return {
        feature,
        action: 'addStrategy',
        payload: { name: 'flexibleRollout', parameters: { rollout: String(random.int(0, 100)) } },
      }
    default:
      return {
        feature,
        action: 'patchVariant',
        payload: { variants: [{ name: `v${random.int(0, 9)}`, weight: 1000, stickiness: 'default' }] },
      }
  }
}

/** The change through its direct route, with the admin token. */
function direct(target: Api, change: Change) {
  const path = `/api/admin/projects/default/features/${change.feature}/environments/${ENV}`
  switch (change.action) {
    case 'updateEnabled':
      return target.toggle('default', change.feature, ENV, change.payload.enabled as boolean)
    case 'addStrategy':
      return target.post(`${path}/strategies`, change.payload)
    case 'patchVariant':
      return target.put(`${path}/variants`, change.payload.variants)
  }
}

/** The flags' production environments, without the strategies' ids (each service makes its own). */
async function production(target: Api) {
  const result: Record<string, unknown> = {}
  for (const name of FLAGS) {
    const flag = (await target.getFlag('default', name)).body as FlagBody
    const environment = flag.environments.find(e => e.name === ENV)!
    result[name] = {
      enabled: environment.enabled,
      strategies: (environment.strategies ?? []).map(({ id: _, ...rest }) => rest),
      variants: environment.variants,
    }
  }
  return result
}

describe('direct admin-token writes interleaved with change requests', () => {
  test.each([1, 2, 3])('seed %i: the result is the operations applied in order; nothing half applied', async seed => {
    const random = seededRandom(seed)
    const model = await makeApi()
    try {
      for (const name of FLAGS) {
        await api.newFlag('default', name)
        await model.newFlag('default', name)
      }
      await requireRequests()
      const pending: { id: number; changes: Change[] }[] = []
      let applied = 0
      let refused = 0
      for (let step = 0; step < 30; step++) {
        const roll = random.next()
        if (roll < 0.45) {
          const change = randomChange(random)
          expect((await direct(api, change)).status).toBeLessThan(300)
          expect((await direct(model, change)).status).toBeLessThan(300)
        } else if (roll < 0.75 || pending.length === 0) {
          const changes = Array.from({ length: random.int(1, 3) }, () => randomChange(random))
          const created = await add(changes, people.alice)
          expectOk(created)
          expectOk(await setState(created.body.id, { state: 'In review' }, people.alice))
          expectOk(await setState(created.body.id, { state: 'Approved' }, people.bob))
          pending.push({ id: created.body.id, changes })
        } else {
          const { id, changes } = pending.splice(random.int(0, pending.length - 1), 1)[0]
          const before = storeSnapshot(api)
          const answer = await setState(id, { state: 'Applied' }, random.pick([people.alice, people.bob]))
          if (answer.status === 409) {
            refused++
            expect(storeSnapshot(api)).toEqual(before)
            continue
          }
          expectOk(answer)
          applied++
          for (const change of changes) expect((await direct(model, change)).status).toBeLessThan(300)
          const events = api.eventsSince(before.lastEventId)
          expect(new Set(events.map(e => e.createdAt)).size).toBe(1)
          for (const event of events) expect(event.data).toMatchObject({ changeRequestId: id })
        }
        expect(await production(api)).toEqual(await production(model))
      }
      // Both kinds happened, so the property was exercised.
      expect(applied + refused).toBeGreaterThan(0)
    } finally {
      await model.close()
    }
  })
})
