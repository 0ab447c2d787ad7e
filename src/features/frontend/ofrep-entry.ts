/**
 * The parts of OFREP's answer (features/ofrep) that the compiled scope makes in advance: the reasons,
 * a variant's payload as a typed value, and why a strategy enables a flag.
 */
import type { StrategyRecord } from '../flags/flags.records'

/**
 * OFREP's entries are kept as UTF-8, each with the comma that separates it from the one before, and
 * a bulk answer (1,000 entries, 100 KB) is copied together from them in one native call
 * (Bun.concatArrayBuffers). As text it cost a join, a copy for the encoding and twice the garbage per
 * request; copied entry by entry (a `set` each), 1,000 calls into native code (docs/ofrep.md).
 */
export type Bytes = Uint8Array<ArrayBuffer>
export const encoder = new TextEncoder()
/** The start and the plain end of a bulk answer (evaluation.ts ofrepFlags copies it together). */
export const BULK_OPEN = encoder.encode('{"flags":[') as Bytes
export const BULK_END = encoder.encode(']}') as Bytes

/** An entry without its leading comma (the single flag's answer, the first of a list). */
export const withoutComma = (entry: Bytes) => entry.subarray(1)

/**
 * Why a flag answers as it does, for OFREP (docs/ofrep.md), ranked: an answer's reason is the
 * highest of its strategy's and its variant's. STATIC: the same for every context; TARGETING_MATCH:
 * the context decided (constraints, segments, user ids, addresses, parents, an override); SPLIT: a
 * percentage decided (a rollout under 100 %, a weighted choice among variants). DISABLED and DEFAULT
 * are the two ways to be off: off in the environment, or on there but no strategy applying.
 */
export const OfrepReason = { STATIC: 0, TARGETING_MATCH: 1, SPLIT: 2 } as const
export type Rank = (typeof OfrepReason)[keyof typeof OfrepReason]
const REASON_TEXT = ['STATIC', 'TARGETING_MATCH', 'SPLIT'] as const
export const REASON_JSON = REASON_TEXT.map((reason) => `,"reason":"${reason}"`)

/**
 * A payload as an OFREP value: `number` as a number, `json` as the value it holds, `string` and
 * `csv` as text (a number or JSON that does not parse stays text); none (undefined) leaves `value` out,
 * which tells OpenFeature providers to use the application's default.
 */
export function payloadValue(payload: { type: string; value: string } | undefined): unknown {
  if (!payload) return undefined
  if (payload.type === 'number') {
    const number = Number(payload.value)
    return payload.value.trim() !== '' && Number.isFinite(number) ? number : payload.value
  }
  if (payload.type === 'json') {
    try {
      return JSON.parse(payload.value)
    } catch {
      return payload.value
    }
  }
  return payload.value
}

/** OFREP's `value` (left out when undefined) and `variant` members. */
export const ofrepMembers = (value: unknown, variant: string) => (value === undefined ? '' : `,"value":${JSON.stringify(value)}`) + `,"variant":${JSON.stringify(variant)}`

/** Why a strategy enables a flag, without its constraints and segments (which make it TARGETING_MATCH at least). */
export function strategyRank(strategy: StrategyRecord): Rank {
  const parameters = strategy.parameters
  switch (strategy.name) {
    case 'default':
      return OfrepReason.STATIC
    case 'flexibleRollout': {
      const stickiness = parameters.stickiness || 'default'
      if (Number(parameters.rollout) < 100) return OfrepReason.SPLIT
      // At 100 % only a custom stickiness reads the context (a missing field leaves the flag off).
      return stickiness === 'default' || stickiness === 'random' ? OfrepReason.STATIC : OfrepReason.TARGETING_MATCH
    }
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId':
      return Number(parameters.percentage) < 100 ? OfrepReason.SPLIT : OfrepReason.TARGETING_MATCH
    case 'gradualRolloutRandom':
      return OfrepReason.SPLIT
    default:
      return OfrepReason.TARGETING_MATCH
  }
}

