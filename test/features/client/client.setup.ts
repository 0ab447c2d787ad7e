/** What the client tests share (client*.test.ts): a fresh app per test and the helpers over it. */
import { expect } from 'bun:test'
import { type Api, freshApiPerTest, paths } from '../../helpers'

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}

export interface ClientFeature {
  name: string
  enabled: boolean
  project: string
  strategies: Record<string, unknown>[]
  variants: Record<string, unknown>[]
  dependencies?: unknown[]
  [key: string]: unknown
}
export interface ClientFeatures {
  version: number
  features: ClientFeature[]
  query: Record<string, unknown>
  meta: { revisionId: number; etag: string; queryHash: string }
}

export async function sdkToken(
  type: 'client' | 'frontend' | 'admin',
  projects: string[] = ['*'],
  environment = 'development',
): Promise<string> {
  const name = `${type}-${projects.join('-').replace('*', 'all')}-${environment}-${Math.random().toString(36).slice(2, 8)}`
  const response = await api.createToken({
    tokenName: name,
    type,
    projects,
    ...(type === 'admin' ? {} : { environment }),
  })
  expect(response.status).toBe(201)
  return response.body.secret
}

export const features = (token: string, query = '', headers: Record<string, string> = {}) =>
  api.get<ClientFeatures>(`/api/client/features${query}`, { token, headers })
export const names = (body: ClientFeatures) => body.features.map(feature => feature.name)

export async function addStrategy(project: string, flag: string, environment: string, body: Record<string, unknown>) {
  const response = await api.post(paths.strategies(flag, environment, project), body)
  expect(response.status).toBe(200)
  return response.body as { id: string }
}
