/** What the relations tests share (relations*.test.ts): a fresh app per test and the helpers over it. */
import { expect } from 'bun:test'
import { type Api, type TagListBody, named, freshApiPerTest, paths } from '../../helpers'

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}

export const PROJECT = 'default'

export const tagsPath = (flag: string) => `/api/admin/features/${flag}/tags`
export const tagPath = (flag: string, type: string, value: string) =>
  `${tagsPath(flag)}/${encodeURIComponent(type)}/${encodeURIComponent(value)}`
export const dependenciesPath = (child: string, project = PROJECT) => `${paths.flag(child, project)}/dependencies`
export const lifecyclePath = (flag: string, action: 'complete' | 'uncomplete', project = PROJECT) =>
  `${paths.flag(flag, project)}/lifecycle/${action}`

export async function flag(name: string, project = PROJECT) {
  const response = await api.getFlag(project, name)
  expect(response.status).toBe(200)
  return response.body
}

export async function listed(name: string, project = PROJECT) {
  const response = await api.listFlags(project)
  expect(response.status).toBe(200)
  return named(response.body.features, name)
}

export async function tagsOf(name: string) {
  const response = await api.get<TagListBody>(tagsPath(name))
  expect(response.status).toBe(200)
  return response.body.tags
}
