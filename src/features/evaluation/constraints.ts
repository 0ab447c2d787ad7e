/**
 * Constraints compiled into predicates over an evaluation context, with the official Node SDK's
 * semantics (unleash-client 6.12, lib/strategy/strategy.js) and its libraries (semver, ip-address,
 * re2js), so that the answers are the SDK's: values are cleaned (empty ones dropped, trimmed) and
 * parsed once per change of the flags instead of on every evaluation, and a context value that needs
 * parsing (a version, an address) is parsed once per request however many constraints read it.
 */
import { Address4, Address6 } from 'ip-address'
import { RE2JS } from 're2js'
import { SemVer } from 'semver'
import type { ConstraintRecord } from '../flags/flags.records'

/** A context as the engine reads it: the SDK's root fields, then `properties` (null-prototype, text values). */
export interface EvalContext {
  userId?: string
  sessionId?: string
  remoteAddress?: string
  appName?: string
  environment?: string
  currentTime?: string
  properties: Record<string, string>
  /** Context values parsed or lower-cased once for the request, by their text. */
  versions?: Map<string, SemVer | null>
  addresses?: Map<string, Address>
  lowerCase?: Map<string, string>
  /** The time DATE_* constraints compare with when the context names none: read once per request. */
  now?: number
  /** The outcomes of a scope's shared constraints (SharedConstraints) for this context: 0 not yet, 1 false, 2 true. */
  decided?: Int8Array
  decidedBy?: SharedConstraints
}

export type Predicate = (context: EvalContext) => boolean

const ROOT_FIELDS = new Set(['userId', 'sessionId', 'remoteAddress', 'appName', 'environment', 'currentTime'])

/** The SDK's resolveContextValue: the root field, else the property; text or undefined. */
export function resolver(field: string): (context: EvalContext) => string | undefined {
  if (ROOT_FIELDS.has(field)) return context => context[field as 'userId'] ?? context.properties[field]
  return context => context.properties[field]
}

const cleanValues = (values: readonly string[] | undefined) =>
  (values ?? []).filter(value => !!value).map(value => value.trim())

function once<T>(cache: Map<string, T>, text: string, make: (text: string) => T): T {
  let value = cache.get(text)
  if (value === undefined && !cache.has(text)) cache.set(text, (value = make(text)))
  return value as T
}

/** semver's strict parse, or null: the SDK's SemverOperator treats what does not parse as no match. */
function semver(text: string | undefined): SemVer | null {
  try {
    return new SemVer(text as string)
  } catch {
    return null
  }
}

interface Range {
  /** The address as a number (IPv4: a plain number, for speed; IPv6: a bigint), and the prefix length written with it (32 / 128 without one). */
  value: bigint | number
  bits: number
}

function range(text: string, family: typeof Address4 | typeof Address6): Range | null {
  // What has no dot (IPv4) or colon (IPv6) cannot parse: spare the exception, the usual case for a missing address.
  if (!text.includes(family === Address4 ? '.' : ':')) return null
  try {
    const address = new family(text)
    return { value: family === Address4 ? Number(address.bigInt()) : address.bigInt(), bits: address.subnetMask }
  } catch {
    return null
  }
}

/**
 * ip-address's `isInSubnet` (the address's own prefix is at least the range's, and the range's
 * leading bits agree) or the same address (its `correctForm`), as the SDK's CidrOperator asks.
 */
function inRange(address: Range, candidate: Range): boolean {
  if (address.value === candidate.value) return true
  return address.bits >= candidate.bits && samePrefix(address, candidate)
}

/** Whether the first `candidate.bits` bits of the two addresses (of one family) agree. */
function samePrefix(address: Range, candidate: Range): boolean {
  if (candidate.bits === 0) return true
  if (typeof address.value === 'number')
    return address.value >>> (32 - candidate.bits) === (candidate.value as number) >>> (32 - candidate.bits)
  const shift = BigInt(128 - candidate.bits)
  return address.value >> shift === (candidate.value as bigint) >> shift
}

