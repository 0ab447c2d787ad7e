/**
 * The frontend API evaluates with its own compiled engine; this compares its answers with the
 * official SDK's engine (test/sdk-reference.ts: unleash-client's UnleashClient) reading the same
 * flags from the client API, on random flags made through the admin API (every strategy type the
 * SDK knows but the random ones, every operator, inverted and case-insensitive forms, segments,
 * strategy and flag variants with payloads, overrides and stickiness, parents on, off and with
 * variants, a user-defined strategy type) and random contexts, sent as the POST body and as the
 * query string of a GET (URLSearchParams, properties at root or as properties[…]). The contexts always carry a
 * sessionId, a remoteAddress and the field variants are sticky on, so that no answer is random.
 */
// Store-independent: it compares the frontend API's evaluator with the SDK's engine; the flags' writes take the
// one commit path that the feature tests run again on PostgreSQL.
import { expect, test } from 'bun:test'
import { ENVIRONMENT, PROJECT, context, makeFlags, queryOf, servedFlags } from '../../frontend-random'
import { expectOk, makeApi } from '../../helpers'
import { seededRandom } from '../../random'
import { sdkEvaluator } from '../../sdk-reference'

/** The toggles that differ between two answers, by name. */
function differences(ours: string, theirs: string): string {
  const byName = (json: string) =>
    new Map((JSON.parse(json).toggles as { name: string }[]).map(toggle => [toggle.name, JSON.stringify(toggle)]))
  const a = byName(ours)
  const b = byName(theirs)
  return [...new Set([...a.keys(), ...b.keys()])]
    .filter(name => a.get(name) !== b.get(name))
    .map(name => `${name}: ours ${a.get(name) ?? 'not listed'}, sdk ${b.get(name) ?? 'not listed'}`)
    .join('; ')
}

for (const seed of [1, 2, 3]) {
  test(`the frontend API answers as the official SDK's engine does, on random flags and contexts (seed ${seed})`, async () => {
    const random = seededRandom(seed)
    const api = await makeApi()
    try {
      await makeFlags(api, random)
      const frontend = await api.createToken({
        tokenName: 'browser',
        type: 'frontend',
        projects: [PROJECT],
        environment: ENVIRONMENT,
      })
      const served = await servedFlags(api)
      const sdk = sdkEvaluator(served.features, served.segments)
      const mismatches: string[] = []
      let listed = 0
      for (let round = 0; round < 150; round++) {
        const sent = context(random)
        const response = await api.post<{ toggles: { name: string }[] }>(
          '/api/frontend',
          { context: sent },
          { token: frontend.body.secret },
        )
        expectOk(response)
        listed += response.body.toggles.length
        const expected = sdk.evaluate({ ...sent, properties: Object.assign(Object.create(null), sent.properties) })
        if (response.text !== expected)
          mismatches.push(`${JSON.stringify(sent)}: ${differences(response.text, expected)}`)
        // The query form of the same context reads alike.
        const query = queryOf(sent, random)
        const viaQuery = await api.get<{ toggles: { name: string }[] }>(`/api/frontend?${query}`, {
          token: frontend.body.secret,
        })
        expectOk(viaQuery)
        if (viaQuery.text !== expected) mismatches.push(`GET ?${query}: ${differences(viaQuery.text, expected)}`)
      }
      expect(mismatches.slice(0, 3)).toEqual([])
      // Not an empty comparison: flags are listed, and not all of them every time.
      expect(listed).toBeGreaterThan(150)
      expect(listed).toBeLessThan(150 * served.features.filter(feature => feature.enabled).length)
    } finally {
      await api.close()
    }
  }, 30_000)
}
