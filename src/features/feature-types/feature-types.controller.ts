import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { flagTypeModels } from './feature-types.model'
import type { FlagTypesService } from './feature-types.service'

const tags = ['Feature Types']

export function flagTypesController(flagTypes: FlagTypesService, auth: Authorization) {
  return controllerBase(auth, flagTypeModels)
    .get('/api/admin/feature-types', () => ({ version: 1, types: flagTypes.list() }), {
      auth: 'NONE',
      response: { 200: 'featureTypesSchema', ...authErrors() },
      detail: {
        operationId: 'getAllFeatureTypes',
        summary: 'Get all feature types',
        tags,
        description:
          'The five flag types with their lifetimes: release and experiment 40 days, operational 7, kill-switch and permission none, until changed.',
      },
    })
    .put(
      '/api/admin/feature-types/:id/lifetime',
      ({ params, body, caller }) => flagTypes.setLifetime(params.id, body.lifetimeDays, caller),
      {
        auth: 'ADMIN',
        params: t.Object({
          id: t.String({ description: 'Flag type id, e.g. release (matched in lower case)', maxLength: 100 }),
        }),
        body: 'updateFeatureTypeLifetimeSchema',
        response: { 200: 'featureTypeSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'updateFeatureTypeLifetime',
          summary: 'Update feature type lifetime',
          tags,
          description:
            'Flags of the type are potentially stale once older than this many days; 0 or null: never. Flags are judged again at once (potentiallyStale on ' +
            'flags and lists). Records feature-type-updated when the lifetime changed (Unleash records it also when it did not).',
        },
      },
    )
}
