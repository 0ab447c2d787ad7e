/** Validation of strategies, constraints and variants beyond what their schemas say (seed 2.4–2.7, 2.11). */
import { ValidationError } from '../../errors'
import type { ConstraintRecord, PayloadRecord } from './flags.records'
import { isIP } from 'node:net'
import { compilePattern } from '../projects/naming-pattern'

/**
 * The operators of sdk-api-contract §4, and IN_CIDR: Unleash 8.2 does not offer it, but the official
 * Node SDK evaluates it (unleash-client 6.12: a values list of addresses and CIDR ranges), so a
 * constraint using it does what its author meant in the SDK the contract names.
 */
export const CONSTRAINT_OPERATORS = [
  'NOT_IN',
  'IN',
  'STR_ENDS_WITH',
  'STR_STARTS_WITH',
  'STR_CONTAINS',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
  'IN_CIDR',
] as const

export const TOTAL_WEIGHT = 1000

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/
const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/** RFC 3339 date-time, with every field in range (Date.parse would roll 2024-02-30 over into March). */
export function isRfc3339(value: string): boolean {
  const match = RFC3339.exec(value)
  if (!match) return false
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number)
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  const offsetOk = match[9] === undefined || (Number(match[9]) < 24 && Number(match[10]) < 60)
  return (
    month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && minute < 60 && second < 60 && offsetOk
  )
}

/** Operators that compare with one `value`; the others (IN, NOT_IN, STR_*) take a `values` list. */
export function isSingleValueOperator(operator: string): boolean {
  return /^(NUM|DATE|SEMVER)_/.test(operator) || operator === 'REGEX'
}

/** Why a single value does not fit its operator, or undefined when it does. */
function singleValueProblem(operator: string, value: string): string | undefined {
  if (operator.startsWith('NUM_')) {
    return NUMBER.test(value.trim()) && Number.isFinite(Number(value))
      ? undefined
      : `${operator} needs a numeric value, got ${JSON.stringify(value)}`
  }
  if (operator.startsWith('DATE_'))
    return isRfc3339(value) ? undefined : `${operator} needs an RFC 3339 date-time value, got ${JSON.stringify(value)}`
  if (operator.startsWith('SEMVER_')) {
    return SEMVER.test(value)
      ? undefined
      : `${operator} needs a strict semantic version such as 1.2.3 (no leading v), got ${JSON.stringify(value)}`
  }
  return regexProblem(value)
}

/** A REGEX value must be RE2 syntax (contract §4; the Node SDK compiles it with re2js): no look-around, no back-references. */
function regexProblem(value: string): string | undefined {
  if (value === '') return 'REGEX needs a non-empty regular expression'
  const compiled = compilePattern(value, 'a REGEX constraint', Number.POSITIVE_INFINITY)
  return compiled.ok ? undefined : `REGEX value cannot be used: ${compiled.problem}`
}

/** An IPv4 or IPv6 address, or a CIDR range of one (`10.0.0.0/8`, `2001:db8::/32`). */
function isAddressOrRange(value: string): boolean {
  const slash = value.indexOf('/')
  const address = slash === -1 ? value : value.slice(0, slash)
  const version = isIP(address)
  if (version === 0 || slash === -1) return version !== 0
  const bits = value.slice(slash + 1)
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128)
}

export function checkConstraint(constraint: ConstraintRecord, path: string): ConstraintRecord {
  const { operator } = constraint
  // As Unleash's schema (a required string may not be empty): a blank field is in no context.
  if (constraint.contextName.trim() === '')
    throw ValidationError.at(`${path}/contextName`, 'A constraint needs the context field it tests, e.g. userId')
  if (isSingleValueOperator(operator)) {
    // Values saved by earlier versions in `values[0]` are still read; SDKs look at `value`.
    const single = constraint.value ?? (constraint.values.length === 1 ? constraint.values[0] : undefined)
    if (single === undefined)
      throw ValidationError.at(
        `${path}/value`,
        `${operator} needs a single value in value, got ${JSON.stringify(constraint.value ?? null)}`,
      )
    const problem = singleValueProblem(operator, single)
    if (problem) throw ValidationError.at(`${path}/value`, problem)
    if (operator === 'REGEX' && constraint.inverted)
      throw ValidationError.at(
        `${path}/inverted`,
        'A REGEX constraint cannot be inverted; write the expression to match what you want',
      )
    return { ...constraint, value: single }
  }
  if (constraint.values.length === 0)
    throw ValidationError.at(`${path}/values`, `${operator} needs at least one entry in values`)
  if (operator === 'IN_CIDR') {
    constraint.values.forEach((value, index) => {
      if (!isAddressOrRange(value.trim())) {
        throw ValidationError.at(
          `${path}/values/${index}`,
          `IN_CIDR needs IP addresses or CIDR ranges such as 10.0.0.0/8, got ${JSON.stringify(value)}`,
        )
      }
    })
  }
  return constraint
}

