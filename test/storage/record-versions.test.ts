/**
 * What the store keeps of a record's versions: a write stores the record as the JSON it was given
 * (what the API answers and the files hold), with every part it did not change shared with the
 * version it replaced, so that versions still held (the change feed's buffer, for SDK streams and
 * delta polls that resume) cost only what changed.
 */
import { afterEach, expect, test } from 'bun:test'
import { expectOk, makeApi, paths, waitFor, type Api } from '../helpers'
import { freshDatabase, ON_POSTGRES } from '../test-store'

const opened: Api[] = []
afterEach(async () => {
  for (const api of opened.splice(0)) await api.close()
})

async function app(options: Parameters<typeof makeApi>[0] = {}): Promise<Api> {
  const api = await makeApi(options)
  opened.push(api)
  return api
}

const rollout = {
  name: 'flexibleRollout',
  parameters: { rollout: '50', stickiness: 'default', groupId: 'shared' },
  constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }],
}

test('a toggle keeps what it did not change from the version it replaces, and stores the same JSON', async () => {
  const api = await app()
  await api.flagOn('shared', rollout, 'production')
  expectOk(await api.post(paths.strategies('shared', 'development'), rollout))
  const before = api.services.store.state.flags.shared!

  expectOk(await api.toggle('default', 'shared', 'development', true))
  const after = api.services.store.state.flags.shared!

  expect(after).not.toBe(before)
  expect(after.environments.development!.enabled).toBe(true)
  expect(before.environments.development!.enabled).toBe(false)
  // Unchanged: the other environment whole, and the strategies of the one switched on.
  expect(after.environments.production).toBe(before.environments.production!)
  expect(after.environments.development!.strategies).toBe(before.environments.development!.strategies)
  expect(after.environments.development!.variants).toBe(before.environments.development!.variants)
  // Held versions cannot be changed through each other.
  expect(Object.isFrozen(after)).toBe(true)
  expect(Object.isFrozen(after.environments.development)).toBe(true)
  expect(Object.isFrozen(before.environments.development)).toBe(true)
  // What is stored is the JSON of what was written: the answer reads the same after a switch back.
  const on = await api.getFlag('default', 'shared')
  expectOk(on)
  expectOk(await api.toggle('default', 'shared', 'development', false))
  expectOk(await api.toggle('default', 'shared', 'development', true))
  expect((await api.getFlag('default', 'shared')).body).toEqual(on.body)
  expect(JSON.parse(JSON.stringify(api.services.store.state.flags.shared))).toEqual(
    api.services.store.state.flags.shared!,
  )
})

test('a change to one strategy keeps the flag’s other strategies and environments', async () => {
  const api = await app()
  await api.flagOn('edited', rollout, 'production')
  const second = await api.post<{ id: string }>(paths.strategies('edited', 'production'), { name: 'default' })
  expectOk(second)
  const before = api.services.store.state.flags.edited!
  const [first, kept] = before.environments.production!.strategies

  const changed = { ...rollout, parameters: { ...rollout.parameters, rollout: '75' } }
  expectOk(await api.put(`${paths.strategies('edited', 'production')}/${first!.id}`, changed))
  const after = api.services.store.state.flags.edited!

  const [firstAfter, keptAfter] = after.environments.production!.strategies
  expect(firstAfter!.parameters.rollout).toBe('75')
  expect(firstAfter!.constraints).toBe(first!.constraints)
  expect(keptAfter).toBe(kept!)
  expect(after.environments.development).toBe(before.environments.development!)
})

test.skipIf(!ON_POSTGRES)(
  'on PostgreSQL, a write made through another instance is shared with the version it replaces',
  async () => {
    const database = await freshDatabase()
    const a = await app({ database })
    const b = await app({ database })
    await a.flagOn('remote', rollout, 'production')
    await b.services.store.flush()
    await waitFor(
      () => b.services.store.state.flags.remote?.environments.production?.enabled === true,
      'B has the flag',
    )
    const before = b.services.store.state.flags.remote!

    expectOk(await a.toggle('default', 'remote', 'development', true))
    await waitFor(() => b.services.store.state.flags.remote !== before, 'B has the toggle')
    const after = b.services.store.state.flags.remote!

    expect(after.environments.development!.enabled).toBe(true)
    expect(after.environments.production).toBe(before.environments.production!)
    expect(Object.isFrozen(after.environments.development)).toBe(true)
    expect(after).toEqual(a.services.store.state.flags.remote!)
  },
)
