/**
 * Projects (contract §6 "Projects", §5 "Project naming patterns", §7 name limits, §4 events).
 */
import { describe, expect, test } from 'bun:test'
import { SYSTEM_ACTOR } from '../../src/domain/events'
import {
  makeApi,
  tempDir,
  tokenFor,
  type Api,
  withTimeout,
  expectStatus,
  expectError,
  type ProjectBody,
  type ProjectListBody,
  type EnvironmentBody,
  errorOf,
  ISO_MS,
  BOOTSTRAP,
  defined,
  freshApiPerTest,
} from '../helpers'

/** Hang detection, not a speed target: a backtracking match of these names would take minutes, an answer takes well under a second. */

let api: Api
freshApiPerTest(fresh => (api = fresh))

async function projectIds(): Promise<string[]> {
  const response = await api.get<ProjectListBody>('/api/admin/projects')
  expectStatus(response, 200)
  return response.body.projects.map((project: { id: string }) => project.id)
}

describe('GET /api/admin/projects', () => {
  test('the list holds the default project with its fields', async () => {
    const response = await api.get<ProjectListBody>('/api/admin/projects')
    expectStatus(response, 200)
    expect(response.body.projects).toHaveLength(1)
    expect(response.body.projects[0]).toMatchObject({
      id: 'default',
      environments: ['development', 'production'],
      featureCount: 0,
      featureNaming: null,
    })
  })

  test('a single project is answered by id, and an unknown id is 404 NotFoundError', async () => {
    const one = await api.get<ProjectBody>('/api/admin/projects/default')
    expectStatus(one, 200)
    expect(one.body.id).toBe('default')
    const unknown = await api.get<ProjectBody>('/api/admin/projects/no-such-project')
    expectStatus(unknown, 404, 'NotFoundError')
  })
})

describe('POST /api/admin/projects', () => {
  test('creating a project answers 201 with the project connected to every environment', async () => {
    const response = await api.createProject('checkout', { name: 'Checkout', description: 'Checkout team' })
    expectStatus(response, 201)
    expect(response.body).toMatchObject({
      id: 'checkout',
      name: 'Checkout',
      description: 'Checkout team',
      featureCount: 0,
      environments: ['development', 'production'],
      featureNaming: null,
    })
    expect(response.body.createdAt).toMatch(ISO_MS)

    const read = await api.get<ProjectBody>('/api/admin/projects/checkout')
    expectStatus(read, 200)
    expect(read.body).toMatchObject({ id: 'checkout', name: 'Checkout', environments: ['development', 'production'] })
    expect(await projectIds()).toContain('checkout')
  })

  test('a project created after a new environment is connected to that environment too', async () => {
    expectStatus(await api.post<EnvironmentBody>('/api/admin/environments', { name: 'staging', type: 'test' }), 201)
    const project = await api.newProject('after-staging')
    expect([...project.environments].sort()).toEqual(['development', 'production', 'staging'])
  })

  test('creating a project records project-created by the calling token, with its data and no tags', async () => {
    const before = api.lastEventId()
    await api.newProject('evented', { description: 'with events' })
    const created = api.eventsSince(before).filter(event => event.type === 'project-created')
    expect(created).toHaveLength(1)
    expect(created[0]).toMatchObject({
      ...BOOTSTRAP,
      project: 'evented',
      featureName: null,
      tags: [],
      data: { id: 'evented', name: 'evented', description: 'with events' },
    })
    expect(created[0].createdAt).toMatch(ISO_MS)
  })

  test('project events carry the name and user id of the token that made the change', async () => {
    const secret = await tokenFor(api, 'alice')
    const before = api.lastEventId()
    expectStatus(await api.createProject('by-alice', {}, { token: secret }), 201)
    const created = defined((await api.eventsAfter(before)).find(event => event.type === 'project-created'))
    expect(created.createdBy).toBe('alice')
    expect(typeof created.createdByUserId).toBe('number')
    expect(created.createdByUserId).not.toBe(-42)
  })

  test('a taken project id is refused with 409 NameExistsError and nothing is written', async () => {
    await api.newProject('taken')
    const before = api.lastEventId()
    expectStatus(await api.createProject('taken', { name: 'Other name' }), 409, 'NameExistsError')
    expectStatus(await api.createProject('default'), 409, 'NameExistsError')
    expect(api.eventsSince(before)).toEqual([])
    const read = await api.get<ProjectBody>('/api/admin/projects/taken')
    expect(read.body.name).toBe('taken')
  })

  // The refusals of a group change nothing, so each group's cases share one app (a test each built one).
  test('a project id that is empty, longer than 100 characters, not URL-safe, "." or ".." is refused with 400 ValidationError', async () => {
    for (const [what, id] of [
      ['empty', ''],
      ['longer than 100 characters', 'p'.repeat(101)],
      ['not URL-safe (a space)', 'my project'],
      ['not URL-safe (a slash)', 'a/b'],
      ['not URL-safe (a non-ASCII letter)', 'café'],
      ['not URL-safe (a question mark)', 'what?'],
      ['"."', '.'],
      ['".."', '..'],
    ]) {
      const before = api.lastEventId()
      const response = await api.createProject(id!, { name: 'Some name' })
      expect({ what, status: response.status }).toEqual({ what, status: 400 })
      expectStatus(response, 400, 'ValidationError')
      expect(api.eventsSince(before)).toEqual([])
      expect(await projectIds()).toEqual(['default'])
    }
  })

  test.each([['__proto__'], ['constructor'], ['toString']])(
    'a project id that is also a JavaScript object key (%s) is stored, read and listed like any other id',
    async id => {
      const response = await withTimeout(api.createProject(id))
      expectStatus(response, 201)
      expect(response.body.id).toBe(id)
      const read = await withTimeout(api.get<ProjectBody>(`/api/admin/projects/${id}`))
      expectStatus(read, 200)
      expect(read.body.id).toBe(id)
      expect(await projectIds()).toContain(id)
      // The store still takes writes afterwards, including ids that are keys of a project record.
      expectStatus(await withTimeout(api.createProject('name')), 201)
      expectStatus(await withTimeout(api.createProject('environments')), 201)
      expect((await projectIds()).sort()).toEqual(['default', 'environments', id, 'name'].sort())
    },
  )

  test('a project id of exactly 100 URL-safe characters is accepted', async () => {
    const id = 'p'.repeat(95) + "-_.~'"
    expect(id).toHaveLength(100)
    const response = await api.createProject(id)
    expectStatus(response, 201)
    expect(response.body.id).toBe(id)
  })
})