/** A constraint as a request gives it, with its defaults filled in and its values checked: strategies and segments build theirs here. */
export function buildConstraint(
  input: {
    contextName: string
    operator: string
    caseInsensitive?: boolean
    inverted?: boolean
    values?: string[]
    value?: string
  },
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
 * Applies the weight rules (seed, contract §4): `fix` variants keep their weight, `variable` ones
 * share what is left of 1000 equally, and the list comes back sorted by name, the order it is stored
 * and served in; the first variable ones in that order take the remainder of the division, so the
 * weights do not depend on the order the variants were sent in. Names must be unique.
 */
export function distributeWeights<V extends { name: string; weight: number; weightType: 'variable' | 'fix' }>(
  variants: V[],
  path: string,
): V[] {
  const seen = new Set<string>()
  variants.forEach((variant, index) => {
    // As Unleash's schema (a required string may not be empty): SDKs would hand out a nameless variant.
    if (variant.name.trim() === '') throw ValidationError.at(`${path}/${index}/name`, 'A variant needs a name')
    if (seen.has(variant.name))
      throw ValidationError.at(`${path}/${index}/name`, `Variant names must be unique; "${variant.name}" appears twice`)
    seen.add(variant.name)
  })
  if (variants.length === 0) return []
  variants = [...variants].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const fixedTotal = variants.filter(v => v.weightType === 'fix').reduce((sum, v) => sum + v.weight, 0)
  const variableCount = variants.filter(v => v.weightType !== 'fix').length
  if (fixedTotal > TOTAL_WEIGHT)
    throw ValidationError.at(path, `Fixed variant weights add up to ${fixedTotal}, more than ${TOTAL_WEIGHT}`)
  if (variableCount === 0 && fixedTotal !== TOTAL_WEIGHT) {
    throw ValidationError.at(
      path,
      `With only fixed variants their weights must add up to ${TOTAL_WEIGHT}, got ${fixedTotal}`,
    )
  }
  const remaining = TOTAL_WEIGHT - fixedTotal
  const share = variableCount ? Math.floor(remaining / variableCount) : 0
  let extra = variableCount ? remaining % variableCount : 0
  return variants.map(variant => {
    if (variant.weightType === 'fix') return variant
    const weight = share + (extra > 0 ? 1 : 0)
    if (extra > 0) extra--
    return { ...variant, weight }
  })
}

/** Parameters of the built-in strategies that have rules. Values are strings, as in Unleash. */
export function checkParameters(
  strategyName: string,
  parameters: Record<string, string>,
  flagName: string,
  path: string,
): Record<string, string> {
  if (strategyName !== 'flexibleRollout') return parameters
  const rollout = parameters.rollout ?? '100'
  if (!/^\d{1,3}$/.test(rollout) || Number(rollout) > 100)
    throw ValidationError.at(
      `${path}/rollout`,
      `rollout must be a whole number from 0 to 100, got ${JSON.stringify(rollout)}`,
    )
  // Blank is missing (the SDK hashes a blank stickiness field at random, and blank groups all rollouts together).
  const given = (value: string | undefined) => (value?.trim() ? value : undefined)
  return {
    ...parameters,
    rollout,
    stickiness: given(parameters.stickiness) ?? 'default',
    groupId: given(parameters.groupId) ?? flagName,
  }
}
