/**
 * PATCH /api/admin/projects/:projectId/features/:featureName (seed 4.1, 5, 7; contract §1, §2, §4, §5).
 *
 * Every rejected request is checked to have left the flag (as GET answers it) and the event log
 * exactly as they were. Every accepted one is checked against GET and against the events written.
 */
import { describe, expect, test } from 'bun:test'
import { errorOf, tokenFor, expectError } from '../../helpers'
import { api, useFreshApi, read, metadata, patchRefused, expectAccepted } from './patch-feature.setup'

useFreshApi()

describe('PATCH: the six JSON-Patch operations', () => {
  test('PATCH: replace sets a property to the given value', async () => {
    await api.newFlag('default', 'op-replace', { description: 'old' })
    const flag = await expectAccepted('op-replace', [{ op: 'replace', path: '/description', value: 'new text' }])
    expect(flag.description).toBe('new text')
  })

  test('PATCH: add on an existing property replaces its value', async () => {
    await api.newFlag('default', 'op-add')
    const flag = await expectAccepted('op-add', [
      { op: 'add', path: '/stale', value: true },
      { op: 'add', path: '/type', value: 'kill-switch' },
      { op: 'add', path: '/impressionData', value: true },
    ])
    expect(metadata(flag)).toMatchObject({ stale: true, type: 'kill-switch', impressionData: true })
  })

  test('PATCH: remove of /description leaves the flag without a description (null)', async () => {
    await api.newFlag('default', 'op-remove', { description: 'to be removed' })
    const flag = await expectAccepted('op-remove', [{ op: 'remove', path: '/description' }])
    expect(flag.description).toBeNull()
  })

  test('PATCH: remove then add of a required property in one patch is accepted', async () => {
    await api.newFlag('default', 'op-remove-add')
    const flag = await expectAccepted('op-remove-add', [
      { op: 'remove', path: '/stale' },
      { op: 'add', path: '/stale', value: true },
    ])
    expect(flag.stale).toBe(true)
  })

  test('PATCH: copy copies the value at from to path', async () => {
    await api.newFlag('default', 'op-copy', { description: 'whatever' })
    const flag = await expectAccepted('op-copy', [{ op: 'copy', from: '/name', path: '/description' }])
    expect(flag.description).toBe('op-copy')
    expect(flag.name).toBe('op-copy')
  })

  test('PATCH: move moves the value at from to path and removes it at from', async () => {
    await api.newFlag('default', 'op-move', { description: 'experiment' })
    const flag = await expectAccepted('op-move', [{ op: 'move', from: '/description', path: '/type' }])
    expect(flag.type).toBe('experiment')
    expect(flag.description).toBeNull()
  })

  test('PATCH: a passing test operation lets the following operations apply', async () => {
    await api.newFlag('default', 'op-test', { description: 'v1' })
    const flag = await expectAccepted('op-test', [
      { op: 'test', path: '/description', value: 'v1' },
      { op: 'test', path: '/stale', value: false },
      { op: 'replace', path: '/description', value: 'v2' },
    ])
    expect(flag.description).toBe('v2')
  })

  test('PATCH: operations apply in order, each seeing the result of the ones before', async () => {
    await api.newFlag('default', 'op-order', { description: 'start' })
    const flag = await expectAccepted('op-order', [
      { op: 'replace', path: '/description', value: 'middle' },
      { op: 'test', path: '/description', value: 'middle' },
      { op: 'copy', from: '/description', path: '/type' },
      { op: 'replace', path: '/type', value: 'operational' },
      { op: 'replace', path: '/description', value: 'end' },
    ])
    expect(metadata(flag)).toMatchObject({ description: 'end', type: 'operational' })
  })

  test('PATCH: a failed test operation answers 409 ConflictError and changes nothing', async () => {
    await api.newFlag('default', 'op-test-fails', { description: 'current' })
    await patchRefused(
      'op-test-fails',
      [
        { op: 'test', path: '/description', value: 'something else' },
        { op: 'replace', path: '/description', value: 'never' },
      ],
      409,
      'ConflictError',
      ['/description'],
    )
  })

  test('PATCH: an empty operation list answers 200 with the unchanged flag and records no event', async () => {
    await api.newFlag('default', 'op-empty')
    const before = await read('op-empty')
    const since = api.lastEventId()
    const flag = await expectAccepted('op-empty', [])
    expect(flag).toEqual(before)
    expect(api.eventsSince(since)).toEqual([])
  })
})

