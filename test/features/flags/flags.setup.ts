import type { EventRecord } from '../../../src/storage/records'
import { type Api, expectStatus, type FlagListBody, BOOTSTRAP, named, freshApiPerTest } from '../../helpers'

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}

export async function readFlag(project: string, name: string) {
  const response = await api.getFlag(project, name)
  expectStatus(response, 200)
  return response.body
}

export async function environmentOf(project: string, name: string, environment: string) {
  const flag = await readFlag(project, name)
  return named(flag.environments, environment)
}

export async function listedNames(project: string): Promise<string[]> {
  const response = await api.listFlags(project)
  expectStatus(response, 200)
  return response.body.features.map((feature: { name: string }) => feature.name)
}

export async function archivedNames(): Promise<string[]> {
  const response = await api.get<FlagListBody>('/api/admin/archive/features')
  expectStatus(response, 200)
  return response.body.features.map((feature: { name: string }) => feature.name)
}

export async function archive(project: string, name: string) {
  expectStatus(await api.delete(`/api/admin/projects/${project}/features/${name}`), 202)
}

export async function on(project: string, name: string, environment: string) {
  expectStatus(await api.toggle(project, name, environment, true), 200)
}

export function types(events: EventRecord[]) {
  return events.map(event => event.type)
}

/** Common fields of an event about one flag, written by the bootstrap admin token. */
export function flagEvent(type: string, project: string, featureName: string, extra: Record<string, unknown> = {}) {
  return { type, ...BOOTSTRAP, project, featureName, tags: [], ...extra }
}