interface Address {
  v4: Range | null
  v6: Range | null
}

function addressOf(context: EvalContext, text: string): Address {
  return once((context.addresses ??= new Map()), text, () => {
    const v4 = range(text, Address4)
    return { v4, v6: v4 ? null : range(text, Address6) }
  })
}

/** The remoteAddress strategy's test of its IPs parameter (IPv4 ranges only, as in the SDK). */
export function ipv4Matcher(ranges: readonly string[]): Predicate {
  const exact = new Set(ranges)
  const parsed = ranges.map(text => range(text, Address4)).filter((value): value is Range => value !== null)
  return context => {
    const address = context.remoteAddress
    if (address !== undefined && exact.has(address)) return true
    if (parsed.length === 0) return false
    const remote = addressOf(context, address ?? '').v4
    return remote !== null && parsed.some(candidate => remote.bits >= candidate.bits && samePrefix(remote, candidate))
  }
}

const never: Predicate = () => false

function operator(constraint: ConstraintRecord): Predicate {
  const value = resolver(constraint.contextName)
  switch (constraint.operator) {
    case 'IN':
    case 'NOT_IN': {
      const values = new Set(cleanValues(constraint.values))
      const wanted = constraint.operator === 'IN'
      return context => {
        const actual = value(context)
        return (actual !== undefined && values.has(actual)) === wanted
      }
    }
    case 'STR_STARTS_WITH':
    case 'STR_ENDS_WITH':
    case 'STR_CONTAINS': {
      const lower = constraint.caseInsensitive
      const values = cleanValues(constraint.values).map(text => (lower ? text.toLocaleLowerCase() : text))
      const test =
        constraint.operator === 'STR_STARTS_WITH'
          ? (text: string, part: string) => text.startsWith(part)
          : constraint.operator === 'STR_ENDS_WITH'
            ? (text: string, part: string) => text.endsWith(part)
            : (text: string, part: string) => text.includes(part)
      return context => {
        const given = value(context)
        if (given === undefined) return false
        const actual: string = lower
          ? once((context.lowerCase ??= new Map()), given, text => text.toLocaleLowerCase())
          : given
        for (const part of values) if (test(actual, part)) return true
        return false
      }
    }
    case 'REGEX': {
      let regex: RE2JS | null
      try {
        regex = RE2JS.compile(constraint.value as string, constraint.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0)
      } catch {
        regex = null
      }
      if (!regex) return never
      const compiled = regex
      return context => {
        const actual = value(context)
        return actual !== undefined && compiled.matcher(actual).find()
      }
    }
    case 'NUM_EQ':
    case 'NUM_GT':
    case 'NUM_GTE':
    case 'NUM_LT':
    case 'NUM_LTE': {
      const target = Number(constraint.value)
      if (Number.isNaN(target)) return never
      const compare = {
        NUM_EQ: (n: number) => n === target,
        NUM_GT: (n: number) => n > target,
        NUM_GTE: (n: number) => n >= target,
        NUM_LT: (n: number) => n < target,
        NUM_LTE: (n: number) => n <= target,
      }[constraint.operator]
      return context => {
        const actual = Number(value(context))
        return !Number.isNaN(actual) && compare(actual)
      }
    }
    case 'DATE_AFTER':
    case 'DATE_BEFORE': {
      // As in the SDK: the context's currentTime (or now) is compared, whatever contextName says.
      const target = new Date(constraint.value as string).getTime()
      const after = constraint.operator === 'DATE_AFTER'
      return context => {
        const now = context.currentTime ? new Date(context.currentTime).getTime() : (context.now ??= Date.now())
        return after ? now > target : now < target
      }
    }
    case 'SEMVER_EQ':
    case 'SEMVER_GT':
    case 'SEMVER_GTE':
    case 'SEMVER_LT':
    case 'SEMVER_LTE': {
      const target = semver(constraint.value)
      if (!target) return never
      const accept = {
        SEMVER_EQ: (c: number) => c === 0,
        SEMVER_GT: (c: number) => c > 0,
        SEMVER_GTE: (c: number) => c >= 0,
        SEMVER_LT: (c: number) => c < 0,
        SEMVER_LTE: (c: number) => c <= 0,
      }[constraint.operator]
      return context => {
        const actual = value(context)
        // The SDK refuses a leading v in the context value, which semver itself would accept.
        if (!actual || actual.startsWith('v')) return false
        const version = once((context.versions ??= new Map()), actual, semver)
        return version !== null && accept(version.compare(target))
      }
    }
    case 'IN_CIDR': {
      const values = cleanValues(constraint.values)
      const v4 = values.map(text => range(text, Address4)).filter((item): item is Range => item !== null)
      const v6 = values.map(text => range(text, Address6)).filter((item): item is Range => item !== null)
      return context => {
        const actual = value(context)
        if (actual === undefined) return false
        const address = addressOf(context, actual)
        if (address.v4) return v4.some(candidate => inRange(address.v4!, candidate))
        if (address.v6) return v6.some(candidate => inRange(address.v6!, candidate))
        return false
      }
    }
    default:
      return unknown
  }
}