describe('PATCH: all or nothing', () => {
  test('PATCH: a later operation with a wrong type leaves the flag and the event log unchanged', async () => {
    await api.newFlag('default', 'aon-type', { description: 'keep' })
    await patchRefused(
      'aon-type',
      [
        { op: 'replace', path: '/description', value: 'changed' },
        { op: 'replace', path: '/stale', value: true },
        { op: 'replace', path: '/impressionData', value: 'yes' },
      ],
      400,
      'ValidationError',
      ['impressionData'],
    )
  })

  test('PATCH: a later failed test leaves the earlier operations unapplied', async () => {
    await api.newFlag('default', 'aon-test', { description: 'keep' })
    await patchRefused(
      'aon-test',
      [
        { op: 'replace', path: '/description', value: 'changed' },
        { op: 'replace', path: '/archived', value: true },
        { op: 'test', path: '/description', value: 'keep' },
      ],
      409,
      'ConflictError',
    )
  })

  test('PATCH: a later operation on an unknown path leaves the earlier operations unapplied', async () => {
    await api.newFlag('default', 'aon-path')
    await patchRefused(
      'aon-path',
      [
        { op: 'replace', path: '/stale', value: true },
        { op: 'replace', path: '/nope', value: 1 },
      ],
      400,
      'ValidationError',
      ['/nope'],
    )
  })

  test('PATCH: a later remove of a property that is already gone is unresolvable: 400, and the earlier operations are not applied', async () => {
    await api.newFlag('default', 'aon-remove', { description: 'keep' })
    await patchRefused(
      'aon-remove',
      [
        { op: 'replace', path: '/stale', value: true },
        { op: 'remove', path: '/description' },
        { op: 'remove', path: '/description' },
      ],
      400,
      'ValidationError',
    )
  })

  test('PATCH: a later invalid flag type leaves the flag unchanged', async () => {
    await api.newFlag('default', 'aon-flagtype')
    await patchRefused(
      'aon-flagtype',
      [
        { op: 'replace', path: '/description', value: 'changed' },
        { op: 'replace', path: '/type', value: 'not-a-type' },
      ],
      400,
      'ValidationError',
    )
  })
})

