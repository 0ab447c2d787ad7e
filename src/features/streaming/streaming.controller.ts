import { t } from 'elysia'
import { controllerBase } from '../../http/plugins'
import { authErrors } from '../../http/schemas'
import { scopeOf } from '../client/client.service'
import type { Authorization } from '../tokens/auth'
import { streamingModels } from './streaming.model'
import type { LiveChannel } from './live'
import type { StreamingService } from './streaming.service'

const CLIENT = { tokenType: 'client' } as const
/** Delta clients read segments by id, whatever specification version they name. */
const DELTA_SPEC = '5.2.0'

export function streamingController(streaming: StreamingService, live: LiveChannel, auth: Authorization) {
  return controllerBase(auth, streamingModels)
    .get('/api/admin/live', ({ caller, request }) => live.open(caller, request), {
      auth: 'NONE',
      response: {
        200: t.String({
          description:
            'text/event-stream: `changed` (id: the event id; data: {"type","project","featureName","environment"}, null where none) per ' +
            'event the caller may see; `metrics` (data: {"featureName","project"}) when SDK metrics changed a flag\'s usage or lifecycle, ' +
            'at most once per flag every 3 s; comments as heartbeats. It starts with `ready` (id: the last event id; data: {"lastEventId"}); ' +
            'opened with Last-Event-ID (or ?lastEventId=), first the `changed` messages missed since, or `reload` (same data) when that ' +
            'is more than 1,000 events back: read everything again',
        }),
        ...authErrors(503),
      },
      detail: {
        operationId: 'streamAdminChanges',
        summary: 'Stream what changes, for the console (Server-Sent Events)',
        tags: ['Events'],
        description:
          'For an admin token or a signed-in session; SDK tokens are refused. Announces every committed change (of this instance or of ' +
          'another on the same database) that the caller could find with the event search: a token limited to some projects hears of ' +
          "those projects only. Says what changed, not the new state: read that through the API (and again after a reconnect). The stream ends when the caller's " +
          'credential stops holding as it did (checked every STREAMING_HEARTBEAT_MS). Counted with the SDK streams (STREAMING_MAX_STREAMS, ' +
          'STREAMING_MAX_STREAMS_PER_TOKEN, a signed-in user counting as one token; STREAMING_MAX_UNSENT_BYTES); past a cap, 503: poll instead.',
      },
    })
    .get(
      '/api/client/streaming',
      ({ query, sdkScope, caller, request }) =>
        streaming.open(caller.tokenName, scopeOf(sdkScope, query, DELTA_SPEC), request),
      {
        auth: CLIENT,
        query: 'clientStreamQuerySchema',
        response: {
          200: t.String({
            description:
              'text/event-stream: `unleash-connected` (data: {"events":[hydration]}, or the changes since Last-Event-ID), then `unleash-updated` ' +
              '(data: {"events":[…]}) per change, each with the revision as SSE id; comments as heartbeats; `fetch-mode` (data: polling) before ' +
              'the server ends a stream it cannot keep',
          }),
          ...authErrors(400),
        },
        detail: {
          operationId: 'streamClientFeatures',
          summary: 'Stream changes to the flags of the token scope (Server-Sent Events), for server-side SDKs',
          tags: ['Client'],
          description:
            'What unleash-client reads with experimentalMode streaming. The scope is as in getAllClientFeatures. A Last-Event-ID the server ' +
            'still holds the changes since resumes without a hydration. The stream ends when its token is deleted or expires (at the expiry), and is ' +
            'reset when its client falls STREAMING_MAX_UNSENT_BYTES behind (the SDK resumes from its last event id); past STREAMING_MAX_STREAMS ' +
            'streams or STREAMING_MAX_STREAMS_PER_TOKEN of its token, and when the server stops, it says fetch-mode polling first.',
        },
      },
    )
    .get(
      '/api/client/delta',
      ({ query, sdkScope, request }) => {
        const answer = streaming.delta(scopeOf(sdkScope, query, DELTA_SPEC), request.headers.get('if-none-match'))
        if (answer.status === 304) return new Response(null, { status: 304, headers: { etag: answer.etag } })
        return new Response(answer.body, { headers: { 'content-type': 'application/json', etag: answer.etag } })
      },
      {
        auth: CLIENT,
        query: 'clientStreamQuerySchema',
        response: {
          200: 'clientDeltaSchema',
          304: t.Void({ description: 'Nothing the scope serves changed since If-None-Match; no body' }),
          ...authErrors(400),
        },
        detail: {
          operationId: 'getClientDelta',
          summary: 'Get the changes to the flags of the token scope since a revision, for server-side SDKs',
          tags: ['Client'],
          description:
            'What unleash-client polls with experimentalMode polling and format delta. The ETag is the revision; If-None-Match naming one whose ' +
            'changes the server still holds answers those changes (304 when none is in scope), anything else a hydration.',
        },
      },
    )
}
