/**
 * The frontend API's answers (sdk-api-contract §2): the token scope's compiled flags (shared with
 * OFREP, features/evaluation) evaluated for the context, as the frontend API's JSON.
 */
import { perCompiledScope, type CompiledScopes } from '../evaluation/compiled-scopes'
import type { EvalContext } from '../evaluation/scope'
import type { Bytes } from '../evaluation/answer-parts'
import type { SdkScope } from '../tokens/auth'
import { frontendAnswers } from './frontend.answers'

export interface FrontendAnswer {
  /** The answer's UTF-8: a Response made of it at once copies it (the next answer is put together in the same place). */
  json: Bytes
  etag: string
}

export class FrontendService {
  private readonly answers = perCompiledScope(frontendAnswers)

  constructor(private readonly scopes: Pick<CompiledScopes, 'get' | 'stats'>) {}

  /** How the compiled scopes were found: kept, or built (OFREP's requests included). */
  get stats() {
    return this.scopes.stats
  }

  /** The enabled flags of `scope` for `context`, as JSON, with an ETag made from its bytes. */
  evaluate(scope: SdkScope, context: EvalContext): FrontendAnswer {
    const json = this.answers(this.scopes.get(scope)).answer(context)
    // From the content: the same answer has the same ETag, so If-None-Match can only ever save resending it.
    return { json, etag: `"${Bun.hash(json).toString(36)}"` }
  }
}
