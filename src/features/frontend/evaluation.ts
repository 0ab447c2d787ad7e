/**
 * Server-side evaluation for the frontend API (sdk-api-contract §2). A scope (the token's projects
 * in its environment) is compiled once per change of what it serves: each flag's strategies,
 * constraints, segments, variants and parents become closures, and each flag's entry in the answer
 * is made in advance for each variant it may answer with. A request then only runs the closures and
 * joins text.
 *
 * The semantics are the official Node SDK's (unleash-client 6.12: lib/client.js, lib/variant.js,
 * lib/strategy/*), step by step, so that the answers are the specification's; the SDK's own engine
 * gives the same answers at about ten times the cost per flag (`bench/run.ts frontend-eval`), and the
 * tests compare the two on many contexts (test/features/frontend/frontend-evaluation.test.ts). Strategy types
 * the SDK does not know (those users define) never enable a flag, as in the SDK.
 *
 * OFREP (features/ofrep) reads the same compiled scope: the same closures decide, only the text made
 * of the outcome differs (`ofrep`), with the reason the outcome came about (OfrepReason below).
 */
import type { Store } from '../../storage/store'
import type {
  ConstraintRecord,
  FlagRecord,
  StrategyRecord,
  StrategyVariantRecord,
  VariantRecord,
} from '../flags/flags.records'
import type { SegmentRecord } from '../segments/segments.records'
import type { SdkScope } from '../tokens/auth'
import { allOf, resolver, SharedConstraints, type EvalContext, type Predicate } from './constraints'
import {
  OfrepEntries,
  OfrepReason,
  REASON_JSON,
  ofrepMembers,
  payloadValue,
  strategyRank,
  type Bytes,
  type EntryId,
  type Rank,
} from './ofrep-entry'
import { variantBucket } from './rollout'
import { strategyTest } from './strategies'

export type { EvalContext }

/** A variant the flag may answer with, and the flag's whole entry in the answer with it, made once. */
interface Chosen {
  name: string
  json: string
  /** The flag's whole OFREP entry with this variant, by reason (Rank). */
  ofrep: readonly EntryId[]
  /** How the variant was chosen; -1 when none was (the strategy's reason stands). */
  rank: Rank | -1
}

/** The variant of a flag that is on with none (contract §2). */
const NO_VARIANT = '{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true}'

/** What a flag's strategies decide: off, on without a strategy variant, or on with one. */
const OFF = null
const ON: Chosen = { name: '', json: '', ofrep: [], rank: -1 }
type Outcome = Chosen | typeof OFF

type VariantPicker = (context: EvalContext) => Chosen | null

interface CompiledStrategy {
  applies: Predicate
  pick: VariantPicker | null
  /** Why the flag is on when this strategy applies (before any variant). */
  rank: Rank
  /** It applies to every context (a `default` strategy without constraints or segments). */
  always: boolean
}

interface CompiledFlag {
  name: string
  enabled: boolean
  hasParents: boolean
  /** Whether the parents are satisfied; null for a flag without parents. */
  parents: Predicate | null
  strategies: CompiledStrategy[]
  pick: VariantPicker | null
  /** The answer when the flag is on with no variant. */
  none: Chosen
  /** The OFREP entry when off in the environment, and when on there but not for the context. */
  ofrep: { disabled: EntryId; fallback: EntryId }
  /** Its OFREP entries' ids: from `firstEntry` up to `endEntry`. */
  firstEntry: EntryId
  endEntry: EntryId
}

/** What the frontend API asks of an engine (the SDK's own engine gives the same, test/sdk-reference.ts). */
export interface FrontendEvaluator {
  /** The answer's JSON text for `context`: `{"toggles":[…]}`, flags by name. */
  evaluate(context: EvalContext): string
  /** How many flags each evaluation looks at: those on in the environment (an off flag is never listed). */
  readonly candidates: number
}

export interface CompiledScope extends FrontendEvaluator {
  /** OFREP's entry (`{"key":…}`, UTF-8) for one flag of the scope, or undefined when the scope has no such flag. */
  ofrepFlag(name: string, context: EvalContext): Bytes | undefined
  /**
   * OFREP's bulk answer (`{"flags":[…]}`, UTF-8), given to `use` and valid only while it runs: every
   * flag of the scope, on or off: first those no context changes, then the others, each part by
   * name; `end` closes the list and the object, with further members between (`],"eventStreams":[…]}`).
   */
  ofrepFlags<T>(context: EvalContext, end: Bytes, use: (answer: Bytes) => T): T
  /**
   * This compiled scope among all compiled in this process (a new one for each change of what the
   * scope serves), followed by where `now` stands among the times its DATE constraints compare with:
   * with the same context, evaluations with the same stamp answer alike (but for random stickiness).
   */
  stamp(now: number): string
  /** Whether a flag or segment of the scope names `remoteAddress` at all (a strategy, a constraint, stickiness): if not, only `default` stickiness reads the address. */
  readonly readsAddress: boolean
}

