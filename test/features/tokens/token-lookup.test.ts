/**
 * Authentication finds the token by its secret's hash in an index kept from the store's record
 * changes (not by comparing with every token). These tests check that the index says what the state
 * says after every kind of change: create, delete, both in one commit, a restart, and expiry.
 */
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import { createHash } from 'node:crypto'
import type { ApiTokenRecord } from '../../../src/features/tokens/tokens.records'
import { SYSTEM_ACTOR } from '../../../src/domain/events'
import {
  type Api,
  expectError,
  expectOk,
  makeApi,
  sharedApp,
  tempDir,
  tokenFor,
  type TokenListBody,
} from '../../helpers'

const TOKENS = '/api/admin/api-tokens'

/** One app for the file; each test opens a fresh service of its own (helpers/shared-app.ts). */
const shared = await sharedApp()
let api: Api
let cleanups: (() => void)[] = []
afterEach(async () => {
  setSystemTime()
  await api?.close()
  for (const cleanup of cleanups) cleanup()
  cleanups = []
})

/** The name of the token a secret acts as, read from the event its write records. */
async function actingAs(secret: string, flag: string, value: string): Promise<string> {
  const since = api.lastEventId()
  expectOk(await api.post(`/api/admin/features/${flag}/tags`, { type: 'simple', value }, { token: secret }), 201)
  const [event] = api.eventsSince(since)
  return event.createdBy
}

describe('token lookup by secret hash', () => {
  test('among 300 tokens each secret acts as its own token; unknown and deleted secrets answer 401', async () => {
    api = await shared.open()
    expectOk(await api.createFlag('default', 'who'), 201)
    const secrets = new Map<string, string>()
    for (let i = 0; i < 300; i++) secrets.set(`t-${i}`, await tokenFor(api, `t-${i}`))
    let n = 0
    for (const [name, secret] of secrets) {
      if (n++ % 15 !== 0) continue
      expect(await actingAs(secret, 'who', `v-${name}`)).toBe(name)
      expect(await actingAs(`Bearer ${secret}`, 'who', `b-${name}`)).toBe(name)
    }
    const [firstName, firstSecret] = [...secrets][0]
    expectError(
      await api.get<TokenListBody>(TOKENS, {
        token: `${firstSecret.slice(0, -1)}${firstSecret.endsWith('0') ? '1' : '0'}`,
      }),
      401,
      'AuthenticationRequired',
    )
    expectOk(await api.delete(`${TOKENS}/${firstName}`))
    expectError(await api.get<TokenListBody>(TOKENS, { token: firstSecret }), 401, 'AuthenticationRequired')
    // The others are untouched by the deletion.
    const [secondName, secondSecret] = [...secrets][1]
    expect(await actingAs(secondSecret, 'who', 'after-delete')).toBe(secondName)
  })

  test('a delete and a create in one commit: the old secret stops, the new one works', async () => {
    api = await shared.open()
    const oldSecret = await tokenFor(api, 'old')
    // Two requests that arrive together share one commit (group commit).
    const [deleted, created] = await Promise.all([
      api.delete(`${TOKENS}/old`),
      api.createToken({ tokenName: 'new', type: 'admin' }),
    ])
    expectOk(deleted)
    expectOk(created, 201)
    expectError(await api.get<TokenListBody>(TOKENS, { token: oldSecret }), 401, 'AuthenticationRequired')
    expectOk(await api.get<TokenListBody>(TOKENS, { token: created.body.secret }))
  })

  test('one transaction that moves a secret hash from one token to another, in either order, leaves the secret acting as the new token', async () => {
    api = await shared.open()
    expectOk(await api.createFlag('default', 'who'), 201)
    const store = api.services.store
    for (const [i, deleteFirst] of [
      [1, true],
      [2, false],
    ] as const) {
      const secret = await tokenFor(api, `before-${i}`)
      await store.transact(SYSTEM_ACTOR, tx => {
        const before = tx.get('tokens', `before-${i}`)!
        const after: ApiTokenRecord = { ...before, tokenName: `after-${i}` }
        if (deleteFirst) tx.delete('tokens', before.tokenName)
        tx.put('tokens', after.tokenName, after)
        if (!deleteFirst) tx.delete('tokens', before.tokenName)
      })
      expect(store.state.tokens[`before-${i}`]).toBeUndefined()
      expect(await actingAs(secret, 'who', `moved-${i}`)).toBe(`after-${i}`)
    }
  })

  test('a token created and deleted in one transaction leaves its secret unknown', async () => {
    api = await shared.open()
    const secret = '*:*.created-and-deleted-0123456789'
    await api.services.store.transact(SYSTEM_ACTOR, tx => {
      const admin = tx.get('tokens', 'admin-bootstrap')!
      tx.put('tokens', 'brief', {
        ...admin,
        tokenName: 'brief',
        secretHash: createHash('sha256').update(secret).digest('hex'),
      })
      tx.delete('tokens', 'brief')
    })
    expectError(await api.get<TokenListBody>(TOKENS, { token: secret }), 401, 'AuthenticationRequired')
  })

  test('after a restart every token works from the loaded state, and a deleted one stays refused', async () => {
    const dir = tempDir()
    cleanups.push(dir.remove)
    api = await makeApi({ dataDir: dir.path })
    const kept = await tokenFor(api, 'kept')
    const gone = await tokenFor(api, 'gone')
    expectOk(await api.delete(`${TOKENS}/gone`))
    await api.close()
    api = await makeApi({ dataDir: dir.path })
    expectOk(await api.get<TokenListBody>(TOKENS, { token: kept }))
    expectError(await api.get<TokenListBody>(TOKENS, { token: gone }), 401, 'AuthenticationRequired')
  })

  test('a token works until its expiresAt and answers 401 naming the expiry after it', async () => {
    api = await shared.open()
    const expiresAt = new Date(Date.now() + 60_000).toISOString()
    const response = await api.createToken({ tokenName: 'short-lived', type: 'admin', expiresAt })
    expectOk(response, 201)
    expectOk(await api.get<TokenListBody>(TOKENS, { token: response.body.secret }))
    setSystemTime(new Date(Date.parse(expiresAt) + 1))
    expectError(await api.get<TokenListBody>(TOKENS, { token: response.body.secret }), 401, 'AuthenticationRequired', [
      'short-lived',
      'expired',
    ])
  })
  test('a secret already verified stops at once when its token is deleted, and a new token of that name does not take it', async () => {
    api = await shared.open()
    const create = async () => {
      const response = await api.createToken({ tokenName: 'poller', type: 'client', environment: 'development' })
      expectOk(response, 201)
      return response.body.secret as string
    }
    const first = await create()
    for (let i = 0; i < 3; i++) expectOk(await api.get('/api/client/features', { token: first }))
    expectOk(await api.delete(`${TOKENS}/poller`))
    expectError(await api.get('/api/client/features', { token: first }), 401, 'AuthenticationRequired')
    const second = await create()
    expectOk(await api.get('/api/client/features', { token: second }))
    expectError(await api.get('/api/client/features', { token: first }), 401, 'AuthenticationRequired')
  })
})
