/**
 * Persistence of the data directory while writing: concurrent writes are serialised without losing
 * any, reads never hand out the store's own records, and failed writes leave the files as they were.
 */
import { describe, expect, test } from 'bun:test'

import { type TagListBody, named, type TagBody, defined, waitFor } from '../helpers'
import {
  closeAfterEach,
  newDir,
  open,
  close,
  filesOf,
  expectFilesUnchanged,
  ADMIN_CALLER,
  buildScenario,
  readEverything,
} from './persistence.setup'

closeAfterEach()

describe('concurrent writes', () => {
  test('50 concurrent tag additions to one flag all succeed and none is lost', async () => {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'busy-flag')).status).toBe(201)
    const sinceId = api.lastEventId()
    const values = Array.from({ length: 50 }, (_, i) => `tag-${String(i).padStart(2, '0')}`)

    const responses = await Promise.all(
      values.map(value => api.post<TagBody>('/api/admin/features/busy-flag/tags', { type: 'simple', value })),
    )
    expect(responses.map(response => response.status)).toEqual(values.map(() => 201))
    expect(responses.map(response => response.body.value)).toEqual(values)

    const tags = await api.get<TagListBody>('/api/admin/features/busy-flag/tags')
    expect(tags.status).toBe(200)
    expect(tags.body.tags.map(tag => tag.value).sort()).toEqual(values)

    const added = api.eventsSince(sinceId)
    expect(added).toHaveLength(50)
    expect(added.map(event => event.id)).toEqual(Array.from({ length: 50 }, (_, i) => sinceId + 1 + i))
    expect(added.every(event => event.type === 'feature-tagged' && event.featureName === 'busy-flag')).toBe(true)
    expect(added.map(event => (event.data as any).value).sort()).toEqual(values)
    // Each event carries the flag's tags at that time: one more each time.
    expect(added.map(event => event.tags.length)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))

    // And all of it is on disk.
    await close(api)
    const reopened = await open(dir)
    expect((await reopened.get<TagListBody>('/api/admin/features/busy-flag/tags')).body.tags).toEqual(tags.body.tags)
    expect(reopened.eventsSince(sinceId)).toEqual(added)
  })

  test('50 concurrent PATCH replaces of the description all answer 200 and each records its own metadata event', async () => {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'patched-flag', { description: 'start' })).status).toBe(201)
    const sinceId = api.lastEventId()
    const values = Array.from({ length: 50 }, (_, i) => `description ${i}`)

    const responses = await Promise.all(
      values.map(value => api.patchFlag('default', 'patched-flag', [{ op: 'replace', path: '/description', value }])),
    )
    expect(responses.map(response => response.status)).toEqual(values.map(() => 200))

    const added = api.eventsSince(sinceId)
    expect(added.map(event => event.type)).toEqual(values.map(() => 'feature-metadata-updated'))
    expect(added.map(event => event.id)).toEqual(Array.from({ length: 50 }, (_, i) => sinceId + 1 + i))
    expect(added.map(event => (event.data as any).description).sort()).toEqual([...values].sort())
    // Serialised: each change starts from the one before it; no update is lost.
    expect((added[0].preData as any).description).toBe('start')
    for (let i = 1; i < added.length; i++) {
      expect((added[i].preData as any).description).toBe((added[i - 1].data as any).description)
    }
    const flag = await api.getFlag('default', 'patched-flag')
    expect(flag.body.description).toBe((added.at(-1)!.data as any).description)

    await close(api)
    const reopened = await open(dir)
    expect((await reopened.getFlag('default', 'patched-flag')).body).toEqual(flag.body)
  })

  test('each of 50 concurrent PATCH responses shows the flag as that patch left it', async () => {
    const api = await open(newDir())
    expect((await api.createFlag('default', 'echo-flag', { description: 'start' })).status).toBe(201)
    const values = Array.from({ length: 50 }, (_, i) => `description ${i}`)
    const responses = await Promise.all(
      values.map(value => api.patchFlag('default', 'echo-flag', [{ op: 'replace', path: '/description', value }])),
    )
    expect(responses.map(response => response.body.description)).toEqual(values)
  })

  test('a committed PATCH answers 200 with its own result even when the next queued write deletes the flag', async () => {
    const api = await open(newDir())
    expect((await api.createFlag('default', 'doomed-flag')).status).toBe(201)
    const sinceId = api.lastEventId()
    const patch = api.patchFlag('default', 'doomed-flag', [{ op: 'replace', path: '/archived', value: true }])
    // Once the archive is applied (and being written to disk), queue the deletion behind it.
    await waitFor(() => api.lastEventId() !== sinceId, 'the archive to be applied', { every: 0 })
    const remove = api.delete('/api/admin/archive/doomed-flag')
    const [patched, removed] = await Promise.all([patch, remove])
    expect(api.eventsSince(sinceId).map(event => event.type)).toEqual([
      'feature-metadata-updated',
      'feature-archived',
      'feature-deleted',
    ])
    expect(removed.status).toBe(200)
    // The archive was committed, so its answer is a success showing the archived flag.
    expect(patched.status).toBe(200)
    expect(patched.body.name).toBe('doomed-flag')
    expect(patched.body.archived).toBe(true)
  })

  test('a write that fails inside a busy batch does not undo or block the writes around it', async () => {
    const api = await open(newDir())
    expect((await api.createFlag('default', 'mixed-flag')).status).toBe(201)
    const sinceId = api.lastEventId()
    const requests = Array.from({ length: 20 }, (_, i) =>
      // Every third request repeats the tag of the request before it (409) or is too short (400).
      i % 3 === 2
        ? api.post('/api/admin/features/mixed-flag/tags', { value: i % 2 === 0 ? `ok-${i - 1}` : 'x' })
        : api.post('/api/admin/features/mixed-flag/tags', { value: `ok-${i}` }),
    )
    const responses = await Promise.all(requests)
    const expected = Array.from({ length: 20 }, (_, i) => (i % 3 === 2 ? (i % 2 === 0 ? 409 : 400) : 201))
    expect(responses.map(response => response.status)).toEqual(expected)
    const good = Array.from({ length: 20 }, (_, i) => i)
      .filter(i => i % 3 !== 2)
      .map(i => `ok-${i}`)
    const tags = await api.get<TagListBody>('/api/admin/features/mixed-flag/tags')
    expect(tags.body.tags.map(tag => tag.value).sort()).toEqual(good.sort())
    const added = api.eventsSince(sinceId)
    expect(added).toHaveLength(good.length)
    expect(added.map(event => event.id)).toEqual(Array.from({ length: good.length }, (_, i) => sinceId + 1 + i))
  })
})

