/**
 * OFREP (docs/ofrep.md): the shapes and error codes of open-feature/protocol's service/openapi.yaml,
 * tokens and scope, values and reasons of every kind of flag, ETag and 304, CORS; checked through
 * the HTTP surface, and the state afterwards (nothing written by an evaluation).
 */
import { describe, expect, test } from 'bun:test'
import { createApp } from '../../../src/app'
import { Api, expectOk } from '../../helpers'
import {
  api,
  useFreshApi,
  ONE,
  BULK,
  strategies,
  type Evaluation,
  type Failure,
  sdkToken,
  evaluate,
  bulk,
  expectFailure,
  flagsOf,
} from './ofrep.setup'

useFreshApi()

describe('tokens', () => {
  test('frontend and client tokens, as Authorization (with or without Bearer) or X-API-Key; none or an unknown one is 401 and an admin token 403, without a body', async () => {
    await api.flagOn('checkout')
    const frontend = await sdkToken('frontend')
    const client = await sdkToken('client')
    const expected = { key: 'checkout', value: true, reason: 'STATIC', variant: 'on', metadata: { project: 'default' } }
    for (const token of [frontend, client]) {
      for (const headers of [
        { authorization: token },
        { authorization: `Bearer ${token}` },
        { 'x-api-key': token },
      ] as Record<string, string>[]) {
        const one = await api.post<Evaluation>(
          ONE('checkout'),
          { context: { targetingKey: 'u' } },
          { token: null, headers },
        )
        expectOk(one)
        expect(one.body).toEqual(expected)
        const all = await api.post(BULK, { context: { targetingKey: 'u' } }, { token: null, headers })
        expectOk(all)
        expect(flagsOf(all).get('checkout')).toEqual(expected)
      }
    }
    for (const path of [ONE('checkout'), BULK]) {
      for (const [headers, status] of [
        [{} as Record<string, string>, 401],
        [{ authorization: 'Bearer default:development.not-a-token' }, 401],
        [{ 'x-api-key': 'default:development.not-a-token' }, 401],
        [{ authorization: api.adminToken }, 403],
        [{ 'x-api-key': api.adminToken }, 403],
      ] as const) {
        const response = await api.post(path, { context: { targetingKey: 'u' } }, { token: null, headers })
        expect({ path, headers, status: response.status, text: response.text }).toEqual({
          path,
          headers,
          status,
          text: '',
        })
      }
    }
  })

  test("the token's projects and environment decide, as for the frontend API; another project's flag is FLAG_NOT_FOUND", async () => {
    expectOk(await api.createProject('other'), 201)
    await api.flagOn('mine')
    await api.flagOn('theirs', { name: 'default' }, 'development', 'other')
    await api.flagOn('production-only', { name: 'default' }, 'production')
    expectOk(await api.createFlag('default', 'archived-one'), 201)
    expectOk(await api.delete('/api/admin/projects/default/features/archived-one'), 202)
    const token = await sdkToken('frontend', ['default'], 'development')
    const all = await bulk(token)
    expectOk(all)
    expect([...flagsOf(all).keys()]).toEqual(['mine', 'production-only'])
    expect(flagsOf(all).get('production-only')).toMatchObject({ value: false, reason: 'DISABLED', variant: 'off' })
    expectFailure(await evaluate(token, 'theirs'), 404, 'FLAG_NOT_FOUND', 'theirs')
    expectFailure(await evaluate(token, 'archived-one'), 404, 'FLAG_NOT_FOUND', 'archived-one')
    const production = await sdkToken('client', ['*'], 'production')
    const there = flagsOf(await bulk(production))
    expect([...there.keys()]).toEqual(['mine', 'production-only', 'theirs'])
    expect(there.get('production-only')).toMatchObject({ value: true, reason: 'STATIC' })
    expect(there.get('theirs')).toMatchObject({ value: false, reason: 'DISABLED', metadata: { project: 'other' } })
  })
})

