/**
 * A JSON object with its own toString or valueOf cannot be turned into text; where such a value
 * broke a schema, building the 400 threw and the client got a 500. Such objects are given the
 * ordinary way to become text, so the 400 names the field (and such keys stay usable as names: see
 * the SDK metrics of flags named toString in test/features/metrics/metrics.test.ts).
 */
// Store-independent: about making a 400 from a value that cannot become text, before any write.
import { expect, test } from 'bun:test'
import { type Api, expectError, expectOk, freshApiPerTest } from '../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

test('a body holding an object with its own toString or valueOf where the schema wants text is a 400 naming the field, never a 500, and changes nothing', async () => {
  for (const [body, field] of [
    [{ id: { toString: -1 }, name: 'x' }, '/id'],
    [{ id: 'p1', name: { valueOf: 'x', toString: 'y' } }, '/name'],
    [{ id: 'p2', name: 'p2', description: [{ toString: 1 }] }, '/description'],
  ] as const) {
    const since = api.lastEventId()
    const response = await api.post('/api/admin/projects', body)
    expectError(response, 400, 'ValidationError', [field])
    expect(api.eventsSince(since)).toEqual([])
  }
  const flag = await api.post('/api/admin/projects/default/features/missing/dependencies', {
    feature: { toString: -1, '..': 'a' },
  })
  expectError(flag, 400, 'ValidationError', ['/feature'])
  // An unlisted property named toString is dropped like any other; the object it stood in is fine.
  expectOk(
    await api.post('/api/admin/projects', {
      id: 'p3',
      name: 'p3',
      featureNaming: { pattern: 'p3-.*', toString: 'x', valueOf: 1 },
    }),
    201,
  )
  expect((await api.get<{ featureNaming: unknown }>('/api/admin/projects/p3')).body.featureNaming).toEqual({
    pattern: 'p3-.*',
  })
})
