/**
 * Token names: the rules a new name must follow, the reserved names, and tokens stored under names
 * the rules now refuse.
 */
import { afterEach, describe, expect, test } from 'bun:test'

import { initialise } from '../../../src/services'
import {
  errorOf,
  type Api,
  sharedApp,
  makeApi,
  tempDir,
  type ApiResponse,
  type TokenListBody,
  expectError,
  storeSnapshot,
  expectUnchanged,
} from '../../helpers'
import { TOKENS } from './tokens.setup'

/** One app for the file; each test opens a fresh service of its own (helpers/shared-app.ts). */
const shared = await sharedApp()
let api: Api
let cleanups: (() => void)[] = []
afterEach(async () => {
  await api?.close()
  for (const cleanup of cleanups) cleanup()
  cleanups = []
})

describe('token names', () => {
  function expectNameRefused(response: ApiResponse, mention?: string) {
    expectError(response, 400, 'ValidationError')
    expect(errorOf(response).details?.map((detail: { path?: string }) => detail.path)).toContain('/tokenName')
    if (mention) expect(errorOf(response).message).toContain(mention)
  }

  test('names the flag rules refuse answer 400 naming /tokenName, and nothing is created', async () => {
    api = await shared.open()
    const before = storeSnapshot(api)
    for (const tokenName of [
      '.',
      '..',
      '',
      ' ',
      '   ',
      '\t',
      'two words',
      ' leading',
      'trailing ',
      'new\nline',
      'nul\u0000byte',
      'bell\u0007',
      'del\u007f',
      'bidi\u202Eevil',
      'isolate\u2066x',
      'zero\u200Bwidth',
      'caf\u00e9',
      'slash/name',
      'percent%2E',
      'x'.repeat(101),
    ]) {
      const response = await api.createToken({ tokenName, type: 'admin' })
      expect({ tokenName, status: response.status }).toEqual({ tokenName, status: 400 })
      expectNameRefused(response)
    }
    expectUnchanged(api, before)
  })

  test('"system", the bootstrap names and integers are reserved in any case: 400, nothing created', async () => {
    api = await shared.open()
    // The seeding really is recorded under "system": a token so named would pass for it in events.
    expect(api.events().some(event => event.createdBy === 'system')).toBe(true)
    const before = storeSnapshot(api)
    for (const tokenName of [
      'system',
      'System',
      'SYSTEM',
      'admin-bootstrap',
      'Admin-Bootstrap',
      'admin-bootstrap-2',
      'admin-bootstrap-ci',
    ]) {
      const response = await api.createToken({ tokenName, type: 'admin' })
      expect({ tokenName, status: response.status }).toEqual({ tokenName, status: 400 })
      expectNameRefused(response, 'reserved')
    }
    for (const tokenName of ['-42', '-1337', '0', '12345']) {
      const response = await api.createToken({
        tokenName,
        type: 'client',
        projects: ['default'],
        environment: 'development',
      })
      expect({ tokenName, status: response.status }).toEqual({ tokenName, status: 400 })
      expectNameRefused(response, 'number')
    }
    expectUnchanged(api, before)
  })

  test('a name with dots, underscores, dashes and digits works, is recorded as createdBy and is deletable by its name', async () => {
    api = await shared.open()
    for (const tokenName of ['ci.deploy_bot-1', 'v2.0', 'system-reader', 'bootstrap', 'r2d2', '-']) {
      const created = await api.createToken({ tokenName, type: 'admin' })
      expect({ tokenName, status: created.status }).toEqual({ tokenName, status: 201 })
      const since = api.lastEventId()
      expect((await api.createProject(`p-${api.lastEventId()}`, {}, { token: created.body.secret })).status).toBe(201)
      for (const event of api.eventsSince(since)) expect(event.createdBy).toBe(tokenName)

      const deleted = await api.delete(`${TOKENS}/${encodeURIComponent(tokenName)}`)
      expect({ tokenName, status: deleted.status }).toEqual({ tokenName, status: 200 })
      expect(api.services.store.state.tokens[tokenName]).toBeUndefined()
      expect(api.events().at(-1)).toMatchObject({ type: 'api-token-deleted', preData: { tokenName } })
      expectError(await api.get<TokenListBody>(TOKENS, { token: created.body.secret }), 401, 'AuthenticationRequired')
    }
  })

  test('a token stored under a name the rules now refuse still loads, works and can be deleted', async () => {
    const dir = tempDir()
    cleanups.push(dir.remove)
    const first = await makeApi({ dataDir: dir.path })
    // As an earlier version could have stored them: valid tokens renamed in the store.
    const legacy = ['two words', 'bidi\u202Ename', 'System']
    const secrets: Record<string, string> = {}
    for (const [index, name] of legacy.entries()) {
      const created = await first.createToken({ tokenName: `made-${index}`, type: 'admin' })
      expect(created.status).toBe(201)
      await first.services.store.transact({ name: 'older-version', userId: 0 }, tx => {
        const record = tx.get('tokens', created.body.tokenName)!
        tx.delete('tokens', record.tokenName)
        tx.put('tokens', name, { ...record, tokenName: name })
      })
      secrets[name] = created.body.secret
    }
    await first.close()

    api = await makeApi({ dataDir: dir.path })
    const listed = (await api.get<TokenListBody>(TOKENS)).body.tokens.map(
      (token: { tokenName: string }) => token.tokenName,
    )
    for (const name of legacy) {
      expect(listed).toContain(name)
      expect((await api.get('/api/admin/projects', { token: secrets[name] })).status).toBe(200)
      const since = api.lastEventId()
      expect((await api.delete(`${TOKENS}/${encodeURIComponent(name)}`)).status).toBe(200)
      expect(api.eventsSince(since)).toMatchObject([{ type: 'api-token-deleted', preData: { tokenName: name } }])
      expect(api.services.store.state.tokens[name]).toBeUndefined()
      expectError(await api.get('/api/admin/projects', { token: secrets[name] }), 401, 'AuthenticationRequired')
    }
  })

  test('a bootstrap token may be deleted; the next start makes its INIT_ADMIN_API_TOKENS secret exist again under its name', async () => {
    const INIT = '*:*.init-secret-for-deletion-0123456789'
    api = await makeApi({ adminTokens: [INIT] })
    const other = (await api.createToken({ tokenName: 'other-admin', type: 'admin' }, { token: INIT })).body.secret
    expect(api.services.store.state.tokens['admin-bootstrap']).toBeDefined()
    expect((await api.delete(`${TOKENS}/admin-bootstrap`, { token: other })).status).toBe(200)
    expectError(await api.get<TokenListBody>(TOKENS, { token: INIT }), 401, 'AuthenticationRequired')
    // The name is still not for users.
    expectError(
      await api.createToken({ tokenName: 'admin-bootstrap', type: 'admin' }, { token: other }),
      400,
      'ValidationError',
    )

    expect(await initialise(api.services, [INIT])).toBeNull()
    expect(api.services.store.state.tokens['admin-bootstrap']).toMatchObject({ userId: -42, projects: ['*'] })
    expect((await api.get<TokenListBody>(TOKENS, { token: INIT })).status).toBe(200)
  })
})
