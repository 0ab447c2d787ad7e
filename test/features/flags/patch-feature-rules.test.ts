/**
 * PATCH (patchFeature): paths, value types, optimistic concurrency, archived flags, the events
 * recorded, the response, the pipeline and strict operations. The setup shared with patch-
 * feature.test.ts is patch-feature.setup.ts.
 */
import { describe, expect, test } from 'bun:test'
import {
  errorOf,
  FLAG_FIELDS,
  tokenFor,
  expectOk,
  type FlagListBody,
  ISO_MS,
  FLAG_TYPES,
  expectError,
  type FlagBody,
} from '../../helpers'
import { api, useFreshApi, read, metadata, patchRefused, expectAccepted } from './patch-feature.setup'

useFreshApi()

describe('PATCH: paths', () => {
  test('PATCH: a path that does not start with / answers 400 with a message naming the path', async () => {
    await api.newFlag('default', 'path-slash')
    await patchRefused('path-slash', [{ op: 'replace', path: 'description', value: 'x' }], 400, 'ValidationError', [
      'description',
    ])
    await patchRefused('path-slash', [{ op: 'replace', path: '', value: {} }], 400, 'ValidationError')
  })

  test('PATCH: a from that does not start with / answers 400', async () => {
    await api.newFlag('default', 'from-slash')
    await patchRefused('from-slash', [{ op: 'copy', from: 'name', path: '/description' }], 400, 'ValidationError')
  })

  test('PATCH: an unknown path answers 400 naming the path', async () => {
    await api.newFlag('default', 'path-unknown')
    await patchRefused('path-unknown', [{ op: 'add', path: '/color', value: 'red' }], 400, 'ValidationError', [
      '/color',
    ])
    await patchRefused('path-unknown', [{ op: 'replace', path: '/Description', value: 'x' }], 400, 'ValidationError')
    await patchRefused('path-unknown', [{ op: 'replace', path: '/', value: 'x' }], 400, 'ValidationError')
    await patchRefused('path-unknown', [{ op: 'replace', path: '/enabled', value: true }], 400, 'ValidationError')
    await patchRefused('path-unknown', [{ op: 'replace', path: '/archivedAt', value: null }], 400, 'ValidationError')
  })

  test('PATCH: an unresolvable path below a property answers 400', async () => {
    await api.newFlag('default', 'path-deep', { description: 'text' })
    await patchRefused('path-deep', [{ op: 'add', path: '/description/0', value: 'x' }], 400, 'ValidationError')
    await patchRefused('path-deep', [{ op: 'replace', path: '/stale/value', value: true }], 400, 'ValidationError')
  })

  test('PATCH: an unknown from answers 400', async () => {
    await api.newFlag('default', 'from-unknown')
    await patchRefused('from-unknown', [{ op: 'copy', from: '/color', path: '/description' }], 400, 'ValidationError', [
      '/color',
    ])
    await patchRefused(
      'from-unknown',
      [{ op: 'move', from: '/environments', path: '/description' }],
      400,
      'ValidationError',
    )
  })

  test('PATCH: replace of a property removed earlier in the patch is unresolvable (RFC 6902: the target must exist): 400', async () => {
    await api.newFlag('default', 'path-gone-replace', { description: 'text' })
    await patchRefused(
      'path-gone-replace',
      [
        { op: 'remove', path: '/description' },
        { op: 'replace', path: '/description', value: 'again' },
      ],
      400,
      'ValidationError',
    )
  })

  test('PATCH: copy or move from a property removed earlier in the patch is unresolvable (RFC 6902: from must exist): 400', async () => {
    await api.newFlag('default', 'path-gone-from', { description: 'text' })
    await patchRefused(
      'path-gone-from',
      [
        { op: 'remove', path: '/description' },
        { op: 'copy', from: '/description', path: '/description' },
      ],
      400,
      'ValidationError',
    )
    await patchRefused(
      'path-gone-from',
      [
        { op: 'remove', path: '/description' },
        { op: 'move', from: '/description', path: '/description' },
      ],
      400,
      'ValidationError',
    )
  })

  test('PATCH: copy or move without from answers 400', async () => {
    await api.newFlag('default', 'from-missing')
    await patchRefused('from-missing', [{ op: 'copy', path: '/description' }], 400, 'ValidationError', [/from/])
    await patchRefused('from-missing', [{ op: 'move', path: '/description' }], 400, 'ValidationError', [/from/])
  })

  test('PATCH: add, replace or test without value answers 400', async () => {
    await api.newFlag('default', 'value-missing')
    for (const op of ['add', 'replace', 'test']) {
      await patchRefused('value-missing', [{ op, path: '/description' }], 400, 'ValidationError', [/value/])
    }
  })

  test('PATCH: __proto__, constructor or prototype anywhere in a path answers 400 and Object.prototype is not polluted', async () => {
    await api.newFlag('default', 'path-proto')
    const attempts = [
      [{ op: 'add', path: '/__proto__', value: { polluted: 'yes' } }],
      [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }],
      [{ op: 'replace', path: '/constructor/prototype/polluted', value: 'yes' }],
      [{ op: 'add', path: '/constructor', value: { prototype: { polluted: 'yes' } } }],
      [{ op: 'add', path: '/prototype', value: 'yes' }],
      [{ op: 'add', path: '/description/__proto__/polluted', value: 'yes' }],
      [{ op: 'copy', from: '/__proto__', path: '/description' }],
      [{ op: 'move', from: '/constructor', path: '/description' }],
      [
        { op: 'replace', path: '/description', value: 'first' },
        { op: 'add', path: '/__proto__/polluted', value: 'yes' },
      ],
    ]
    for (const operations of attempts) {
      await patchRefused('path-proto', operations, 400, 'ValidationError')
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false)
    }
  })
})

