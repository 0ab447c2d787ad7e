/**
 * What the evaluation of one flag for one context comes to: on or off, the variant, the strategy
 * that applied, and what decided it. It is one number (an outcome), so that evaluating a scope's
 * flags makes no object per flag: the protocols (features/frontend, features/ofrep) make a table of
 * their answers per flag once per compiled scope, from its FlagFacts, and look each outcome up in
 * it (`tableIndex`); `describe` spells an outcome out.
 *
 * Below zero an outcome is off (`Off`). From zero up it is on: bits 0–1 hold its `Basis`, bits 2–15
 * the variant's slot in the flag's `variants` (0: no variant), bits 16–30 the place of the strategy
 * that applied among the flag's strategies as the client API serves them (sorted, disabled ones
 * left out), plus one (0: the flag has no strategy, and is on for every context).
 */

/**
 * What decided an outcome that is on, ranked: the outcome's is the highest of its strategy's and its
 * variant's (and a flag with parents is decided by the context at least).
 */
export const Basis = {
  /** Nothing: the same for every context. */
  FIXED: 0,
  /** The context: constraints, segments, user ids, addresses, parents, a variant's override, a custom stickiness. */
  CONTEXT: 1,
  /** A percentage: a rollout under 100 %, a weighted choice among several variants. */
  PERCENTAGE: 2,
} as const
export type Basis = (typeof Basis)[keyof typeof Basis]

/** The ways to be off. */
export const Off = {
  /** Off in the environment (or no state there). */
  DISABLED: -1,
  /** On in the environment, but no strategy applies to the context (or none is of a type the SDK knows). */
  NO_MATCH: -2,
  /** On in the environment, but a parent's condition is not met. */
  PARENT: -3,
} as const

/** How many outcomes are off: a flag's table holds them first. */
export const OFF_OUTCOMES = 3

/** The outcome of being on by the strategy at `strategy` (-1: none) with the variant at `slot` (0: none). */
export function onOutcome(strategy: number, slot: number, basis: Basis): number {
  return ((strategy + 1) << 16) | (slot << 2) | basis
}

/** The variant slot of an outcome that is on (0: no variant). */
export const variantSlot = (outcome: number): number => (outcome >> 2) & 0x3fff

/** The basis of an outcome that is on. */
export const basisOf = (outcome: number): Basis => (outcome & 3) as Basis

/** The place of the strategy that applied (-1: the flag has none). */
export const strategyPlace = (outcome: number): number => (outcome >>> 16) - 1

/**
 * Where an outcome's answer is in a table of one flag's answers: the off outcomes first (DISABLED,
 * NO_MATCH, PARENT), then four places per variant slot, one per basis (the fourth unused); the
 * strategy is not part of it. A table for a flag with `slots` slots has `tableSize(slots)` places.
 */
export const tableIndex = (outcome: number): number => (outcome < 0 ? -1 - outcome : OFF_OUTCOMES + (outcome & 0xffff))
export const tableSize = (slots: number): number => OFF_OUTCOMES + slots * 4

/** An outcome spelt out. */
export interface Outcome {
  enabled: boolean
  /** Why it is off; null when on. */
  off: 'disabled' | 'no-match' | 'parent' | null
  /** The variant slot (0: no variant, and when off). */
  variant: number
  /** What decided it; null when off. */
  basis: Basis | null
  /** The strategy that applied (its place among the flag's served strategies); -1 when off or when the flag has none. */
  strategy: number
}

const OFF_NAMES = { [Off.DISABLED]: 'disabled', [Off.NO_MATCH]: 'no-match', [Off.PARENT]: 'parent' } as const

export function describe(outcome: number): Outcome {
  if (outcome < 0)
    return { enabled: false, off: OFF_NAMES[outcome as -1 | -2 | -3], variant: 0, basis: null, strategy: -1 }
  return {
    enabled: true,
    off: null,
    variant: variantSlot(outcome),
    basis: basisOf(outcome),
    strategy: strategyPlace(outcome),
  }
}
