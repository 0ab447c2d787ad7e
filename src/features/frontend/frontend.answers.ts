/**
 * The frontend API's answer (sdk-api-contract §2) made from the evaluator's outcomes: each flag on
 * in the environment has its entry made once per compiled scope for each variant it may answer
 * with, so a request only evaluates and joins text.
 */
import type { CompiledScope, EvalContext } from '../evaluation/scope'
import type { VariantFacts } from '../evaluation/flag'
import { variantSlot } from '../evaluation/outcome'

/** What the frontend API asks of an engine (the SDK's own engine gives the same, test/sdk-reference.ts). */
export interface FrontendEvaluator {
  /** The answer's JSON text for `context`: `{"toggles":[…]}`, flags by name. */
  evaluate(context: EvalContext): string
  /** How many flags each evaluation looks at: those on in the environment (an off flag is never listed). */
  readonly candidates: number
}

/** The variant of a flag that is on with none. */
const NO_VARIANT = '{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true}'

const variantJson = (variant: VariantFacts) =>
  JSON.stringify({
    name: variant.name,
    enabled: true,
    ...(variant.payload ? { payload: variant.payload } : {}),
    feature_enabled: true,
    featureEnabled: true,
  })

export function frontendAnswers(scope: CompiledScope): FrontendEvaluator {
  const listed: number[] = []
  /** Each listed flag's entries, by variant slot, from `first[index]` on. */
  const entries: string[] = []
  const first = new Int32Array(scope.flags.length)
  scope.flags.forEach((flag, index) => {
    if (!flag.enabled) return
    listed.push(index)
    first[index] = entries.length
    const head = `{"name":${JSON.stringify(flag.name)},"enabled":true,"variant":`
    const tail = `,"impressionData":${flag.impressionData}}`
    entries.push(head + NO_VARIANT + tail, ...flag.variants.map(variant => head + variantJson(variant) + tail))
  })
  const order = Int32Array.from(listed)
  return {
    candidates: order.length,
    evaluate(context) {
      // Built with += (a rope, flattened once by the hash): measured cheaper than collecting and joining.
      let json = '{"toggles":['
      let none = true
      for (let k = 0; k < order.length; k++) {
        const index = order[k]
        const outcome = scope.outcome(index, context)
        if (outcome < 0) continue
        const entry = entries[first[index] + variantSlot(outcome)]
        json += none ? entry : ',' + entry
        none = false
      }
      return json + ']}'
    },
  }
}
