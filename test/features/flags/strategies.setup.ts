/** What the strategies tests share (strategies*.test.ts): a fresh app per test and the helpers over it. */
import { expect } from 'bun:test'
import { defined, errorOf, paths, type Api, type StrategyBody, freshApiPerTest } from '../../helpers'

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}

export const PROJECT = 'default'
export const strategiesPath = paths.strategies
export const strategyPath = (flag: string, id: string, environment = 'development', project = PROJECT) =>
  `${strategiesPath(flag, environment, project)}/${id}`
export const variantsPath = paths.variants

export async function addStrategy(flag: string, body: Record<string, unknown>, environment = 'development') {
  const response = await api.post<StrategyBody>(strategiesPath(flag, environment), body)
  expect(response.status).toBe(200)
  return response.body
}

export async function environmentEntry(flag: string, environment: string) {
  const response = await api.getFlag(PROJECT, flag)
  expect(response.status).toBe(200)
  return defined(response.body.environments.find(entry => entry.name === environment))
}

export async function strategiesOf(flag: string, environment = 'development') {
  const response = await api.get<StrategyBody[]>(strategiesPath(flag, environment))
  expect(response.status).toBe(200)
  return response.body
}

/** Sends a strategy that must be refused with 400, and checks that nothing was stored or recorded. */
export async function expectStrategyRejected(flag: string, body: Record<string, unknown>) {
  const before = api.lastEventId()
  const stored = await strategiesOf(flag)
  const response = await api.post<StrategyBody>(strategiesPath(flag), body)
  expect(response.status).toBe(400)
  expect(errorOf(response).name).toBe('ValidationError')
  expect(await strategiesOf(flag)).toEqual(stored)
  expect(api.eventsSince(before)).toEqual([])
  return response
}

export const constraint = (operator: string, extra: Record<string, unknown>) => ({
  contextName: 'appVersion',
  operator,
  ...extra,
})
