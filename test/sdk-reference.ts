/**
 * The frontend API's answer as the official Node SDK's own engine gives it: `unleash-client`'s
 * UnleashClient over a repository of flags in the client API's shape, with the SDK's built-in
 * strategies, one forceGetVariant per flag (as Unleash's frontend API does). The service evaluates
 * with its own compiled engine (src/features/evaluation/); `bench/run.ts frontend-eval` measures
 * the two, and test/features/frontend/frontend-evaluation.test.ts compares their answers.
 */
import UnleashClient from 'unleash-client/lib/client'
import type { Context } from 'unleash-client/lib/context'
import type { FeatureInterface } from 'unleash-client/lib/feature'
import { defaultStrategies } from 'unleash-client/lib/strategy'
import type { Segment } from 'unleash-client/lib/strategy/strategy'
import type { Store } from '../src/storage/store'
import { clientFeatureView } from '../src/features/client/client.view'
import type { SdkScope } from '../src/features/tokens/auth'
import { inProjects } from '../src/features/evaluation/scope'
import type { FrontendEvaluator } from '../src/features/frontend/frontend.answers'

/**
 * The SDK's own engine over `features` and `segments` (as the client API serves them): its
 * isEnabled and getVariant are what the service's evaluations are compared with.
 */
export function sdkClient(features: readonly FeatureInterface[], segments: readonly Segment[]): UnleashClient {
  const toggles = new Map(features.map(feature => [feature.name, feature]))
  const byId = new Map(segments.map(segment => [segment.id, segment]))
  const client = new UnleashClient(
    { getToggle: (name: string) => toggles.get(name), getSegment: (id: number) => byId.get(id) } as never,
    defaultStrategies,
  )
  // Unknown strategy types and parents are reported as warnings, a malformed flag as an 'error' event (which throws with no listener).
  client.on('error', () => {})
  client.on('warn', () => {})
  return client
}

/** The toggles the SDK's engine lists for `context`, as JSON text (`{"toggles":[…]}`, by name). */
export function sdkEvaluator(features: readonly FeatureInterface[], segments: readonly Segment[]): FrontendEvaluator {
  const client = sdkClient(features, segments)
  const listed = features
    .filter(feature => feature.enabled)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return {
    candidates: listed.length,
    evaluate(context) {
      const answer = []
      for (const feature of listed) {
        const variant = client.forceGetVariant(feature.name, context as unknown as Context)
        if (!variant.feature_enabled) continue
        answer.push({
          name: feature.name,
          enabled: true,
          variant: {
            name: variant.name,
            enabled: variant.enabled,
            ...(variant.payload !== undefined ? { payload: variant.payload } : {}),
            feature_enabled: true,
            featureEnabled: true,
          },
          impressionData: feature.impressionData ?? false,
        })
      }
      return JSON.stringify({ toggles: answer })
    },
  }
}

/** The same from the store's state, for the in-process measurement. */
export function compileWithSdk(state: Pick<Store['state'], 'flags' | 'segments'>, scope: SdkScope): FrontendEvaluator {
  const features = Object.values(state.flags)
    .filter(flag => inProjects(scope, flag.project))
    .flatMap(flag => clientFeatureView(flag, scope.environment) ?? [])
  const segments = Object.values(state.segments).map(segment => ({
    id: segment.id,
    name: segment.name,
    constraints: segment.constraints,
  }))
  return sdkEvaluator(features as FeatureInterface[], segments as Segment[])
}
