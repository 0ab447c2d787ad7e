import { t } from 'elysia'
import { NullableTimestamp, Timestamp, Integer } from '../../http/schemas'

export const FeatureNaming = t.Object(
  {
    pattern: t.String({
      description:
        'Regular expression (RE2 syntax: no look-around, back-references or possessive quantifiers) flag names must match, anchored at both ends; at most 200 characters, no whitespace',
      maxLength: 1000,
      examples: ['[a-z0-9]+(-[a-z0-9]+)*'],
    }),
    example: t.Optional(
      t.String({ description: 'A name that matches the pattern', maxLength: 100, examples: ['new-checkout'] }),
    ),
    description: t.Optional(t.String({ description: 'The naming rule in words', maxLength: 500 })),
  },
  { description: "A naming pattern for the project's flags" },
)

export const Project = t.Object(
  {
    id: t.String({ description: 'Project id' }),
    name: t.String({ description: 'Display name' }),
    description: t.String({ description: 'Description' }),
    createdAt: Timestamp('Creation time'),
    updatedAt: NullableTimestamp('Last update time'),
    featureCount: Integer({ description: 'Number of live (not archived) flags' }),
    environments: t.Array(t.String({ description: 'Environment name' }), {
      description: 'Environments connected to the project',
    }),
    featureNaming: t.Union([FeatureNaming, t.Null()], { description: 'Naming pattern, if any' }),
  },
  { description: 'A project' },
)

export const ProjectList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    projects: t.Array(Project, { description: 'The projects the token can see' }),
  },
  { description: 'Projects' },
)

export const CreateProject = t.Object(
  {
    id: t.String({
      description: 'Project id: 1 to 100 URL-safe characters, not made only of * (the all-projects wildcard of tokens)',
      maxLength: 1000,
      examples: ['checkout'],
    }),
    name: t.String({ description: 'Display name', minLength: 1, maxLength: 100 }),
    description: t.Optional(t.String({ description: 'Description', maxLength: 2000 })),
    featureNaming: t.Optional(
      t.Union([FeatureNaming, t.Null()], { description: "Naming pattern for the project's flags" }),
    ),
  },
  {
    description: 'A project to create',
    examples: [
      {
        id: 'checkout',
        name: 'Checkout',
        description: 'Flags of the checkout service',
        featureNaming: {
          pattern: '[a-z0-9]+(-[a-z0-9]+)*',
          example: 'new-checkout',
          description: 'Lower-case words joined by hyphens',
        },
      },
    ],
  },
)

export const UpdateProject = t.Object(
  {
    id: t.Optional(
      t.String({
        description:
          'The project id, as Unleash scripts send it: must equal the id in the path if given (a project cannot be renamed)',
        maxLength: 1000,
      }),
    ),
    name: t.Optional(t.String({ description: 'Display name', minLength: 1, maxLength: 100 })),
    description: t.Optional(
      t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: 'Description; null clears it' }),
    ),
    featureNaming: t.Optional(t.Union([FeatureNaming, t.Null()], { description: 'Naming pattern; null removes it' })),
  },
  {
    description: 'Properties to change; missing ones are left alone',
    examples: [{ name: 'Checkout', description: 'Flags of the checkout service and its payment pages' }],
  },
)

/** The named schemas of the project routes, as routes refer to them and OpenAPI lists them. */
export const projectModels = {
  projectSchema: Project,
  projectsSchema: ProjectList,
  createProjectSchema: CreateProject,
  updateProjectSchema: UpdateProject,
}