describe('reads hand out copies', () => {
  test('changing a response body object does not change what the next GET returns', async () => {
    const api = await open(newDir())
    await buildScenario(api)
    const first = await api.getFlag('checkout', 'co.parent')
    const snapshot = structuredClone(first.body)
    first.body.description = 'changed'
    first.body.tags.push({ type: 'simple', value: 'injected' })
    first.body.environments[0].enabled = !first.body.environments[0].enabled
    defined(named(first.body.environments, 'staging').strategies)[0].parameters.rollout = '0'
    const again = await api.getFlag('checkout', 'co.parent')
    expect(again.body).toEqual(snapshot)
  })

  test('objects returned by the services are fresh copies: changing them changes no later read', async () => {
    const api = await open(newDir())
    await buildScenario(api)
    const { flags, relations, projects, tokens } = api.services
    const before = await readEverything(api)

    const flag = flags.get('checkout', 'co.parent') as any
    const mutate = (action: () => void) => {
      // Whether the copy may be changed is up to the caller; the store must not see it either way.
      try {
        action()
      } catch {}
    }
    mutate(() => (flag.description = 'changed'))
    mutate(() => flag.tags.push({ type: 'simple', value: 'injected' }))
    mutate(() => (flag.tags[0].value = 'renamed'))
    mutate(() => (flag.dependencies = []))
    mutate(() => (flag.children[0] = 'someone-else'))
    for (const environment of flag.environments) {
      mutate(() => (environment.enabled = !environment.enabled))
      for (const strategy of environment.strategies ?? []) {
        mutate(() => (strategy.parameters.rollout = '0'))
        mutate(() => strategy.constraints[0]?.values.push('android'))
        mutate(() => strategy.variants[0] && (strategy.variants[0].weight = 1))
      }
      for (const variant of environment.variants ?? []) {
        mutate(() => (variant.weight = 1))
        mutate(() => variant.overrides.push({ contextName: 'x', values: ['y'] }))
      }
    }
    const child = flags.get('checkout', 'co.child') as any
    mutate(() => (child.dependencies[0].enabled = false))
    mutate(() => child.dependencies[0].variants.push('b'))
    const tagList = relations.tags('co.parent') as any[]
    mutate(() => (tagList[0].value = 'renamed'))
    const projectList = projects.list(ADMIN_CALLER) as any[]
    for (const project of projectList) {
      mutate(() => project.environments.push('nowhere'))
      mutate(() => project.featureNaming && (project.featureNaming.pattern = '.*'))
    }
    const tokenList = tokens.list() as any[]
    mutate(() => tokenList[0].projects.push('elsewhere'))

    expect(await readEverything(api)).toEqual(before)
  })

  test('records held by the store are frozen, so changing one in place throws and changes nothing', async () => {
    const api = await open(newDir())
    await buildScenario(api)
    const before = await readEverything(api)
    const state = api.services.store.state
    const flag = state.flags['co.parent'] as any
    expect(Object.isFrozen(flag)).toBe(true)
    expect(Object.isFrozen(flag.tags)).toBe(true)
    expect(Object.isFrozen(flag.environments.staging.strategies[0].parameters)).toBe(true)
    expect(() => (flag.description = 'changed')).toThrow(TypeError)
    expect(() => flag.tags.push({ type: 'simple', value: 'injected' })).toThrow(TypeError)
    expect(() => (flag.tags[0].value = 'renamed')).toThrow(TypeError)
    expect(() => (flag.environments.production.enabled = false)).toThrow(TypeError)
    expect(() => (flag.environments.staging.strategies[0].parameters.rollout = '0')).toThrow(TypeError)
    expect(() => (flag.environments.production.variants[0].weight = 1)).toThrow(TypeError)
    const project = state.projects.checkout as any
    expect(() => (project.featureNaming.pattern = '.*')).toThrow(TypeError)
    expect(() => project.environments.push('nowhere')).toThrow(TypeError)
    const token = state.tokens['ci-bot'] as any
    expect(() => (token.role = 'admin')).toThrow(TypeError)
    expect(() => (token.projects[0] = '*')).toThrow(TypeError)
    // Events handed to commit listeners are frozen too.
    const event = api.events().at(-1) as any
    expect(() => (event.type = 'rewritten')).toThrow(TypeError)
    expect(() => ((api.events().at(-1) as any).data.name = 'rewritten')).toThrow(TypeError)

    expect(await readEverything(api)).toEqual(before)
  })

  test('records loaded from disk at start are frozen too', async () => {
    const dir = newDir()
    const first = await open(dir)
    await buildScenario(first)
    await close(first)
    const api = await open(dir)
    const flag = api.services.store.state.flags['co.parent'] as any
    expect(Object.isFrozen(flag)).toBe(true)
    expect(Object.isFrozen(flag.environments.staging.strategies[0].constraints[0].values)).toBe(true)
    expect(() => (flag.stale = true)).toThrow(TypeError)
    expect((await api.getFlag('checkout', 'co.parent')).body.stale).toBe(false)
  })
})

