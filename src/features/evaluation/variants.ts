/**
 * Variant selection as the official Node SDK's (unleash-client 6.12, lib/variant.js): an override
 * that names the context's value wins, else the weighted bucket of the stickiness field's value
 * (a random one when the context has none).
 */
import type { StrategyVariantRecord, VariantRecord } from '../flags/flags.records'
import { resolver, type EvalContext } from './constraints'
import { Basis } from './outcome'
import { variantBucket } from './rollout'

const randomSeed = () => String(Math.round(Math.random() * 100000))

/** The SDK's getSeed: a named field's value, or for `default` the first of userId, sessionId, remoteAddress; else random. */
export function seedOf(stickiness: string | undefined): (context: EvalContext) => string {
  if (stickiness === undefined || stickiness === 'default') {
    return context => context.userId || context.sessionId || context.remoteAddress || randomSeed()
  }
  const value = resolver(stickiness)
  return context => value(context) || randomSeed()
}

/**
 * A variant chosen, as one number: its slot shifted left by two, with what chose it in the two low
 * bits (Basis, as in an outcome); -1 when none is chosen (weights that add up to nothing).
 */
export type VariantPick = number

export type VariantPicker = (context: EvalContext) => VariantPick

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

/**
 * The SDK's selectVariantDefinition over `variants` of `groupId` (a strategy's groupId, or the
 * flag's name for its own variants), sticky on `stickiness`: the first override matching the
 * context, else the variant whose share of the weights holds the seed's bucket. Null when the
 * weights add up to nothing (none is ever chosen). The compiled scopes (variantPicker) and the
 * playground's explanations both choose with it.
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

/**
 * variantChoice over `variants`, whose slots run from `firstSlot` on in their order, as a pick;
 * null when there are none. A weighted choice is PERCENTAGE when more than one variant can come
 * out of it, FIXED otherwise; an override is CONTEXT.
 */
export function variantPicker(
  groupId: string | undefined,
  stickiness: string | undefined,
  variants: readonly (StrategyVariantRecord | VariantRecord)[],
  firstSlot: number,
): VariantPicker | null {
  if (variants.length === 0) return null
  const choice = variantChoice(groupId, stickiness, variants)
  if (choice === null) return () => -1
  const split = variants.filter(variant => variant.weight > 0).length > 1
  const weighted = split ? Basis.PERCENTAGE : Basis.FIXED
  return context => {
    const override = choice.override(context)
    if (override >= 0) return ((firstSlot + override) << 2) | Basis.CONTEXT
    const index = choice.weighted(context)
    return index < 0 ? -1 : ((firstSlot + index) << 2) | weighted
  }
}
