/**
 * OFREP's answers made from the evaluator's outcomes (features/evaluation): for each flag of a
 * compiled scope, its entry (`{"key":…,"value":…,"variant":…,"reason":…,"metadata":…}`) for every
 * outcome it can have is made once, in an AnswerParts, with a table from outcome to entry; an
 * answer then evaluates the flags a context can change and copies their entries.
 *
 * A flag without variants is a boolean (`on`/`off`); one with variants answers its variant's
 * payload, and its on/off state as a boolean when no payload is chosen (a variant without one,
 * none chosen, or off). The reason is the outcome's Basis when on (STATIC, TARGETING_MATCH,
 * SPLIT), DISABLED when off in the environment, DEFAULT when on there but not for the context.
 */
import type { FlagFacts } from '../evaluation/flag'
import { OFF_OUTCOMES, tableIndex, tableSize } from '../evaluation/outcome'
import type { CompiledScope, EvalContext } from '../evaluation/scope'
import { AnswerParts, encoder, type Bytes, type PartId as EntryId } from '../evaluation/answer-parts'

/** A JSON answer of `bytes` (the Response copies them). */
export const json = (bytes: Bytes, headers: Record<string, string> = {}) =>
  new Response(bytes, { headers: { ...headers, 'content-type': 'application/json' } })

/** The plain end of a bulk answer. */
export const BULK_END = encoder.encode(']}') as Bytes

/** The reason for each Basis (its value is its place). */
const REASONS = ['STATIC', 'TARGETING_MATCH', 'SPLIT'] as const

/**
 * A chosen variant's OFREP value: its payload, `number` as a number, `json` as the value it holds,
 * `string` and `csv` as text (a number or JSON that does not parse, or JSON `null`, stays text); without a payload,
 * `true` (the flag is on, as a boolean).
 */
export function payloadValue(payload: { type: string; value: string } | undefined): unknown {
  if (!payload) return true
  if (payload.type === 'number') {
    const number = Number(payload.value)
    return payload.value.trim() !== '' && Number.isFinite(number) ? number : payload.value
  }
  if (payload.type === 'json') {
    try {
      // null is no value to an OpenFeature provider (an object default would be answered null).
      return JSON.parse(payload.value) ?? payload.value
    } catch {
      return payload.value
    }
  }
  return payload.value
}

/**
 * OFREP's `value` and `variant` members. Every success holds a value: `@openfeature/ofrep-provider`
 * (the server provider, 0.1.3) refuses an answer without one as GENERAL, where a value of another
 * type than the application's default is TYPE_MISMATCH with that default, in both providers alike.
 */
export const ofrepMembers = (value: unknown, variant: string) =>
  `,"value":${JSON.stringify(value)},"variant":${JSON.stringify(variant)}`

export interface OfrepAnswers {
  /** One flag's answer (`{"key":…}`) for `context`; undefined when the scope has no flag `name`. */
  flag(name: string, context: EvalContext): Response | undefined
  /**
   * The bulk answer (`{"flags":[…]}`): every flag of the scope, on or off: first those no context
   * changes, then the others, each part by name; `end` closes the list and the object, with further
   * members between (`],"eventStreams":[…]}`).
   */
  bulk(context: EvalContext, end: Bytes, headers: Record<string, string>): Response
}

/** A flag's entries, added to `entries`, as its table: for each place of an outcome (tableIndex), the entry's id. */
function tableOf(flag: FlagFacts, entries: AnswerParts): EntryId[] {
  const head = `,{"key":${JSON.stringify(flag.name)}`
  const tail = `,"metadata":{"project":${JSON.stringify(flag.project)}}}`
  const add = (value: unknown, variant: string, reason: string) =>
    entries.add(`${head}${ofrepMembers(value, variant)},"reason":"${reason}"${tail}`)
  const hasVariants = flag.variants.length > 0
  const table = new Array<EntryId>(tableSize(flag.variants.length + 1))
  const off = hasVariants ? 'disabled' : 'off'
  table[0] = add(false, off, 'DISABLED')
  // Not for this context: no strategy applies, or a parent is not satisfied.
  table[1] = table[2] = add(false, off, 'DEFAULT')
  const slots = [
    { value: true as unknown, name: hasVariants ? 'disabled' : 'on' },
    ...flag.variants.map(variant => ({ value: payloadValue(variant.payload), name: variant.name })),
  ]
  slots.forEach((slot, index) => {
    const at = OFF_OUTCOMES + index * 4
    REASONS.forEach((reason, basis) => (table[at + basis] = add(slot.value, slot.name, reason)))
    // No outcome has a fourth basis.
    table[at + 3] = table[at]
  })
  return table
}

/** OFREP's answers for one compiled scope (made once per compiled scope: perCompiledScope). */
export function ofrepAnswers(scope: CompiledScope): OfrepAnswers {
  const entries = new AnswerParts('{"flags":[', 'space')
  const tableStart = new Int32Array(scope.flags.length)
  const tables: EntryId[] = []
  const fixed: EntryId[] = []
  const varying: number[] = []
  const ranges: (readonly [EntryId, EntryId])[] = []
  // In the flags' order (by name), so that the entries of the flags an answer lists one after another lie one after another.
  scope.flags.forEach((flag, index) => {
    const from = entries.count
    tableStart[index] = tables.length
    tables.push(...tableOf(flag, entries))
    if (flag.fixed !== null) fixed.push(tables[tableStart[index] + tableIndex(flag.fixed)])
    else {
      varying.push(index)
      ranges.push([from, entries.count])
    }
  })
  entries.seal(fixed, ranges)
  const table = Int32Array.from(tables)
  const evaluated = Int32Array.from(varying)
  const ids = new Int32Array(evaluated.length)
  const entryOf = (index: number, context: EvalContext) =>
    table[tableStart[index] + tableIndex(scope.outcome(index, context))]
  return {
    flag(name, context) {
      const index = scope.indexOf(name)
      return index < 0 ? undefined : json(entries.alone(entryOf(index, context)))
    },
    bulk(context, end, headers) {
      for (let k = 0; k < evaluated.length; k++) ids[k] = entryOf(evaluated[k], context)
      return json(entries.join(ids, ids.length, end), headers)
    },
  }
}