const randomSeed = () => String(Math.round(Math.random() * 100000))

/**
 * The flag's entries: the frontend API's around a variant's JSON; OFREP's around its `value` and
 * `variant` members, for each reason. A flag without variants is a boolean in OFREP; one with
 * variants answers its variant's payload, and its on/off state as a boolean when no payload is
 * chosen (a variant without one, none chosen, or off).
 */
interface Entry {
  frontend: (variantJson: string) => string
  ofrep: (members: string) => EntryId[]
  ofrepWith: (members: string, reason: 'DISABLED' | 'DEFAULT') => EntryId
}

function entryOf(flag: FlagRecord, entries: OfrepEntries): Entry {
  const head = `{"name":${JSON.stringify(flag.name)},"enabled":true,"variant":`
  const tail = `,"impressionData":${flag.impressionData}}`
  const ofrepHead = `,{"key":${JSON.stringify(flag.name)}`
  const ofrepTail = `,"metadata":{"project":${JSON.stringify(flag.project)}}}`
  return {
    frontend: variantJson => head + variantJson + tail,
    ofrep: members => REASON_JSON.map(reason => entries.add(ofrepHead + members + reason + ofrepTail)),
    ofrepWith: (members, reason) => entries.add(`${ofrepHead}${members},"reason":"${reason}"${ofrepTail}`),
  }
}

function chosen(variant: StrategyVariantRecord | VariantRecord, entry: Entry, rank: Rank): Chosen {
  const json = JSON.stringify({
    name: variant.name,
    enabled: true,
    ...(variant.payload ? { payload: variant.payload } : {}),
    feature_enabled: true,
    featureEnabled: true,
  })
  return {
    name: variant.name,
    json: entry.frontend(json),
    ofrep: entry.ofrep(ofrepMembers(payloadValue(variant.payload), variant.name)),
    rank,
  }
}

/** The SDK's getSeed: a named field's value, or for `default` the first of userId, sessionId, remoteAddress; else random. */
function seedOf(stickiness: string | undefined): (context: EvalContext) => string {
  if (stickiness === undefined || stickiness === 'default') {
    return context => context.userId || context.sessionId || context.remoteAddress || randomSeed()
  }
  const value = resolver(stickiness)
  return context => value(context) || randomSeed()
}

