import { t } from 'elysia'
import { controllerBase } from '../../http/plugins'
import { callerAddress } from '../../http/request-log'
import { authErrors, bodyErrors } from '../../http/schemas'
import { etagMatches } from '../../http/etag'
import { contextFromBody, contextFromQuery } from '../evaluation/context'
import type { EvalContext } from '../evaluation/scope'
import type { Authorization } from '../tokens/auth'
import { frontendModels } from './frontend.model'
import type { FrontendService } from './frontend.service'

/** The frontend API's paths (browsers call them from other origins: app.ts gives them CORS). */
export const FRONTEND_PREFIX = '/api/frontend'

const FRONTEND = { tokenType: 'frontend' } as const

/** Browsers must ask again each time (the answer depends on the context), but may revalidate with the ETag. */
const CACHE_CONTROL = 'no-cache'

const notModified = t.Void({ description: 'Not modified: If-None-Match holds the ETag of this very answer; no body' })

const DESCRIPTION =
  "Evaluates every flag of the token's project(s) in its environment for the context and lists the enabled ones, with the variant chosen " +
  "for the context (the official SDK's rules: strategies, constraints, segments, variants, dependencies). Fields other than the SDK's own " +
  "(userId, sessionId, remoteAddress, appName, environment, currentTime) are read as properties; remoteAddress defaults to the caller's " +
  'address and sessionId to a random value. The ETag is made from the answer, so If-None-Match answers 304 only when the answer is the same.'

export function frontendController(frontend: FrontendService, auth: Authorization) {
  const answer = (
    request: Request,
    scope: { projects: readonly string[]; environment: string },
    context: EvalContext,
  ) => {
    const { json, etag } = frontend.evaluate(scope, context)
    const headers = { etag, 'cache-control': CACHE_CONTROL }
    if (etagMatches(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers })
    return new Response(json, { headers: { ...headers, 'content-type': 'application/json' } })
  }
  return controllerBase(auth, frontendModels)
    .get(
      '/api/frontend',
      ({ request, sdkScope }) => answer(request, sdkScope, contextFromQuery(request.url, callerAddress(request))),
      {
        auth: FRONTEND,
        response: { 200: 'frontendApiFeaturesSchema', 304: notModified, ...authErrors(400) },
        detail: {
          operationId: 'getFrontendFeatures',
          summary: 'The flags enabled for a context (query string), for browser and mobile SDKs',
          tags: ['Frontend API'],
          description: `${DESCRIPTION} The context is the query string: ?userId=…&sessionId=…&properties[plan]=premium&<any field>=… (each given once).`,
        },
      },
    )
    .post(
      '/api/frontend',
      ({ request, sdkScope, body }) => answer(request, sdkScope, contextFromBody(body, callerAddress(request))),
      {
        auth: FRONTEND,
        body: 'frontendContextBodySchema',
        response: { 200: 'frontendApiFeaturesSchema', 304: notModified, ...bodyErrors() },
        detail: {
          operationId: 'getFrontendApiFeaturesWithContext',
          summary: 'The flags enabled for a context (body), for browser and mobile SDKs',
          tags: ['Frontend API'],
          description: `${DESCRIPTION} The context is the body's context object.`,
        },
      },
    )
}
