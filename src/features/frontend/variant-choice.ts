/**
 * How a variant is chosen, as the official Node SDK's selectVariantDefinition does it (unleash-client
 * 6.12, lib/variant.js): when the weights add up to something, the first variant with an override
 * matching the context, else the variant whose share of the weights holds the bucket of the
 * stickiness seed. The frontend API and OFREP (evaluation.ts) and the admin playground
 * (features/playground) all choose with it.
 */
import { resolver, type EvalContext } from './constraints'
import { variantBucket } from './rollout'

/** What a choice reads of a variant (strategy variants have no overrides). */
export interface WeightedVariant {
  weight: number
  overrides?: readonly { contextName: string; values: readonly string[] }[]
}

/** Told how a weighted choice was made: the bucket (1 to the total weight) the seed fell in. */
export interface VariantSeen {
  bucket: number
}

export interface VariantChoice {
  /** The index of the first variant with an override matching the context, or -1. */
  override(context: EvalContext): number
  /** The index of the variant whose share holds the context's bucket, or -1; `seen` gets the bucket. */
  weighted(context: EvalContext, seen?: VariantSeen): number
}

const randomSeed = () => String(Math.round(Math.random() * 100000))

/** The SDK's getSeed: a named field's value, or for `default` the first of userId, sessionId, remoteAddress; else random. */
function seedOf(stickiness: string | undefined): (context: EvalContext) => string {
  if (stickiness === undefined || stickiness === 'default') {
    return context => context.userId || context.sessionId || context.remoteAddress || randomSeed()
  }
  const value = resolver(stickiness)
  return context => value(context) || randomSeed()
}

/**
 * The choice among `variants` of `groupId` (a strategy's groupId, or the flag's name for the flag's
 * own variants) sticky on `stickiness`; null when the weights add up to nothing (none is ever chosen).
 */
export function variantChoice(
  groupId: string | undefined,
  stickiness: string | undefined,
  variants: readonly WeightedVariant[],
): VariantChoice | null {
  const total = variants.reduce((sum, variant) => sum + variant.weight, 0)
  if (total <= 0) return null
  // Copied: a compiled scope must not read the stored records after compiling.
  const weights = variants.map(variant => variant.weight)
  const overrides = variants.flatMap((variant, index) =>
    (variant.overrides ?? []).map(override => ({
      index,
      value: resolver(override.contextName),
      values: new Set(override.values),
    })),
  )
  const seed = seedOf(stickiness)
  const bucket = variantBucket(String(groupId), total)
  return {
    override(context) {
      for (let index = 0; index < overrides.length; index++) {
        const override = overrides[index]
        const value = override.value(context)
        if (value !== undefined && override.values.has(value)) return override.index
      }
      return -1
    },
    weighted(context, seen) {
      const target = bucket(seed(context))
      if (seen) seen.bucket = target
      let counter = 0
      for (let index = 0; index < weights.length; index++) {
        const weight = weights[index]
        if (weight === 0) continue
        counter += weight
        if (counter >= target) return index
      }
      return -1
    },
  }
}