describe('values and reasons', () => {
  test('a plain flag is a boolean: DISABLED off in the environment, DEFAULT when no strategy applies, STATIC, TARGETING_MATCH or SPLIT when on', async () => {
    expectOk(await api.createFlag('default', 'switched-off'), 201)
    expectOk(await api.post(strategies('switched-off'), { name: 'default' }))
    await api.flagOn('everyone')
    expectOk(await api.createFlag('default', 'no-strategy'), 201)
    expectOk(await api.toggle('default', 'no-strategy', 'development', true))
    await api.flagOn('for-pro', {
      name: 'default',
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
    })
    await api.flagOn('listed-users', { name: 'userWithId', parameters: { userIds: 'alice, bob' } })
    await api.flagOn('half', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'half' },
    })
    await api.flagOn('all-of-them', {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'all' },
    })
    const token = await sdkToken()
    const answer = async (key: string, context: Record<string, unknown>) => {
      const response = await evaluate(token, key, context)
      expectOk(response)
      const { value, reason, variant } = response.body as Evaluation
      return { value, reason, variant }
    }
    expect(await answer('switched-off', { targetingKey: 'alice' })).toEqual({
      value: false,
      reason: 'DISABLED',
      variant: 'off',
    })
    expect(await answer('everyone', { targetingKey: 'alice' })).toEqual({
      value: true,
      reason: 'STATIC',
      variant: 'on',
    })
    expect(await answer('no-strategy', {})).toEqual({ value: true, reason: 'STATIC', variant: 'on' })
    expect(await answer('all-of-them', { targetingKey: 'alice' })).toEqual({
      value: true,
      reason: 'STATIC',
      variant: 'on',
    })
    expect(await answer('for-pro', { targetingKey: 'alice', plan: 'pro' })).toEqual({
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'on',
    })
    expect(await answer('for-pro', { targetingKey: 'alice', plan: 'free' })).toEqual({
      value: false,
      reason: 'DEFAULT',
      variant: 'off',
    })
    // properties as the frontend API takes them, too.
    expect(await answer('for-pro', { targetingKey: 'alice', properties: { plan: 'pro' } })).toEqual({
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'on',
    })
    expect(await answer('listed-users', { targetingKey: 'bob' })).toEqual({
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'on',
    })
    expect(await answer('listed-users', { targetingKey: 'carol' })).toEqual({
      value: false,
      reason: 'DEFAULT',
      variant: 'off',
    })
    // targetingKey is the userId and wins over a userId field.
    expect(await answer('listed-users', { targetingKey: 'bob', userId: 'carol' })).toEqual({
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'on',
    })
    const split = new Set<string>()
    for (let i = 0; i < 40; i++) split.add(JSON.stringify(await answer('half', { targetingKey: `user-${i}` })))
    expect([...split].sort()).toEqual(
      [
        JSON.stringify({ value: false, reason: 'DEFAULT', variant: 'off' }),
        JSON.stringify({ value: true, reason: 'SPLIT', variant: 'on' }),
      ].sort(),
    )
  })

  test("a flag with variants answers the variant's payload by type, the variant's name, SPLIT for a weighted choice and TARGETING_MATCH for an override; off it answers false, without a payload true", async () => {
    const variants = (list: Record<string, unknown>[]) =>
      list.map(variant => ({ weightType: 'variable', weight: 500, stickiness: 'default', ...variant }))
    const payloads: [string, Record<string, unknown>, unknown][] = [
      ['text', { type: 'string', value: 'blue' }, 'blue'],
      ['csv', { type: 'csv', value: 'a,b' }, 'a,b'],
      ['count', { type: 'number', value: '42.5' }, 42.5],
      ['settings', { type: 'json', value: '{"limit":3,"tags":["x"]}' }, { limit: 3, tags: ['x'] }],
    ]
    for (const [name, payload] of payloads) {
      await api.flagOn(name)
      expectOk(
        await api.put(
          `/api/admin/projects/default/features/${name}/environments/development/variants`,
          variants([{ name: `${name}-only`, weight: 1000, payload }]),
        ),
      )
    }
    await api.flagOn('two-ways')
    expectOk(
      await api.put(
        '/api/admin/projects/default/features/two-ways/environments/development/variants',
        variants([
          {
            name: 'red',
            payload: { type: 'string', value: 'r' },
            overrides: [{ contextName: 'userId', values: ['vip'] }],
          },
          { name: 'green', payload: { type: 'string', value: 'g' } },
        ]),
      ),
    )
    await api.flagOn('no-payload')
    expectOk(
      await api.put(
        '/api/admin/projects/default/features/no-payload/environments/development/variants',
        variants([{ name: 'plain' }]),
      ),
    )
    expectOk(await api.createFlag('default', 'variants-off'), 201)
    expectOk(
      await api.put(
        '/api/admin/projects/default/features/variants-off/environments/development/variants',
        variants([{ name: 'never', payload: { type: 'string', value: 'x' } }]),
      ),
    )
    await api.flagOn('strategy-variants', {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'sv' },
      constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
      variants: [
        {
          name: 'from-strategy',
          weight: 1000,
          weightType: 'variable',
          stickiness: 'default',
          payload: { type: 'number', value: '7' },
        },
      ],
    })
    const token = await sdkToken()
    const all = flagsOf(await bulk(token, { targetingKey: 'someone', plan: 'pro' }))
    for (const [name, , value] of payloads)
      expect(all.get(name)).toEqual({
        key: name,
        value,
        reason: 'STATIC',
        variant: `${name}-only`,
        metadata: { project: 'default' },
      })
    expect(all.get('no-payload')).toEqual({
      key: 'no-payload',
      value: true,
      reason: 'STATIC',
      variant: 'plain',
      metadata: { project: 'default' },
    })
    expect(all.get('variants-off')).toEqual({
      key: 'variants-off',
      value: false,
      reason: 'DISABLED',
      variant: 'disabled',
      metadata: { project: 'default' },
    })
    expect(all.get('strategy-variants')).toEqual({
      key: 'strategy-variants',
      value: 7,
      reason: 'TARGETING_MATCH',
      variant: 'from-strategy',
      metadata: { project: 'default' },
    })
    const notPro = await evaluate(token, 'strategy-variants', { targetingKey: 'someone', plan: 'free' })
    expect(notPro.body).toEqual({
      key: 'strategy-variants',
      value: false,
      reason: 'DEFAULT',
      variant: 'disabled',
      metadata: { project: 'default' },
    })
    expect((await evaluate(token, 'two-ways', { targetingKey: 'vip' })).body).toMatchObject({
      value: 'r',
      variant: 'red',
      reason: 'TARGETING_MATCH',
    })
    const seen = new Set<string>()
    for (let i = 0; i < 30; i++) {
      const { value, variant, reason } = (await evaluate(token, 'two-ways', { targetingKey: `user-${i}` }))
        .body as Evaluation
      seen.add(`${value}/${variant}/${reason}`)
    }
    expect([...seen].sort()).toEqual(['g/green/SPLIT', 'r/red/SPLIT'])
  })

  test('an evaluation writes nothing: no event, no change to the flags', async () => {
    await api.flagOn('checkout')
    const token = await sdkToken()
    const lastEvent = api.services.store.lastEventId
    const flagBefore = await api.get('/api/admin/projects/default/features/checkout')
    for (let i = 0; i < 3; i++) {
      expectOk(await evaluate(token, 'checkout'))
      expectOk(await bulk(token))
      await evaluate(token, 'nothing-here')
      await api.post(BULK, undefined, { token, raw: '{', headers: { 'content-type': 'application/json' } })
    }
    expect(await api.eventsAfter(lastEvent)).toEqual([])
    expect((await api.get('/api/admin/projects/default/features/checkout')).body).toEqual(flagBefore.body)
  })
})

