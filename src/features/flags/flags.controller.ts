import { t } from 'elysia'
import { authErrors, bodyErrors, errors, PATTERN_RULE } from '../../http/schemas'
import { controllerBase, jsonResponse, noContent } from '../../http/plugins'
import { repeatable } from '../../http/query'
import type { FlagsService } from './flags.service'
import type { Authorization } from '../tokens/auth'
import { flagModels } from './flags.model'
import {
  featureParams,
  flagEnvironmentParams as environmentParams,
  flagParams,
  projectEnvironmentParams as bulkParams,
  projectParams,
} from '../params'
import { ListCache } from './list-cache'
import { parseCount, parseFilter, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX } from '../events/event-query'

const tags = ['Features']

export function flagsController(flags: FlagsService, auth: Authorization) {
  const lists = new ListCache(projectId => flags.listVersion(projectId))
  return controllerBase(auth, flagModels)
    .get(
      '/api/admin/projects/:projectId/features',
      ({ params, query }) => {
        const list = () => ({ version: 2, features: flags.listProject(params.projectId, query) })
        const filtered = (query.tag !== undefined && query.tag.length > 0) || query.namePrefix !== undefined
        return jsonResponse(
          filtered
            ? JSON.stringify(list())
            : lists.json(params.projectId, list, () => flags.listValidUntil(params.projectId)),
        )
      },
      {
        auth: { permission: 'NONE', outOfScope: () => ({ version: 2, features: [] }) },
        params: projectParams,
        query: t.Object({
          tag: t.Optional(
            repeatable(
              t.String({
                maxLength: 200,
                pattern: '^[^:]+:',
                [PATTERN_RULE]: 'a tag as type:value (its type, a colon, then its value)',
                description: 'type:value',
              }),
              { maxItems: 100, description: 'Only flags with any of these tags (type:value, repeatable)' },
            ),
          ),
          namePrefix: t.Optional(
            t.String({ maxLength: 100, description: 'Only flags whose name starts with this, ignoring case' }),
          ),
        }),
        response: { 200: 'featuresSchema', ...authErrors(400) },
        detail: {
          operationId: 'getFeatures',
          summary: 'Get all features in a project',
          tags,
          description:
            'Live (not archived) flags of the project, by createdAt then name. An unknown project, or one the token cannot see, gives an empty list. ' +
            'A malformed tag (not type:value), a namePrefix given twice or an unknown parameter is a 400 naming it.',
        },
      },
    )
    .get(
      '/api/admin/search/features',
      ({ query, caller }) =>
        flags.search(caller, {
          project: query.project === undefined ? undefined : parseFilter(query.project, 'project'),
          query: query.query,
          sortBy: query.sortBy,
          sortOrder: query.sortOrder,
          offset: parseCount(query.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
          limit: parseCount(query.limit, 'limit', SEARCH_LIMIT_DEFAULT, 1, SEARCH_LIMIT_MAX),
        }),
      {
        auth: 'NONE',
        query: 'featureSearchQuerySchema',
        response: { 200: 'searchFeaturesSchema', ...authErrors(400) },
        detail: {
          operationId: 'searchFeatures',
          summary: 'Search flags, a page at a time',
          tags,
          description:
            "Unleash's feature search: live flags of the projects the token sees (narrowed by project), whose name or description contains query " +
            '(any case), sorted by sortBy and sortOrder, then cut to limit after offset; total counts all matches. Each flag is as getFeatures ' +
            'lists it. Made for tables of thousands of flags: a page costs the views of its own flags only. A malformed value, an unknown ' +
            'sortBy or a limit outside 1–1000 is a 400 naming it.',
        },
      },
    )
    .get('/api/admin/features', ({ query, caller }) => ({ version: 1, features: flags.listAll(caller, query) }), {
      auth: 'NONE',
      query: t.Object({
        tag: t.Optional(
          repeatable(
            t.String({
              maxLength: 200,
              pattern: '^[^:]+:',
              [PATTERN_RULE]: 'a tag as type:value (its type, a colon, then its value)',
              description: 'type:value',
            }),
            { maxItems: 100, description: 'Only flags with any of these tags (type:value, repeatable)' },
          ),
        ),
        project: t.Optional(
          repeatable(t.String({ maxLength: 100, description: 'Project id' }), {
            maxItems: 100,
            description: 'Only flags of any of these projects (repeatable)',
          }),
        ),
        namePrefix: t.Optional(
          t.String({ maxLength: 100, description: 'Only flags whose name starts with this, ignoring case' }),
        ),
      }),
      response: { 200: 'featuresSchema', ...authErrors(400) },
      detail: {
        operationId: 'getAllToggles',
        summary: 'Get all feature flags (deprecated)',
        tags,
        deprecated: true,
        description:
          'Deprecated, as in Unleash: use getFeatures per project. Live flags of every project the token sees, by createdAt then name, with the filters of getFeatures ' +
          'and project (repeatable); the filters are ANDed, the values of one filter ORed.',
      },
    })
    .post(
      '/api/admin/projects/:projectId/features',
      async ({ params, body, caller, set }) => {
        set.status = 201
        return flags.create(params.projectId, body, caller)
      },
      {
        auth: 'CREATE_FEATURE',
        params: projectParams,
        body: 'createFeatureSchema',
        response: { 201: 'featureSchema', ...bodyErrors(404, 409) },
        detail: {
          operationId: 'createFeature',
          summary: 'Create a flag',
          tags,
          description:
            'Name rules as validateFeature; 409 when the name is taken (checked before an unknown project, 404).',
        },
      },
    )
    .get(
      '/api/admin/projects/:projectId/features/:featureName',
      ({ params }) => flags.get(params.projectId, params.featureName),
      {
        auth: 'NONE',
        params: flagParams,
        response: { 200: 'featureSchema', ...authErrors(404) },
        detail: {
          operationId: 'getFeature',
          summary: 'Get a flag',
          tags,
          description: "The flag with each environment's strategies and variants; archived flags too.",
        },
      },
    )
    .get(
      '/api/admin/projects/:projectId/features/:featureName/environments/:environment',
      ({ params }) => flags.environment(params.projectId, params.featureName, params.environment),
      {
        auth: 'NONE',
        params: environmentParams,
        response: { 200: 'featureEnvironmentSchema', ...authErrors(404) },
        detail: {
          operationId: 'getFeatureEnvironment',
          summary: 'Get a feature environment',
          tags,
          description:
            "The flag in one environment, with its strategies and variants, as getFeature shows it; archived flags too. 404 for an environment the flag's project does not have.",
        },
      },
    )
    .put(
      '/api/admin/projects/:projectId/features/:featureName',
      ({ params, body, caller }) => flags.update(params.projectId, params.featureName, body, caller),
      {
        auth: 'UPDATE_FEATURE',
        params: flagParams,
        body: 'updateFeatureSchema',
        response: { 200: 'featureSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'updateFeature',
          summary: 'Update a flag',
          tags,
          description: 'Records the same events as patchFeature.',
        },
      },
    )
    .patch(
      '/api/admin/projects/:projectId/features/:featureName',
      ({ params, body, caller }) => flags.patch(params.projectId, params.featureName, body, caller),
      {
        auth: 'UPDATE_FEATURE',
        params: flagParams,
        body: 'patchesSchema',
        response: { 200: 'featureSchema', ...bodyErrors(404, 409) },
        detail: {
          operationId: 'patchFeature',
          summary: 'Modify a feature flag',
          tags,
          description:
            'JSON Patch over name, description, type, project, stale, impressionData, archived and createdAt; name, project and createdAt are read-only. ' +
            'All operations apply or none does. Order of errors: unknown flag 404; any /variants path 403; flag of another project 404; malformed or ' +
            'unresolvable operations or wrong value types 400; failed test 409. /archived true archives, false revives.',
        },
      },
    )
    .delete(
      '/api/admin/projects/:projectId/features/:featureName',
      async ({ params, caller }) => {
        await flags.archive(params.projectId, params.featureName, caller)
        return noContent(202)
      },
      {
        auth: 'DELETE_FEATURE',
        params: flagParams,
        response: { 202: t.Void({ description: 'Archived' }), ...authErrors(400, 404) },
        detail: {
          operationId: 'archiveFeature',
          summary: 'Archive a flag',
          tags,
          description: 'A parent of live flags cannot be archived (400).',
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/revive',
      async ({ params, body, caller }) => {
        await flags.revive(params.projectId, body.features, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE',
        params: projectParams,
        body: 'featureNamesSchema',
        response: { 200: t.Void({ description: 'Revived' }), ...bodyErrors(404) },
        detail: {
          operationId: 'reviveFeatures',
          summary: 'Revive archived flags',
          tags,
          description: 'All or nothing; revived flags return to the initial lifecycle stage.',
        },
      },
    )
    .get('/api/admin/archive/features', ({ caller }) => ({ version: 2, features: flags.listArchived(caller) }), {
      auth: 'NONE',
      response: { 200: 'featuresSchema', ...authErrors() },
      detail: { operationId: 'getArchivedFeatures', summary: 'Get archived flags', tags: ['Archive'] },
    })
    .delete(
      '/api/admin/archive/:featureName',
      async ({ params, caller }) => {
        await flags.deleteArchived(params.featureName, caller)
        return noContent()
      },
      {
        auth: 'DELETE_FEATURE',
        params: featureParams,
        response: { 200: t.Void({ description: 'Deleted' }), ...authErrors(400, 404) },
        detail: {
          operationId: 'deleteFeature',
          summary: 'Delete an archived flag',
          tags: ['Archive'],
          description: 'Only archived flags; frees the name.',
        },
      },
    )
    .post(
      '/api/admin/features/validate',
      async ({ body, caller }) => {
        await flags.validateName(body.name, body.projectId, caller)
        return noContent()
      },
      {
        auth: 'NONE',
        body: 'validateFeatureSchema',
        response: {
          200: t.Void({ description: 'The name is valid and free' }),
          ...errors(400, 401, 403, 409, 413, 415),
        },
        detail: {
          operationId: 'validateFeature',
          summary: 'Validate a feature flag name',
          tags,
          description:
            'Name rules: 1 to 100 characters, URL-safe, not "." or ".." (400). Taken by any flag, archived included (409). Then, with a projectId whose ' +
            'project has a naming pattern, the name must match it anchored at both ends (400). An unknown projectId has no pattern to check.',
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/features/:featureName/environments/:environment/on',
      async ({ params, caller }) => {
        await flags.setEnabled(params.projectId, params.featureName, params.environment, true, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: environmentParams,
        response: { 200: t.Void({ description: 'On' }), ...authErrors(400, 404) },
        detail: {
          operationId: 'toggleFeatureEnvironmentOn',
          summary: 'Enable a flag in an environment',
          tags,
          description: 'With no enabled strategy, a 100 % flexibleRollout is added.',
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/features/:featureName/environments/:environment/off',
      async ({ params, caller }) => {
        await flags.setEnabled(params.projectId, params.featureName, params.environment, false, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: environmentParams,
        response: { 200: t.Void({ description: 'Off' }), ...authErrors(400, 404) },
        detail: { operationId: 'toggleFeatureEnvironmentOff', summary: 'Disable a flag in an environment', tags },
      },
    )
    .post(
      '/api/admin/projects/:projectId/bulk_features/environments/:environment/on',
      async ({ params, body, caller }) => {
        await flags.setEnabledBulk(params.projectId, params.environment, body.features, true, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: bulkParams,
        body: 'featureNamesSchema',
        response: { 200: t.Void({ description: 'All on' }), ...bodyErrors(404) },
        detail: {
          operationId: 'bulkToggleFeaturesEnvironmentOn',
          summary: 'Bulk enable a list of features',
          tags,
          description: 'The mirror of bulkToggleFeaturesEnvironmentOff.',
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/bulk_features/environments/:environment/off',
      async ({ params, body, caller }) => {
        await flags.setEnabledBulk(params.projectId, params.environment, body.features, false, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE_ENVIRONMENT',
        params: bulkParams,
        body: 'featureNamesSchema',
        response: { 200: t.Void({ description: 'All off' }), ...bodyErrors(404) },
        detail: {
          operationId: 'bulkToggleFeaturesEnvironmentOff',
          summary: 'Bulk disable a list of features',
          tags,
          description:
            'All or nothing: an unknown flag or one of another project (404), an archived flag (400), or a flag lacking the environment (404) answers ' +
            'for the first such name in request order and nothing changes. Duplicates count once; strategies are untouched; one event per flag that was on.',
        },
      },
    )
}
