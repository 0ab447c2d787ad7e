/** What the request pipeline tests share: the exact shape of an error body, and bodies of a chosen size. */
import { expect } from 'bun:test'
import { errorOf, type ApiResponse, UUID } from '../helpers'

export const ERROR_KEYS = ['id', 'name', 'message', 'details', 'permissions']

/** Asserts status, name and the exact shape of the error body (contract §2). */
export function expectError(response: ApiResponse, status: number, name: string) {
  const body = errorOf(response)
  expect({ status: response.status, name: body?.name }).toEqual({ status, name })
  expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/i)
  expect(typeof body).toBe('object')
  for (const key of Object.keys(body)) expect(ERROR_KEYS).toContain(key)
  expect(body.id).toMatch(UUID)
  expect(typeof body.message).toBe('string')
  expect(body.message.length).toBeGreaterThan(0)
  if (body.details !== undefined) {
    expect(Array.isArray(body.details)).toBe(true)
    for (const detail of body.details) {
      for (const key of Object.keys(detail)) expect(['message', 'path']).toContain(key)
      expect(typeof detail.message).toBe('string')
      if (detail.path !== undefined) expect(typeof detail.path).toBe('string')
    }
  }
  if (status === 403) {
    expect(Array.isArray(body.permissions)).toBe(true)
    expect(body.permissions).toHaveLength(1)
    expect(typeof body.permissions?.[0]).toBe('string')
  } else {
    expect(body.permissions).toBeUndefined()
  }
  // No HTML page and no stack trace.
  expect(response.text).not.toMatch(/<html|<!doctype/i)
  expect(body.message).not.toMatch(/\n\s+at \S/)
}

export const VALIDATE = '/api/admin/features/validate'
export const CREATE_FLAG = '/api/admin/projects/default/features'
export const JSON_TYPE = { 'content-type': 'application/json' }

export function bytes(n: number, fill = 'x') {
  return JSON.stringify({ name: 'big', description: fill.repeat(n) })
}

/**
 * A body stream with no length, 50 times the limit of 1000 bytes (500 chunks of 100 bytes). Bounded
 * so that a reader without a limit finishes (and the test fails) instead of spinning for ever.
 */
export function longStream(chunks = 500, chunkSize = 100) {
  let pulled = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) return controller.close()
      pulled++
      controller.enqueue(new TextEncoder().encode((pulled === 1 ? '{"name":"' : '') + 'x'.repeat(chunkSize)))
    },
  })
  return { stream, pulled: () => pulled }
}
