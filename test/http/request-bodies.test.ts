/**
 * Request bodies as Unleash takes them (issue 14, item 2): properties no schema lists are accepted
 * and dropped at any depth, never stored; listed ones are checked as strictly as before (types,
 * no numbers written as strings, arrays left as sent), prototype keys are refused anywhere, and the
 * properties Unleash's request schemas define are honoured: tags on create, the token aliases
 * username and project, and a project id in the body of a project update.
 */
// Store-independent: about how bodies are read and what of them reaches a handler; their writes take the one
// commit path that the feature tests run again on PostgreSQL, which stores the records as the memory state holds them.
import { describe, expect, test } from 'bun:test'
import type { EventRecord } from '../../src/storage/records'
import {
  BOOTSTRAP,
  errorOf,
  expectError,
  expectOk,
  freshApiPerTest,
  paths,
  type Api,
  type FlagBody,
  type ProjectBody,
  type StrategyBody,
  storeSnapshot,
  expectUnchanged,
} from '../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const detailPaths = (response: Parameters<typeof errorOf>[0]) =>
  (errorOf(response).details ?? []).map(detail => detail.path)
/** Everything stored or written: the state and every event. */
const written = () => JSON.stringify(api.services.store.state) + JSON.stringify(api.events())

describe('properties no schema lists', () => {
  test('a create-flag body with properties Unleash scripts send is accepted; none of them is stored, written to an event or answered', async () => {
    const created = await api.createFlag('default', 'script-flag', {
      type: 'experiment',
      project: 'some-other-project',
      archived: true,
      createdAt: '2001-01-01T00:00:00.000Z',
      variants: [{ name: 'x', weight: 1000 }],
      strategies: [{ name: 'default' }],
      unleashOnly: { nested: true },
    })
    expectOk(created, 201)
    expect(created.body).toMatchObject({
      name: 'script-flag',
      project: 'default',
      type: 'experiment',
      archived: false,
      variants: [],
      strategies: [],
    })
    expect(created.body.createdAt).not.toBe('2001-01-01T00:00:00.000Z')
    expect(written()).not.toContain('unleashOnly')
    expect(written()).not.toContain('some-other-project')
    expect(created.text).not.toContain('unleashOnly')
  })

  test('unknown properties nested in strategies, constraints, variants and naming patterns are dropped, the listed ones kept', async () => {
    await api.newFlag('default', 'deep-flag')
    const strategy = await api.post<StrategyBody>(paths.strategies('deep-flag'), {
      name: 'flexibleRollout',
      parameters: { rollout: '50' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'], unleashOnly: 1 }],
      variants: [
        {
          name: 'blue',
          weight: 1000,
          weightType: 'variable',
          stickiness: 'default',
          payload: { type: 'string', value: 'b', unleashOnly: 2 },
          unleashOnly: 3,
        },
      ],
    })
    expectOk(strategy)
    expect(strategy.body.constraints[0]).toEqual({
      contextName: 'userId',
      operator: 'IN',
      values: ['1'],
      caseInsensitive: false,
      inverted: false,
    })
    expect(strategy.body.variants[0].payload).toEqual({ type: 'string', value: 'b' })
    const project = await api.createProject('deep-project', {
      featureNaming: { pattern: '[a-z-]+', example: 'a-b', unleashOnly: 4 },
      mode: 'open',
    })
    expectOk(project, 201)
    expect(project.body.featureNaming).toEqual({ pattern: '[a-z-]+', example: 'a-b' })
    expect(written()).not.toContain('unleashOnly')
    expect(written()).not.toContain('"mode"')
  })

  test('what the schema lists is still checked strictly: no numbers as strings, no arrays made of objects, no booleans as strings', async () => {
    await api.newFlag('default', 'strict-flag')
    const before = storeSnapshot(api)
    const cases: [string, string, unknown, string][] = [
      ['POST', paths.strategies('strict-flag'), { name: 'default', sortOrder: '5' }, '/sortOrder'],
      ['POST', paths.strategies('strict-flag'), { name: 'default', segments: ['1'] }, '/segments/0'],
      ['PUT', paths.variants('strict-flag'), [{ name: 'a', weight: '500' }], '/0/weight'],
      ['POST', '/api/admin/environments', { name: 'qa', type: 'test', sortOrder: '7' }, '/sortOrder'],
      [
        'POST',
        '/api/admin/projects/default/bulk_features/environments/development/off',
        { features: { 0: 'strict-flag' } },
        '/features',
      ],
      [
        'POST',
        '/api/admin/projects/default/features',
        { name: 'other-flag', impressionData: 'true' },
        '/impressionData',
      ],
      ['POST', '/api/admin/projects/default/features', { name: 'other-flag', tags: 'simple:x' }, '/tags'],
    ]
    for (const [method, path, body, at] of cases) {
      const response = await api.request(method, path, { body })
      expectError(response, 400, 'ValidationError')
      expect({ path, body, at: detailPaths(response) }).toEqual({ path, body, at: expect.arrayContaining([at]) })
    }
    // A JSON-Patch operation keeps refusing members it does not take.
    expectError(
      await api.patchFlag('default', 'strict-flag', [{ op: 'replace', path: '/stale', value: true, unleashOnly: 1 }]),
      400,
      'ValidationError',
      ['unleashOnly'],
    )
    expectUnchanged(api, before)
  })

  test('__proto__, constructor and prototype are refused as property names at any depth, listed or not, and nothing is written', async () => {
    await api.newFlag('default', 'proto-flag')
    const before = storeSnapshot(api)
    const cases: [string, string, string][] = [
      [
        paths.strategies('proto-flag'),
        '{"name":"default","constraints":[{"contextName":"a","operator":"IN","values":["x"],"constructor":{"prototype":{"polluted":1}}}]}',
        '/constraints/0/constructor',
      ],
      [
        paths.strategies('proto-flag'),
        '{"name":"default","parameters":{"__proto__":{"polluted":1}}}',
        '/parameters/__proto__',
      ],
      ['/api/admin/projects', '{"id":"proto","name":"p","__proto__":{"polluted":1}}', '/__proto__'],
      [
        '/api/admin/projects',
        '{"id":"proto","name":"p","featureNaming":{"pattern":"a","prototype":1}}',
        '/featureNaming/prototype',
      ],
    ]
    for (const [path, raw, at] of cases) {
      const response = await api.post(path, undefined, { raw, headers: { 'content-type': 'application/json' } })
      expectError(response, 400, 'ValidationError', ['is not allowed as a property name'])
      expect({ raw, details: errorOf(response).details }).toEqual({
        raw,
        details: [expect.objectContaining({ path: at })],
      })
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expectUnchanged(api, before)
  })

  test('the pipeline order holds with unknown and prototype keys: no token → 401, a viewer → 403, not JSON → 415, before any 400', async () => {
    const raw = '{"name":"order-flag","unleashOnly":1,"__proto__":{"x":1}}'
    const json = { 'content-type': 'application/json' }
    expectError(
      await api.post('/api/admin/projects/default/features', undefined, { raw, headers: json, token: null }),
      401,
      'AuthenticationRequired',
    )
    const viewer = (await api.createToken({ tokenName: 'order-viewer', type: 'admin', role: 'viewer' })).body.secret
    expectError(
      await api.post('/api/admin/projects/default/features', undefined, { raw, headers: json, token: viewer }),
      403,
      'NoAccessError',
    )
    expectError(
      await api.post('/api/admin/projects/default/features', undefined, {
        raw,
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'ContentTypeerror',
    )
    expectError(
      await api.post('/api/admin/projects/default/features', undefined, { raw, headers: json }),
      400,
      'ValidationError',
    )
    expect(api.services.store.reader.get('flags', 'order-flag')).toBeUndefined()
  })
})

describe('tags in the create-flag body', () => {
  test('are created with the flag in the same commit: feature-created, then one feature-tagged per tag, each with the tags so far', async () => {
    const commits: EventRecord[][] = []
    await api.newTagTypes('team')
    api.services.store.onCommit(events => commits.push([...events]))
    const created = await api.createFlag('default', 'tagged-flag', {
      tags: [{ value: '  checkout ' }, { type: 'team', value: 'payments' }, { type: 'simple', value: 'checkout' }],
    })
    expectOk(created, 201)
    const tags = [
      { type: 'simple', value: 'checkout' },
      { type: 'team', value: 'payments' },
    ]
    expect(created.body.tags).toEqual(tags)
    expect((await api.get<{ tags: unknown }>(paths.tags('tagged-flag'))).body.tags).toEqual(tags)
    expect(commits).toHaveLength(1)
    expect(commits[0].map(event => [event.type, event.featureName, event.project])).toEqual([
      ['feature-created', 'tagged-flag', 'default'],
      ['feature-tagged', 'tagged-flag', 'default'],
      ['feature-tagged', 'tagged-flag', 'default'],
    ])
    expect(commits[0].map(event => event.tags)).toEqual([[], tags.slice(0, 1), tags])
    expect(commits[0].slice(1).map(event => event.data)).toEqual(tags)
    expect(commits[0].every(event => event.createdBy === BOOTSTRAP.createdBy)).toBe(true)
  })

  test('are checked as POST .../tags checks them; a bad one refuses the whole flag', async () => {
    const before = storeSnapshot(api)
    const cases: [unknown, string][] = [
      [[{ value: 'ok-tag' }, { value: 'x' }], '/tags/1/value'],
      [[{ value: 'v'.repeat(51) }], '/tags/0/value'],
      [[{ type: 'x', value: 'ok-tag' }], '/tags/0/type'],
      [[{ type: 'simple' }], '/tags/0/value'],
      [Array.from({ length: 51 }, (_, index) => ({ value: `tag-${index}` })), '/tags'],
    ]
    for (const [tags, at] of cases) {
      const response = await api.createFlag('default', 'refused-flag', { tags })
      expectError(response, 400, 'ValidationError')
      expect({ at, details: detailPaths(response) }).toEqual({ at, details: expect.arrayContaining([at]) })
    }
    expectUnchanged(api, before)
  })
})

describe('the token body aliases of Unleash', () => {
  test('username names the token as tokenName does; both may be given only if equal; one of them is required', async () => {
    const created = await api.createToken({ username: 'legacy-script', type: 'client', environment: 'development' })
    expectOk(created, 201)
    expect(created.body.tokenName).toBe('legacy-script')
    expect(api.events().at(-1)).toMatchObject({
      type: 'api-token-created',
      data: expect.objectContaining({ tokenName: 'legacy-script' }),
    })
    expectOk(await api.createToken({ tokenName: 'same-name', username: 'same-name', type: 'admin' }), 201)
    const before = storeSnapshot(api)
    expectError(
      await api.createToken({ tokenName: 'one-name', username: 'other-name', type: 'admin' }),
      400,
      'ValidationError',
      ['username'],
    )
    expectError(await api.createToken({ type: 'admin' }), 400, 'ValidationError', ['tokenName'])
    expectUnchanged(api, before)
  })

  test('project is a one-project projects; giving both is refused unless they say the same', async () => {
    await api.newProject('alias-project')
    const viaProject = await api.createToken({
      tokenName: 'alias-client',
      type: 'client',
      project: 'alias-project',
      environment: 'development',
    })
    expectOk(viaProject, 201)
    expect(viaProject.body.projects).toEqual(['alias-project'])
    expect(viaProject.body.secret.startsWith('alias-project:development.')).toBe(true)
    expectOk(
      await api.createToken({
        tokenName: 'alias-both',
        type: 'client',
        project: 'alias-project',
        projects: ['alias-project'],
      }),
      201,
    )
    const before = storeSnapshot(api)
    expectError(
      await api.createToken({
        tokenName: 'alias-clash',
        type: 'client',
        project: 'alias-project',
        projects: ['default'],
      }),
      400,
      'ValidationError',
      ['project'],
    )
    expectUnchanged(api, before)
  })
})

describe('the project id in a project update', () => {
  test('is accepted when it names the project of the path, and refused (nothing changed) when it names another', async () => {
    await api.newProject('put-project')
    const same = await api.put<ProjectBody>('/api/admin/projects/put-project', {
      id: 'put-project',
      name: 'Renamed',
      description: 'new',
    })
    expectOk(same)
    expect(same.body).toMatchObject({ id: 'put-project', name: 'Renamed', description: 'new' })
    expect(api.events().at(-1)).toMatchObject({ type: 'project-updated', project: 'put-project' })
    const before = storeSnapshot(api)
    const other = await api.put('/api/admin/projects/put-project', { id: 'another-project', name: 'Again' })
    expectError(other, 400, 'ValidationError', ['another-project', 'put-project'])
    expectUnchanged(api, before)
    expect(api.services.store.reader.get('projects', 'another-project')).toBeUndefined()
  })
})

test('a flag read back answers only the listed properties after a PUT with unknown ones', async () => {
  await api.newFlag('default', 'put-flag')
  const updated = await api.put<FlagBody>(paths.flag('put-flag'), {
    description: 'changed',
    unleashOnly: true,
    favorite: true,
  })
  expectOk(updated)
  expect(updated.body).toMatchObject({ description: 'changed', favorite: false })
  expect(written()).not.toContain('unleashOnly')
})
