/**
 * The playground's evaluation, explained: every strategy of a flag in an environment with the
 * outcome of each of its constraints and segments, the rollout's bucket, the variant and the bucket
 * that chose it. The decisions are the frontend API's (features/frontend: its constraint operators,
 * strategy tests, rollout hashing and variant choice, which are the official Node SDK's), so a
 * flag's `isEnabled` and `variant` are what the SDK answers for the same flags and context; only
 * the walk differs: every strategy is evaluated (the SDK stops at the first that applies) so that
 * each can be shown, and the first that applies decides, as in the SDK.
 */
import type { ConstraintRecord, FlagRecord, StrategyRecord, VariantRecord } from '../flags/flags.records'
import { variantView } from '../flags/flag-view'
import { compileConstraint, type EvalContext, type Predicate } from '../frontend/constraints'
import { rolloutBucket } from '../frontend/rollout'
import { rolloutOf, strategyTest } from '../frontend/strategies'
import { variantChoice, type VariantChoice } from '../frontend/variant-choice'
import type { SegmentRecord } from '../segments/segments.records'
import type {
  ConstraintEvaluation,
  FlagEvaluation,
  StrategyEvaluation,
  VariantEvaluation,
  VariantView,
} from './playground.model'

/** The answer of a flag that is off (or on without a variant). */
const DISABLED: VariantEvaluation = { name: 'disabled', enabled: false }

interface PreparedConstraint {
  record: ConstraintRecord
  test: Predicate
}

interface PreparedSegment {
  id: number
  name: string
  /** null: the segment does not exist, which fails the strategy (as in the SDK). */
  constraints: PreparedConstraint[] | null
}

interface PreparedVariants {
  choice: VariantChoice | null
  variants: readonly { name: string; payload?: { type: string; value: string } }[]
  views: VariantView[]
}

interface PreparedStrategy {
  record: StrategyRecord
  constraints: PreparedConstraint[]
  segments: PreparedSegment[]
  /** The strategy's own test; null for a type the SDK does not know (it never applies). */
  test: Predicate | null
  /** For rollout types: the percentage, and the context's bucket (null without an id). */
  rollout: { percentage: number; bucket: (context: EvalContext) => number | null } | null
  variants: PreparedVariants | null
}

interface PreparedFlag {
  record: FlagRecord
  enabled: boolean
  strategies: PreparedStrategy[]
  /** Whether any strategy is active: with none, the flag is on for everyone when it is on. */
  active: boolean
  variants: PreparedVariants | null
}

function prepareConstraint(record: ConstraintRecord): PreparedConstraint {
  return { record, test: compileConstraint(record) }
}

function prepareVariants(
  groupId: string | undefined,
  stickiness: string | undefined,
  variants: readonly VariantRecord[],
): PreparedVariants | null {
  if (variants.length === 0) return null
  return { choice: variantChoice(groupId, stickiness, variants), variants, views: variants.map(variantView) }
}

function prepareRollout(strategy: StrategyRecord): PreparedStrategy['rollout'] {
  if (strategy.name === 'gradualRolloutRandom')
    return { percentage: Number(strategy.parameters.percentage), bucket: () => null }
  const rollout = rolloutOf(strategy)
  if (rollout === null) return null
  const bucket = rolloutBucket(rollout.groupId)
  return {
    percentage: Number(rollout.percentage),
    bucket: context => {
      const id = rollout.id(context)
      return id ? bucket(id) : null
    },
  }
}

function prepareStrategy(
  strategy: StrategyRecord,
  segments: Readonly<Record<string, SegmentRecord>>,
): PreparedStrategy {
  const variants = strategy.variants
  return {
    record: strategy,
    constraints: strategy.constraints.map(prepareConstraint),
    segments: strategy.segments.map(id => {
      const segment = Object.hasOwn(segments, String(id)) ? segments[String(id)] : undefined
      return segment
        ? { id, name: segment.name, constraints: segment.constraints.map(prepareConstraint) }
        : { id, name: `segment ${id} (deleted)`, constraints: null }
    }),
    test: strategyTest(strategy),
    rollout: prepareRollout(strategy),
    variants: prepareVariants(
      strategy.parameters.groupId,
      variants[0]?.stickiness || strategy.parameters.stickiness,
      variants.map(variant => ({ ...variant, overrides: [] })),
    ),
  }
}

function prepareFlag(
  flag: FlagRecord,
  environment: string,
  segments: Readonly<Record<string, SegmentRecord>>,
): PreparedFlag {
  const state = Object.hasOwn(flag.environments, environment) ? flag.environments[environment] : undefined
  const strategies = [...(state?.strategies ?? [])].sort((a, b) => a.sortOrder - b.sortOrder)
  const variants = state?.variants ?? []
  return {
    record: flag,
    enabled: state?.enabled ?? false,
    strategies: strategies.map(strategy => prepareStrategy(strategy, segments)),
    active: strategies.some(strategy => !strategy.disabled),
    variants: prepareVariants(flag.name, variants[0]?.stickiness, variants),
  }
}

function constraintResult(constraint: PreparedConstraint, context: EvalContext): ConstraintEvaluation {
  const { record } = constraint
  return {
    contextName: record.contextName,
    operator: record.operator,
    values: [...record.values],
    ...(record.value !== undefined ? { value: record.value } : {}),
    inverted: record.inverted,
    caseInsensitive: record.caseInsensitive,
    result: constraint.test(context),
  }
}

