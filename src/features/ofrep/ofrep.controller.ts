/**
 * OFREP, the OpenFeature Remote Evaluation Protocol (open-feature/protocol service/openapi.yaml):
 * any OpenFeature SDK with an OFREP provider reads flags here. Evaluation is the frontend API's own
 * (one compiled scope per token scope, frontend/evaluation.ts); only the context's form and the
 * answer's text differ. Errors take OFREP's shapes in ofrep.errors.ts.
 */
import { t } from 'elysia'
import { NotFoundError } from '../../errors'
import { controllerBase } from '../../http/plugins'
import { callerAddress } from '../../http/request-log'
import { etagMatches } from '../client/client.service'
import type { FrontendService } from '../frontend/frontend.service'
import type { Authorization } from '../tokens/auth'
import { contextKey, ofrepContext } from './ofrep.context'
import { ofrepModels } from './ofrep.model'

const TOKENS = { tokenType: ['frontend', 'client'], apiKeyHeader: true } as const

const noBody = (description: string) => t.Void({ description })
const OFREP_AUTH = { 401: noBody('No token, or an unknown, expired or deleted one; no body'), 403: noBody('The token is not a frontend or client token; no body') }

const TOKEN_TEXT =
  'A frontend or client token, as Authorization (with or without Bearer) or as X-API-Key, decides the flags (its projects) and the environment, as for the frontend API.'

const json = (bytes: Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) => new Response(bytes, { headers: { ...headers, 'content-type': 'application/json' } })

export function ofrepController(frontend: FrontendService, auth: Authorization) {
  return controllerBase(auth, ofrepModels)
    .post(
      '/ofrep/v1/evaluate/flags/:key',
      ({ request, params, body, sdkScope }) => {
        const context = ofrepContext(body.context, callerAddress(request))
        const entry = frontend.compiled(sdkScope).ofrepFlag(params.key, context)
        if (entry === undefined) throw new NotFoundError(`No flag "${params.key}" in the token's projects`)
        return json(entry)
      },
      {
        auth: TOKENS,
        params: t.Object({ key: t.String({ description: 'Flag name' }) }),
        body: 'ofrepEvaluationRequest',
        response: {
          200: 'ofrepEvaluationSuccess',
          400: 'ofrepEvaluationFailure',
          ...OFREP_AUTH,
          404: 'ofrepEvaluationFailure',
          413: 'ofrepEvaluationFailure',
          415: 'ofrepEvaluationFailure',
          500: 'ofrepGeneralError',
        },
        detail: {
          operationId: 'ofrepEvaluateFlag',
          summary: 'OFREP: one flag evaluated for a context, for server-side OpenFeature providers',
          tags: ['OFREP'],
          description:
            `Evaluates one flag for the body's context with the frontend API's rules and answers its value, variant and reason (docs/ofrep.md). ${TOKEN_TEXT} ` +
            'A flag that is archived, in another project or does not exist is 404 FLAG_NOT_FOUND.',
        },
      },
    )
    .post(
      '/ofrep/v1/evaluate/flags',
      ({ request, body, sdkScope }) => {
        const compiled = frontend.compiled(sdkScope)
        let address: string | null | undefined
        const addressOf = () => (address === undefined ? (address = callerAddress(request)) : address)
        // The ETag stands for the compiled flags (a new one for each change), where now is among
        // their DATE constraints' times, and the context as sent: a 304 needs no evaluation, nor
        // reading the context (an ETag is only ever given for a context that was read).
        const now = Date.now()
        const etag = `"${compiled.stamp(now)}.${Bun.hash(contextKey(body.context, compiled.readsAddress, addressOf)).toString(36)}"`
        const headers = { etag, 'cache-control': 'no-cache' }
        if (etagMatches(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers })
        const context = ofrepContext(body.context, addressOf())
        context.now = now
        return json(compiled.ofrepFlags(context), headers)
      },
      {
        auth: TOKENS,
        body: 'ofrepEvaluationRequest',
        response: {
          200: 'ofrepBulkEvaluationSuccess',
          304: noBody('Not modified: If-None-Match holds the ETag of the last answer for this context, and no flag changed since; no body'),
          400: 'ofrepBulkEvaluationFailure',
          ...OFREP_AUTH,
          413: 'ofrepBulkEvaluationFailure',
          415: 'ofrepBulkEvaluationFailure',
          500: 'ofrepGeneralError',
        },
        detail: {
          operationId: 'ofrepEvaluateFlags',
          summary: 'OFREP: every flag evaluated for a context, for client-side (web, mobile) OpenFeature providers',
          tags: ['OFREP'],
          description:
            `Evaluates every flag of the token's projects for the body's context, on or off, with the frontend API's rules (docs/ofrep.md). ${TOKEN_TEXT} ` +
            'The answer carries an ETag made from the compiled flags and the context; If-None-Match with it answers 304 without evaluating while both are unchanged ' +
            '(a flag with random stickiness then keeps the draw the client has).',
        },
      },
    )
}
