import { t } from 'elysia'
import { controllerBase, noContent } from '../../http/plugins'
import { callerAddress } from '../../http/request-log'
import { authErrors, bodyErrors } from '../../http/schemas'
import { featureParams, flagParams, projectParams } from '../params'
import type { Authorization } from '../tokens/auth'
import { metricsModels } from './metrics.model'
import type { MetricsService } from './metrics.service'

const CLIENT = { tokenType: 'client' } as const
const FRONTEND = { tokenType: 'frontend' } as const

const APPLICATIONS = '/api/admin/metrics/applications'

/** The BASE_URI_PATH the request came under (what precedes the route), for the links an answer gives. */
function basePathOf(request: Request): string {
  const path = new URL(request.url).pathname
  return path.slice(0, path.lastIndexOf(`${APPLICATIONS}/`))
}

const appParams = t.Object({
  appName: t.String({ minLength: 1, maxLength: 255, description: 'Name of the application' }),
})

const COUNTED =
  "Counted per flag, environment (the token's), application and hour, in memory; committed in batches (METRICS_FLUSH_MS), never one write or event per request. " +
  'Flags unknown or outside the token scope are dropped silently, as in Unleash; counts must be whole numbers ≥ 0 (400 naming the field otherwise).'
const REGISTERED =
  "Records the application and the instance (per environment: the token's; with the caller's address), committed in batches with the metrics."