describe('PUT /api/admin/projects/:projectId', () => {
  test('fields missing from the body are left alone', async () => {
    const naming = { pattern: '[a-z]+\\.[a-z-]+', example: 'team.flag', description: 'team dot flag' }
    await api.newProject('keep', { name: 'Keep', description: 'old description', featureNaming: naming })
    const response = await api.put('/api/admin/projects/keep', { name: 'Kept' })
    expectStatus(response, 200)
    expect(response.body).toMatchObject({
      id: 'keep',
      name: 'Kept',
      description: 'old description',
      featureNaming: naming,
    })
    const read = await api.get<ProjectBody>('/api/admin/projects/keep')
    expect(read.body).toMatchObject({ name: 'Kept', description: 'old description', featureNaming: naming })
  })

  test('featureNaming null removes the naming pattern', async () => {
    await api.newProject('unpattern', { featureNaming: { pattern: 'abc-[0-9]+' } })
    const response = await api.put<ProjectBody>('/api/admin/projects/unpattern', { featureNaming: null })
    expectStatus(response, 200)
    expect(response.body.featureNaming).toBeNull()
    expect((await api.get<ProjectBody>('/api/admin/projects/unpattern')).body.featureNaming).toBeNull()
    // The pattern no longer applies to new flags.
    expectStatus(await api.createFlag('unpattern', 'anything-goes'), 201)
  })

  test('an update records project-updated with the state after as data and the state before as preData', async () => {
    await api.newProject('upd', { name: 'Before', description: 'd1' })
    const before = api.lastEventId()
    expectStatus(await api.put('/api/admin/projects/upd', { name: 'After', featureNaming: { pattern: 'x-.+' } }), 200)
    const events = api.eventsSince(before)
    expect(events.map(event => event.type)).toEqual(['project-updated'])
    expect(events[0]).toMatchObject({
      ...BOOTSTRAP,
      project: 'upd',
      featureName: null,
      tags: [],
      data: { id: 'upd', name: 'After', description: 'd1', featureNaming: { pattern: 'x-.+' } },
      preData: { id: 'upd', name: 'Before', description: 'd1', featureNaming: null },
    })
  })

  test('updating an unknown project answers 404 NotFoundError and records nothing', async () => {
    const before = api.lastEventId()
    expectStatus(await api.put('/api/admin/projects/ghost', { name: 'Ghost' }), 404, 'NotFoundError')
    expect(api.eventsSince(before)).toEqual([])
  })
})

