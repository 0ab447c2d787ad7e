import { SortOrderInput } from './strategy.model'
import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import { LIMITS } from '../limits'
import type { StrategiesService } from './strategies.service'
import type { Authorization } from '../tokens/auth'
import { flagModels } from './flags.model'
import { VARIANTS_EXAMPLE } from './flags.examples'
import { flagEnvironmentParams as environmentParams, strategyParams } from '../params'

const base = '/api/admin/projects/:projectId/features/:featureName/environments/:environment'
const tags = ['Strategies']

export function strategiesController(strategies: StrategiesService, auth: Authorization) {
  return controllerBase(auth, flagModels)
    .get(
      `${base}/strategies`,
      ({ params }) => strategies.list(params.projectId, params.featureName, params.environment),
      {
        auth: 'NONE',
        params: environmentParams,
        response: {
          200: t.Array(t.Ref('featureStrategySchema'), { description: 'Strategies by sortOrder' }),
          ...authErrors(404),
        },
        detail: { operationId: 'getFeatureStrategies', summary: "Get a flag's strategies in an environment", tags },
      },
    )
    .post(
      `${base}/strategies`,
      ({ params, body, caller }) =>
        strategies.add(params.projectId, params.featureName, params.environment, body, caller),
      {
        auth: 'CREATE_FEATURE_STRATEGY',
        params: environmentParams,
        body: 'createFeatureStrategySchema',
        response: { 200: 'featureStrategySchema', ...bodyErrors(404) },
        detail: {
          operationId: 'addFeatureStrategy',
          summary: 'Add a strategy',
          tags,
          description:
            'Constraint values are checked by operator: NUM_* numeric, DATE_* RFC 3339, SEMVER_* semantic versions; strategy variant weights follow the weight rules.',
        },
      },
    )
    .post(
      `${base}/strategies/set-sort-order`,
      async ({ params, body, caller }) => {
        await strategies.setSortOrder(params.projectId, params.featureName, params.environment, body, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_FEATURE_STRATEGY',
        params: environmentParams,
        body: SortOrderInput,
        response: { 200: t.Void({ description: 'Reordered' }), ...bodyErrors(404) },
        detail: {
          operationId: 'setStrategySortOrder',
          summary: 'Reorder strategies',
          tags,
          description:
            'Sets the sortOrder of the listed strategies of the flag in the environment, in one write (one strategy-updated event per strategy moved). An unknown strategy id is a 404 and nothing changes.',
        },
      },
    )
    .get(
      `${base}/strategies/:strategyId`,
      ({ params }) => strategies.get(params.projectId, params.featureName, params.environment, params.strategyId),
      {
        auth: 'NONE',
        params: strategyParams,
        response: { 200: 'featureStrategySchema', ...authErrors(404) },
        detail: { operationId: 'getFeatureStrategy', summary: 'Get a strategy', tags },
      },
    )
    .put(
      `${base}/strategies/:strategyId`,
      ({ params, body, caller }) =>
        strategies.update(params.projectId, params.featureName, params.environment, params.strategyId, body, caller),
      {
        auth: 'UPDATE_FEATURE_STRATEGY',
        params: strategyParams,
        body: 'createFeatureStrategySchema',
        response: { 200: 'featureStrategySchema', ...bodyErrors(404) },
        detail: { operationId: 'updateFeatureStrategy', summary: 'Replace a strategy', tags },
      },
    )
    .delete(
      `${base}/strategies/:strategyId`,
      async ({ params, caller }) => {
        await strategies.remove(params.projectId, params.featureName, params.environment, params.strategyId, caller)
        return noContent()
      },
      {
        auth: 'DELETE_FEATURE_STRATEGY',
        params: strategyParams,
        response: { 200: t.Void({ description: 'Removed' }), ...authErrors(400, 404) },
        detail: { operationId: 'deleteFeatureStrategy', summary: 'Remove a strategy', tags },
      },
    )
    .get(
      `${base}/variants`,
      ({ params }) => ({
        version: 1,
        variants: strategies.variants(params.projectId, params.featureName, params.environment),
      }),
      {
        auth: 'NONE',
        params: environmentParams,
        response: { 200: 'variantsSchema', ...authErrors(404) },
        detail: {
          operationId: 'getEnvironmentFeatureVariants',
          summary: "Get a flag's variants in an environment",
          tags: ['Variants'],
        },
      },
    )
    .put(
      `${base}/variants`,
      async ({ params, body, caller }) => ({
        version: 1,
        variants: await strategies.setVariants(params.projectId, params.featureName, params.environment, body, caller),
      }),
      {
        auth: 'UPDATE_FEATURE_VARIANTS',
        params: environmentParams,
        body: t.Array(t.Ref('variantSchema'), {
          maxItems: LIMITS.variantsPerFlagEnvironment.max,
          description: `The new variant list; at most ${LIMITS.variantsPerFlagEnvironment.max} (variantsPerFlagEnvironment)`,
          examples: [VARIANTS_EXAMPLE],
        }),
        response: { 200: 'variantsSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'overwriteEnvironmentFeatureVariants',
          summary: "Replace a flag's variants in an environment",
          tags: ['Variants'],
          description:
            'fix weights are kept, variable ones share what is left of 1000; names must be unique. Answers with the computed weights.',
        },
      },
    )
}
