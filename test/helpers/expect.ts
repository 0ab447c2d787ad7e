/**
 * Assertions on answers (a success, an error with its shape) and on the store (a refused request
 * changed nothing and recorded no event).
 */
import { expect } from 'bun:test'
import type { Api, ApiResponse, ErrorBody } from './api'

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A timestamp as the API writes it: RFC 3339, UTC, milliseconds. */
/** Every field a flag has as the admin API answers it (getFeature, PATCH, lists). */
export const FLAG_FIELDS = [
  'name',
  'type',
  'description',
  'project',
  'enabled',
  'stale',
  'favorite',
  'impressionData',
  'createdAt',
  'createdBy',
  'archived',
  'archivedAt',
  'lastSeenAt',
  'environments',
  'variants',
  'strategies',
  'tags',
  'children',
  'lifecycle',
  'dependencies',
]

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

export function expectStatus(response: ApiResponse, status: number, name?: string) {
  expect({ status: response.status, body: response.body }).toMatchObject({
    status,
    ...(name ? { body: { name } } : {}),
  })
}

/** Asserts an error answer: status, name, a JSON body with a uuid id and a helpful message mentioning `mentions`. */
export function expectError(response: ApiResponse, status: number, name: string, mentions: (string | RegExp)[] = []) {
  const body = errorOf(response)
  expect({ status: response.status, name: body?.name }).toEqual({ status, name })
  expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
  expect(body.id).toMatch(UUID)
  expect(typeof body.message).toBe('string')
  expect(body.message.length).toBeGreaterThan(10)
  for (const mention of mentions) {
    if (typeof mention === 'string') expect(body.message).toContain(mention)
    else expect(body.message).toMatch(mention)
  }
  // Neither an HTML error page nor a stack trace reaches the client.
  expect(response.text).not.toMatch(/<html|\n\s+at \S/i)
}

/** Asserts a value is there (a `find` that found) and narrows its type. */
export function defined<T>(value: T | undefined | null): T {
  expect(value).toBeDefined()
  expect(value).not.toBeNull()
  return value as T
}

/** The item called `name` (an environment entry, a flag in a list…), asserted to be there. */
export function named<T extends { name: string }>(items: readonly T[] | undefined, name: string): T {
  return defined(items?.find(item => item.name === name))
}

/** The body of an error answer (whatever the route answers on success). */
export function errorOf(response: ApiResponse<unknown>): ErrorBody {
  return response.body as ErrorBody
}

/** An answer as compared between two services: status and body, the error id (new on every request) left out. */
export function withoutErrorId(response: ApiResponse) {
  const body =
    response.body && typeof response.body === 'object' && 'id' in response.body
      ? { ...response.body, id: '<id>' }
      : response.body
  return { status: response.status, body }
}

/** Asserts a success status, showing the body when it is not. */
export function expectOk(response: ApiResponse, status = 200) {
  expect({ status: response.status, body: response.status === status ? undefined : response.body }).toEqual({
    status,
    body: undefined,
  })
}

/** What a refused request must leave as it was: the stored state and the last event. */
export function storeSnapshot(api: Api): { lastEventId: number; state: string } {
  return { lastEventId: api.lastEventId(), state: JSON.stringify(api.services.store.state) }
}

/** Asserts that nothing was stored and no event recorded since `before` (a `storeSnapshot`). */
export function expectUnchanged(api: Api, before: ReturnType<typeof storeSnapshot>): void {
  expect(storeSnapshot(api)).toEqual(before)
}

/** Sends a request that must be refused: its error (see expectError), and nothing stored, no event. */
export async function expectRefused<T = unknown>(
  api: Api,
  send: () => Promise<ApiResponse<T>>,
  status: number,
  name: string,
  mentions: (string | RegExp)[] = [],
): Promise<ApiResponse<T>> {
  const before = storeSnapshot(api)
  const response = await send()
  expectError(response, status, name, mentions)
  expectUnchanged(api, before)
  return response
}