describe('PATCH: value types', () => {
  test('PATCH: a wrong value type (stale: "yes") answers 400 naming the property', async () => {
    await api.newFlag('default', 'type-stale')
    await patchRefused('type-stale', [{ op: 'replace', path: '/stale', value: 'yes' }], 400, 'ValidationError', [
      'stale',
    ])
  })

  test('PATCH: booleans must be booleans (impressionData, archived, stale)', async () => {
    await api.newFlag('default', 'type-bools')
    for (const [path, value] of [
      ['/impressionData', 1],
      ['/impressionData', null],
      ['/archived', 'true'],
      ['/archived', {}],
      ['/stale', [true]],
      ['/stale', 0],
    ] as const) {
      await patchRefused('type-bools', [{ op: 'replace', path, value }], 400, 'ValidationError', [path.slice(1)])
    }
  })

  test('PATCH: removing a required boolean answers 400', async () => {
    await api.newFlag('default', 'type-remove-bool')
    await patchRefused('type-remove-bool', [{ op: 'remove', path: '/stale' }], 400, 'ValidationError', ['stale'])
    await patchRefused('type-remove-bool', [{ op: 'remove', path: '/archived' }], 400, 'ValidationError', ['archived'])
  })

  test('PATCH: description must be a string or null', async () => {
    await api.newFlag('default', 'type-description', { description: 'd' })
    await patchRefused(
      'type-description',
      [{ op: 'replace', path: '/description', value: 42 }],
      400,
      'ValidationError',
      ['description'],
    )
    await patchRefused(
      'type-description',
      [{ op: 'replace', path: '/description', value: { text: 'x' } }],
      400,
      'ValidationError',
      ['description'],
    )
    const flag = await expectAccepted('type-description', [{ op: 'replace', path: '/description', value: null }])
    expect(flag.description).toBeNull()
  })

  test('PATCH: type must be one of the flag types; the message lists them', async () => {
    await api.newFlag('default', 'type-flagtype')
    const response = await patchRefused(
      'type-flagtype',
      [{ op: 'replace', path: '/type', value: 'feature-toggle' }],
      400,
      'ValidationError',
      ['type'],
    )
    for (const type of FLAG_TYPES) expect(errorOf(response).message).toContain(type)
    await patchRefused('type-flagtype', [{ op: 'replace', path: '/type', value: null }], 400, 'ValidationError')
    await patchRefused('type-flagtype', [{ op: 'replace', path: '/type', value: 5 }], 400, 'ValidationError')
    await patchRefused('type-flagtype', [{ op: 'remove', path: '/type' }], 400, 'ValidationError')
    await patchRefused('type-flagtype', [{ op: 'replace', path: '/type', value: 'Release' }], 400, 'ValidationError')
  })

  test('PATCH: every flag type is accepted', async () => {
    await api.newFlag('default', 'type-all')
    for (const type of FLAG_TYPES) {
      const flag = await expectAccepted('type-all', [{ op: 'replace', path: '/type', value: type }])
      expect(flag.type).toBe(type)
    }
  })
})

