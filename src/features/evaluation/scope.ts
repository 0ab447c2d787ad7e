/**
 * The one evaluator of the SDK-facing protocols (the frontend API, sdk-api-contract §2, and OFREP):
 * a scope (a token's projects in its environment) is compiled once per change of what it serves
 * (flag.ts), and a request only runs the compiled closures, flag by flag, to outcomes
 * (outcome.ts). It knows no protocol: each protocol's feature makes its answer's text from the
 * outcomes and the flags' facts. The SDK's own engine gives the same answers at about ten times the
 * cost per flag (`bench/run.ts frontend-eval`).
 */
import type { Store } from '../../storage/store'
import type { SdkScope } from '../tokens/auth'
import { allOf, SharedConstraints, type EvalContext } from './constraints'
import {
  compileFlag,
  constraintsOf,
  dependencyCheck,
  fixedOutcome,
  outcomeOf,
  type CompiledFlag,
  type FlagFacts,
} from './flag'

export type { EvalContext }

export interface CompiledScope {
  /** The scope's flags (archived ones aside), on or off, by name: what the protocols make their tables from. */
  readonly flags: readonly FlagFacts[]
  /** The place in `flags` of the flag `name`; -1 when the scope has no such flag. */
  indexOf(name: string): number
  /** The outcome (outcome.ts) of the flag at `index` in `flags` for `context`. */
  outcome(index: number, context: EvalContext): number
  /**
   * This compiled scope among all compiled in this process (a new one for each change of what the
   * scope serves), followed by where `now` stands among the times its DATE constraints compare with:
   * with the same context, evaluations with the same stamp answer alike (but for random stickiness).
   */
  stamp(now: number): string
  /** Whether a flag or segment of the scope names `remoteAddress` at all (a strategy, a constraint, stickiness): if not, only `default` stickiness reads the address. */
  readonly readsAddress: boolean
}

/** Tells compiled scopes apart across restarts too: an ETag made from a stamp never outlives the process. */
const PROCESS = Bun.hash(`${process.pid}:${Date.now()}:${Math.random()}`).toString(36)
let compiledScopes = 0

/** Which flags a scope holds: the token's projects (`*` for all) in its one environment. */
export function inProjects(scope: SdkScope, project: string): boolean {
  return scope.projects.includes('*') || scope.projects.includes(project)
}

export function compileScope(state: Pick<Store['state'], 'flags' | 'segments'>, scope: SdkScope): CompiledScope {
  const dates: number[] = []
  // By name, the order of the answers.
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
  const compiled = inScope.map(flag => compileFlag(flag, scope.environment, state.segments, dates, constraints))
  const byName = new Map<string, number>(inScope.map((flag, index) => [flag.name, index]))
  const flagNamed = (name: string): CompiledFlag | undefined => {
    const index = byName.get(name)
    return index === undefined ? undefined : compiled[index]
  }
  // The SDK's isParentDependencySatisfied, once every flag of the scope is compiled.
  inScope.forEach((record, index) => {
    if (record.dependencies.length > 0)
      compiled[index].parents = allOf(
        record.dependencies.map(dependency => dependencyCheck(dependency, flagNamed(dependency.feature))),
      )
  })
  for (const flag of compiled) flag.facts.fixed = fixedOutcome(flag)
  const id = `${PROCESS}.${(++compiledScopes).toString(36)}`
  const readsAddress =
    inScope.some(record => JSON.stringify(record).includes('remoteAddress')) ||
    JSON.stringify(state.segments).includes('remoteAddress')
  // Every DATE constraint's outcome is decided by which of these `now` is past, and equal to.
  const times = [...new Set(dates.filter(time => !Number.isNaN(time)))].sort((a, b) => a - b)
  return {
    flags: compiled.map(flag => flag.facts),
    readsAddress,
    indexOf: name => byName.get(name) ?? -1,
    outcome: (index, context) => outcomeOf(compiled[index], context),
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
  }
}