describe('failed writes', () => {
  test('a write answered with an error leaves both files byte-identical and records no event', async () => {
    const dir = newDir()
    const api = await open(dir)
    await buildScenario(api)
    await api.services.store.flush()
    const before = filesOf(dir)
    const lastId = api.lastEventId()

    // The expected status, or the statuses the contract leaves open.
    const failures: [string, () => Promise<{ status: number }>, number | number[]][] = [
      ['flag name breaking the naming pattern', () => api.createFlag('checkout', 'wrong-name'), 400],
      ['flag name already taken', () => api.createFlag('checkout', 'co.parent'), 409],
      ['archived flag name taken', () => api.createFlag('checkout', 'co.old'), 409],
      ['tag value too short', () => api.post('/api/admin/features/co.parent/tags', { value: 'x' }), 400],
      [
        'tag already on the flag',
        () => api.post('/api/admin/features/co.parent/tags', { type: 'simple', value: 'team-a' }),
        409,
      ],
      [
        'failed JSON-Patch test',
        () =>
          api.patchFlag('checkout', 'co.parent', [
            { op: 'replace', path: '/description', value: 'never saved' },
            { op: 'test', path: '/type', value: 'experiment' },
          ]),
        409,
      ],
      [
        'read-only field in a patch',
        () => api.patchFlag('checkout', 'co.parent', [{ op: 'replace', path: '/name', value: 'co.renamed' }]),
        400,
      ],
      [
        'wrongly typed patch value',
        () => api.patchFlag('checkout', 'co.parent', [{ op: 'replace', path: '/stale', value: 'yes' }]),
        400,
      ],
      ['project id taken', () => api.createProject('checkout'), 409],
      [
        'unknown flag in a bulk toggle',
        () => api.bulkToggle('checkout', 'production', ['co.parent', 'co.nope'], false),
        [400, 404],
      ],
      [
        'token without permission',
        () => api.toggle('checkout', 'co.parent', 'production', false, { token: null }),
        401,
      ],
    ]
    for (const [label, request, status] of failures) {
      const response = await request()
      const allowed = Array.isArray(status) ? status : [status]
      expect({ label, status: allowed.includes(response.status) ? allowed : response.status }).toEqual({
        label,
        status: allowed,
      })
      await api.services.store.flush()
      expect({ label, lastEventId: api.lastEventId() }).toEqual({ label, lastEventId: lastId })
      expectFilesUnchanged(dir, before)
    }
    // The store still takes writes afterwards.
    expect((await api.toggle('checkout', 'co.parent', 'production', false)).status).toBe(200)
    expect(api.lastEventId()).toBe(lastId + 1)
  })
})