describe('PATCH: read-only name, project and createdAt', () => {
  test('PATCH: replacing name answers 400 and renames nothing', async () => {
    await api.newFlag('default', 'ro-name')
    await patchRefused('ro-name', [{ op: 'replace', path: '/name', value: 'ro-other-name' }], 400, 'ValidationError', [
      'name',
    ])
    expect((await api.getFlag('default', 'ro-other-name')).status).toBe(404)
  })

  test('PATCH: replacing project answers 400, even when the other project exists', async () => {
    await api.newProject('ro-target')
    await api.newFlag('default', 'ro-project')
    await patchRefused(
      'ro-project',
      [{ op: 'replace', path: '/project', value: 'ro-target' }],
      400,
      'ValidationError',
      ['project'],
    )
    expect((await api.listFlags('ro-target')).body.features).toEqual([])
  })

  test('PATCH: replacing createdAt answers 400', async () => {
    await api.newFlag('default', 'ro-created')
    await patchRefused(
      'ro-created',
      [{ op: 'replace', path: '/createdAt', value: '2000-01-01T00:00:00.000Z' }],
      400,
      'ValidationError',
      ['createdAt'],
    )
  })

  test('PATCH: removing a read-only property answers 400', async () => {
    await api.newFlag('default', 'ro-remove')
    await patchRefused('ro-remove', [{ op: 'remove', path: '/name' }], 400, 'ValidationError', ['name'])
    await patchRefused('ro-remove', [{ op: 'remove', path: '/createdAt' }], 400, 'ValidationError', ['createdAt'])
  })

  test('PATCH: moving a read-only property away or copying over it answers 400', async () => {
    await api.newFlag('default', 'ro-move', { description: 'text' })
    await patchRefused('ro-move', [{ op: 'move', from: '/project', path: '/description' }], 400, 'ValidationError', [
      'project',
    ])
    await patchRefused('ro-move', [{ op: 'copy', from: '/description', path: '/name' }], 400, 'ValidationError', [
      'name',
    ])
  })

  test('PATCH: operations that leave name, project and createdAt unchanged are accepted without an event', async () => {
    const created = await api.newFlag('default', 'ro-same')
    const since = api.lastEventId()
    const flag = await expectAccepted('ro-same', [
      { op: 'replace', path: '/name', value: 'ro-same' },
      { op: 'replace', path: '/project', value: 'default' },
      { op: 'replace', path: '/createdAt', value: created.createdAt },
      { op: 'test', path: '/name', value: 'ro-same' },
      { op: 'remove', path: '/createdAt' },
      { op: 'add', path: '/createdAt', value: created.createdAt },
    ])
    expect(metadata(flag)).toEqual(metadata(created))
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: a read-only property may change and change back within one patch', async () => {
    await api.newFlag('default', 'ro-back')
    await expectAccepted('ro-back', [
      { op: 'replace', path: '/name', value: 'elsewhere' },
      { op: 'replace', path: '/name', value: 'ro-back' },
      { op: 'replace', path: '/description', value: 'ok' },
    ])
  })
})

