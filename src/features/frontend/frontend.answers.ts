/**
 * The frontend API's answer (sdk-api-contract §2) made from the evaluator's outcomes: each flag on
 * in the environment has its entry made once per compiled scope for each variant it may answer
 * with, so a request only evaluates and copies bytes.
 */
import type { CompiledScope, EvalContext } from '../evaluation/scope'
import type { VariantFacts } from '../evaluation/flag'
import { AnswerParts, encoder, type Bytes } from '../evaluation/answer-parts'
import { variantSlot } from '../evaluation/outcome'

/** What the frontend API asks of an engine (the SDK's own engine gives the same, test/sdk-reference.ts). */
export interface FrontendEvaluator {
  /** The answer's JSON text for `context`: `{"toggles":[…]}`, flags by name. */
  evaluate(context: EvalContext): string
  /** How many flags each evaluation looks at: those on in the environment (an off flag is never listed). */
  readonly candidates: number
}

/** The variant of a flag that is on with none. */
const NO_VARIANT = '{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true}'

const variantJson = (variant: VariantFacts) =>
  JSON.stringify({
    name: variant.name,
    enabled: true,
    ...(variant.payload ? { payload: variant.payload } : {}),
    feature_enabled: true,
    featureEnabled: true,
  })

/** What the frontend service answers with: the answer's UTF-8, valid until the next answer of the scope. */
export interface FrontendAnswers extends FrontendEvaluator {
  answer(context: EvalContext): Bytes
}

const END = encoder.encode(']}') as Bytes
const decoder = new TextDecoder()

/**
 * Each flag on in the environment has its entries made once per compiled scope (AnswerParts), one
 * for each variant it may answer with; the entries of flags no context changes are joined into
 * runs between the others, so a request only evaluates the others and copies bytes, in the flags'
 * order (by name).
 */
export function frontendAnswers(scope: CompiledScope): FrontendAnswers {
  const parts = new AnswerParts('{"toggles":[', 'drop')
  /** The answer's steps: a flag's index (at least 0) to evaluate, or -1 - the id of a run of fixed entries. */
  const steps: number[] = []
  /** Each evaluated flag's first entry, by index. */
  const first = new Int32Array(scope.flags.length)
  const ranges: [number, number][] = []
  let run = ''
  const endRun = () => {
    if (run === '') return
    const id = parts.add(run)
    steps.push(-1 - id)
    ranges.push([id, id + 1])
    run = ''
  }
  let candidates = 0
  scope.flags.forEach((flag, index) => {
    if (!flag.enabled) return
    candidates++
    const head = `,{"name":${JSON.stringify(flag.name)},"enabled":true,"variant":`
    const tail = `,"impressionData":${flag.impressionData}}`
    const texts = [head + NO_VARIANT + tail, ...flag.variants.map(variant => head + variantJson(variant) + tail)]
    if (flag.fixed !== null) {
      // The same for every context: listed with its entry, or never.
      if (flag.fixed >= 0) run += texts[variantSlot(flag.fixed)]
      return
    }
    endRun()
    steps.push(index)
    first[index] = parts.count
    for (const text of texts) parts.add(text)
    ranges.push([first[index], parts.count])
  })
  endRun()
  parts.seal([], ranges)
  const program = Int32Array.from(steps)
  const ids = new Int32Array(program.length)
  const answer = (context: EvalContext) => {
    let count = 0
    for (let k = 0; k < program.length; k++) {
      const step = program[k]
      if (step < 0) ids[count++] = -1 - step
      else {
        const outcome = scope.outcome(step, context)
        if (outcome >= 0) ids[count++] = first[step] + variantSlot(outcome)
      }
    }
    return parts.join(ids, count, END)
  }
  return {
    candidates,
    answer,
    evaluate: context => decoder.decode(answer(context)),
  }
}