describe('PATCH: optimistic concurrency', () => {
  test('PATCH: two concurrent test-then-replace patches on the same value give exactly one 200 and one 409', async () => {
    await api.newFlag('default', 'race', { description: 'base' })
    const since = api.lastEventId()
    const patchWith = (value: string) =>
      api.patchFlag('default', 'race', [
        { op: 'test', path: '/description', value: 'base' },
        { op: 'replace', path: '/description', value },
      ])
    const [first, second] = await Promise.all([patchWith('from-first'), patchWith('from-second')])
    expect([first.status, second.status].sort()).toEqual([200, 409])
    const winner = first.status === 200 ? first : second
    const loser = first.status === 200 ? second : first
    expectError(loser, 409, 'ConflictError')
    const flag = await read('race')
    expect(flag.description).toBe(winner.body.description)
    expect(['from-first', 'from-second']).toContain(flag.description ?? '')
    const events = await api.eventsAfter(since)
    expect(events.map(event => event.type)).toEqual(['feature-metadata-updated'])
    expect(events[0].data).toMatchObject({ description: flag.description })
  })

  test('PATCH: each of several concurrent patches answers with the flag as its own write left it', async () => {
    await api.newFlag('default', 'race-own', { description: 'base' })
    const values = Array.from({ length: 6 }, (_, i) => `own-${i}`)
    const responses = await Promise.all(
      values.map(value => api.patchFlag('default', 'race-own', [{ op: 'replace', path: '/description', value }])),
    )
    responses.forEach((response, i) => {
      expectOk(response)
      expect(response.body.description).toBe(values[i])
    })
    const events = await api.eventsAfter(api.lastEventId() - 6)
    expect(events.map(event => event.type)).toEqual(Array(6).fill('feature-metadata-updated'))
    expect((await read('race-own')).description).toBe(events[5].data!.description as string)
  })

  test('PATCH: many concurrent test-then-replace patches on the same value give exactly one 200', async () => {
    await api.newFlag('default', 'race-many', { description: 'base' })
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api.patchFlag('default', 'race-many', [
          { op: 'test', path: '/description', value: 'base' },
          { op: 'replace', path: '/description', value: `writer-${i}` },
        ]),
      ),
    )
    expect(responses.filter(r => r.status === 200)).toHaveLength(1)
    expect(responses.filter(r => r.status === 409)).toHaveLength(7)
  })
})

describe('PATCH: archived', () => {
  test('PATCH: /archived true archives the flag: archivedAt set, feature-archived recorded, gone from the list', async () => {
    await api.newFlag('default', 'arch-on')
    const since = api.lastEventId()
    const flag = await expectAccepted('arch-on', [{ op: 'replace', path: '/archived', value: true }])
    expect(flag.archived).toBe(true)
    expect(flag.archivedAt).toMatch(ISO_MS)
    expect(flag.lifecycle.stage).toBe('archived')
    const events = await api.eventsAfter(since)
    expect(events.map(event => event.type).sort()).toEqual(['feature-archived', 'feature-metadata-updated'])
    for (const event of events) expect(event).toMatchObject({ project: 'default', featureName: 'arch-on' })
    const list = await api.listFlags('default')
    expect(list.body.features.map((f: { name: string }) => f.name)).not.toContain('arch-on')
    const archive = await api.get<FlagListBody>('/api/admin/archive/features')
    expect(archive.body.features.map((f: { name: string }) => f.name)).toContain('arch-on')
  })

  test('PATCH: /archived false revives the flag: archivedAt cleared, off in every environment, feature-revived recorded', async () => {
    await api.newFlag('default', 'arch-off')
    expectOk(await api.toggle('default', 'arch-off', 'development', true))
    expect((await api.delete('/api/admin/projects/default/features/arch-off')).status).toBe(202)
    const since = api.lastEventId()
    const flag = await expectAccepted('arch-off', [{ op: 'replace', path: '/archived', value: false }])
    expect(flag.archived).toBe(false)
    expect(flag.archivedAt).toBeNull()
    expect(flag.lifecycle.stage).toBe('initial')
    // As the revive route (and Unleash 6): it comes back off.
    expect(flag.environments.filter((environment: { enabled: boolean }) => environment.enabled)).toEqual([])
    const events = await api.eventsAfter(since)
    expect(events.map(event => event.type).sort()).toEqual([
      'feature-environment-disabled',
      'feature-metadata-updated',
      'feature-revived',
    ])
    expect(events.find(event => event.type === 'feature-environment-disabled')).toMatchObject({
      environment: 'development',
    })
    const list = await api.listFlags('default')
    expect(list.body.features.map((f: { name: string }) => f.name)).toContain('arch-off')
  })

  test('PATCH: an archived flag can be patched (archived flags are included)', async () => {
    await api.newFlag('default', 'arch-edit')
    expect((await api.delete('/api/admin/projects/default/features/arch-edit')).status).toBe(202)
    const flag = await expectAccepted('arch-edit', [
      { op: 'replace', path: '/description', value: 'note on an archived flag' },
    ])
    expect(flag).toMatchObject({ archived: true, description: 'note on an archived flag' })
  })
})