describe('errors', () => {
  test('bad JSON, a body that is not an object and a wrong content type are PARSE_ERROR, a body over the limit GENERAL; the single flag answer names the key, the bulk one does not', async () => {
    await api.flagOn('checkout')
    const token = await sdkToken()
    for (const [path, key] of [
      [ONE('checkout'), 'checkout'],
      [BULK, undefined],
    ] as const) {
      const send = (raw: string, type: string | null) =>
        api.post(path, undefined, { token, raw, headers: type === null ? {} : { 'content-type': type } })
      expectFailure(await send('{"context": {', 'application/json'), 400, 'PARSE_ERROR', key)
      expectFailure(await send('[1, 2]', 'application/json'), 400, 'PARSE_ERROR', key)
      expectFailure(await send('"text"', 'application/json'), 400, 'PARSE_ERROR', key)
      expectFailure(await send('', 'application/json'), 400, 'PARSE_ERROR', key)
      expectFailure(await send('{"context":{}}', 'text/plain'), 415, 'PARSE_ERROR', key)
      expectFailure(await send('context=x', 'application/x-www-form-urlencoded'), 415, 'PARSE_ERROR', key)
      expectFailure(
        await send(JSON.stringify({ context: { targetingKey: 'u', big: 'x'.repeat(200_000) } }), 'application/json'),
        413,
        'GENERAL',
        key,
      )
      // Without a token, 401 comes first for a readable body, still without a body.
      const anonymous = await api.post(path, { context: {} }, { token: null })
      expect({ status: anonymous.status, text: anonymous.text }).toEqual({ status: 401, text: '' })
    }
  })

  test('a context that is not an object, or holds objects, is INVALID_CONTEXT; an empty targetingKey is TARGETING_KEY_MISSING; no targetingKey evaluates as the frontend API without a userId', async () => {
    await api.flagOn('checkout')
    const token = await sdkToken()
    const cases: [unknown, string][] = [
      ['text', 'INVALID_CONTEXT'],
      [[1], 'INVALID_CONTEXT'],
      [{ targetingKey: 42 }, 'INVALID_CONTEXT'],
      [{ targetingKey: 'u', nested: { a: 1 } }, 'INVALID_CONTEXT'],
      [{ targetingKey: 'u', properties: 'x' }, 'INVALID_CONTEXT'],
      [{ targetingKey: '' }, 'TARGETING_KEY_MISSING'],
      [{ targetingKey: '  ' }, 'TARGETING_KEY_MISSING'],
      [{ targetingKey: null }, 'TARGETING_KEY_MISSING'],
    ]
    for (const [context, code] of cases) {
      expectFailure(await evaluate(token, 'checkout', context), 400, code, 'checkout')
      expectFailure(await bulk(token, context), 400, code)
    }
    expectOk(await evaluate(token, 'checkout', {}))
    expectOk(await api.post(ONE('checkout'), {}, { token }))
    // Numbers and booleans are read as text, as the frontend API reads them.
    expectOk(await evaluate(token, 'checkout', { targetingKey: 'u', age: 30, beta: true, gone: null }))
  })

  test('an unknown key is 404 FLAG_NOT_FOUND with the key as sent; other paths and methods under /ofrep are not a flag not found', async () => {
    const token = await sdkToken()
    expectFailure(await evaluate(token, 'no-such-flag'), 404, 'FLAG_NOT_FOUND', 'no-such-flag')
    expectFailure(await evaluate(token, 'with space/ä'), 404, 'FLAG_NOT_FOUND', 'with space/ä')
    // A known path asked with another method: 405 with the method it takes, as everywhere.
    const get = await api.get('/ofrep/v1/evaluate/flags/x', { token })
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
    expect((get.body as Failure).errorCode).toBe('GENERAL')
    const missing = await api.get('/ofrep/v1/nothing', { token })
    expect(missing.status).toBe(404)
    expect((missing.body as Failure).errorCode).toBe('GENERAL')
    const other = await api.post('/ofrep/v2/evaluate', { context: {} }, { token })
    expect(other.status).toBe(404)
    expect((other.body as Failure).errorCode).toBe('GENERAL')
  })
})

describe('BASE_URI_PATH', () => {
  test('under a base path, the routes, their error shapes and CORS move with it', async () => {
    await api.flagOn('checkout')
    const token = await sdkToken()
    const based = new Api(createApp(api.services, { bodyLimit: 102400, basePath: '/flags' }), api.services, null)
    const one = await based.post<Evaluation>(
      `/flags${ONE('checkout')}`,
      { context: { targetingKey: 'u' } },
      { token, headers: { origin: 'https://shop.example.com' } },
    )
    expectOk(one)
    expect(one.body).toMatchObject({ key: 'checkout', value: true })
    expect(one.headers.get('access-control-allow-origin')).toBe('*')
    expectFailure(
      await based.post(`/flags${ONE('missing')}`, { context: {} }, { token }),
      404,
      'FLAG_NOT_FOUND',
      'missing',
    )
    expectFailure(
      await based.post(`/flags${BULK}`, { context: { targetingKey: '' } }, { token }),
      400,
      'TARGETING_KEY_MISSING',
    )
    const anonymous = await based.post(`/flags${BULK}`, { context: {} }, { token: null })
    expect({ status: anonymous.status, text: anonymous.text }).toEqual({ status: 401, text: '' })
  })
})
