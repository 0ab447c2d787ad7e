/**
 * One flag compiled for one environment: its strategies, constraints, segments, variants and
 * parents become closures, and evaluating it for a context (`outcomeOf`) only runs them. The steps
 * are the official Node SDK's (unleash-client 6.12: lib/client.js isFeatureEnabled,
 * isParentDependencySatisfied, resolveVariant, forceGetVariant), so that the answers are the
 * specification's; test/features/frontend/frontend-evaluation.test.ts compares them with the SDK's engine
 * on many contexts. Strategy types the SDK does not know (those users define) never enable a flag.
 */
import type {
  ConstraintRecord,
  DependencyRecord,
  FlagRecord,
  StrategyRecord,
  StrategyVariantRecord,
  VariantRecord,
} from '../flags/flags.records'
import type { SegmentRecord } from '../segments/segments.records'
import { allOf, type EvalContext, type Predicate, type SharedConstraints } from './constraints'
import { Basis, Off, onOutcome, variantSlot } from './outcome'
import { strategyBasis, strategyTest } from './strategies'
import { variantPicker, type VariantPicker } from './variants'

/** A variant a flag may answer with: the compiled scope's own copy. */
export interface VariantFacts {
  name: string
  payload?: { type: string; value: string }
}

/** What the protocols need to know of a compiled flag to make their answers from its outcomes. */
export interface FlagFacts {
  name: string
  project: string
  impressionData: boolean
  /** On in the scope's environment. */
  enabled: boolean
  /** The variants it may answer with: slot `s` (from 1) is `variants[s - 1]`; slot 0 is no variant. */
  variants: readonly VariantFacts[]
  /** Its outcome when no context can change it (off, never on, on by an unconditional strategy without variants); else null. */
  fixed: number | null
}

interface CompiledStrategy {
  applies: Predicate
  pick: VariantPicker | null
  /** What decides it when it applies (before any variant). */
  basis: Basis
  /** Its part of the outcome: its place among the flag's served strategies. */
  outcome: number
  /** It applies to every context (a `default` strategy without constraints or segments). */
  always: boolean
}

export interface CompiledFlag {
  facts: FlagFacts
  enabled: boolean
  hasParents: boolean
  /** Whether the parents are satisfied; null for a flag without parents (set once every flag of the scope is compiled). */
  parents: Predicate | null
  strategies: CompiledStrategy[]
  pick: VariantPicker | null
}

/** A strategy's constraints, then those of each of its segments (undefined for a segment that does not exist: the SDK fails the strategy). */
export function constraintsOf(
  strategy: StrategyRecord,
  segments: Record<string, SegmentRecord>,
): (ConstraintRecord | undefined)[] {
  const all: (ConstraintRecord | undefined)[] = [...strategy.constraints]
  for (const id of strategy.segments)
    all.push(...(Object.hasOwn(segments, String(id)) ? segments[String(id)].constraints : [undefined]))
  return all
}

/** A flag's strategies as the client API serves them (and the SDK runs them): enabled ones, by sortOrder. */
export const servedStrategies = (strategies: readonly StrategyRecord[]): StrategyRecord[] =>
  strategies.filter(strategy => !strategy.disabled).sort((a, b) => a.sortOrder - b.sortOrder)

const copyVariant = (variant: StrategyVariantRecord | VariantRecord): VariantFacts => ({
  name: variant.name,
  ...(variant.payload ? { payload: { ...variant.payload } } : {}),
})

/**
 * What compileFlag reads of `flag` in `environment` (null for a flag that is missing or archived):
 * a change to anything else (a description, a tag, lastSeenAt) leaves the compiled scope as it is.
 */
export function evaluatedPart(flag: FlagRecord | undefined, environment: string): unknown {
  if (!flag || flag.archived) return null
  const state = Object.hasOwn(flag.environments, environment) ? flag.environments[environment] : undefined
  return [
    flag.name,
    flag.project,
    flag.impressionData,
    flag.dependencies,
    state?.enabled ?? false,
    servedStrategies(state?.strategies ?? []),
    state?.variants ?? [],
  ]
}

