import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { actorOf, principalOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { CreateProjectBody, ListProjectsQuery, Project, ProjectList, UpdateProjectBody } from '../../schemas/projects.js';
import { toListEnvelope } from '../../services/shared/pagination.js';

const tags = ['Projects'];

export const projectRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const projects = services.projects;

  app.get('/v1/projects', {
    config: { auth: { resource: 'projects', action: 'read' } },
    schema: { tags, operationId: 'listProjects', summary: 'List projects, newest first', querystring: ListProjectsQuery, response: { 200: ProjectList, ...authErrorResponses } },
    handler: async (request) => {
      const { limit = 20, cursor, status } = request.query;
      const page = await projects.list(principalOf(request).orgId, { limit, cursor, status });
      return toListEnvelope(page);
    },
  });

  app.post('/v1/projects', {
    config: { auth: { resource: 'projects', action: 'create' } },
    schema: { tags, operationId: 'createProject', summary: 'Create a project', body: CreateProjectBody, response: { 201: Project, ...authErrorResponses, 409: ErrorResponse, 422: ErrorResponse } },
    handler: async (request, reply) => {
      const project = await projects.create(actorOf(request), request.body);
      return reply.code(201).send(project);
    },
  });

  app.get('/v1/projects/:id', {
    config: { auth: { resource: 'projects', action: 'read' } },
    schema: { tags, operationId: 'getProject', summary: 'Read a project', params: IdParams, response: { 200: Project, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => projects.get(principalOf(request).orgId, request.params.id),
  });

  app.put('/v1/projects/:id', {
    config: { auth: { resource: 'projects', action: 'update' } },
    schema: { tags, operationId: 'updateProject', summary: 'Update a project', params: IdParams, body: UpdateProjectBody, response: { 200: Project, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => projects.update(actorOf(request), request.params.id, request.body),
  });

  app.delete('/v1/projects/:id', {
    config: { auth: { resource: 'projects', action: 'delete' } },
    schema: { tags, operationId: 'deleteProject', summary: 'Delete a project and everything under it', params: IdParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request, reply) => {
      await projects.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  });
};