/** The variant `prepared` gives `context`: an override's, or the weighted choice's with its bucket; null for none. */
function chooseVariant(prepared: PreparedVariants | null, context: EvalContext): VariantEvaluation | null {
  if (prepared === null || prepared.choice === null) return null
  const override = prepared.choice.override(context)
  const seen = { bucket: 0 }
  const index = override >= 0 ? override : prepared.choice.weighted(context, seen)
  if (index < 0) return null
  const variant = prepared.variants[index]
  return {
    name: variant.name,
    enabled: true,
    ...(variant.payload ? { payload: { ...variant.payload } } : {}),
    ...(override < 0 ? { bucket: seen.bucket } : {}),
  }
}

function strategyResult(strategy: PreparedStrategy, context: EvalContext): StrategyEvaluation {
  const { record } = strategy
  const constraints = strategy.constraints.map(constraint => constraintResult(constraint, context))
  const segments = strategy.segments.map(segment => {
    const results = (segment.constraints ?? []).map(constraint => constraintResult(constraint, context))
    return {
      id: segment.id,
      name: segment.name,
      result: segment.constraints !== null && results.every(result => result.result),
      constraints: results,
    }
  })
  const holds = constraints.every(result => result.result) && segments.every(segment => segment.result)
  let result: StrategyEvaluation['result']
  if (record.disabled) result = { evaluationStatus: 'complete', enabled: false }
  else if (strategy.test === null)
    // A type this service cannot evaluate: the SDK never applies it; Unleash says it might.
    result = { evaluationStatus: 'incomplete', enabled: holds ? 'unknown' : false }
  else {
    const enabled = holds && strategy.test(context)
    const variant = enabled ? chooseVariant(strategy.variants, context) : null
    result = { evaluationStatus: 'complete', enabled, ...(variant ? { variant } : {}) }
  }
  const rollout = strategy.rollout
  return {
    name: record.name,
    id: record.id,
    ...(record.title ? { title: record.title } : {}),
    disabled: record.disabled,
    parameters: { ...record.parameters },
    result,
    constraints,
    segments,
    ...(rollout
      ? {
          ...(Number.isFinite(rollout.percentage) ? { rollout: rollout.percentage } : {}),
          bucket: rollout.bucket(context),
        }
      : {}),
  }
}

/**
 * Evaluates the flags of one environment for contexts. Each flag is prepared (its constraints,
 * tests and variant choices made) once, on first use, and serves every context given after.
 */
export class PlaygroundEvaluator {
  private readonly prepared = new Map<string, PreparedFlag>()

  constructor(
    /** The live flags the SDK would be given (the parents of a flag are looked up here), by name. */
    private readonly flags: ReadonlyMap<string, FlagRecord>,
    private readonly segments: Readonly<Record<string, SegmentRecord>>,
    private readonly environment: string,
  ) {}

  private prepare(name: string): PreparedFlag | undefined {
    let prepared = this.prepared.get(name)
    if (prepared === undefined) {
      const flag = this.flags.get(name)
      if (flag === undefined) return undefined
      this.prepared.set(name, (prepared = prepareFlag(flag, this.environment, this.segments)))
    }
    return prepared
  }

  /** Every flag of `names` for `context`, in that order; a parent is evaluated once per context. */
  evaluate(names: readonly string[], context: EvalContext): FlagEvaluation[] {
    const done = new Map<string, FlagEvaluation>()
    return names.map(name => this.evaluateOne(name, context, done))
  }

  private evaluateOne(name: string, context: EvalContext, done: Map<string, FlagEvaluation>): FlagEvaluation {
    const known = done.get(name)
    if (known) return known
    const flag = this.prepare(name)!
    const record = flag.record
    const data = flag.strategies.map(strategy => strategyResult(strategy, context))
    const active = data.filter(strategy => !strategy.disabled)
    const result: FlagEvaluation['strategies']['result'] = !flag.active
      ? flag.enabled
      : active.some(strategy => strategy.result.enabled === true)
        ? true
        : active.some(strategy => strategy.result.enabled === 'unknown')
          ? 'unknown'
          : false
    const hasUnsatisfiedDependency = !record.dependencies.every(dependency => {
      // As the SDK: a parent it is not given (archived), or one with parents itself, is never satisfied.
      const parent = this.flags.get(dependency.feature)
      if (parent === undefined || parent.dependencies.length > 0) return false
      const outcome = this.evaluateOne(dependency.feature, context, done)
      if (!dependency.enabled) return !outcome.isEnabled
      if (dependency.variants.length > 0) return outcome.isEnabled && dependency.variants.includes(outcome.variant.name)
      return outcome.isEnabled
    })
    const isEnabled = flag.enabled && !hasUnsatisfiedDependency && result === true
    // The SDK's variant: the first applying strategy's, else one of the flag's, else none.
    const deciding = isEnabled ? active.find(strategy => strategy.result.enabled === true) : undefined
    const fromStrategy = deciding?.result.variant
    const variant = isEnabled ? (fromStrategy ?? chooseVariant(flag.variants, context) ?? DISABLED) : DISABLED
    const decidingIndex = deciding ? data.indexOf(deciding) : -1
    const evaluation: FlagEvaluation = {
      name: record.name,
      projectId: record.project,
      isEnabled,
      isEnabledInCurrentEnvironment: flag.enabled,
      hasUnsatisfiedDependency,
      variant,
      variants: fromStrategy ? flag.strategies[decidingIndex].variants!.views : (flag.variants?.views ?? []),
      strategies: { result, data },
    }
    done.set(name, evaluation)
    return evaluation
  }
}
