/** Validation of strategies, constraints and variants beyond what their schemas say (seed 2.4–2.7, 2.11). */
import { ValidationError } from '../../errors'
import type { ConstraintRecord, PayloadRecord } from './flags.records'

export const CONSTRAINT_OPERATORS = [
  'NOT_IN', 'IN', 'STR_ENDS_WITH', 'STR_STARTS_WITH', 'STR_CONTAINS',
  'NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE',
  'DATE_AFTER', 'DATE_BEFORE', 'SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT',
] as const

/** Unleash's built-in activation strategies; there is no API for custom ones here. */
export const STRATEGY_NAMES = ['default', 'flexibleRollout', 'userWithId', 'remoteAddress', 'applicationHostname'] as const

export const TOTAL_WEIGHT = 1000

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/
const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/** RFC 3339 date-time, with every field in range (Date.parse would roll 2024-02-30 over into March). */
export function isRfc3339(value: string): boolean {
  const match = RFC3339.exec(value)
  if (!match) return false
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number)
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  const offsetOk = match[9] === undefined || (Number(match[9]) < 24 && Number(match[10]) < 60)
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && minute < 60 && second < 60 && offsetOk
}

export function checkConstraint(constraint: ConstraintRecord, path: string): ConstraintRecord {
  const { operator } = constraint
  const single = constraint.value ?? constraint.values[0]
  if (operator.startsWith('NUM_')) {
    if (single === undefined || !NUMBER.test(single.trim())) throw ValidationError.at(`${path}/value`, `${operator} needs a numeric value, got ${JSON.stringify(single ?? null)}`)
  } else if (operator.startsWith('DATE_')) {
    if (single === undefined || !isRfc3339(single)) {
      throw ValidationError.at(`${path}/value`, `${operator} needs an RFC 3339 date-time value, got ${JSON.stringify(single ?? null)}`)
    }
  } else if (operator.startsWith('SEMVER_')) {
    if (single === undefined || !SEMVER.test(single)) throw ValidationError.at(`${path}/value`, `${operator} needs a semantic version value, got ${JSON.stringify(single ?? null)}`)
  } else if (constraint.values.length === 0) {
    throw ValidationError.at(`${path}/values`, `${operator} needs at least one entry in values`)
  }
  return constraint
}

/** A constraint as a request gives it, with its defaults filled in and its values checked: strategies and segments build theirs here. */
export function buildConstraint(
  input: { contextName: string; operator: string; caseInsensitive?: boolean; inverted?: boolean; values?: string[]; value?: string },
  path: string,
): ConstraintRecord {
  return checkConstraint(
    {
      contextName: input.contextName,
      operator: input.operator,
      caseInsensitive: input.caseInsensitive ?? false,
      inverted: input.inverted ?? false,
      values: input.values ?? [],
      ...(input.value !== undefined ? { value: input.value } : {}),
    },
    path,
  )
}

export function checkPayload(payload: PayloadRecord | undefined, path: string): void {
  if (!payload) return
  if (payload.type === 'json') {
    try {
      JSON.parse(payload.value)
    } catch {
      throw ValidationError.at(`${path}/value`, 'A json payload must hold valid JSON text')
    }
  }
  if (payload.type === 'number' && !(NUMBER.test(payload.value.trim()) && Number.isFinite(Number(payload.value)))) {
    throw ValidationError.at(`${path}/value`, 'A number payload must hold a number')
  }
}

/**
 * Applies the seed's weight rules: `fix` variants keep their weight, `variable` ones share what is
 * left of 1000 equally (the first ones take the remainder of the division). Names must be unique.
 */
export function distributeWeights<V extends { name: string; weight: number; weightType: 'variable' | 'fix' }>(variants: V[], path: string): V[] {
  const seen = new Set<string>()
  variants.forEach((variant, index) => {
    if (seen.has(variant.name)) throw ValidationError.at(`${path}/${index}/name`, `Variant names must be unique; "${variant.name}" appears twice`)
    seen.add(variant.name)
  })
  if (variants.length === 0) return []
  const fixedTotal = variants.filter((v) => v.weightType === 'fix').reduce((sum, v) => sum + v.weight, 0)
  const variableCount = variants.filter((v) => v.weightType !== 'fix').length
  if (fixedTotal > TOTAL_WEIGHT) throw ValidationError.at(path, `Fixed variant weights add up to ${fixedTotal}, more than ${TOTAL_WEIGHT}`)
  if (variableCount === 0 && fixedTotal !== TOTAL_WEIGHT) {
    throw ValidationError.at(path, `With only fixed variants their weights must add up to ${TOTAL_WEIGHT}, got ${fixedTotal}`)
  }
  const remaining = TOTAL_WEIGHT - fixedTotal
  const share = variableCount ? Math.floor(remaining / variableCount) : 0
  let extra = variableCount ? remaining % variableCount : 0
  return variants.map((variant) => {
    if (variant.weightType === 'fix') return variant
    const weight = share + (extra > 0 ? 1 : 0)
    if (extra > 0) extra--
    return { ...variant, weight }
  })
}

/** Parameters of the built-in strategies that have rules. Values are strings, as in Unleash. */
export function checkParameters(strategyName: string, parameters: Record<string, string>, flagName: string, path: string): Record<string, string> {
  if (strategyName !== 'flexibleRollout') return parameters
  const rollout = parameters.rollout ?? '100'
  if (!/^\d{1,3}$/.test(rollout) || Number(rollout) > 100) throw ValidationError.at(`${path}/rollout`, `rollout must be a whole number from 0 to 100, got ${JSON.stringify(rollout)}`)
  return { ...parameters, rollout, stickiness: parameters.stickiness || 'default', groupId: parameters.groupId || flagName }
}
