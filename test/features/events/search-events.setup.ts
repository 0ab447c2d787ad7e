/** What the event search tests share: a fresh app per test, searches over it, and a small sample log. */
import { expect } from 'bun:test'
import type { EventRecord } from '../../../src/storage/records'
import { type Api, expectOk, freshApiPerTest } from '../../helpers'

export const EVENT_FIELDS = [
  'id',
  'createdAt',
  'type',
  'createdBy',
  'createdByUserId',
  'environment',
  'project',
  'featureName',
  'data',
  'preData',
  'tags',
]

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}
/** Swaps in an app a test made itself (afterEach closes every app still open). */
export function setApi(next: Api): void {
  api = next
}

export async function search(query: string, token?: string) {
  const response = await api.searchEvents(query, token === undefined ? undefined : { token })
  expectOk(response)
  return response.body as { events: EventRecord[]; total: number }
}

/** Ids of every match: asks for the largest page. */
export async function ids(query: string): Promise<number[]> {
  const body = await search(`${query}${query.includes('?') ? '&' : '?'}limit=1000`)
  expect(body.total).toBe(body.events.length)
  return body.events.map(event => event.id)
}

/** The ids the contract says match, from the full log, newest first. */
export function expected(predicate: (event: EventRecord) => boolean): number[] {
  return api
    .events()
    .filter(predicate)
    .map(event => event.id)
    .reverse()
}

export async function newProject(id: string) {
  expectOk(await api.createProject(id), 201)
}

/** A small log: two projects, a few flags, toggles in both environments, a tag and a patch. */
export async function sampleLog() {
  await newProject('shop')
  await api.newFlag('default', 'alpha')
  await api.newFlag('default', 'beta')
  await api.newFlag('shop', 'cart')
  expectOk(await api.toggle('default', 'alpha', 'development', true))
  expectOk(await api.toggle('default', 'alpha', 'production', true))
  expectOk(await api.toggle('shop', 'cart', 'production', true))
  expectOk(await api.post('/api/admin/features/beta/tags', { type: 'simple', value: 'tagged' }), 201)
  expectOk(await api.patchFlag('default', 'beta', [{ op: 'replace', path: '/stale', value: true }]))
}