describe('PATCH: events', () => {
  test('PATCH: a change records feature-metadata-updated with data (after) and preData (before)', async () => {
    const created = await api.newFlag('default', 'ev-meta', { description: 'before' })
    const since = api.lastEventId()
    const flag = await expectAccepted('ev-meta', [
      { op: 'replace', path: '/description', value: 'after' },
      { op: 'replace', path: '/type', value: 'experiment' },
    ])
    const events = await api.eventsAfter(since)
    expect(events).toHaveLength(1)
    const [event] = events
    expect(event).toMatchObject({
      id: since + 1,
      type: 'feature-metadata-updated',
      project: 'default',
      featureName: 'ev-meta',
      createdBy: 'admin-bootstrap',
      createdByUserId: -42,
      tags: [],
    })
    expect(event.createdAt).toMatch(ISO_MS)
    expect(event.preData).toEqual(metadata(created))
    expect(event.data).toEqual(metadata(flag))
    expect(event.data).toMatchObject({ description: 'after', type: 'experiment' })
  })

  test('PATCH: a patch that changes nothing records no event', async () => {
    const created = await api.newFlag('default', 'ev-none', { description: 'same' })
    const since = api.lastEventId()
    await expectAccepted('ev-none', [
      { op: 'replace', path: '/description', value: 'same' },
      { op: 'replace', path: '/stale', value: false },
      { op: 'replace', path: '/type', value: created.type },
    ])
    await expectAccepted('ev-none', [
      { op: 'replace', path: '/description', value: 'temporary' },
      { op: 'replace', path: '/description', value: 'same' },
    ])
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: stale true records feature-stale-on as well, stale false records feature-stale-off', async () => {
    await api.newFlag('default', 'ev-stale')
    let since = api.lastEventId()
    await expectAccepted('ev-stale', [{ op: 'replace', path: '/stale', value: true }])
    let events = await api.eventsAfter(since)
    expect(events.map(event => event.type).sort()).toEqual(['feature-metadata-updated', 'feature-stale-on'])
    for (const event of events) expect(event).toMatchObject({ project: 'default', featureName: 'ev-stale' })
    since = api.lastEventId()
    await expectAccepted('ev-stale', [{ op: 'replace', path: '/stale', value: false }])
    events = await api.eventsAfter(since)
    expect(events.map(event => event.type).sort()).toEqual(['feature-metadata-updated', 'feature-stale-off'])
  })

  test('PATCH: a change of something other than stale records no stale event', async () => {
    await api.newFlag('default', 'ev-nostale')
    const since = api.lastEventId()
    await expectAccepted('ev-nostale', [{ op: 'replace', path: '/impressionData', value: true }])
    expect((await api.eventsAfter(since)).map(event => event.type)).toEqual(['feature-metadata-updated'])
  })

  test("PATCH: the events carry the flag's tags at that time", async () => {
    await api.newFlag('default', 'ev-tags')
    expectOk(await api.post('/api/admin/features/ev-tags/tags', { type: 'simple', value: 'blue' }), 201)
    const since = api.lastEventId()
    await expectAccepted('ev-tags', [{ op: 'replace', path: '/stale', value: true }])
    const events = await api.eventsAfter(since)
    expect(events).toHaveLength(2)
    for (const event of events) expect(event.tags).toEqual([{ type: 'simple', value: 'blue' }])
  })

  test('PATCH: the events are found by event search', async () => {
    await api.newFlag('default', 'ev-search')
    await expectAccepted('ev-search', [{ op: 'replace', path: '/description', value: 'findable-text' }])
    const found = await api.searchEvents('?feature=IS:ev-search&type=IS:feature-metadata-updated')
    expect(found.status).toBe(200)
    expect(found.body.total).toBe(1)
    expect(found.body.events[0].data?.description).toBe('findable-text')
  })
})

