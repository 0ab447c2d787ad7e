/** A stored flag as the server-side SDKs read it (sdk-api-contract §1): no timestamps, no strategy ids, titles or disabled strategies. */
import type { Static } from '@sinclair/typebox'
import type { FlagRecord, StrategyRecord } from '../flags/flags.records'
import { variantView } from '../flags/flag-view'
import type { SegmentRecord } from '../segments/segments.records'
import type { ClientFeature, ClientStrategy } from './client.model'

export type ClientFeatureView = Static<typeof ClientFeature>
type ClientStrategyView = Static<typeof ClientStrategy>

/** Segments by id (decimal string), for clients that need their constraints inlined. */
export type SegmentsById = Record<string, SegmentRecord>

function strategyOf(strategy: StrategyRecord, inline: SegmentsById | undefined): ClientStrategyView {
  const constraints = strategy.constraints.map(constraint => ({ ...constraint, values: [...constraint.values] }))
  if (inline) {
    // Clients older than specification 4.2.0 know no segments: they must see the same conditions as plain constraints.
    for (const id of strategy.segments) {
      const segment = Object.hasOwn(inline, String(id)) ? inline[String(id)] : undefined
      for (const constraint of segment?.constraints ?? [])
        constraints.push({ ...constraint, values: [...constraint.values] })
    }
  }
  return {
    name: strategy.name,
    constraints,
    parameters: { ...strategy.parameters },
    variants: strategy.variants.map(variant => ({
      ...variant,
      ...(variant.payload ? { payload: { ...variant.payload } } : {}),
    })),
    ...(!inline && strategy.segments.length > 0 ? { segments: [...strategy.segments] } : {}),
  }
}

/**
 * The flag in `environment`, or null when it is not served (archived). A flag whose project is not
 * connected to the environment has no state there, and is served off with nothing to evaluate.
 * With `inline`, strategies carry their segments' constraints instead of segment ids.
 */
export function clientFeatureView(
  flag: FlagRecord | undefined,
  environment: string,
  inline?: SegmentsById,
): ClientFeatureView | null {
  if (!flag || flag.archived) return null
  const state = Object.hasOwn(flag.environments, environment) ? flag.environments[environment] : undefined
  return {
    name: flag.name,
    type: flag.type,
    enabled: state?.enabled ?? false,
    project: flag.project,
    stale: flag.stale,
    strategies: (state?.strategies ?? [])
      .filter(strategy => !strategy.disabled)
      .sort((a, b) => a.sortOrder - b.sortOrder)
      .map(strategy => strategyOf(strategy, inline)),
    variants: (state?.variants ?? []).map(variantView),
    description: flag.description,
    impressionData: flag.impressionData,
    ...(flag.dependencies.length > 0
      ? {
          dependencies: flag.dependencies.map(dependency => ({
            feature: dependency.feature,
            enabled: dependency.enabled,
            variants: [...dependency.variants],
          })),
        }
      : {}),
  }
}
