/**
 * The admin tokens made at start: those INIT_ADMIN_API_TOKENS lists, or one generated on a first
 * start without them.
 */
import { afterEach, describe, expect, test } from 'bun:test'

import { createApp } from '../../../src/app'
import { createServices, initialise } from '../../../src/services'
import { openStore } from '../../../src/open-store'
import { Api, BODY_LIMIT, makeApi, tempDir, type TokenListBody, storeSnapshot, expectUnchanged } from '../../helpers'
import { ADMIN_SECRET_FORMAT, TOKENS, expectNoSecret, tokenCount } from './tokens.setup'

let api: Api
let cleanups: (() => void)[] = []
afterEach(async () => {
  await api?.close()
  for (const cleanup of cleanups) cleanup()
  cleanups = []
})

describe('INIT_ADMIN_API_TOKENS', () => {
  const ONE = '*:*.init-secret-one-0123456789'
  const TWO = '*:*.init-secret-two-0123456789'
  const THREE = '*:*.init-secret-three-0123456789'

  test('each init secret becomes an admin token for every project that works at once', async () => {
    api = await makeApi({ adminTokens: [ONE, TWO] })
    expect(tokenCount(api)).toBe(2)
    for (const secret of [ONE, TWO]) {
      expect((await api.get<TokenListBody>(TOKENS, { token: secret })).status).toBe(200)
    }
    const listed = (await api.get<TokenListBody>(TOKENS, { token: ONE })).body.tokens
    expect(listed).toHaveLength(2)
    for (const token of listed)
      expect(token).toMatchObject({ type: 'admin', role: 'admin', projects: ['*'], expiresAt: null })
    const created = api.events().filter(e => e.type === 'api-token-created')
    expect(created).toHaveLength(2)
    const everything = JSON.stringify(api.events()) + JSON.stringify(api.services.store.state)
    expectNoSecret(everything, ONE)
    expectNoSecret(everything, TWO)
  })

  test('events written with an init token carry createdByUserId -42, as Unleash bootstrap tokens do', async () => {
    api = await makeApi({ adminTokens: [ONE, TWO] })
    for (const secret of [ONE, TWO]) {
      const since = api.lastEventId()
      const response = await api.createProject(`by-${secret === ONE ? 'one' : 'two'}`, {}, { token: secret })
      expect(response.status).toBe(201)
      const events = await api.eventsAfter(since)
      expect(events.length).toBeGreaterThan(0)
      for (const event of events) {
        expect(event.createdByUserId).toBe(-42)
        expect(Object.keys(api.services.store.state.tokens)).toContain(event.createdBy)
      }
    }
    // The two tokens are still told apart by name.
    const creators = (await api.eventsAfter(0))
      .filter(e => e.type === 'project-created' && e.project?.startsWith('by-'))
      .map(e => e.createdBy)
    expect(new Set(creators).size).toBe(2)
  })

  test('initialising again with the same secrets creates no duplicates and no events', async () => {
    api = await makeApi({ adminTokens: [ONE, TWO] })
    const before = storeSnapshot(api)
    expect(await initialise(api.services, [ONE, TWO])).toBeNull()
    expect(await initialise(api.services, [TWO, ONE, ONE])).toBeNull()
    expectUnchanged(api, before)
  })

  test('a secret listed twice makes one token', async () => {
    api = await makeApi({ adminTokens: [ONE, ONE] })
    expect(tokenCount(api)).toBe(1)
    expect(api.events().filter(e => e.type === 'api-token-created')).toHaveLength(1)
  })

  test('a secret added to the list at a later start is created, the others are left alone', async () => {
    api = await makeApi({ adminTokens: [ONE] })
    const since = api.lastEventId()
    expect(await initialise(api.services, [ONE, THREE])).toBeNull()
    expect(tokenCount(api)).toBe(2)
    expect(api.eventsSince(since).map(e => e.type)).toEqual(['api-token-created'])
    expect((await api.get<TokenListBody>(TOKENS, { token: THREE })).status).toBe(200)
  })

  test('restarting on the same data directory with the same init secrets creates no duplicates', async () => {
    const dir = tempDir()
    cleanups.push(dir.remove)
    const first = await makeApi({ dataDir: dir.path, adminTokens: [ONE, TWO] })
    const tokensBefore = Object.keys(first.services.store.state.tokens).sort()
    const eventsBefore = first.lastEventId()
    await first.close()

    const store = await openStore(dir.path, { sync: true })
    const services = createServices(store)
    api = new Api(createApp(services, { bodyLimit: BODY_LIMIT }), services, dir.path)
    expect(await initialise(services, [ONE, TWO])).toBeNull()
    expect(Object.keys(services.store.state.tokens).sort()).toEqual(tokensBefore)
    expect(api.lastEventId()).toBe(eventsBefore)
    expect((await api.get<TokenListBody>(TOKENS, { token: ONE })).status).toBe(200)
  })
})

describe('first start without init tokens', () => {
  async function bareApi() {
    const store = await openStore(null, { sync: true })
    const services = createServices(store)
    const secret = await initialise(services, [])
    api = new Api(createApp(services, { bodyLimit: BODY_LIMIT }), services, null)
    return secret
  }

  test('initialise generates one admin secret that works, and stores only its hash', async () => {
    const secret = await bareApi()
    expect(secret).toMatch(ADMIN_SECRET_FORMAT)
    expect(tokenCount(api)).toBe(1)
    expect((await api.get<TokenListBody>(TOKENS, { token: secret! })).status).toBe(200)
    const since = api.lastEventId()
    expect((await api.createToken({ tokenName: 'second', type: 'admin' }, { token: secret! })).status).toBe(201)
    // Writes made with the generated bootstrap token carry -42 like the other bootstrap tokens.
    expect(api.eventsSince(since)[0].createdByUserId).toBe(-42)
    expectNoSecret(JSON.stringify(api.services.store.state) + JSON.stringify(api.events()), secret!)
  })

  test('a second initialise returns null and creates nothing', async () => {
    const secret = await bareApi()
    expect(secret).not.toBeNull()
    const before = storeSnapshot(api)
    expect(await initialise(api.services, [])).toBeNull()
    expectUnchanged(api, before)
    expect((await api.get<TokenListBody>(TOKENS, { token: secret! })).status).toBe(200)
  })
})
