/**
 * Flag variants of one environment, as every way in builds and stores them: PUT and PATCH of one
 * environment, PUT and PATCH of all environments, and the batch of several.
 */
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'
import { events } from '../../domain/events'
import { ValidationError } from '../../errors'
import type { Tx } from '../../storage/store'
import { checkLimit, LIMITS } from '../limits'
import { requireEnvironment } from './flag-rules'
import { variantView } from './flag-view'
import { VariantInput as VariantInputSchema } from './strategy.model'
import type { FlagRecord, VariantRecord } from './flags.records'
import { checkPayload, distributeWeights } from './strategy-rules'
import type { Static } from '@sinclair/typebox'

export type VariantInput = Static<typeof VariantInputSchema>

/**
 * Checks a variant list as a request gives it and applies the weight rules. `path` points at the
 * list in the request ('' for a body that is the list itself).
 */
export function buildVariants(input: readonly VariantInput[], path: string): VariantRecord[] {
  checkLimit('variantsPerFlagEnvironment', input.length, path)
  input.forEach((variant, index) => {
    checkLimit('overridesPerVariant', variant.overrides?.length ?? 0, `${path}/${index}/overrides`)
    // A blank stickiness names no context field: the SDK would then pick the variant at random on
    // every evaluation (as strategy variants, which already refuse it). A blank override matches nothing.
    if (variant.stickiness?.trim() === '')
      throw ValidationError.at(
        `${path}/${index}/stickiness`,
        'A variant\'s stickiness must name a context field, e.g. "default" or "userId"; leave it out for "default"',
      )
    variant.overrides?.forEach((override, n) => {
      checkLimit('valuesPerOverride', override.values.length, `${path}/${index}/overrides/${n}/values`)
      if (override.contextName.trim() === '')
        throw ValidationError.at(
          `${path}/${index}/overrides/${n}/contextName`,
          'An override needs the context field it matches',
        )
    })
  })
  return distributeWeights(
    input.map((variant, index): VariantRecord => {
      checkPayload(variant.payload, `${path}/${index}/payload`)
      return {
        name: variant.name,
        weight: variant.weight,
        weightType: variant.weightType ?? 'variable',
        stickiness: variant.stickiness ?? 'default',
        ...(variant.payload ? { payload: variant.payload } : {}),
        overrides: variant.overrides ?? [],
      }
    }),
    path,
  )
}

/** Replaces the flag's variants in one environment and records feature-environment-variants-updated. */
export function storeVariants(tx: Tx, flag: FlagRecord, environment: string, variants: VariantRecord[]): FlagRecord {
  const entry = requireEnvironment(flag, environment)
  const updated = { ...flag, environments: { ...flag.environments, [environment]: { ...entry, variants } } }
  tx.put('flags', flag.name, updated)
  tx.appendEvent(
    events.variantsUpdated(
      updated,
      environment,
      { variants: variants.map(variantView) },
      { variants: entry.variants.map(variantView) },
    ),
  )
  return updated
}

/** A variant list in full, as a JSON Patch must leave it: the request schema, with no member it does not know. */
const PatchedVariants = t.Array(t.Object(VariantInputSchema.properties, { additionalProperties: false }), {
  maxItems: LIMITS.variantsPerFlagEnvironment.max,
})

/**
 * Checks what a JSON Patch made of a variant list against the variant schema as a whole, so that
 * a patch is refused (400 naming the first bad value) before anything is stored.
 */
export function checkPatchedVariants(document: unknown): VariantInput[] {
  const first = Value.Errors(PatchedVariants, document).First()
  if (first) {
    const path = first.path === '' ? '' : first.path
    throw new ValidationError(`The patched variants do not match the variant schema: ${path || '/'} ${first.message}`, [
      { message: first.message, path: path || '/' },
    ])
  }
  return document as VariantInput[]
}