describe('PATCH: /variants and the order of errors', () => {
  test('PATCH: an operation on /variants answers 403 NoAccessError pointing to the environment variants endpoint', async () => {
    await api.newFlag('default', 'var-path')
    const response = await patchRefused(
      'var-path',
      [{ op: 'replace', path: '/variants', value: [] }],
      403,
      'NoAccessError',
      [/environments/, /variants/],
    )
    expect(Array.isArray(errorOf(response).permissions)).toBe(true)
    expect(errorOf(response).permissions).toHaveLength(1)
  })

  test('PATCH: an operation on a path below /variants answers 403', async () => {
    await api.newFlag('default', 'var-below')
    await patchRefused(
      'var-below',
      [{ op: 'add', path: '/variants/0', value: { name: 'a', weight: 1000 } }],
      403,
      'NoAccessError',
      [/variants/],
    )
    await patchRefused('var-below', [{ op: 'remove', path: '/variants/0/name' }], 403, 'NoAccessError')
  })

  test('PATCH: an operation whose from is /variants answers 403', async () => {
    await api.newFlag('default', 'var-from')
    await patchRefused('var-from', [{ op: 'copy', from: '/variants', path: '/description' }], 403, 'NoAccessError', [
      /variants/,
    ])
    await patchRefused('var-from', [{ op: 'move', from: '/variants/0', path: '/description' }], 403, 'NoAccessError')
  })

  test('PATCH: /variants answers 403 even when other operations are bad (bad path, wrong type, failed test, read-only change)', async () => {
    await api.newFlag('default', 'var-bad', { description: 'd' })
    await patchRefused(
      'var-bad',
      [
        { op: 'test', path: '/description', value: 'not the current value' },
        { op: 'replace', path: 'description', value: 'no slash' },
        { op: 'replace', path: '/nope', value: 1 },
        { op: 'replace', path: '/stale', value: 'yes' },
        { op: 'replace', path: '/name', value: 'renamed' },
        { op: 'replace', path: '/__proto__', value: {} },
        { op: 'replace', path: '/variants', value: [] },
      ],
      403,
      'NoAccessError',
    )
  })

  test('PATCH: /variants answers 403 even when another operation is malformed (unknown op, missing value)', async () => {
    await api.newFlag('default', 'var-malformed')
    await patchRefused(
      'var-malformed',
      [
        { op: 'bogus', path: '/description' },
        { op: 'replace', path: '/description' },
        { op: 'add', path: '/variants', value: [] },
      ],
      403,
      'NoAccessError',
    )
  })

  test('PATCH: an unknown flag answers 404 NotFoundError before the /variants 403', async () => {
    const since = api.lastEventId()
    const response = await api.patchFlag('default', 'no-such-flag', [{ op: 'replace', path: '/variants', value: [] }])
    expectError(response, 404, 'NotFoundError', ['no-such-flag'])
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: an unknown flag answers 404 before any 400 for bad operations', async () => {
    const since = api.lastEventId()
    const bad = [
      [{ op: 'replace', path: 'description', value: 'x' }],
      [{ op: 'replace', path: '/stale', value: 'yes' }],
      [{ op: 'replace', path: '/__proto__/polluted', value: 1 }],
      [{ op: 'test', path: '/description', value: 'x' }],
    ]
    for (const operations of bad) {
      expectError(await api.patchFlag('default', 'no-such-flag', operations), 404, 'NotFoundError')
    }
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: an unknown flag answers 404 even when the operation array is malformed', async () => {
    const since = api.lastEventId()
    expectError(
      await api.patchFlag('default', 'no-such-flag', [{ op: 'bogus', path: '/description' }]),
      404,
      'NotFoundError',
    )
    expectError(await api.patchFlag('default', 'no-such-flag', [{ op: 'replace' }]), 404, 'NotFoundError')
    expect(api.eventsSince(since)).toEqual([])
  })

  test('PATCH: a flag of another project answers 404 without naming that project', async () => {
    await api.newProject('hidden-proj-zq')
    await api.newFlag('hidden-proj-zq', 'elsewhere-flag', { description: 'd' })
    const response = await patchRefused(
      'elsewhere-flag',
      [{ op: 'replace', path: '/description', value: 'hijacked' }],
      404,
      'NotFoundError',
      [],
      'default',
    )
    expect(response.text).not.toContain('hidden-proj-zq')
  })

  test('PATCH: a flag of another project answers 404 (not 400) for bad operations, without naming that project', async () => {
    await api.newProject('hidden-proj-zr')
    await api.newFlag('hidden-proj-zr', 'elsewhere-flag2')
    const response = await patchRefused(
      'elsewhere-flag2',
      [{ op: 'replace', path: '/stale', value: 'yes' }],
      404,
      'NotFoundError',
      [],
      'default',
    )
    expect(response.text).not.toContain('hidden-proj-zr')
  })

  test('PATCH: the order is unknown flag 404, then /variants 403, then flag of another project 404', async () => {
    await api.newProject('order-proj')
    await api.newFlag('order-proj', 'order-flag')
    await patchRefused(
      'order-flag',
      [{ op: 'replace', path: '/variants', value: [] }],
      403,
      'NoAccessError',
      [],
      'default',
    )
  })

  test('PATCH: a project-scoped token patching a flag of a project it cannot see gets 404 without the project name', async () => {
    await api.newProject('secret-proj-q')
    await api.newFlag('secret-proj-q', 'secret-flag')
    const scoped = await tokenFor(api, 'default-only', { role: 'editor', projects: ['default'] })
    const since = api.lastEventId()
    const response = await api.patchFlag('default', 'secret-flag', [{ op: 'replace', path: '/stale', value: true }], {
      token: scoped,
    })
    expectError(response, 404, 'NotFoundError')
    expect(response.text).not.toContain('secret-proj-q')
    expect((await read('secret-flag', 'secret-proj-q')).stale).toBe(false)
    expect(api.eventsSince(since)).toEqual([])
  })
})