/** The SDK's selectVariantDefinition: an override, else the weighted bucket of the seed. */
function variantPicker(
  groupId: string | undefined,
  stickiness: string | undefined,
  variants: readonly (StrategyVariantRecord | VariantRecord)[],
  entry: Entry,
): VariantPicker | null {
  if (variants.length === 0) return null
  const total = variants.reduce((sum, variant) => sum + variant.weight, 0)
  if (total <= 0) return () => null
  // A weighted choice is a split when more than one variant can come out of it.
  const split = variants.filter(variant => variant.weight > 0).length > 1
  const answers = variants.map(variant => chosen(variant, entry, split ? OfrepReason.SPLIT : OfrepReason.STATIC))
  const overridden = variants.map(variant => chosen(variant, entry, OfrepReason.TARGETING_MATCH))
  // Copied: the compiled scope must not read the stored records after compiling.
  const weights = variants.map(variant => variant.weight)
  const overrides = variants.flatMap((variant, index) =>
    'overrides' in variant
      ? variant.overrides.map(override => ({
          index,
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
      if (value !== undefined && override.values.has(value)) return overridden[override.index]
    }
    const target = bucket(seed(context))
    let counter = 0
    for (let index = 0; index < weights.length; index++) {
      const weight = weights[index]
      if (weight === 0) continue
      counter += weight
      if (counter >= target) return answers[index]
    }
    return null
  }
}

/** A strategy's constraints, then those of each of its segments (undefined for a segment that does not exist: the SDK fails the strategy). */
function constraintsOf(
  strategy: StrategyRecord,
  segments: Record<string, SegmentRecord>,
): (ConstraintRecord | undefined)[] {
  const all: (ConstraintRecord | undefined)[] = [...strategy.constraints]
  for (const id of strategy.segments)
    all.push(...(Object.hasOwn(segments, String(id)) ? segments[String(id)].constraints : [undefined]))
  return all
}

function compileFlag(
  flag: FlagRecord,
  environment: string,
  segments: Record<string, SegmentRecord>,
  dates: number[],
  entries: OfrepEntries,
  constraints: SharedConstraints,
): CompiledFlag {
  const firstEntry = entries.count
  const entry = entryOf(flag, entries)
  const state = Object.hasOwn(flag.environments, environment) ? flag.environments[environment] : undefined
  const strategies: CompiledStrategy[] = []
  const parentRank = flag.dependencies.length > 0 ? OfrepReason.TARGETING_MATCH : OfrepReason.STATIC
  const noteDates = (constraint: ConstraintRecord | undefined) => {
    if (constraint?.operator === 'DATE_AFTER' || constraint?.operator === 'DATE_BEFORE')
      dates.push(new Date(constraint.value as string).getTime())
  }
  let hasVariants = (state?.variants ?? []).length > 0
  for (const strategy of [...(state?.strategies ?? [])]
    .filter(s => !s.disabled)
    .sort((a, b) => a.sortOrder - b.sortOrder)) {
    const test = strategyTest(strategy)
    if (!test) continue
    const strategyConstraints = constraintsOf(strategy, segments)
    strategyConstraints.forEach(noteDates)
    const checks = strategyConstraints.map(constraint => constraints.compile(constraint))
    const all = allOf([...checks, test])
    const variants = strategy.variants
    hasVariants ||= variants.length > 0
    const pick =
      variants.length > 0
        ? variantPicker(
            strategy.parameters.groupId,
            variants[0].stickiness || strategy.parameters.stickiness,
            variants,
            entry,
          )
        : null
    const targeted = checks.length > 0 ? OfrepReason.TARGETING_MATCH : OfrepReason.STATIC
    strategies.push({
      applies: all,
      pick,
      rank: Math.max(strategyRank(strategy), targeted, parentRank) as Rank,
      always: strategy.name === 'default' && checks.length === 0,
    })
  }
  const flagVariants = state?.variants ?? []
  const offMembers = ofrepMembers(false, hasVariants ? 'disabled' : 'off')
  const compiled: CompiledFlag = {
    name: flag.name,
    enabled: state?.enabled ?? false,
    hasParents: flag.dependencies.length > 0,
    parents: null,
    // A flag with no strategy at all is on for everyone; one whose strategies are all unknown types is not.
    strategies: (state?.strategies ?? []).some(s => !s.disabled)
      ? strategies
      : [{ applies: () => true, pick: null, rank: parentRank, always: true }],
    pick: variantPicker(flag.name, flagVariants[0]?.stickiness, flagVariants, entry),
    none: {
      name: 'disabled',
      json: entry.frontend(NO_VARIANT),
      ofrep: entry.ofrep(ofrepMembers(true, hasVariants ? 'disabled' : 'on')),
      rank: -1,
    },
    ofrep: { disabled: entry.ofrepWith(offMembers, 'DISABLED'), fallback: entry.ofrepWith(offMembers, 'DEFAULT') },
    firstEntry,
    endEntry: firstEntry,
  }
  compiled.endEntry = entries.count
  return compiled
}

/** The SDK's isFeatureEnabled, to the strategy that enables the flag: null when the flag is off. */
function applying(flag: CompiledFlag, context: EvalContext): CompiledStrategy | null {
  if ((flag.parents !== null && !flag.parents(context)) || !flag.enabled) return null
  const strategies = flag.strategies
  for (let index = 0; index < strategies.length; index++) {
    if (strategies[index].applies(context)) return strategies[index]
  }
  return null
}

/** The SDK's isFeatureEnabled, with the strategy's variant when it has them. */
function decide(flag: CompiledFlag, context: EvalContext): Outcome {
  const strategy = applying(flag, context)
  if (strategy === null) return OFF
  return strategy.pick ? (strategy.pick(context) ?? ON) : ON
}

/** The SDK's resolveVariant: OFF, or the variant (`none` when there is none). */
function resolve(flag: CompiledFlag, context: EvalContext): Outcome {
  const outcome = decide(flag, context)
  if (outcome === OFF) return OFF
  if (outcome !== ON) return outcome
  return flag.pick?.(context) ?? flag.none
}

/** The flag's OFREP entry: resolve() with the reason kept. */
function ofrepEntry(flag: CompiledFlag, context: EvalContext): EntryId {
  if (!flag.enabled) return flag.ofrep.disabled
  const strategy = applying(flag, context)
  if (strategy === null) return flag.ofrep.fallback
  const variant =
    (strategy.pick !== null ? strategy.pick(context) : null) ??
    (flag.pick !== null ? flag.pick(context) : null) ??
    flag.none
  return variant.ofrep[Math.max(variant.rank, strategy.rank)]
}

/** The flag's OFREP entry when no context can change it (off, never on, or on by an unconditional strategy without variants), else undefined. */
function fixedEntry(flag: CompiledFlag): EntryId | undefined {
  if (!flag.enabled) return flag.ofrep.disabled
  // Strategies all of types the SDK does not know: never on.
  if (flag.strategies.length === 0) return flag.ofrep.fallback
  const first = flag.strategies[0]
  if (flag.parents !== null || !first.always || first.pick !== null || flag.pick !== null) return undefined
  return flag.none.ofrep[first.rank]
}

/**
 * What the bulk answer is made of: the entries of the flags no context can change, written once
 * (OfrepEntries), and the flags evaluated for each context. With half the flags off, only the flags
 * a context can change are evaluated and copied.
 */
function bulkPlan(flags: readonly CompiledFlag[]): { fixed: EntryId[]; evaluated: CompiledFlag[] } {
  const fixed: EntryId[] = []
  const evaluated: CompiledFlag[] = []
  for (const flag of flags) {
    const entry = fixedEntry(flag)
    if (entry !== undefined) fixed.push(entry)
    else evaluated.push(flag)
  }
  return { fixed, evaluated }
}

/** Tells compiled scopes apart across restarts too: an ETag made from a stamp never outlives the process. */
const PROCESS = Bun.hash(`${process.pid}:${Date.now()}:${Math.random()}`).toString(36)
let compiledScopes = 0

/** Which flags a scope holds: the token's projects (`*` for all) in its one environment. */
export function inProjects(scope: SdkScope, project: string): boolean {
  return scope.projects.includes('*') || scope.projects.includes(project)
}

export function compileScope(state: Pick<Store['state'], 'flags' | 'segments'>, scope: SdkScope): CompiledScope {
  const flags = new Map<string, CompiledFlag>()
  const dates: number[] = []
  const entries = new OfrepEntries()
  // By name, so that the entries of the flags a bulk answer lists one after another lie one after another.
  const inScope = Object.values(state.flags)
    .filter(flag => !flag.archived && inProjects(scope, flag.project))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const constraints = new SharedConstraints()
  for (const flag of inScope) {
    const strategies = Object.hasOwn(flag.environments, scope.environment)
      ? flag.environments[scope.environment].strategies
      : []
    for (const strategy of strategies)
      if (!strategy.disabled)
        constraintsOf(strategy, state.segments).forEach(constraint => constraint && constraints.note(constraint))
  }
  for (const flag of inScope)
    flags.set(flag.name, compileFlag(flag, scope.environment, state.segments, dates, entries, constraints))
  const id = `${PROCESS}.${(++compiledScopes).toString(36)}`
  const readsAddress =
    inScope.some(record => JSON.stringify(record).includes('remoteAddress')) ||
    JSON.stringify(state.segments).includes('remoteAddress')
  // Every DATE constraint's outcome is decided by which of these `now` is past, and equal to.
  const times = [...new Set(dates.filter(time => !Number.isNaN(time)))].sort((a, b) => a - b)
  // The SDK's isParentDependencySatisfied, once every flag of the scope is compiled.
  for (const record of inScope) {
    if (record.dependencies.length === 0) continue
    const checks = record.dependencies.map((dependency): Predicate => {
      const parent = flags.get(dependency.feature)
      // A parent missing from the scope, or one that has parents itself, is never satisfied.
      if (!parent || parent.hasParents) return () => false
      if (dependency.enabled === false) return context => decide(parent, context) === OFF
      if (dependency.variants.length > 0) {
        const wanted = new Set(dependency.variants)
        return context => {
          const outcome = resolve(parent, context)
          return outcome !== OFF && wanted.has(outcome.name)
        }
      }
      return context => decide(parent, context) !== OFF
    })
    flags.get(record.name)!.parents = allOf(checks)
  }
  // By name already (compiled in that order).
  const all = [...flags.values()]
  const listed = all.filter(flag => flag.enabled)
  const { fixed, evaluated } = bulkPlan(all)
  entries.seal(
    fixed,
    evaluated.map(flag => [flag.firstEntry, flag.endEntry] as const),
  )
  const chosenIds = new Int32Array(evaluated.length)
  return {
    candidates: listed.length,
    readsAddress,
    ofrepFlag(name, context) {
      const flag = flags.get(name)
      return flag === undefined ? undefined : entries.alone(ofrepEntry(flag, context))
    },
    ofrepFlags(context, end, use) {
      for (let index = 0; index < evaluated.length; index++) chosenIds[index] = ofrepEntry(evaluated[index], context)
      return entries.bulk(chosenIds, end, use)
    },
    stamp(now) {
      if (times.length === 0) return id
      let past = 0
      let reached = 0
      for (const time of times) {
        if (time < now) past++
        if (time <= now) reached++
      }
      return `${id}.${past}.${reached}`
    },
    evaluate(context) {
      // Built with += (a rope, flattened once by the hash): measured cheaper than collecting and joining.
      let json = '{"toggles":['
      let first = true
      for (let index = 0; index < listed.length; index++) {
        const outcome = resolve(listed[index], context)
        if (outcome === OFF) continue
        json += first ? outcome.json : ',' + outcome.json
        first = false
      }
      return json + ']}'
    },
  }
}
