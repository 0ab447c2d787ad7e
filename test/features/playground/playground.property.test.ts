/**
 * The playground answers as the official SDK's engine does: on random flags made through the admin
 * API (test/frontend-random.ts: every strategy type the SDK knows but the random ones, every
 * operator, segments, strategy and flag variants with payloads, overrides and stickiness, parents
 * on, off and with variants, a user-defined strategy type) and random contexts, each flag's
 * `isEnabled` and `variant` (name, enabled, payload) equal unleash-client's isEnabled and getVariant
 * (test/sdk-reference.ts) over the same flags, read from the client API. The advanced playground is
 * compared the same way, each of its contexts (a value with commas is several) on its own; each
 * rollout's `bucket` is the SDK's own hash of the context; every answer matches its schema.
 */
// Store-independent: it compares the evaluator with the SDK's engine; the flags' writes take the one
// commit path that the feature tests run again on PostgreSQL.
import { expect, test } from 'bun:test'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Context } from 'unleash-client/lib/context'
import { normalizedStrategyValue } from 'unleash-client/lib/strategy/util'
import { ENVIRONMENT, PROJECT, context, makeFlags, servedFlags } from '../../frontend-random'
import { expectOk, makeApi } from '../../helpers'
import { seededRandom, type Random } from '../../random'
import { sdkClient } from '../../sdk-reference'
import { AdvancedPlaygroundResponse, PlaygroundResponse } from '../../../src/features/playground/playground.model'

/** The answers are sent without Elysia's response check: they are checked against their schemas here. */
const answerSchemas = {
  playground: TypeCompiler.Compile(PlaygroundResponse),
  advanced: TypeCompiler.Compile(AdvancedPlaygroundResponse),
}
const schemaErrors = (kind: keyof typeof answerSchemas, body: unknown) =>
  [...answerSchemas[kind].Errors(body)].slice(0, 3).map(error => `${kind} ${error.path}: ${error.message}`)

interface Evaluation {
  name: string
  isEnabled: boolean
  variant: { name: string; enabled: boolean; payload?: unknown }
  strategies: { data: { parameters: Record<string, string>; name: string; bucket?: number | null }[] }
}

type SentContext = ReturnType<typeof context> & Record<string, unknown>

/** A random context the playground takes: a custom field at the top level at times, a valid currentTime. */
function playgroundContext(random: Random): SentContext {
  const sent: SentContext = context(random)
  if (sent.currentTime === 'garbage') delete sent.currentTime
  if (random.chance(0.3)) sent.plan = random.pick(['pro', 'free'])
  return sent
}

/** Where the SDK's answer for one flag differs from ours, or null. */
function mismatch(client: ReturnType<typeof sdkClient>, ours: Evaluation, sent: object): string | null {
  const sdkContext = sent as unknown as Context
  const enabled = client.isEnabled(ours.name, sdkContext, () => false)
  const variant = client.getVariant(ours.name, sdkContext)
  const expected = { isEnabled: enabled, name: variant.name, enabled: variant.enabled, payload: variant.payload }
  const actual = {
    isEnabled: ours.isEnabled,
    name: ours.variant.name,
    enabled: ours.variant.enabled,
    payload: ours.variant.payload,
  }
  return JSON.stringify(expected) === JSON.stringify(actual)
    ? null
    : `${ours.name} for ${JSON.stringify(sent)}: ours ${JSON.stringify(actual)}, sdk ${JSON.stringify(expected)}`
}

/** Where a rollout's bucket is not the SDK's hash of the context's stickiness value, or null. */
function bucketMismatch(ours: Evaluation, sent: SentContext): string | null {
  for (const strategy of ours.strategies.data) {
    if (strategy.name !== 'flexibleRollout' || strategy.bucket === undefined) continue
    const stickiness = strategy.parameters.stickiness
    const props = sent.properties as Record<string, string>
    const id =
      stickiness === 'default'
        ? sent.userId || sent.sessionId
        : ((sent[stickiness] as string | undefined) ?? props[stickiness])
    const expected = id ? normalizedStrategyValue(id, strategy.parameters.groupId) : null
    if (strategy.bucket !== expected) return `${ours.name}: bucket ${strategy.bucket}, sdk ${expected}`
  }
  return null
}

for (const seed of [1, 2, 3]) {
  test(`the playground answers as the official SDK's engine does, on random flags and contexts (seed ${seed})`, async () => {
    const random = seededRandom(seed)
    const api = await makeApi()
    try {
      await makeFlags(api, random)
      const served = await servedFlags(api)
      const sdk = sdkClient(served.features, served.segments)
      const mismatches: string[] = []
      let enabled = 0
      let compared = 0
      let buckets = 0
      for (let round = 0; round < 120; round++) {
        const sent = playgroundContext(random)
        const response = await api.post<{ features: Evaluation[] }>('/api/admin/playground', {
          environment: ENVIRONMENT,
          projects: [PROJECT],
          context: sent,
        })
        expectOk(response)
        mismatches.push(...schemaErrors('playground', response.body))
        for (const evaluation of response.body.features) {
          compared++
          if (evaluation.isEnabled) enabled++
          const problem = mismatch(sdk, evaluation, sent) ?? bucketMismatch(evaluation, sent)
          if (problem) mismatches.push(problem)
          buckets += evaluation.strategies.data.filter(strategy => typeof strategy.bucket === 'number').length
        }
      }
      // The advanced playground: two users and two plans in one context are four, each compared on its own.
      for (let round = 0; round < 10; round++) {
        const sent = playgroundContext(random)
        const users = `${random.pick(['user-1', 'user-3', 'user-7'])},${random.pick(['user-12', '42', 'user-20'])}`
        const response = await api.post<{
          features: { environments: Record<string, (Evaluation & { context: object })[]> }[]
        }>('/api/admin/playground/advanced', {
          environments: [ENVIRONMENT],
          projects: [PROJECT],
          context: { ...sent, userId: users, properties: { ...sent.properties, plan: 'pro,free' } },
        })
        expectOk(response)
        mismatches.push(...schemaErrors('advanced', response.body))
        for (const feature of response.body.features) {
          const evaluations = feature.environments[ENVIRONMENT]
          expect(evaluations).toHaveLength(4)
          for (const evaluation of evaluations) {
            compared++
            const problem = mismatch(sdk, evaluation, evaluation.context)
            if (problem) mismatches.push(`advanced: ${problem}`)
          }
        }
      }
      expect(mismatches.slice(0, 3)).toEqual([])
      // Not an empty comparison: flags are on and off, and rollouts show buckets.
      expect(compared).toBeGreaterThan(120 * 50)
      expect(enabled).toBeGreaterThan(compared / 10)
      expect(enabled).toBeLessThan(compared * 0.9)
      expect(buckets).toBeGreaterThan(100)
    } finally {
      await api.close()
    }
  }, 60_000)
}
