/**
 * A JSON object with its own toString or valueOf cannot be turned into text; where such a value
 * broke a schema, building the 400 threw and the client got a 500. Such bodies are refused up front.
 */
import { expect, test } from 'bun:test'
import { type Api, expectError, freshApiPerTest } from '../helpers'

let api: Api
freshApiPerTest((fresh) => (api = fresh))

test('a body holding an object with its own toString or valueOf is a 400, never a 500, and changes nothing', async () => {
  for (const body of [
    { id: { toString: -1 }, name: 'x' },
    { id: 'p1', name: { valueOf: 'x', toString: 'y' } },
    { id: 'p2', name: 'p2', description: [{ toString: 1 }] },
  ]) {
    const since = api.lastEventId()
    const response = await api.post('/api/admin/projects', body)
    expectError(response, 400, 'ValidationError')
    expect(api.eventsSince(since)).toEqual([])
  }
  const flag = await api.post('/api/admin/projects/default/features/missing/dependencies', { feature: { toString: -1, '..': 'a' } })
  expectError(flag, 400, 'ValidationError', ['toString'])
})
