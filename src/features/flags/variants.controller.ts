import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { flagEnvironmentParams, flagParams } from '../params'
import { bulkModels, VariantListInput } from './bulk.model'
import { flagModels } from './flags.model'
import type { VariantsService } from './variants.service'

const tags = ['Variants']
const flagPath = '/api/admin/projects/:projectId/features/:featureName'
const WEIGHTS =
  'fix weights are kept, variable ones share what is left of 1000; names must be unique. Answers with the computed weights.'
const PATCHING =
  'The operations (add, remove, replace, copy, move, test; paths such as /0, /0/weight or /- to add at the end) apply to a copy of the list, and the result is checked ' +
  'as a whole as a PUT body would be: all apply or none does. Unknown flag or environment 404; malformed operations or an invalid result 400; failed test 409.'
const SOURCE = 'the first production-type environment of the flag, else its first environment'

export function variantsController(variants: VariantsService, auth: Authorization) {
  return controllerBase(auth, { ...flagModels, ...bulkModels })
    .patch(
      `${flagPath}/environments/:environment/variants`,
      async ({ params, body, caller }) => ({
        version: 1,
        variants: await variants.patchEnvironment(
          params.projectId,
          params.featureName,
          params.environment,
          body,
          caller,
        ),
      }),
      {
        auth: 'UPDATE_FEATURE_VARIANTS',
        params: flagEnvironmentParams,
        body: 'variantPatchesSchema',
        response: { 200: 'variantsSchema', ...bodyErrors(404, 409) },
        detail: {
          operationId: 'patchEnvironmentsFeatureVariants',
          summary: "Patch a feature's variants in an environment",
          tags,
          description: `JSON Patch on the flag's variants in the environment. ${PATCHING} ${WEIGHTS} Records feature-environment-variants-updated.`,
        },
      },
    )
    .get(
      `${flagPath}/variants`,
      ({ params }) => ({ version: 1, variants: variants.list(params.projectId, params.featureName) }),
      {
        auth: 'NONE',
        params: flagParams,
        response: { 200: 'variantsSchema', ...authErrors(404) },
        detail: {
          operationId: 'getFeatureVariants',
          summary: 'Retrieve variants for a feature (deprecated)',
          tags,
          deprecated: true,
          description: `Deprecated, as in Unleash: variants live per environment. The variants of ${SOURCE}; what patchFeatureVariants patches.`,
        },
      },
    )
    .put(
      `${flagPath}/variants`,
      async ({ params, body, caller }) => ({
        version: 1,
        variants: await variants.overwriteAll(params.projectId, params.featureName, body, caller),
      }),
      {
        auth: 'UPDATE_FEATURE_VARIANTS',
        params: flagParams,
        body: VariantListInput,
        response: { 200: 'variantsSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'overwriteFeatureVariants',
          summary: 'Create (overwrite) variants for a feature flag in all environments',
          tags,
          description: `The list replaces the variants of every environment of the flag, in one write. ${WEIGHTS} One feature-environment-variants-updated event per environment.`,
        },
      },
    )
    .patch(
      `${flagPath}/variants`,
      async ({ params, body, caller }) => ({
        version: 1,
        variants: await variants.patchAll(params.projectId, params.featureName, body, caller),
      }),
      {
        auth: 'UPDATE_FEATURE_VARIANTS',
        params: flagParams,
        body: 'variantPatchesSchema',
        response: { 200: 'variantsSchema', ...bodyErrors(404, 409) },
        detail: {
          operationId: 'patchFeatureVariants',
          summary: "Apply a patch to a feature's variants (in all environments)",
          tags,
          description:
            `JSON Patch on the variants of ${SOURCE}; the result replaces the variants of every environment of the flag, in one write (Unleash's is not atomic). ` +
            `${PATCHING} ${WEIGHTS} One feature-environment-variants-updated event per environment.`,
        },
      },
    )
    .put(
      `${flagPath}/variants-batch`,
      async ({ params, body, caller }) => ({
        version: 1,
        variants: await variants.pushToEnvironments(params.projectId, params.featureName, body, caller),
      }),
      {
        auth: 'UPDATE_FEATURE_VARIANTS',
        params: flagParams,
        body: 'pushVariantsSchema',
        response: { 200: 'variantsSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'overwriteFeatureVariantsOnEnvironments',
          summary: 'Create (overwrite) variants for a feature flag in multiple environments',
          tags,
          description:
            `The list replaces the flag's variants in each named environment, in one write. No environment named is a 400; an environment the flag does not have is a 404 and nothing changes. ` +
            `${WEIGHTS} One feature-environment-variants-updated event per environment.`,
        },
      },
    )
}
