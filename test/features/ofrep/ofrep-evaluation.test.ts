/**
 * OFREP evaluates with the frontend API's own compiled engine: on random flags and contexts
 * (test/frontend-random.ts, the generators the frontend API is compared with the official SDK's
 * engine on), the flags OFREP's bulk answer has on, their variants and payloads are exactly the
 * frontend API's toggles for the same context; the single flag answers agree with the bulk one; a
 * flag is DISABLED exactly when it is off in the environment.
 */
// Store-independent: it compares two protocols over one evaluator; the flags' writes take the one commit
// path that the feature tests run again on PostgreSQL.
import { expect, test } from 'bun:test'
import { ENVIRONMENT, PROJECT, context, makeFlags } from '../../frontend-random'
import { expectOk, makeApi } from '../../helpers'
import { seededRandom } from '../../random'

interface Evaluation {
  key: string
  value?: unknown
  reason: string
  variant: string
}
interface Toggle {
  name: string
  variant: { name: string; payload?: { type: string; value: string } }
}

/** A payload as OFREP types it (docs/ofrep.md), written here independently of the service's code. */
function typed(payload: { type: string; value: string } | undefined): unknown {
  if (!payload) return true
  if (payload.type === 'number') return Number(payload.value)
  if (payload.type === 'json') return JSON.parse(payload.value) ?? payload.value
  return payload.value
}

/** What the frontend API would list for a flag OFREP answered, or null when OFREP has it off. */
function asToggle(flag: Evaluation): { variant: string; value: unknown } | null {
  if (flag.reason === 'DISABLED' || flag.reason === 'DEFAULT') return null
  // A flag without variants answers on; one with variants but none chosen answers 'disabled', as the frontend API names it.
  return { variant: flag.variant === 'on' ? 'disabled' : flag.variant, value: flag.value }
}

for (const seed of [11, 12]) {
  test(`OFREP answers as the frontend API does, on random flags and contexts (seed ${seed})`, async () => {
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
      const client = await api.createToken({
        tokenName: 'server',
        type: 'client',
        projects: [PROJECT],
        environment: ENVIRONMENT,
      })
      const served = await api.get<{ features: { name: string; enabled: boolean }[] }>('/api/client/features', {
        token: client.body.secret,
      })
      expectOk(served)
      const enabledInEnvironment = new Map(served.body.features.map(feature => [feature.name, feature.enabled]))
      const mismatches: string[] = []
      const reasons = new Set<string>()
      let on = 0
      for (let round = 0; round < 100; round++) {
        const sent = context(random)
        const { userId, ...rest } = sent
        // targetingKey is the userId; an empty userId is no targeting key (OFREP refuses an empty one), sent as the field it is.
        const ofrepContext = userId ? { targetingKey: userId, ...rest } : userId === '' ? { userId, ...rest } : rest
        const toggles = await api.post<{ toggles: Toggle[] }>(
          '/api/frontend',
          { context: sent },
          { token: frontend.body.secret },
        )
        expectOk(toggles)
        // Either token type reads the same.
        const token = random.chance(0.5) ? frontend.body.secret : client.body.secret
        const bulk = await api.post<{ flags: Evaluation[] }>(
          '/ofrep/v1/evaluate/flags',
          { context: ofrepContext },
          { token },
        )
        expectOk(bulk)
        const expected = new Map(
          toggles.body.toggles.map(toggle => [
            toggle.name,
            { variant: toggle.variant.name, value: typed(toggle.variant.payload) },
          ]),
        )
        const got = new Map(bulk.body.flags.map(flag => [flag.key, asToggle(flag)]))
        expect([...got.keys()].sort()).toEqual([...enabledInEnvironment.keys()].sort())
        for (const flag of bulk.body.flags) {
          reasons.add(flag.reason)
          if ((flag.reason === 'DISABLED') !== !enabledInEnvironment.get(flag.key))
            mismatches.push(`${flag.key}: ${flag.reason} but enabled ${enabledInEnvironment.get(flag.key)}`)
          const theirs = expected.get(flag.key) ?? null
          if (JSON.stringify(got.get(flag.key)) !== JSON.stringify(theirs)) {
            mismatches.push(
              `${JSON.stringify(ofrepContext)} ${flag.key}: ofrep ${JSON.stringify(flag)}, frontend ${JSON.stringify(theirs)}`,
            )
          }
        }
        on += expected.size
        for (const flag of random.some(bulk.body.flags, 3)) {
          const single = await api.post<Evaluation>(
            `/ofrep/v1/evaluate/flags/${flag.key}`,
            { context: ofrepContext },
            { token },
          )
          expectOk(single)
          if (JSON.stringify(single.body) !== JSON.stringify(flag))
            mismatches.push(`single ${flag.key}: ${JSON.stringify(single.body)} vs bulk ${JSON.stringify(flag)}`)
        }
      }
      expect(mismatches.slice(0, 3)).toEqual([])
      // Not an empty comparison: flags on and off, for many reasons.
      expect(on).toBeGreaterThan(100)
      expect([...reasons].sort()).toEqual(['DEFAULT', 'DISABLED', 'SPLIT', 'STATIC', 'TARGETING_MATCH'])
    } finally {
      await api.close()
    }
  }, 60_000)
}
