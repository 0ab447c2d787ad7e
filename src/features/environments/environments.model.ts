import { t } from 'elysia'
import { Timestamp, Integer } from '../../http/schemas'

export const Environment = t.Object(
  {
    name: t.String({ description: 'Environment name' }),
    type: t.String({ description: 'Environment type, e.g. development or production' }),
    sortOrder: t.Number({ description: 'Position in lists' }),
    enabled: t.Boolean({ description: 'Always true: environments cannot be disabled here' }),
    protected: t.Boolean({ description: 'Always false' }),
    createdAt: Timestamp('Creation time'),
    projectCount: Integer({ description: 'Number of projects connected to it' }),
  },
  { description: 'An environment' },
)

export const EnvironmentList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    environments: t.Array(Environment, { description: 'By sortOrder, then name' }),
  },
  { description: 'Environments' },
)

export const CreateEnvironment = t.Object(
  {
    name: t.String({
      description:
        'Environment name: 1 to 100 URL-safe characters, not made only of * (the all-environments wildcard of tokens)',
      maxLength: 1000,
      examples: ['staging'],
    }),
    type: t.String({
      description: 'Environment type; "production" makes enabling a flag move it to the live stage',
      maxLength: 100,
      examples: ['test'],
    }),
    sortOrder: t.Optional(
      Integer({ description: 'Position in lists (default: after the last)', minimum: -1_000_000, maximum: 1_000_000 }),
    ),
  },
  { description: 'An environment to create', examples: [{ name: 'staging', type: 'test', sortOrder: 150 }] },
)

export const ProjectEnvironment = t.Object(
  { environment: t.String({ description: 'Name of the environment to connect', maxLength: 100 }) },
  { description: 'An environment to connect to the project', examples: [{ environment: 'staging' }] },
)

/** The named schemas of the environment routes, as routes refer to them and OpenAPI lists them. */
export const environmentModels = {
  environmentSchema: Environment,
  environmentsSchema: EnvironmentList,
  createEnvironmentSchema: CreateEnvironment,
  projectEnvironmentSchema: ProjectEnvironment,
}
