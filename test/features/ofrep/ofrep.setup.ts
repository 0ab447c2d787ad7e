/** What the ofrep tests share (ofrep*.test.ts): a fresh app per test and the helpers over it. */
import { expect } from 'bun:test'
import { type Api, expectOk, freshApiPerTest, type ApiResponse } from '../../helpers'

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}

export const ONE = (key: string) => `/ofrep/v1/evaluate/flags/${encodeURIComponent(key)}`
export const BULK = '/ofrep/v1/evaluate/flags'
export const strategies = (flag: string, environment = 'development', project = 'default') =>
  `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`

export interface Evaluation {
  key: string
  value?: unknown
  reason: string
  variant: string
  metadata: { project: string }
}
export interface Failure {
  key?: string
  errorCode: string
  errorDetails: string
}

export async function sdkToken(
  type: 'frontend' | 'client' = 'frontend',
  projects: string[] = ['default'],
  environment = 'development',
): Promise<string> {
  const created = await api.createToken({ tokenName: `${type}-${crypto.randomUUID()}`, type, projects, environment })
  expectOk(created, 201)
  return created.body.secret
}

export const evaluate = (
  token: string,
  key: string,
  context: unknown = { targetingKey: 'user-1' },
  headers: Record<string, string> = {},
) => api.post<Evaluation | Failure>(ONE(key), { context }, { token, headers })
export const bulk = (
  token: string,
  context: unknown = { targetingKey: 'user-1' },
  headers: Record<string, string> = {},
) => api.post<{ flags: Evaluation[] } | Failure>(BULK, { context }, { token, headers })

export function expectFailure(response: ApiResponse<unknown>, status: number, errorCode: string, key?: string) {
  expect({ status: response.status, type: response.headers.get('content-type') }).toEqual({
    status,
    type: 'application/json',
  })
  const body = response.body as Failure
  expect(Object.keys(body).sort()).toEqual(
    key === undefined ? ['errorCode', 'errorDetails'] : ['errorCode', 'errorDetails', 'key'],
  )
  expect(body.errorCode).toBe(errorCode)
  if (key !== undefined) expect(body.key).toBe(key)
  expect(body.errorDetails.length).toBeGreaterThan(5)
}

export const flagsOf = (response: ApiResponse<unknown>) =>
  new Map(((response.body as { flags: Evaluation[] }).flags ?? []).map(flag => [flag.key, flag]))