describe('PATCH: response', () => {
  test('PATCH: the answer is the full flag (seed 2.1) exactly as GET answers it', async () => {
    await api.newFlag('default', 'resp-full')
    expectOk(await api.toggle('default', 'resp-full', 'development', true))
    const flag = await expectAccepted('resp-full', [{ op: 'replace', path: '/description', value: 'shown' }])
    for (const key of FLAG_FIELDS) {
      expect(flag).toHaveProperty(key)
    }
    expect(flag.enabled).toBe(true)
    expect(flag.environments.map((e: { name: string }) => e.name)).toEqual(['development', 'production'])
    expect(flag.environments[0].strategies?.length).toBeGreaterThan(0)
  })
})

describe('PATCH: pipeline', () => {
  test('PATCH: a text/plain body answers 415 ContentTypeerror and changes nothing', async () => {
    await api.newFlag('default', 'pipe-415')
    const before = await read('pipe-415')
    const since = api.lastEventId()
    const response = await api.request('PATCH', '/api/admin/projects/default/features/pipe-415', {
      raw: JSON.stringify([{ op: 'replace', path: '/description', value: 'x' }]),
      headers: { 'content-type': 'text/plain' },
    })
    expectError(response, 415, 'ContentTypeerror', [/application\/json/])
    expect(await read('pipe-415')).toEqual(before)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: application/json with parameters is accepted', async () => {
    await api.newFlag('default', 'pipe-charset')
    const response = await api.request<FlagBody>('PATCH', '/api/admin/projects/default/features/pipe-charset', {
      raw: JSON.stringify([{ op: 'replace', path: '/description', value: 'x' }]),
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    })
    expectOk(response)
    expect(response.body.description).toBe('x')
  })

  test('PATCH: no token answers 401 AuthenticationRequired and changes nothing', async () => {
    await api.newFlag('default', 'pipe-401')
    const before = await read('pipe-401')
    const since = api.lastEventId()
    const response = await api.patchFlag('default', 'pipe-401', [{ op: 'replace', path: '/stale', value: true }], {
      token: null,
    })
    expectError(response, 401, 'AuthenticationRequired')
    const unknown = await api.patchFlag('default', 'pipe-401', [{ op: 'replace', path: '/stale', value: true }], {
      token: '*:*.0000-unknown',
    })
    expectError(unknown, 401, 'AuthenticationRequired')
    expect(await read('pipe-401')).toEqual(before)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: a viewer token answers 403 NoAccessError naming UPDATE_FEATURE and changes nothing', async () => {
    await api.newFlag('default', 'pipe-403')
    const viewer = await tokenFor(api, 'viewer-token', { role: 'viewer' })
    const before = await read('pipe-403')
    const since = api.lastEventId()
    const response = await api.patchFlag('default', 'pipe-403', [{ op: 'replace', path: '/stale', value: true }], {
      token: viewer,
    })
    expectError(response, 403, 'NoAccessError')
    expect(errorOf(response).permissions).toEqual(['UPDATE_FEATURE'])
    expect(await read('pipe-403')).toEqual(before)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: a token limited to another project answers 403 for a write to this project', async () => {
    await api.newProject('other-scope')
    await api.newFlag('default', 'pipe-scope')
    const scoped = await tokenFor(api, 'scoped-token', { role: 'editor', projects: ['other-scope'] })
    const since = api.lastEventId()
    const response = await api.patchFlag('default', 'pipe-scope', [{ op: 'replace', path: '/stale', value: true }], {
      token: scoped,
    })
    expectError(response, 403, 'NoAccessError')
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: a client (SDK) token answers 403 NoAccessError and changes nothing', async () => {
    await api.newFlag('default', 'pipe-client')
    const client = await tokenFor(api, 'sdk', { type: 'client', project: 'default', environment: 'development' })
    const since = api.lastEventId()
    expectError(
      await api.patchFlag('default', 'pipe-client', [{ op: 'replace', path: '/stale', value: true }], {
        token: client,
      }),
      403,
      'NoAccessError',
    )
    expect((await read('pipe-client')).stale).toBe(false)
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: a body that is not an array of operations answers 400', async () => {
    await api.newFlag('default', 'pipe-shape')
    await patchRefused('pipe-shape', { op: 'replace', path: '/description', value: 'x' }, 400, 'ValidationError')
    await patchRefused('pipe-shape', 'replace', 400, 'ValidationError')
    await patchRefused('pipe-shape', [42], 400, 'ValidationError')
  })

  test('PATCH: an editor token may patch', async () => {
    await api.newFlag('default', 'pipe-editor')
    const editor = await tokenFor(api, 'editor-token', { role: 'editor' })
    const response = await api.patchFlag('default', 'pipe-editor', [{ op: 'replace', path: '/stale', value: true }], {
      token: editor,
    })
    expectOk(response)
    const [event] = await api.eventsAfter(api.lastEventId() - 2)
    expect(event.createdBy).toBe('editor-token')
  })
})

