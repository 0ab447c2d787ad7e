/**
 * OFREP, the OpenFeature Remote Evaluation Protocol (open-feature/protocol service/openapi.yaml):
 * any OpenFeature SDK with an OFREP provider reads flags here. Evaluation is the one evaluator's
 * (features/evaluation: one compiled scope per token scope, shared with the frontend API); this
 * feature reads OFREP's context (ofrep.context.ts), makes OFREP's answers from the outcomes
 * (ofrep.answers.ts) and its errors' shapes (ofrep.errors.ts).
 */
import { t } from 'elysia'
import { AuthenticationRequired, NotFoundError } from '../../errors'
import { controllerBase } from '../../http/plugins'
import { callerAddress } from '../../http/request-log'
import { etagMatches } from '../../http/etag'
import { pathOf } from '../../http/routing'
import { COMMENT, frame } from '../../http/sse'
import { perCompiledScope, type CompiledScopes } from '../evaluation/compiled-scopes'
import type { Authorization, SdkScope } from '../tokens/auth'
import { ofrepAnswers } from './ofrep.answers'
import { contextKey, ofrepContext } from './ofrep.context'
import { encoder, type Bytes } from '../evaluation/answer-parts'
import type { OfrepChannels } from './ofrep.events'
import { ofrepModels } from './ofrep.model'

const TOKENS = { tokenType: ['frontend', 'client'], apiKeyHeader: true } as const

const noBody = (description: string) => t.Void({ description })
const OFREP_AUTH = {
  401: noBody('No token, or an unknown, expired or deleted one; no body'),
  403: noBody('The token is not a frontend or client token; no body'),
}

const TOKEN_TEXT =
  'A frontend or client token, as Authorization (with or without Bearer) or as X-API-Key, decides the flags (its projects) and the environment, as for the frontend API.'

const BULK_PATH = '/evaluate/flags'
const EVENTS_PATH = '/ofrep/v1/events'

/**
 * The end of the bulk answer, with its `eventStreams` member: the channel's endpoint as a path (the
 * provider puts it after its base URL's origin), taken from the request's own path so that
 * BASE_URI_PATH stays in it. Made once per channel: it is the same for every answer to the token.
 */
function bulkEnds() {
  const made = new Map<string, { path: string; end: Bytes }>()
  return (request: Request, channel: string): Bytes => {
    const path = pathOf(request.url)
    const kept = made.get(channel)
    if (kept?.path === path) return kept.end
    const base = path.endsWith(BULK_PATH) ? path.slice(0, -BULK_PATH.length - '/ofrep/v1'.length) : ''
    const end = encoder.encode(
      `],"eventStreams":${JSON.stringify([{ type: 'sse', endpoint: { requestUri: `${base}${EVENTS_PATH}?channel=${channel}` } }])}}`,
    )
    made.set(channel, { path, end })
    return end
  }
}

/**
 * What OFREP asks of the streaming feature for its event streams (StreamingService gives it;
 * services.ts hands it over): a Server-Sent Events stream of the token `tokenName` that is sent
 * `format.first` at once, then `format.notice(revision)` for each commit that changes what `scope`
 * serves; past a cap, or while the server stops, an AtCapacity error (503) instead.
 */
export interface NoticeStreams {
  openNotices(
    tokenName: string,
    scope: SdkScope,
    request: Request,
    address: string | null,
    format: { name: string; first: Uint8Array; notice: (revision: number) => Uint8Array },
  ): Response
}

/**
 * OFREP's change notification (ADR-0008, `refetchEvaluation`): the web provider refetches its bulk
 * evaluation, which answers 200 only if what the context sees changed (its ETag names the compiled
 * flags). It carries no flag, so the channel that receives it reveals only that something changed.
 * A comment first: the provider needs no first event, but the headers and a first byte go out at once.
 */
const REFETCH = {
  name: 'ofrep',
  first: COMMENT,
  notice: (revision: number) =>
    frame({ id: revision, data: JSON.stringify({ type: 'refetchEvaluation', etag: String(revision) }) }),
}

export function ofrepController(
  scopes: Pick<CompiledScopes, 'get'>,
  auth: Authorization,
  streams: NoticeStreams,
  channels: OfrepChannels,
) {
  const bulkEnd = bulkEnds()
  const answersOf = perCompiledScope(ofrepAnswers)
  return controllerBase(auth, ofrepModels)
    .post(
      '/ofrep/v1/evaluate/flags/:key',
      ({ request, params, body, sdkScope }) => {
        const context = ofrepContext(body.context, callerAddress(request))
        const answer = answersOf(scopes.get(sdkScope)).flag(params.key, context)
        if (answer === undefined) throw new NotFoundError(`No flag "${params.key}" in the token's projects`)
        return answer
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
      ({ request, body, sdkScope, caller }) => {
        const compiled = scopes.get(sdkScope)
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
        return answersOf(compiled).bulk(context, bulkEnd(request, channels.channelFor(caller.tokenName)), headers)
      },
      {
        auth: TOKENS,
        body: 'ofrepEvaluationRequest',
        response: {
          200: 'ofrepBulkEvaluationSuccess',
          304: noBody(
            'Not modified: If-None-Match holds the ETag of the last answer for this context, and no flag changed since; no body',
          ),
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
            '(a flag with random stickiness then keeps the draw the client has). The answer names an SSE endpoint in eventStreams (getOfrepEvents).',
        },
      },
    )
    .get(
      EVENTS_PATH,
      ({ query, request }) => {
        // The channel stands for the token (EventSource sends no header): none, an unknown one, or one whose token is gone, is 401.
        const holder = query.channel === undefined ? undefined : channels.holder(query.channel)
        if (holder === undefined)
          throw new AuthenticationRequired('No such event channel: ask the bulk evaluation again for the current one')
        return streams.openNotices(holder.tokenName, holder.scope, request, callerAddress(request), REFETCH)
      },
      {
        query: t.Object({
          channel: t.Optional(
            t.String({ description: 'The channel the bulk answer named in eventStreams; it stands for the token' }),
          ),
        }),
        response: {
          200: t.String({
            description:
              'text/event-stream: data {"type":"refetchEvaluation","etag":"<revision>"} for each change to the flags of the token; comments as heartbeats',
          }),
          400: 'ofrepBulkEvaluationFailure',
          401: noBody(
            'No channel, one that was not made by this service (or was altered), or its token was deleted, expired or changed; no body',
          ),
          500: 'ofrepGeneralError',
          503: 'ofrepBulkEvaluationFailure',
        },
        detail: {
          operationId: 'getOfrepEvents',
          summary: 'OFREP: Server-Sent Events telling web providers to refetch the bulk evaluation when a flag changes',
          tags: ['OFREP'],
          description:
            "The eventStreams endpoint of the bulk answer (OFREP ADR-0008). No token header (browsers' EventSource sends none): the channel, " +
            "given to the token by the bulk route, stands for it. Each commit that changes what the token's projects serve in its environment sends one refetchEvaluation event. " +
            'Past STREAMING_MAX_STREAMS streams, STREAMING_MAX_STREAMS_PER_TOKEN of its token or (for a frontend token) STREAMING_MAX_STREAMS_PER_ADDRESS from its address, ' +
            'or while the server stops, 503 GENERAL: the provider then polls. A channel is valid on every instance on the same data.',
        },
      },
    )
}
