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

/**
 * The SDK's selectVariantDefinition over `variants`, whose slots run from `firstSlot` on in their
 * order; null when there are none. A weighted choice is PERCENTAGE when more than one variant can
 * come out of it, FIXED otherwise; an override is CONTEXT.
 */
export function variantPicker(
  groupId: string | undefined,
  stickiness: string | undefined,
  variants: readonly (StrategyVariantRecord | VariantRecord)[],
  firstSlot: number,
): VariantPicker | null {
  if (variants.length === 0) return null
  const total = variants.reduce((sum, variant) => sum + variant.weight, 0)
  if (total <= 0) return () => -1
  const split = variants.filter(variant => variant.weight > 0).length > 1
  const weighted = split ? Basis.PERCENTAGE : Basis.FIXED
  // Copied: the compiled scope must not read the stored records after compiling.
  const weights = variants.map(variant => variant.weight)
  const overrides = variants.flatMap((variant, index) =>
    'overrides' in variant
      ? variant.overrides.map(override => ({
          pick: ((firstSlot + index) << 2) | Basis.CONTEXT,
          value: resolver(override.contextName),
          values: new Set(override.values),
        }))
      : [],
  )
  const seed = seedOf(stickiness)
  const bucket = variantBucket(String(groupId), total)
  return context => {
    for (let index = 0; index < overrides.length; index++) {
      const override = overrides[index]
      const value = override.value(context)
      if (value !== undefined && override.values.has(value)) return override.pick
    }
    const target = bucket(seed(context))
    let counter = 0
    for (let index = 0; index < weights.length; index++) {
      const weight = weights[index]
      if (weight === 0) continue
      counter += weight
      if (counter >= target) return ((firstSlot + index) << 2) | weighted
    }
    return -1
  }
}