describe('PATCH: operations are strict', () => {
  test('PATCH: a member RFC 6902 does not define for the op answers 400 naming /<index>/<member>, and nothing is applied', async () => {
    await api.newFlag('default', 'strict-members', { description: 'before' })
    const cases: [unknown[], string, string][] = [
      [[{ op: 'replace', path: '/description', value: 'x', foo: 1 }], '/0/foo', 'foo'],
      [
        [
          { op: 'replace', path: '/stale', value: true },
          { op: 'add', path: '/description', value: 'x', from: '/type' },
        ],
        '/1/from',
        'from',
      ],
      [[{ op: 'remove', path: '/description', value: 'ignored?' }], '/0/value', 'value'],
      [[{ op: 'copy', from: '/name', path: '/description', value: 'x' }], '/0/value', 'value'],
      [[{ op: 'move', from: '/description', path: '/type', valeu: 'typo' }], '/0/valeu', 'valeu'],
      [[{ op: 'test', path: '/description', value: 'before', 'a/b~c': 1 }], '/0/a~1b~0c', 'a/b~c'],
    ]
    for (const [operations, path, member] of cases) {
      const response = await patchRefused('strict-members', operations, 400, 'ValidationError', [member])
      expect(errorOf(response).details).toEqual([
        { message: expect.stringMatching(/^is not a member of \w+ \(it takes only /), path },
      ])
    }
  })

  test('PATCH: the defined members of each op are still accepted', async () => {
    await api.newFlag('default', 'strict-ok', { description: 'one' })
    const flag = await expectAccepted('strict-ok', [
      { op: 'test', path: '/description', value: 'one' },
      { op: 'add', path: '/stale', value: true },
      { op: 'copy', from: '/name', path: '/description' },
      { op: 'move', from: '/description', path: '/type' },
      { op: 'replace', path: '/type', value: 'operational' },
      { op: 'add', path: '/description', value: 'two' },
      { op: 'remove', path: '/description' },
    ])
    expect({ stale: flag.stale, type: flag.type, description: flag.description }).toEqual({
      stale: true,
      type: 'operational',
      description: null,
    })
  })

  test('PATCH: the OpenAPI document shows operations as closed objects', async () => {
    const document = (
      await api.get<{ components: { schemas: Record<string, { items: { additionalProperties: unknown } }> } }>(
        '/swagger/json',
      )
    ).body
    expect(document.components.schemas.patchesSchema.items.additionalProperties).toBe(false)
  })
})