/** `dates` receives the times of its DATE constraints; `constraints` compiles them (shared across the scope). */
export function compileFlag(
  flag: FlagRecord,
  environment: string,
  segments: Record<string, SegmentRecord>,
  dates: number[],
  constraints: SharedConstraints,
): CompiledFlag {
  const state = Object.hasOwn(flag.environments, environment) ? flag.environments[environment] : undefined
  const variants: VariantFacts[] = []
  const strategies: CompiledStrategy[] = []
  const parentBasis = flag.dependencies.length > 0 ? Basis.CONTEXT : Basis.FIXED
  const served = servedStrategies(state?.strategies ?? [])
  served.forEach((strategy, place) => {
    const test = strategyTest(strategy)
    if (!test) return
    const strategyConstraints = constraintsOf(strategy, segments)
    for (const constraint of strategyConstraints)
      if (constraint?.operator === 'DATE_AFTER' || constraint?.operator === 'DATE_BEFORE')
        dates.push(new Date(constraint.value as string).getTime())
    const checks = strategyConstraints.map(constraint => constraints.compile(constraint))
    const own = strategy.variants
    const pick =
      own.length > 0
        ? variantPicker(
            strategy.parameters.groupId,
            own[0].stickiness || strategy.parameters.stickiness,
            own,
            variants.length + 1,
          )
        : null
    variants.push(...own.map(copyVariant))
    const targeted = checks.length > 0 ? Basis.CONTEXT : Basis.FIXED
    strategies.push({
      applies: allOf([...checks, test]),
      pick,
      basis: Math.max(strategyBasis(strategy), targeted, parentBasis) as Basis,
      outcome: onOutcome(place, 0, Basis.FIXED),
      always: strategy.name === 'default' && checks.length === 0,
    })
  })
  const flagVariants = state?.variants ?? []
  const pick = variantPicker(flag.name, flagVariants[0]?.stickiness, flagVariants, variants.length + 1)
  variants.push(...flagVariants.map(copyVariant))
  const enabled = state?.enabled ?? false
  return {
    facts: {
      name: flag.name,
      project: flag.project,
      impressionData: flag.impressionData,
      enabled,
      variants,
      fixed: null,
    },
    enabled,
    hasParents: flag.dependencies.length > 0,
    parents: null,
    // A flag with no strategy at all is on for everyone; one whose strategies are all unknown types is not.
    strategies:
      served.length > 0
        ? strategies
        : [
            {
              applies: () => true,
              pick: null,
              basis: parentBasis,
              outcome: onOutcome(-1, 0, Basis.FIXED),
              always: true,
            },
          ],
    pick,
  }
}

/** The SDK's isFeatureEnabled, then its variant: the flag's outcome for `context`. */
export function outcomeOf(flag: CompiledFlag, context: EvalContext): number {
  if (!flag.enabled) return Off.DISABLED
  if (flag.parents !== null && !flag.parents(context)) return Off.PARENT
  const strategies = flag.strategies
  for (let index = 0; index < strategies.length; index++) {
    const strategy = strategies[index]
    if (!strategy.applies(context)) continue
    // The strategy's variants, else the flag's, else none.
    let pick = strategy.pick !== null ? strategy.pick(context) : -1
    if (pick < 0 && flag.pick !== null) pick = flag.pick(context)
    if (pick < 0) pick = 0
    const basis = (pick & 3) > strategy.basis ? pick & 3 : strategy.basis
    return strategy.outcome | (pick & ~3) | basis
  }
  return Off.NO_MATCH
}

/** The SDK's isFeatureEnabled alone (no variant is chosen). */
export function isOn(flag: CompiledFlag, context: EvalContext): boolean {
  if (!flag.enabled || (flag.parents !== null && !flag.parents(context))) return false
  const strategies = flag.strategies
  for (let index = 0; index < strategies.length; index++) if (strategies[index].applies(context)) return true
  return false
}

/**
 * The SDK's isParentDependencySatisfied for one dependency on `parent`: a parent missing from the
 * scope, or one that has parents itself, is never satisfied; `enabled: false` wants it off;
 * `variants` wants it on with one of them (by name; `disabled` for no variant); else it must be on.
 */
export function dependencyCheck(dependency: DependencyRecord, parent: CompiledFlag | undefined): Predicate {
  if (!parent || parent.hasParents) return () => false
  if (dependency.enabled === false) return context => !isOn(parent, context)
  if (dependency.variants.length > 0) {
    const wanted = new Set(dependency.variants)
    const names = ['disabled', ...parent.facts.variants.map(variant => variant.name)]
    return context => {
      const outcome = outcomeOf(parent, context)
      return outcome >= 0 && wanted.has(names[variantSlot(outcome)])
    }
  }
  return context => isOn(parent, context)
}

/** The flag's outcome when no context can change it, else null (FlagFacts.fixed); once its parents are set. */
export function fixedOutcome(flag: CompiledFlag): number | null {
  if (!flag.enabled) return Off.DISABLED
  // Strategies all of types the SDK does not know: never on.
  if (flag.strategies.length === 0) return Off.NO_MATCH
  const first = flag.strategies[0]
  if (flag.parents !== null || !first.always || first.pick !== null || flag.pick !== null) return null
  return first.outcome | first.basis
}