export function metricsController(metrics: MetricsService, auth: Authorization) {
  return controllerBase(auth, metricsModels)
    .post(
      '/api/client/register',
      ({ body, sdkScope, request }) => {
        metrics.register(sdkScope, body, callerAddress(request))
        return noContent(202)
      },
      {
        auth: CLIENT,
        body: 'clientApplicationSchema',
        response: { 202: t.Void({ description: 'Accepted; no body' }), ...bodyErrors() },
        detail: {
          operationId: 'registerClientApplication',
          summary: 'An SDK announces itself',
          tags: ['Client'],
          description: `appName is required. ${REGISTERED}`,
        },
      },
    )
    .post(
      '/api/client/metrics',
      ({ body, sdkScope, request }) => {
        metrics.report(sdkScope, body, callerAddress(request))
        return noContent(202)
      },
      {
        auth: CLIENT,
        body: 'clientMetricsSchema',
        response: { 202: t.Void({ description: 'Accepted; no body' }), ...bodyErrors() },
        detail: {
          operationId: 'registerClientMetrics',
          summary: 'An SDK reports how often flags were evaluated',
          tags: ['Client'],
          description: `appName is required. ${COUNTED}`,
        },
      },
    )
    .post(
      '/api/frontend/client/register',
      ({ body, sdkScope, request }) => {
        metrics.register(sdkScope, body, callerAddress(request))
        return noContent(200)
      },
      {
        auth: FRONTEND,
        body: 'clientApplicationSchema',
        response: { 200: t.Void({ description: 'Recorded; no body' }), ...bodyErrors() },
        detail: {
          operationId: 'registerFrontendClient',
          summary: 'A frontend SDK announces itself',
          tags: ['Frontend API'],
          description: `For frontend tokens. ${REGISTERED}`,
        },
      },
    )
    .post(
      '/api/frontend/client/metrics',
      ({ body, sdkScope, request }) => {
        metrics.report(sdkScope, body, callerAddress(request))
        return noContent(200)
      },
      {
        auth: FRONTEND,
        body: 'clientMetricsSchema',
        response: { 200: t.Void({ description: 'Counted; no body' }), ...bodyErrors() },
        detail: {
          operationId: 'registerFrontendMetrics',
          summary: 'A frontend SDK reports how often flags were evaluated',
          tags: ['Frontend API'],
          description: `For frontend tokens. ${COUNTED}`,
        },
      },
    )
    .get('/api/admin/client-metrics/features/:featureName', ({ params }) => metrics.featureUsage(params.featureName), {
      auth: 'NONE',
      params: featureParams,
      response: { 200: 'featureUsageSchema', ...authErrors(404) },
      detail: {
        operationId: 'getFeatureUsageSummary',
        summary: 'Last hour of usage and the applications that reported the flag',
        tags: ['Metrics'],
        description:
          'Counts of the hours that started in the last 60 minutes (yes, no and variants) per environment and application, and the applications that ' +
          'reported the flag in the last 24 hours. Counts are exact at once; 404 for an unknown flag and for one of a project the token cannot see.',
      },
    })
    .get(
      '/api/admin/client-metrics/features/:featureName/raw',
      ({ params, query }) => metrics.featureHistory(params.featureName, query.hoursBack),
      {
        auth: 'NONE',
        params: featureParams,
        query: t.Object({
          hoursBack: t.Optional(t.String({ description: 'Hours of history, 1 to 48 (default 1)', examples: ['48'] })),
        }),
        response: { 200: 'featureMetricsSchema', ...authErrors(400, 404) },
        detail: {
          operationId: 'getRawFeatureMetrics',
          summary: 'Hourly usage of a flag, per environment and application, up to 48 hours back',
          tags: ['Metrics'],
          description:
            'Counts (yes, no, variants) of each hour that started in the last hoursBack hours, per environment and application; the ' +
            'current hour is counted as reports arrive. Kept for 48 hours, within the caps of docs/limits.md (usage history). ' +
            '400 for hoursBack outside 1 to 48; 404 for an unknown flag and for one of a project the token cannot see.',
        },
      },
    )
    .get(
      '/api/admin/projects/:projectId/features/:featureName/lifecycle',
      ({ params }) => metrics.lifecycle(params.projectId, params.featureName),
      {
        auth: 'NONE',
        params: flagParams,
        response: { 200: 'featureLifecycleSchema', ...authErrors(404) },
        detail: {
          operationId: 'getFeatureLifecycle',
          summary: 'The lifecycle stages a flag went through',
          tags: ['Lifecycle'],
          description:
            'initial when made (or revived); pre-live at the first SDK metrics anywhere, or when enabled in an environment; live at the first ' +
            'metrics from a production-type environment where it is on, or when enabled in one; completed (with status) by lifecycle/complete; ' +
            'archived. Each with when it was entered; the last is the current stage. 404 for a flag not in the project.',
        },
      },
    )
    .get('/api/admin/projects/:projectId/status', ({ params }) => metrics.projectStatus(params.projectId), {
      auth: 'NONE',
      params: projectParams,
      response: { 200: 'projectStatusSchema', ...authErrors(404) },
      detail: {
        operationId: 'getProjectStatus',
        summary: "A project's flags by lifecycle stage, and its stale and potentially stale flags",
        tags: ['Projects'],
        description:
          "Unleash's lifecycleSummary and staleFlags, with the first flags' names of each beside the counts, and the potentially stale ones " +
          "(older than their type's expected lifetime): what the console's overview shows, without the project's flag list.",
      },
    })
    .get('/api/admin/lifecycle/count', ({ caller }) => metrics.lifecycleCount(caller), {
      auth: 'NONE',
      response: { 200: 'featureLifecycleCountSchema', ...authErrors() },
      detail: {
        operationId: 'getFeatureLifecycleCount',
        summary: 'How many flags are in each lifecycle stage',
        tags: ['Lifecycle'],
        description: "Archived flags included; a token limited to some projects counts its projects' flags only.",
      },
    })
    .get('/api/admin/metrics/applications', ({ caller }) => metrics.applications(caller), {
      auth: 'NONE',
      response: { 200: 'applicationsSchema', ...authErrors() },
      detail: {
        operationId: 'getApplications',
        summary: 'Applications that registered or sent metrics',
        tags: ['Metrics'],
        description:
          "By name. A token limited to some projects sees the applications used with its projects' or all-projects tokens, and only that usage.",
      },
    })
    .get(
      `${APPLICATIONS}/:appName`,
      ({ params, caller, request }) => metrics.application(params.appName, caller, basePathOf(request)),
      {
        auth: 'NONE',
        params: appParams,
        response: { 200: 'applicationSchema', ...authErrors(404) },
        detail: {
          operationId: 'getApplication',
          summary: 'An application with its instances and the flags it reported',
          tags: ['Metrics'],
          description:
            'Instances seen in the last 48 hours; flags reported in the last 24 hours (those of projects the token cannot see are left out). 404 for an unknown application.',
        },
      },
    )
}
