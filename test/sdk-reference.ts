/**
 * The frontend API's answer as the official Node SDK's own engine gives it: `unleash-client`'s
 * UnleashClient over a repository of the scope's flags, with the SDK's built-in strategies. The
 * service evaluates with its own compiled engine (src/features/frontend/evaluation.ts), which was
 * measured against this one (bench/frontend-eval.ts); the tests compare the two on many contexts.
 */
import UnleashClient from 'unleash-client/lib/client'
import type { Context } from 'unleash-client/lib/context'

import type { FeatureInterface } from 'unleash-client/lib/feature'
import { defaultStrategies } from 'unleash-client/lib/strategy'
import type { Segment } from 'unleash-client/lib/strategy/strategy'
import type { Store } from '../src/storage/store'
import { clientFeatureView } from '../src/features/client/client.view'
import type { SdkScope } from '../src/features/tokens/auth'
import { inProjects, type EvalContext } from '../src/features/frontend/evaluation'

/** The part of a flag's answer that does not depend on the context. */
interface Listed {
  name: string
  /** `{"name":…,"enabled":true,"variant":` */
  head: string
  /** `,"impressionData":…}` */
  tail: string
}

/** The variant of an enabled flag without one (contract §2). */
const NO_VARIANT = '{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true}'

export interface CompiledScope {
  /** The answer's JSON text for `context`: `{"toggles":[…]}`, flags by name. */
  evaluate(context: EvalContext): string
  /** How many flags each evaluation looks at (those enabled in the environment). */
  readonly candidates: number
}

export function compileWithSdk(state: Pick<Store['state'], 'flags' | 'segments'>, scope: SdkScope): CompiledScope {
  const toggles = new Map<string, FeatureInterface>()
  const listed: Listed[] = []
  for (const flag of Object.values(state.flags)) {
    if (!inProjects(scope, flag.project)) continue
    const view = clientFeatureView(flag, scope.environment)
    if (!view) continue
    // Off flags are kept in the repository: a child may depend on a parent being off.
    toggles.set(view.name, view as FeatureInterface)
    // An off flag is never enabled (the SDK checks `enabled` first), so it is never evaluated itself.
    if (view.enabled) {
      listed.push({
        name: view.name,
        head: `{"name":${JSON.stringify(view.name)},"enabled":true,"variant":`,
        tail: `,"impressionData":${view.impressionData}}`,
      })
    }
  }
  listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const segments = new Map<number, Segment>()
  for (const segment of Object.values(state.segments)) segments.set(segment.id, { id: segment.id, name: segment.name, constraints: segment.constraints } as Segment)

  const repository = {
    getToggle: (name: string) => toggles.get(name),
    getSegment: (id: number) => segments.get(id),
  }
  const client = new UnleashClient(repository as never, defaultStrategies)
  // The client reports unknown strategy types and parents as warnings, and a malformed flag as an
  // 'error' event, which would throw with no listener; neither needs a caller here.
  client.on('error', () => {})
  client.on('warn', () => {})

  return {
    candidates: listed.length,
    evaluate(context) {
      let json = '{"toggles":['
      let first = true
      for (const toggle of listed) {
        // One evaluation per flag: forceGetVariant decides enabled and the variant together, as
        // Unleash's frontend API does, so that a random stickiness cannot disagree between the two.
        const variant = client.forceGetVariant(toggle.name, context as Context)
        if (!variant.feature_enabled) continue
        const variantJson =
          variant.name === 'disabled' && !variant.enabled
            ? NO_VARIANT
            : JSON.stringify({
                name: variant.name,
                enabled: variant.enabled,
                ...(variant.payload !== undefined ? { payload: variant.payload } : {}),
                feature_enabled: true,
                featureEnabled: true,
              })
        json += (first ? '' : ',') + toggle.head + variantJson + toggle.tail
        first = false
      }
      return json + ']}'
    },
  }
}
