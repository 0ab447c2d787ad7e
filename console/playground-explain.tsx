/**
 * Why a flag answered as it did for one context in one environment, from the playground's answer:
 * first in one sentence (the strategy that matched, or what each one needed and the context gave),
 * then in detail: the environment's switch, a parent's unmet condition, then strategy by strategy its result, each
 * segment and constraint with the value the context gave it, a rollout's bucket against its
 * percentage, and the variant with the bucket that chose it.
 */
import { describeConstraint } from './constraints'
import { describeStrategy, strategyTitle } from './strategy'
import type { Constraint } from './api'
import './pages.css'

export type Verdict = boolean | 'unknown'

export interface PlaygroundConstraint extends Constraint {
  result: boolean
}

export interface PlaygroundStrategy {
  name: string
  id?: string
  title?: string | null
  disabled?: boolean | null
  /** Whether it applies (`unknown` for a type the service cannot evaluate), and the strategy variant it chose. */
  result: { enabled: Verdict; evaluationStatus: string; variant?: PlaygroundVariant }
  segments: { id: number; name: string; result: boolean; constraints: PlaygroundConstraint[] }[]
  constraints: PlaygroundConstraint[]
  parameters: Record<string, string>
  /** Rollout strategies: the percentage, and the context's bucket (1–100) compared with it; null without a stickiness value. */
  rollout?: number
  bucket?: number | null
}

export interface PlaygroundVariant {
  name: string
  enabled: boolean
  payload?: { type: string; value: string }
  /** The normalised hash that chose the variant. */
  bucket?: number
}

export interface PlaygroundResult {
  name: string
  projectId: string
  environment?: string
  isEnabled: boolean
  isEnabledInCurrentEnvironment: boolean
  hasUnsatisfiedDependency?: boolean
  variant?: PlaygroundVariant | null
  variants?: { name: string; weight: number }[]
  strategies: { result: Verdict; data: PlaygroundStrategy[] }
  context?: Record<string, unknown>
}

export type PlaygroundContext = Record<string, string> & { properties?: Record<string, string> }

export const verdictText = (verdict: Verdict) => (verdict === 'unknown' ? 'unknown' : verdict ? 'true' : 'false')

function Verdict({ value }: { value: Verdict }) {
  return <span class={`verdict verdict-${verdictText(value)}`}>{verdictText(value)}</span>
}

/** The value the context gave a field: top-level, else in properties; currentTime defaults to now. */
function seen(context: Record<string, unknown> | undefined, field: string): string {
  const properties = (context?.properties ?? {}) as Record<string, unknown>
  const value = context?.[field] ?? properties[field]
  if (value === undefined || value === '') return field === 'currentTime' ? 'the time of evaluation' : 'nothing'
  return JSON.stringify(String(value))
}

function Constraints({ list, context }: { list: PlaygroundConstraint[]; context?: Record<string, unknown> }) {
  if (list.length === 0) return null
  return (
    <ul class="explain-constraints">
      {list.map((constraint, index) => (
        <li key={index}>
          <Verdict value={constraint.result} /> {describeConstraint(constraint)}{' '}
          <span class="muted">(saw {seen(context, constraint.contextName)})</span>
        </li>
      ))}
    </ul>
  )
}

/** "Rollout: bucket 42 of 100 against 50 %: in (42 ≤ 50)." */
function rolloutLine(strategy: PlaygroundStrategy): string | null {
  if (strategy.rollout === undefined) return null
  const percentage = strategy.rollout
  const bucket = strategy.bucket
  if (bucket === undefined || bucket === null)
    return `Rollout ${percentage} %: the context has no value to stick to, so the SDK draws at random each time.`
  return `Rollout: bucket ${bucket} of 100 against ${percentage} %: ${bucket <= percentage ? `in (${bucket} ≤ ${percentage})` : `out (${bucket} > ${percentage})`}.`
}

/** "Variant blue, chosen by bucket 730 of 1000, with payload sky." */
function variantLine(variant: PlaygroundVariant, total: number): string {
  const bucket = variant.bucket === undefined ? '' : `, chosen by bucket ${variant.bucket} of ${total}`
  return `Variant ${variant.name}${bucket}${variant.payload ? `, with payload ${variant.payload.value}` : ''}.`
}

