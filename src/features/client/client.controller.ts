import { t } from 'elysia'
import { controllerBase } from '../../http/plugins'
import { etagMatches } from '../../http/etag'
import { authErrors } from '../../http/schemas'
import { featureParams } from '../params'
import type { Authorization } from '../tokens/auth'
import { clientModels } from './client.model'
import { scopeOf, type ClientFeaturesService } from './client.service'

const CLIENT = { tokenType: 'client' } as const

export function clientController(client: ClientFeaturesService, auth: Authorization) {
  return controllerBase(auth, clientModels)
    .get(
      '/api/client/features',
      ({ query, sdkScope, request }) => {
        const answer = client.features(scopeOf(sdkScope, query, request.headers.get('unleash-client-spec')))
        if (etagMatches(request.headers.get('if-none-match'), answer.etag))
          return new Response(null, { status: 304, headers: { etag: answer.etag } })
        return new Response(answer.bytes, { headers: { 'content-type': 'application/json', etag: answer.etag } })
      },
      {
        auth: CLIENT,
        query: 'clientFeaturesQuerySchema',
        response: {
          200: 'clientFeaturesSchema',
          304: t.Void({ description: 'Not modified: If-None-Match holds the current ETag; no body' }),
          ...authErrors(400),
        },
        detail: {
          operationId: 'getAllClientFeatures',
          summary: 'Get the flags of the token scope, for server-side SDKs',
          tags: ['Client'],
          description:
            "The flags of the token's project(s) in its environment, off ones included; archived flags and disabled strategies are left out. A token for " +
            'all projects may be narrowed with ?project= (repeatable); a ?project= outside a project token is ignored. The ETag changes in the same commit ' +
            'as a change to what the scope serves and on no other write; If-None-Match with it (weak W/ form, or in a list) answers 304 with no body.',
        },
      },
    )
    .get(
      '/api/client/features/:featureName',
      ({ params, sdkScope, request }) =>
        client.feature(sdkScope, params.featureName, request.headers.get('unleash-client-spec')),
      {
        auth: CLIENT,
        params: featureParams,
        response: { 200: 'clientFeatureSchema', ...authErrors(404) },
        detail: {
          operationId: 'getClientFeature',
          summary: 'Get one flag of the token scope, for server-side SDKs',
          tags: ['Client'],
          description:
            "The flag as in getAllClientFeatures; 404 for an unknown or archived flag and for one outside the token's projects.",
        },
      },
    )
}
