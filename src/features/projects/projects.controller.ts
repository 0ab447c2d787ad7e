import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { EnvironmentsService } from '../environments/environments.service'
import type { ProjectsService } from './projects.service'
import type { Authorization } from '../tokens/auth'
import { environmentModels } from '../environments/environments.model'
import { projectModels } from './projects.model'
import { projectEnvironmentParams, projectParams } from '../params'

const tags = ['Projects']

export function projectsController(projects: ProjectsService, environments: EnvironmentsService, auth: Authorization) {
  return controllerBase(auth, {
    ...projectModels,
    projectEnvironmentSchema: environmentModels.projectEnvironmentSchema,
  })
    .get('/api/admin/projects', ({ caller }) => ({ version: 1, projects: projects.list(caller) }), {
      auth: 'NONE',
      response: { 200: 'projectsSchema', ...authErrors() },
      detail: { operationId: 'getProjects', summary: 'Get projects', tags },
    })
    .post(
      '/api/admin/projects',
      async ({ body, caller, set }) => {
        set.status = 201
        return projects.create(body, caller)
      },
      {
        auth: 'CREATE_PROJECT',
        body: 'createProjectSchema',
        response: { 201: 'projectSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'createProject',
          summary: 'Create a project',
          tags,
          description: 'The new project is connected to every environment.',
        },
      },
    )
    .get('/api/admin/projects/:projectId', ({ params }) => projects.get(params.projectId), {
      auth: 'NONE',
      params: projectParams,
      response: { 200: 'projectSchema', ...authErrors(404) },
      detail: { operationId: 'getProject', summary: 'Get a project', tags },
    })
    .put(
      '/api/admin/projects/:projectId',
      ({ params, body, caller }) => projects.update(params.projectId, body, caller),
      {
        auth: 'UPDATE_PROJECT',
        params: projectParams,
        body: 'updateProjectSchema',
        response: { 200: 'projectSchema', ...bodyErrors(404) },
        detail: {
          operationId: 'updateProject',
          summary: 'Update a project',
          tags,
          description: 'Missing properties are left alone; featureNaming null removes the pattern.',
        },
      },
    )
    .delete(
      '/api/admin/projects/:projectId',
      async ({ params, caller }) => {
        await projects.delete(params.projectId, caller)
        return noContent()
      },
      {
        auth: 'DELETE_PROJECT',
        params: projectParams,
        response: { 200: t.Void({ description: 'Deleted' }), ...authErrors(400, 404) },
        detail: {
          operationId: 'deleteProject',
          summary: 'Delete a project',
          tags,
          description: 'Only a project without flags (archived included); never the default project.',
        },
      },
    )
    .post(
      '/api/admin/projects/:projectId/environments',
      async ({ params, body, caller }) => {
        await environments.addToProject(params.projectId, body.environment, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_PROJECT',
        params: projectParams,
        body: 'projectEnvironmentSchema',
        response: { 200: t.Void({ description: 'Connected' }), ...bodyErrors(404, 409) },
        detail: {
          operationId: 'addEnvironmentToProject',
          summary: 'Connect an environment to a project',
          tags,
          description: 'Every flag of the project gets the environment, disabled.',
        },
      },
    )
    .delete(
      '/api/admin/projects/:projectId/environments/:environment',
      async ({ params, caller }) => {
        await environments.removeFromProject(params.projectId, params.environment, caller)
        return noContent()
      },
      {
        auth: 'UPDATE_PROJECT',
        params: projectEnvironmentParams,
        response: { 200: t.Void({ description: 'Disconnected' }), ...authErrors(400, 404) },
        detail: {
          operationId: 'removeEnvironmentFromProject',
          summary: 'Disconnect an environment from a project',
          tags,
          description: "The project's flags lose their settings in that environment.",
        },
      },
    )
}