/** An operator the SDK does not know: it never holds, inverted or not. */
const unknown: Predicate = () => false

export function compileConstraint(constraint: ConstraintRecord | undefined): Predicate {
  // A strategy's segment that does not exist comes through as undefined: the SDK fails the strategy.
  if (!constraint) return never
  const test = operator(constraint)
  if (test === unknown) return never
  return constraint.inverted ? context => !test(context) : test
}

/** All of them hold (none: always). */
export function allOf(predicates: readonly Predicate[]): Predicate {
  if (predicates.length === 0) return () => true
  if (predicates.includes(never)) return never
  if (predicates.length === 1) return predicates[0]
  const count = predicates.length
  return context => {
    for (let index = 0; index < count; index++) if (!predicates[index](context)) return false
    return true
  }
}

/** What makes two constraints the same test. */
const constraintKey = (constraint: ConstraintRecord) =>
  JSON.stringify([
    constraint.contextName,
    constraint.operator,
    constraint.values ?? null,
    constraint.value ?? null,
    !!constraint.caseInsensitive,
    !!constraint.inverted,
  ])

/**
 * A scope's constraints, compiled so that one found more than once in it (in several strategies, or
 * in a segment several strategies use) is decided once per evaluation of a context, the outcome kept
 * in the context: every constraint is a function of the context alone (and of `now`, read once), so
 * the answers are the same as deciding it each time.
 */
export class SharedConstraints {
  private readonly counts = new Map<string, number>()
  private readonly shared = new Map<string, Predicate>()
  /** Each record's key, made once (a segment's constraints are met once per strategy using it). */
  private readonly keys = new WeakMap<ConstraintRecord, string>()
  private slots = 0

  private keyOf(constraint: ConstraintRecord): string {
    let key = this.keys.get(constraint)
    if (key === undefined) this.keys.set(constraint, (key = constraintKey(constraint)))
    return key
  }

  /** Counts a constraint the scope has, before any is compiled. */
  note(constraint: ConstraintRecord): void {
    const key = this.keyOf(constraint)
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }

  compile(constraint: ConstraintRecord | undefined): Predicate {
    const test = compileConstraint(constraint)
    if (!constraint || test === never) return test
    const key = this.keyOf(constraint)
    if ((this.counts.get(key) ?? 0) < 2) return test
    let predicate = this.shared.get(key)
    if (predicate === undefined) {
      const slot = this.slots++
      predicate = context => {
        let decided = context.decided
        if (decided === undefined || context.decidedBy !== this) {
          decided = context.decided = new Int8Array(this.slots)
          context.decidedBy = this
        }
        const known = decided[slot]
        if (known !== 0) return known === 2
        const outcome = test(context)
        decided[slot] = outcome ? 2 : 1
        return outcome
      }
      this.shared.set(key, predicate)
    }
    return predicate
  }
}
