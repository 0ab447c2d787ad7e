/**
 * Flags (contract §6 "Flags" and "Per environment", §5 name rules and naming patterns, §4 events,
 * §6 lifecycle).
 */
import { describe, expect, test } from 'bun:test'
import { tokenFor, withTimeout, expectStatus, errorOf, ISO_MS, FLAG_TYPES, defined } from '../../helpers'
import { api, useFreshApi, readFlag, environmentOf, listedNames, archive, types, flagEvent } from './flags.setup'

useFreshApi()

describe('POST /api/admin/projects/:projectId/features', () => {
  test('creating a flag answers 201 with the full flag: seed 2.1 fields, one entry per environment, lifecycle initial', async () => {
    const response = await api.createFlag('default', 'new-checkout', {
      description: 'The new checkout',
      impressionData: true,
    })
    expectStatus(response, 201)
    const flag = response.body
    expect(flag).toMatchObject({
      name: 'new-checkout',
      type: 'release',
      description: 'The new checkout',
      project: 'default',
      enabled: false,
      stale: false,
      favorite: false,
      impressionData: true,
      archived: false,
      archivedAt: null,
      lastSeenAt: null,
      variants: [],
      strategies: [],
      tags: [],
      children: [],
      dependencies: [],
      lifecycle: { stage: 'initial' },
    })
    expect(flag.createdAt).toMatch(ISO_MS)
    expect(flag.lifecycle.enteredStageAt).toMatch(ISO_MS)
    expect(flag.createdBy).toMatchObject({ id: -42, name: 'admin-bootstrap' })
    expect(typeof flag.createdBy.imageUrl).toBe('string')
    expect(flag.environments).toHaveLength(2)
    const [development, production] = flag.environments
    for (const [entry, name, type, sortOrder] of [
      [development, 'development', 'development', 100],
      [production, 'production', 'production', 200],
    ] as const) {
      expect(entry).toMatchObject({
        name,
        environment: name,
        featureName: 'new-checkout',
        type,
        enabled: false,
        sortOrder,
        variantCount: 0,
        lastSeenAt: null,
        hasStrategies: false,
        hasEnabledStrategies: false,
      })
    }
    // What GET answers afterwards is what the creation answered.
    expect(await readFlag('default', 'new-checkout')).toEqual(flag)
    expect(await listedNames('default')).toEqual(['new-checkout'])
  })

  test('a flag created without description, type or impressionData gets null, release and false', async () => {
    const flag = await api.newFlag('default', 'bare')
    expect(flag).toMatchObject({ description: null, type: 'release', impressionData: false })
  })

  test('creating a flag records feature-created with project, flag name, no environment and no tags', async () => {
    const before = api.lastEventId()
    await api.newFlag('default', 'created-event', { type: 'experiment' })
    const events = api.eventsSince(before)
    expect(types(events)).toEqual(['feature-created'])
    expect(events[0]).toMatchObject(flagEvent('feature-created', 'default', 'created-event', { environment: null }))
    expect(events[0].data).toMatchObject({ name: 'created-event', type: 'experiment', project: 'default' })
    expect(events[0].createdAt).toMatch(ISO_MS)
  })

  test('a flag created with a named token records that token as creator, in the flag and in the event', async () => {
    const secret = await tokenFor(api, 'alice')
    const before = api.lastEventId()
    const response = await api.createFlag('default', 'by-alice', {}, { token: secret })
    expectStatus(response, 201)
    expect(response.body.createdBy.name).toBe('alice')
    const event = defined((await api.eventsAfter(before)).find(e => e.type === 'feature-created'))
    expect(event.createdBy).toBe('alice')
    expect(event.createdByUserId).toBe(response.body.createdBy.id)
    expect(event.createdByUserId).not.toBe(-42)
  })

  // Each case of these three makes a flag of its own name or nothing, so the cases of each share one app.
  test('each of the five types is accepted', async () => {
    for (const type of FLAG_TYPES) {
      const flag = await api.newFlag('default', `typed-${type}`, { type })
      expect(flag.type).toBe(type)
      expect((await readFlag('default', `typed-${type}`)).type).toBe(type)
    }
  })

  test('types "feature", "Release", "kill_switch" and "" are refused with 400 ValidationError', async () => {
    for (const type of ['feature', 'Release', 'kill_switch', '']) {
      const before = api.lastEventId()
      const response = await api.createFlag('default', 'bad-type', { type })
      expect({ type, status: response.status }).toEqual({ type, status: 400 })
      expectStatus(response, 400, 'ValidationError')
      expect(api.eventsSince(before)).toEqual([])
      expectStatus(await api.getFlag('default', 'bad-type'), 404)
    }
  })

  test('a flag name that is empty, longer than 100 characters, not URL-safe, "." or ".." is refused with 400 ValidationError', async () => {
    for (const [what, name] of [
      ['empty', ''],
      ['longer than 100 characters', 'f'.repeat(101)],
      ['not URL-safe (a space)', 'new checkout'],
      ['not URL-safe (a slash)', 'team/flag'],
      ['not URL-safe (a non-ASCII letter)', 'naïve'],
      ['not URL-safe (a hash)', 'flag#1'],
      ['"."', '.'],
      ['".."', '..'],
    ]) {
      const before = api.lastEventId()
      const response = await api.createFlag('default', name!)
      expect({ what, status: response.status }).toEqual({ what, status: 400 })
      expectStatus(response, 400, 'ValidationError')
      expect(api.eventsSince(before)).toEqual([])
      expect(await listedNames('default')).toEqual([])
    }
  })

  test('a flag name of exactly 100 URL-safe characters is accepted', async () => {
    const name = 'f'.repeat(92) + "-_.~!*'("
    expect(name).toHaveLength(100)
    expect((await api.newFlag('default', name)).name).toBe(name)
  })

  test.each([['__proto__'], ['constructor'], ['hasOwnProperty']])(
    'a flag name that is also a JavaScript object key (%s) is stored, read and listed like any other name',
    async name => {
      const response = await withTimeout(api.createFlag('default', name))
      expectStatus(response, 201)
      expect(response.body.name).toBe(name)
      expect((await withTimeout(api.getFlag('default', name))).body.name).toBe(name)
      expect(await listedNames('default')).toEqual([name])
      expectStatus(await withTimeout(api.createFlag('default', name)), 409, 'NameExistsError')
      // The store still takes writes afterwards, including names that are keys of a flag record.
      expectStatus(await withTimeout(api.createFlag('default', 'description')), 201)
      expectStatus(await withTimeout(api.toggle('default', name, 'development', true)), 200)
      expect((await environmentOf('default', name, 'development')).enabled).toBe(true)
    },
  )

  test('whatever the answer to a flag named __proto__, the service keeps taking writes afterwards', async () => {
    await withTimeout(api.createFlag('default', '__proto__'))
    // `description` and `environments` are keys of a stored flag record.
    expectStatus(await withTimeout(api.createFlag('default', 'description')), 201)
    expectStatus(await withTimeout(api.createFlag('default', 'environments')), 201)
    expectStatus(await withTimeout(api.createProject('after-proto')), 201)
  })

  test('two creations of the same name at once in a project with a naming pattern: one 201, one 409', async () => {
    expectStatus(await api.put('/api/admin/projects/default', { featureNaming: { pattern: 'race-[0-9]+' } }), 200)
    const before = api.lastEventId()
    const responses = await withTimeout(
      Promise.all([api.createFlag('default', 'race-1'), api.createFlag('default', 'race-1')]),
    )
    expect(responses.map(r => r.status).sort()).toEqual([201, 409])
    expect(types(api.eventsSince(before))).toEqual(['feature-created'])
  })

  test('a taken name is refused with 409 NameExistsError, whether the flag is live or archived', async () => {
    await api.newFlag('default', 'taken-live')
    await api.newFlag('default', 'taken-archived')
    await archive('default', 'taken-archived')
    const before = api.lastEventId()
    expectStatus(await api.createFlag('default', 'taken-live'), 409, 'NameExistsError')
    expectStatus(await api.createFlag('default', 'taken-archived'), 409, 'NameExistsError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a name taken in another project is refused with 409 too: names are unique across projects', async () => {
    await api.newProject('second')
    await api.newFlag('default', 'everywhere')
    expectStatus(await api.createFlag('second', 'everywhere'), 409, 'NameExistsError')
    expect(await listedNames('second')).toEqual([])
  })

  test('a taken name is answered 409 before an unknown project would be 404', async () => {
    await api.newFlag('default', 'first-come')
    expectStatus(await api.createFlag('no-such-project', 'first-come'), 409, 'NameExistsError')
  })

  test('a free name in an unknown project answers 404 NotFoundError and records nothing', async () => {
    const before = api.lastEventId()
    expectStatus(await api.createFlag('no-such-project', 'free-name'), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })

  test("the project's naming pattern is enforced on create, anchored at both ends, with the pattern in the message", async () => {
    const naming = {
      pattern: '[a-z]+\\.[a-z-]+',
      example: 'checkout.new-flow',
      description: 'team, a dot, then the flag',
    }
    expectStatus(await api.put('/api/admin/projects/default', { featureNaming: naming }), 200)
    expectStatus(await api.createFlag('default', 'checkout.new-flow'), 201)
    const before = api.lastEventId()
    for (const name of ['Checkout.flow', 'checkout', 'x-checkout.flow', 'checkout.flow2']) {
      const response = await api.createFlag('default', name)
      expectStatus(response, 400, 'ValidationError')
      expect(errorOf(response).message).toContain('[a-z]+\\.[a-z-]+')
      expect(errorOf(response).message).toContain('checkout.new-flow')
      expect(errorOf(response).message).toContain('team, a dot, then the flag')
    }
    expect(api.eventsSince(before)).toEqual([])
    expect(await listedNames('default')).toEqual(['checkout.new-flow'])
  })

  test('an alternation pattern is matched as ^(?:pattern)$, so each alternative is anchored at both ends', async () => {
    expectStatus(await api.put('/api/admin/projects/default', { featureNaming: { pattern: 'alpha|beta' } }), 200)
    expectStatus(await api.createFlag('default', 'alpha'), 201)
    expectStatus(await api.createFlag('default', 'beta'), 201)
    expectStatus(await api.createFlag('default', 'alphabet'), 400, 'ValidationError')
    expectStatus(await api.createFlag('default', 'xbeta'), 400, 'ValidationError')
  })

  test("another project's naming pattern does not apply", async () => {
    await api.newProject('strict', { featureNaming: { pattern: 'strict-[0-9]+' } })
    expectStatus(await api.createFlag('default', 'Anything.Goes'), 201)
    expectStatus(await api.createFlag('strict', 'strict-1'), 201)
    expectStatus(await api.createFlag('strict', 'loose'), 400, 'ValidationError')
  })
})

describe('GET /api/admin/projects/:projectId/features/:featureName', () => {
  test('an unknown flag answers 404 NotFoundError', async () => {
    expectStatus(await api.getFlag('default', 'never-created'), 404, 'NotFoundError')
  })

  test('a flag of another project answers 404 like an unknown one, without naming its project', async () => {
    await api.newProject('secret-project')
    await api.newFlag('secret-project', 'hidden-flag')
    const elsewhere = await api.getFlag('default', 'hidden-flag')
    const unknown = await api.getFlag('default', 'absent-flag')
    expectStatus(elsewhere, 404, 'NotFoundError')
    expectStatus(unknown, 404, 'NotFoundError')
    expect(elsewhere.text).not.toContain('secret-project')
    expect(errorOf(elsewhere).message.replace('hidden-flag', 'NAME')).toBe(
      errorOf(unknown).message.replace('absent-flag', 'NAME'),
    )
  })

  test('a flag of an unknown project answers 404', async () => {
    await api.newFlag('default', 'only-in-default')
    expectStatus(await api.getFlag('no-such-project', 'only-in-default'), 404, 'NotFoundError')
  })
})

describe('PUT /api/admin/projects/:projectId/features/:featureName', () => {
  test('an update changes the given fields, leaves the others alone and records feature-metadata-updated with data and preData', async () => {
    await api.newFlag('default', 'meta', { description: 'old', type: 'release', impressionData: true })
    const before = api.lastEventId()
    const response = await api.put('/api/admin/projects/default/features/meta', {
      description: 'new',
      type: 'experiment',
    })
    expectStatus(response, 200)
    expect(response.body).toMatchObject({
      name: 'meta',
      description: 'new',
      type: 'experiment',
      impressionData: true,
      stale: false,
    })
    expect(await readFlag('default', 'meta')).toMatchObject({
      description: 'new',
      type: 'experiment',
      impressionData: true,
    })
    const events = api.eventsSince(before)
    expect(types(events)).toEqual(['feature-metadata-updated'])
    expect(events[0]).toMatchObject(flagEvent('feature-metadata-updated', 'default', 'meta'))
    expect(events[0].data).toMatchObject({ name: 'meta', description: 'new', type: 'experiment', impressionData: true })
    expect(events[0].preData).toMatchObject({ name: 'meta', description: 'old', type: 'release', impressionData: true })
  })

  test('marking a flag stale records feature-stale-on, and unmarking it feature-stale-off, without touching the lifecycle', async () => {
    const created = await api.newFlag('default', 'staling')
    let before = api.lastEventId()
    expectStatus(await api.put('/api/admin/projects/default/features/staling', { stale: true }), 200)
    let flag = await readFlag('default', 'staling')
    expect(flag.stale).toBe(true)
    expect(flag.lifecycle).toEqual(created.lifecycle)
    let events = api.eventsSince(before)
    expect(types(events).sort()).toEqual(['feature-metadata-updated', 'feature-stale-on'])
    expect(events.find(e => e.type === 'feature-stale-on')).toMatchObject(
      flagEvent('feature-stale-on', 'default', 'staling'),
    )
    expect(events.find(e => e.type === 'feature-metadata-updated')).toMatchObject({
      data: { stale: true },
      preData: { stale: false },
    })

    before = api.lastEventId()
    expectStatus(await api.put('/api/admin/projects/default/features/staling', { stale: false }), 200)
    flag = await readFlag('default', 'staling')
    expect(flag.stale).toBe(false)
    expect(flag.lifecycle).toEqual(created.lifecycle)
    events = api.eventsSince(before)
    expect(types(events).sort()).toEqual(['feature-metadata-updated', 'feature-stale-off'])
    expect(events.find(e => e.type === 'feature-stale-off')).toMatchObject(
      flagEvent('feature-stale-off', 'default', 'staling'),
    )
  })

  test('an update that changes nothing records no event', async () => {
    await api.newFlag('default', 'unchanged', { description: 'same' })
    const before = api.lastEventId()
    expectStatus(
      await api.put('/api/admin/projects/default/features/unchanged', { description: 'same', type: 'release' }),
      200,
    )
    expect(api.eventsSince(before)).toEqual([])
  })

  test('an update with a type outside the flag types is refused with 400 and changes nothing', async () => {
    await api.newFlag('default', 'typed', { type: 'operational' })
    const before = api.lastEventId()
    expectStatus(
      await api.put('/api/admin/projects/default/features/typed', { type: 'feature' }),
      400,
      'ValidationError',
    )
    expect((await readFlag('default', 'typed')).type).toBe('operational')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('updating an unknown flag answers 404 NotFoundError', async () => {
    expectStatus(
      await api.put('/api/admin/projects/default/features/ghost', { description: 'x' }),
      404,
      'NotFoundError',
    )
  })

  test('updating a flag through another project answers 404 and changes nothing', async () => {
    await api.newProject('owner')
    await api.newFlag('owner', 'owned', { description: 'mine' })
    const before = api.lastEventId()
    expectStatus(
      await api.put('/api/admin/projects/default/features/owned', { description: 'stolen' }),
      404,
      'NotFoundError',
    )
    expect((await readFlag('owner', 'owned')).description).toBe('mine')
    expect(api.eventsSince(before)).toEqual([])
  })
})