/** Why one strategy said no, in words: its first segment or constraint that failed, else its rollout. */
function whyNot(strategy: PlaygroundStrategy, context: Record<string, unknown> | undefined): string {
  const title = strategy.title || strategyTitle(strategy.name)
  if (strategy.result.enabled === 'unknown') return `${title} could not be evaluated here`
  const segment = strategy.segments.find(entry => !entry.result)
  if (segment) return `${title} needs segment ${segment.name}, which the context is not in`
  const constraint = strategy.constraints.find(entry => !entry.result)
  if (constraint) {
    const value = seen(context, constraint.contextName)
    const gave = value === 'nothing' ? `the context has no ${constraint.contextName}` : `the context gave ${value}`
    return `${title} needs ${describeConstraint(constraint)}, and ${gave}`
  }
  if (strategy.rollout !== undefined && strategy.bucket !== undefined && strategy.bucket !== null)
    return `${title} takes ${strategy.rollout} % and this context is in bucket ${strategy.bucket}`
  return `${title} said no`
}

/** The answer to "why" in one sentence, before the details. */
export function reason(result: PlaygroundResult, environment: string): string {
  const strategies = result.strategies.data
  if (!result.isEnabledInCurrentEnvironment) return `Off because the flag is turned off in ${environment}.`
  if (result.hasUnsatisfiedDependency) return 'Off because a parent flag is not in the state this flag needs.'
  if (strategies.length === 0) return `On for everyone: the flag is on in ${environment} with no strategy.`
  const on = strategies.find(strategy => !strategy.disabled && strategy.result.enabled === true)
  if (on) {
    const bucket = on.rollout !== undefined && on.bucket ? ` (bucket ${on.bucket} within ${on.rollout} %)` : ''
    return `${result.isEnabled ? 'On' : 'Off'} because ${on.title || strategyTitle(on.name)} matched${bucket}.`
  }
  const asked = strategies.filter(strategy => !strategy.disabled)
  if (asked.length === 0) return 'Off because every strategy is disabled.'
  const nots = asked.map(strategy => whyNot(strategy, result.context))
  return `Off because no strategy matched: ${nots.join('; ')}.`
}

export function Explanation({ result, environment }: { result: PlaygroundResult; environment: string }) {
  const context = result.context
  const strategies = result.strategies.data
  return (
    <div class="explanation">
      <p class="explain-reason">
        <strong>{reason(result, environment)}</strong>
      </p>
      {strategies.length > 0 && result.isEnabledInCurrentEnvironment && (
        <p>
          Strategies, in order: the first that says true turns it on (overall {verdictText(result.strategies.result)}).
        </p>
      )}
      {strategies.length > 0 && (
        <ol class="explain-strategies">
          {strategies.map((strategy, index) => {
            const rollout = rolloutLine(strategy)
            return (
              <li key={strategy.id ?? index}>
                <p>
                  <Verdict value={strategy.disabled ? false : strategy.result.enabled} />{' '}
                  <strong>{strategy.title || strategyTitle(strategy.name)}</strong>:{' '}
                  {describeStrategy({ name: strategy.name, parameters: strategy.parameters, constraints: [] })}
                  {strategy.disabled ? ' (disabled, skipped)' : ''}
                </p>
                {strategy.segments.map(segment => (
                  <div key={segment.id} class="explain-segment">
                    <p>
                      <Verdict value={segment.result} /> segment {segment.name}
                    </p>
                    <Constraints list={segment.constraints} context={context} />
                  </div>
                ))}
                <Constraints list={strategy.constraints} context={context} />
                {rollout && <p class="rollout-line">{rollout}</p>}
                {strategy.result.variant?.enabled && (
                  <p>Its own variants: {variantLine(strategy.result.variant, 1000)}</p>
                )}
              </li>
            )
          })}
        </ol>
      )}
      {result.variant?.enabled && (
        <p class="variant-line">
          {variantLine(result.variant, (result.variants ?? []).reduce((sum, v) => sum + v.weight, 0) || 1000)}
        </p>
      )}
    </div>
  )
}
