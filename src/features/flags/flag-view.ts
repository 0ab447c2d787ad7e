/** Turns stored flags into the Feature shape of the seed's section 2.1. Every call builds new objects. */
import type { EnvironmentRecord } from '../environments/environments.records'
import type { FlagMetadata, FlagRecord, StrategyRecord, VariantRecord } from './flags.records'
import type { Store, Tx } from '../../storage/store'
import { compareEnvironments } from '../environments/environments.service'
import type { Static } from '@sinclair/typebox'
import type { Feature } from './flags.model'

export type { FlagMetadata } from './flags.records'

export function metadataOf(flag: FlagRecord): FlagMetadata {
  return {
    name: flag.name,
    description: flag.description,
    type: flag.type,
    project: flag.project,
    stale: flag.stale,
    impressionData: flag.impressionData,
    archived: flag.archived,
    createdAt: flag.createdAt,
  }
}

export function strategyView(strategy: StrategyRecord, featureName: string) {
  return {
    id: strategy.id,
    name: strategy.name,
    title: strategy.title,
    disabled: strategy.disabled,
    featureName,
    sortOrder: strategy.sortOrder,
    segments: [...strategy.segments],
    constraints: strategy.constraints.map(constraint => ({ ...constraint, values: [...constraint.values] })),
    variants: strategy.variants.map(variant => ({
      ...variant,
      ...(variant.payload ? { payload: { ...variant.payload } } : {}),
    })),
    parameters: { ...strategy.parameters },
  }
}

export function variantView(variant: VariantRecord) {
  return {
    name: variant.name,
    weight: variant.weight,
    weightType: variant.weightType,
    stickiness: variant.stickiness,
    ...(variant.payload ? { payload: { ...variant.payload } } : {}),
    overrides: variant.overrides.map(override => ({ contextName: override.contextName, values: [...override.values] })),
  }
}

/**
 * Which flags depend on each parent, kept up to date from the store's record changes, so that a
 * flag's `children` costs what it has rather than a walk over every flag.
 */
export class ChildrenIndex {
  private readonly byParent = new Map<string, Set<string>>()

  constructor(store: Pick<Store, 'watch'>) {
    store.watch('flags', (key, before, after) => {
      for (const dependency of before?.dependencies ?? []) this.byParent.get(dependency.feature)?.delete(key)
      for (const dependency of after?.dependencies ?? []) {
        let children = this.byParent.get(dependency.feature)
        if (!children) this.byParent.set(dependency.feature, (children = new Set()))
        children.add(key)
      }
    })
  }

  /** The children of `name`, sorted; inside a transaction, with its staged flags taken into account. */
  of(name: string, tx?: Pick<Tx, 'staged'>): string[] {
    const children = new Set(this.byParent.get(name))
    if (tx) {
      for (const [key, flag] of tx.staged('flags')) {
        if (flag?.dependencies.some(dependency => dependency.feature === name)) children.add(key)
        else children.delete(key)
      }
    }
    return [...children].sort()
  }
}

/**
 * When SDK metrics last reported each flag, per environment. The metrics feature keeps it and
 * commits it in batches; flags only read it (services.ts hands the source over).
 */
export interface LastSeenSource {
  /** Environment name → time; empty for a flag never reported. */
  lastSeenOf(flag: FlagRecord): Readonly<Record<string, string>>
  /** Calls `listener` with a flag's name in each commit that changes when it was last seen. */
  onLastSeenChange(listener: (flagName: string) => void): void
  /** The stage the flag is in with SDK metrics counted (first reports move it on, as in Unleash); its own when absent. */
  stageOf?(flag: FlagRecord): Pick<FlagRecord['lifecycle'], 'stage' | 'enteredStageAt'>
}

export const NEVER_SEEN: LastSeenSource = { lastSeenOf: () => ({}), onLastSeenChange: () => {} }

export interface ViewOptions {
  /** Include each environment's strategies and variants (single-flag reads); lists leave them out. */
  details: boolean
  children: string[]
  /** Older than its type's lifetime, now (see feature-types' staleAfter). */
  potentiallyStale: boolean
  /** When metrics last reported the flag, per environment (LastSeenSource.lastSeenOf). */
  lastSeen?: Readonly<Record<string, string>>
  /** Its lifecycle stage with SDK metrics counted (LastSeenSource.stageOf); the flag's own when absent. */
  stage?: Pick<FlagRecord['lifecycle'], 'stage' | 'enteredStageAt'>
}

export function flagView(
  flag: FlagRecord,
  knownEnvironments: Readonly<Record<string, EnvironmentRecord>>,
  options: ViewOptions,
): FeatureView {
  const lastSeen = options.lastSeen ?? {}
  let flagLastSeen: string | null = null
  const environments = Object.entries(flag.environments)
    .map(([name, environment]) => {
      const known = Object.hasOwn(knownEnvironments, name) ? knownEnvironments[name] : undefined
      const seen = Object.hasOwn(lastSeen, name) ? lastSeen[name] : environment.lastSeenAt
      if (seen !== null && (flagLastSeen === null || seen > flagLastSeen)) flagLastSeen = seen
      const entry = {
        name,
        environment: name,
        featureName: flag.name,
        type: known?.type ?? 'unknown',
        enabled: environment.enabled,
        sortOrder: known?.sortOrder ?? Number.MAX_SAFE_INTEGER,
        variantCount: environment.variants.length,
        lastSeenAt: seen,
        hasStrategies: environment.strategies.length > 0,
        hasEnabledStrategies: environment.strategies.some(strategy => !strategy.disabled),
      }
      return options.details
        ? {
            ...entry,
            strategies: [...environment.strategies]
              .sort((a, b) => a.sortOrder - b.sortOrder)
              .map(strategy => strategyView(strategy, flag.name)),
            variants: environment.variants.map(variantView),
          }
        : entry
    })
    .sort(compareEnvironments)
  return {
    name: flag.name,
    type: flag.type,
    description: flag.description,
    project: flag.project,
    enabled: environments.some(environment => environment.enabled),
    stale: flag.stale,
    potentiallyStale: options.potentiallyStale,
    favorite: false,
    impressionData: flag.impressionData,
    createdAt: flag.createdAt,
    createdBy: { ...flag.createdBy },
    archived: flag.archived,
    archivedAt: flag.archivedAt,
    // As in Unleash: the latest of the environments'.
    lastSeenAt: flagLastSeen,
    environments,
    variants: [],
    strategies: [],
    tags: flag.tags.map(tag => ({ type: tag.type, value: tag.value })),
    children: [...options.children],
    dependencies: flag.dependencies.map(dependency => ({
      feature: dependency.feature,
      enabled: dependency.enabled,
      variants: [...dependency.variants],
    })),
    lifecycle: {
      stage: (options.stage ?? flag.lifecycle).stage,
      enteredStageAt: (options.stage ?? flag.lifecycle).enteredStageAt,
    },
  }
}

/** A flag as the API shows it: the response schema's type, so that the view and the documented shape cannot drift apart. */
export type FeatureView = Static<typeof Feature>
