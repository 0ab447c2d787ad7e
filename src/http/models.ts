/** Every named schema, registered once so that OpenAPI shows them as components. */
import { Elysia } from 'elysia'
import * as events from '../features/events/events.model'
import * as environments from '../features/environments/environments.model'
import * as flags from '../features/flags/flags.model'
import * as projects from '../features/projects/projects.model'
import * as tokens from '../features/tokens/tokens.model'
import { ErrorSchema } from './schemas'

/** Components shown in the OpenAPI document instead of the looser schema that is validated. */
export const documentedModels = { patchesSchema: flags.PatchOperationsDocumented }

/** By name, as routes refer to them. */
export const namedModels = {
  error: ErrorSchema,
  featureSchema: flags.Feature,
  featuresSchema: flags.FeatureList,
  createFeatureSchema: flags.CreateFeature,
  updateFeatureSchema: flags.UpdateFeature,
  patchesSchema: flags.PatchOperations,
  validateFeatureSchema: flags.ValidateFeature,
  featureNamesSchema: flags.FeatureNames,
  featureStrategySchema: flags.Strategy,
  createFeatureStrategySchema: flags.StrategyInput,
  variantsSchema: flags.VariantList,
  variantSchema: flags.VariantInput,
  tagSchema: flags.Tag,
  tagInputSchema: flags.TagInput,
  tagsSchema: flags.TagList,
  dependencySchema: flags.DependencyInput,
  completeFeatureSchema: flags.CompleteLifecycle,
  projectSchema: projects.Project,
  projectsSchema: projects.ProjectList,
  createProjectSchema: projects.CreateProject,
  updateProjectSchema: projects.UpdateProject,
  environmentSchema: environments.Environment,
  environmentsSchema: environments.EnvironmentList,
  createEnvironmentSchema: environments.CreateEnvironment,
  projectEnvironmentSchema: environments.ProjectEnvironment,
  apiTokenSchema: tokens.Token,
  apiTokensSchema: tokens.TokenList,
  createApiTokenSchema: tokens.CreateToken,
  createdApiTokenSchema: tokens.CreatedToken,
  eventSearchQuerySchema: events.EventSearchQuery,
  eventSearchResponseSchema: events.EventPage,
}

export const models = new Elysia({ name: 'models' }).model(namedModels)
