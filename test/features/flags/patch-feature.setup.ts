/** What the patch-feature tests share (patch-feature*.test.ts): a fresh app per test and the helpers over it. */
import { expect } from 'bun:test'
import { type Api, expectOk, freshApiPerTest, expectRefused } from '../../helpers'

export const METADATA_KEYS = [
  'name',
  'description',
  'type',
  'project',
  'stale',
  'impressionData',
  'archived',
  'createdAt',
]

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}

export async function read(name: string, project = 'default') {
  const response = await api.getFlag(project, name)
  expectOk(response)
  return response.body
}

export function metadata(flag: Record<string, unknown>) {
  return Object.fromEntries(METADATA_KEYS.map(key => [key, flag[key]]))
}

/** Sends a patch that must be refused: its error, and nothing stored, no event (see expectRefused). */
export function patchRefused(
  name: string,
  operations: unknown,
  status: number,
  errorName: string,
  mentions: (string | RegExp)[] = [],
  project = 'default',
) {
  return expectRefused(api, () => api.patchFlag(project, name, operations), status, errorName, mentions)
}

/** Sends a patch that must be accepted; asserts 200 and that the answer is what GET answers. */
export async function expectAccepted(name: string, operations: unknown, project = 'default') {
  const response = await api.patchFlag(project, name, operations)
  expectOk(response)
  expect(response.body).toEqual(await read(name, project))
  return response.body
}
