/**
 * `*` is the all-projects and all-environments wildcard of API tokens: a project id or an
 * environment name made only of `*` is refused with a 400 naming the field (issue 18, item 7),
 * while names merely containing `*` stay legal, and data directories that already hold such a
 * project or environment still load and serve them.
 */
import { describe, expect, test } from 'bun:test'
import { SYSTEM_ACTOR } from '../../src/domain/events'
import { createEnvironment } from '../../src/features/environments/environments.service'
import { createProject } from '../../src/features/projects/projects.service'
import { errorOf, expectError, expectOk, makeApi, tempDir } from '../helpers'

const WILDCARDS = ['*', '**', '***']

describe('wildcard names', () => {
  test('a project id made only of * is 400 at /id, and nothing is created', async () => {
    const api = await makeApi()
    try {
      for (const id of WILDCARDS) {
        const since = api.lastEventId()
        const response = await api.createProject(id)
        expectError(response, 400, 'ValidationError', ['project id', 'all projects'])
        expect(errorOf(response).details?.[0]?.path).toBe('/id')
        expect(api.eventsSince(since)).toEqual([])
        expectError(await api.get(`/api/admin/projects/${encodeURIComponent(id)}`), 404, 'NotFoundError')
      }
      // Only the name made of the wildcard alone is refused.
      expectOk(await api.createProject('team*'), 201)
    } finally {
      await api.close()
    }
  }, 30_000)

  test('an environment name made only of * is 400 at /name, and nothing is created', async () => {
    const api = await makeApi()
    try {
      for (const name of WILDCARDS) {
        const since = api.lastEventId()
        const response = await api.post('/api/admin/environments', { name, type: 'test' })
        expectError(response, 400, 'ValidationError', ['environment name', 'all environments'])
        expect(errorOf(response).details?.[0]?.path).toBe('/name')
        expect(api.eventsSince(since)).toEqual([])
      }
      const environments = (await api.get<{ environments: { name: string }[] }>('/api/admin/environments')).body
        .environments
      expect(environments.map(environment => environment.name).filter(name => name.includes('*'))).toEqual([])
      expectOk(await api.post('/api/admin/environments', { name: 'qa*', type: 'test' }), 201)
    } finally {
      await api.close()
    }
  }, 30_000)

  test('a data directory that already holds a project and an environment named * still loads and serves them', async () => {
    const dir = tempDir('wildcard-')
    try {
      const before = await makeApi({ dataDir: dir.path })
      // As an older version could have stored them: through the same write path, without the new check.
      await before.services.store.transact(SYSTEM_ACTOR, tx => {
        createEnvironment(tx, { name: '*', type: 'test' })
        createProject(tx, { id: '*', name: 'Star', featureNaming: null })
      })
      await before.close()

      const after = await makeApi({ dataDir: dir.path })
      try {
        const project = await after.get<{ id: string; name: string }>('/api/admin/projects/*')
        expectOk(project)
        expect(project.body).toMatchObject({ id: '*', name: 'Star' })
        const environments = (await after.get<{ environments: { name: string }[] }>('/api/admin/environments')).body
          .environments
        expect(environments.map(environment => environment.name)).toContain('*')
        // And its flags can still be made and changed.
        expectOk(await after.createFlag('*', 'in-star'), 201)
      } finally {
        await after.close()
      }
    } finally {
      dir.remove()
    }
  }, 30_000)
})
