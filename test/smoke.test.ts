import { afterEach, describe, expect, test } from 'bun:test'
import { makeApi, type Api, type ProjectListBody, type EnvironmentListBody } from './helpers'

let api: Api
afterEach(async () => api?.close())

describe('first start', () => {
  test('an empty store becomes project default with development and production connected', async () => {
    api = await makeApi()
    const projects = await api.get<ProjectListBody>('/api/admin/projects')
    expect(projects.status).toBe(200)
    expect(projects.body.projects.map((p: { id: string }) => p.id)).toEqual(['default'])
    expect(projects.body.projects[0].environments).toEqual(['development', 'production'])
    const environments = await api.get<EnvironmentListBody>('/api/admin/environments')
    expect(environments.body.environments.map(e => [e.name, e.type, e.sortOrder])).toEqual([
      ['development', 'development', 100],
      ['production', 'production', 200],
    ])
  })
})