describe('DELETE /api/admin/projects/:projectId', () => {
  test('an empty project is deleted: it is gone from reads and project-deleted is recorded', async () => {
    await api.newProject('doomed')
    const before = api.lastEventId()
    const response = await api.delete('/api/admin/projects/doomed')
    expectStatus(response, 200)
    expectStatus(await api.get<ProjectBody>('/api/admin/projects/doomed'), 404, 'NotFoundError')
    expect(await projectIds()).not.toContain('doomed')
    const events = api.eventsSince(before)
    expect(events.map(event => event.type)).toEqual(['project-deleted'])
    expect(events[0]).toMatchObject({ ...BOOTSTRAP, project: 'doomed', featureName: null, tags: [] })
  })

  test('a project that still has a live flag cannot be deleted (400) and stays', async () => {
    await api.newProject('busy')
    await api.newFlag('busy', 'busy-flag')
    const before = api.lastEventId()
    expectStatus(await api.delete('/api/admin/projects/busy'), 400, 'ValidationError')
    expectStatus(await api.get<ProjectBody>('/api/admin/projects/busy'), 200)
    expectStatus(await api.getFlag('busy', 'busy-flag'), 200)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a project whose only flags are archived cannot be deleted either (400)', async () => {
    await api.newProject('archive-only')
    await api.newFlag('archive-only', 'archived-flag')
    expectStatus(await api.delete('/api/admin/projects/archive-only/features/archived-flag'), 202)
    const before = api.lastEventId()
    expectStatus(await api.delete('/api/admin/projects/archive-only'), 400, 'ValidationError')
    expectStatus(await api.get<ProjectBody>('/api/admin/projects/archive-only'), 200)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('the default project cannot be deleted (400), even when empty', async () => {
    const before = api.lastEventId()
    expectStatus(await api.delete('/api/admin/projects/default'), 400, 'ValidationError')
    expectStatus(await api.get<ProjectBody>('/api/admin/projects/default'), 200)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('deleting an unknown project answers 404 NotFoundError', async () => {
    expectStatus(await api.delete('/api/admin/projects/never-was'), 404, 'NotFoundError')
  })

  test('once its archived flag is deleted for good, the project can be deleted', async () => {
    await api.newProject('cleanup')
    await api.newFlag('cleanup', 'cleanup-flag')
    expectStatus(await api.delete('/api/admin/projects/cleanup/features/cleanup-flag'), 202)
    expectStatus(await api.delete('/api/admin/archive/cleanup-flag'), 200)
    expectStatus(await api.delete('/api/admin/projects/cleanup'), 200)
    expectStatus(await api.get<ProjectBody>('/api/admin/projects/cleanup'), 404)
  })
})

describe('project naming patterns', () => {
  test('a valid pattern with example and description is saved and shown', async () => {
    const naming = {
      pattern: '[a-z]+\\.[a-z-]+',
      example: 'checkout.new-flow',
      description: 'team, a dot, then the flag',
    }
    const project = await api.newProject('named', { featureNaming: naming })
    expect(project.featureNaming).toEqual(naming)
    expect((await api.get<ProjectBody>('/api/admin/projects/named')).body.featureNaming).toEqual(naming)
  })

  test('a pattern of exactly 200 characters is accepted', async () => {
    const pattern = 'a'.repeat(200)
    const project = await api.newProject('long-ok', { featureNaming: { pattern } })
    expect(project.featureNaming?.pattern).toBe(pattern)
  })

  // The refusals of a group change nothing, so each group's cases share one app (a test each built one).
  test('a pattern not a valid regular expression (on its own too), with whitespace, over 200 characters or with an example it does not match is refused at creation with 400 and no project is created', async () => {
    for (const [what, featureNaming] of [
      ['not a valid regular expression (unclosed class)', { pattern: '[a-z' }],
      ['not a valid regular expression (unbalanced parenthesis)', { pattern: '(abc' }],
      ['not a valid regular expression on its own, though valid once wrapped in ^(?:…)$', { pattern: 'a)|(b' }],
      ['containing a space', { pattern: '[a-z]+ [a-z]+' }],
      ['containing a tab', { pattern: '[a-z]+\t[a-z]+' }],
      ['containing a newline', { pattern: 'abc\n' }],
      ['longer than 200 characters', { pattern: 'a'.repeat(201) }],
      ['with an example that does not match', { pattern: '[a-z]+\\.[a-z]+', example: 'NoDot' }],
      ['with an example that matches only a prefix (the match is anchored)', { pattern: 'abc', example: 'abcd' }],
    ] as const) {
      const before = api.lastEventId()
      const response = await api.createProject('bad-pattern', { featureNaming })
      expect({ what, status: response.status }).toEqual({ what, status: 400 })
      expectStatus(response, 400, 'ValidationError')
      expectStatus(await api.get<ProjectBody>('/api/admin/projects/bad-pattern'), 404)
      expect(api.eventsSince(before)).toEqual([])
    }
  })

  test('a pattern not a valid regular expression (on its own too), with whitespace, over 200 characters or with an example it does not match is refused on update with 400 and the old pattern stays', async () => {
    const old = { pattern: 'old-[a-z]+', example: 'old-one' }
    await api.newProject('keeps-old', { featureNaming: old })
    for (const [what, featureNaming] of [
      ['not a valid regular expression', { pattern: '[a-z' }],
      ['not a valid regular expression on its own, though valid once wrapped in ^(?:…)$', { pattern: 'a)|(b' }],
      ['containing whitespace', { pattern: 'a b' }],
      ['longer than 200 characters', { pattern: 'b'.repeat(201) }],
      ['with an example that does not match', { pattern: '[0-9]+', example: 'abc' }],
    ] as const) {
      const before = api.lastEventId()
      const response = await api.put('/api/admin/projects/keeps-old', { featureNaming })
      expect({ what, status: response.status }).toEqual({ what, status: 400 })
      expectStatus(response, 400, 'ValidationError')
      expect((await api.get<ProjectBody>('/api/admin/projects/keeps-old')).body.featureNaming).toEqual(old)
      expect(api.eventsSince(before)).toEqual([])
    }
  })

  test.each([
    ['(a+)+b', 'a'.repeat(90), 'b'],
    ['(a|a)*b', 'a'.repeat(90), 'b'],
    ['(a*)*b', 'a'.repeat(90), 'b'],
    ['([a-z]+)+\\.', 'a'.repeat(90), '.'],
    ['(ab|ab)+c', 'ab'.repeat(45), 'c'],
    ['(a+)+$', 'a'.repeat(90), ''],
    ['(x+x+)+y', 'x'.repeat(90), 'y'],
  ])(
    'a pattern that backtracks catastrophically in JavaScript, %s, is accepted and checks names correctly: RE2 matching is linear',
    async (pattern, base, ending) => {
      await api.newProject('linear', { featureNaming: { pattern } })
      // A long name that fails at its last character: exponential for a backtracking engine, which
      // would not answer before the test's timeout.
      const refused = await api.createFlag('linear', `${base}-`)
      expectError(refused, 400, 'ValidationError', ['does not match the naming pattern'])
      expectStatus(await api.createFlag('linear', base + ending), 201)
    },
  )

  test('a pattern with a look-ahead or -behind, a back-reference, a possessive quantifier or an atomic group is refused when saved, naming what is unsupported', async () => {
    // Refused saves change nothing: the cases share one app and one project to update.
    await api.newProject('unsupported-update', { featureNaming: { pattern: 'ok-[a-z]+' } })
    for (const [what, pattern, construct, piece] of [
      ['a look-ahead', 'team-(?=[a-z])[a-z]+', 'look-ahead', '(?='],
      ['a negative look-ahead', '(?!tmp)[a-z]+', 'look-ahead', '(?!'],
      ['a look-behind', '[a-z]+(?<=x)', 'look-behind', '(?<='],
      ['a negative look-behind', '[a-z]+(?<!x)', 'look-behind', '(?<!'],
      ['a back-reference', '([a-z])\\1+', 'back-reference', '\\1'],
      ['a named back-reference', '(?<c>[a-z])\\k<c>', 'back-reference', '\\k'],
      ['a possessive quantifier', '[a-z]++x', 'possessive quantifier', '++'],
      ['an atomic group', '(?>[a-z]+)x', 'atomic group', '(?>'],
    ] as const) {
      const before = api.lastEventId()
      const response = await api.createProject('unsupported', { featureNaming: { pattern } })
      expect({ what, status: response.status }).toEqual({ what, status: 400 })
      expectError(response, 400, 'ValidationError', [construct, piece, 'RE2'])
      expect(errorOf(response).details).toEqual([
        { message: errorOf(response).message, path: '/featureNaming/pattern' },
      ])
      expectStatus(await api.get<ProjectBody>('/api/admin/projects/unsupported'), 404)
      const update = await api.put('/api/admin/projects/unsupported-update', { featureNaming: { pattern } })
      expect({ what, status: update.status }).toEqual({ what, status: 400 })
      expectError(update, 400, 'ValidationError', [construct])
      expect((await api.get<ProjectBody>('/api/admin/projects/unsupported-update')).body.featureNaming).toEqual({
        pattern: 'ok-[a-z]+',
      })
      expect(api.eventsSince(before)).toEqual([])
    }
  })

  test('a pattern that compiles to too many instructions, or nests repeats beyond 1000, is refused when saved', async () => {
    for (const [what, pattern, mention] of [
      ['compiles to too many instructions', '(.?){1000}a{100}', 'instructions'],
      ['nests repeats beyond 1000', '((a{30}){30}){30}', 'repeat count'],
    ]) {
      const response = await api.createProject('too-big', { featureNaming: { pattern } })
      expect({ what, status: response.status }).toEqual({ what, status: 400 })
      expectError(response, 400, 'ValidationError', [mention!])
      expect(errorOf(response).details?.[0].path).toBe('/featureNaming/pattern')
    }
  })

  test('a pattern saved by an earlier version that RE2 cannot compile still loads; names are refused until it is saved again', async () => {
    const dir = tempDir('legacy-pattern-')
    try {
      await api.close()
      api = await makeApi({ dataDir: dir.path })
      await api.newProject('legacy', { featureNaming: { pattern: 'old-[a-z]+', example: 'old-one' } })
      // What an earlier version (JavaScript RegExp syntax) could have saved.
      await api.services.store.transact(SYSTEM_ACTOR, tx => {
        const project = tx.get('projects', 'legacy')!
        tx.put('projects', 'legacy', { ...project, featureNaming: { pattern: '(?!tmp)[a-z-]+' } })
      })
      await api.close()
      api = await makeApi({ dataDir: dir.path })
      expect((await api.get<ProjectBody>('/api/admin/projects/legacy')).body.featureNaming).toEqual({
        pattern: '(?!tmp)[a-z-]+',
      })
      expect(api.services.patterns.unusable()).toEqual([
        { projectId: 'legacy', pattern: '(?!tmp)[a-z-]+', problem: expect.stringContaining('look-ahead') },
      ])
      for (const response of [
        await api.validateName({ name: 'fine-name', projectId: 'legacy' }),
        await api.createFlag('legacy', 'fine-name'),
      ]) {
        expectError(response, 400, 'ValidationError', [
          '(?!tmp)[a-z-]+',
          'look-ahead',
          'PUT /api/admin/projects/legacy',
        ])
      }
      expectStatus(await api.getFlag('legacy', 'fine-name'), 404)
      // Other projects are not affected, and saving a supported pattern puts the project right.
      expectStatus(await api.createFlag('default', 'elsewhere'), 201)
      expectStatus(await api.put('/api/admin/projects/legacy', { featureNaming: { pattern: '[a-z-]+' } }), 200)
      expect(api.services.patterns.unusable()).toEqual([])
      expectStatus(await api.createFlag('legacy', 'fine-name'), 201)
    } finally {
      await api.close()
      api = await makeApi()
      dir.remove()
    }
  })

  test('patterns are matched anchored at both ends in RE2 syntax: classes, counted repeats, alternation, flags', async () => {
    await api.newProject('syntax', { featureNaming: { pattern: '(?i)team-(web|app)-\\d{3}|x\\.[[:alpha:]]+' } })
    for (const name of ['team-web-001', 'TEAM-App-123', 'x.abc'])
      expectStatus(await api.createFlag('syntax', name), 201)
    for (const name of ['team-web-01', 'team-web-0011', 'xteam-web-001', 'x.abc1', 'x.']) {
      expectError(await api.createFlag('syntax', name), 400, 'ValidationError', ['does not match'])
    }
  })
})

describe('PUT /api/admin/projects/:projectId without a change', () => {
  test('an update that changes nothing answers 200 and records no event', async () => {
    await api.newProject('unchanged', { description: 'same' })
    const since = api.lastEventId()
    const response = await api.put<ProjectBody>('/api/admin/projects/unchanged', {
      name: 'unchanged',
      description: 'same',
    })
    expect(response.status).toBe(200)
    expect(response.body.updatedAt).toBeNull()
    expect(api.eventsSince(since)).toEqual([])
  })
})
