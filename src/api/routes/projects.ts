import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { actorOf } from '../hooks/auth.js';
import { extension } from './route-parts.js';
import { ListQuery } from '../../schemas/workflows.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import {
  Collaborator,
  CollaboratorList,
  CollaboratorParams,
  CreateProjectBody,
  ListProjectsQuery,
  Project,
  ProjectList,
  PutCollaboratorBody,
  UpdateProjectBody,
} from '../../schemas/projects.js';
import { toListEnvelope } from '../../services/shared/pagination.js';

const tags = ['Projects'];

export const projectRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const projects = services.projects;

  app.get('/v1/projects', {
    config: { auth: { resource: 'projects', action: 'read' } },
    schema: { tags, operationId: 'listProjects', summary: 'List projects, newest first', querystring: ListProjectsQuery, response: { 200: ProjectList, ...authErrorResponses } },
    handler: async (request) => {
      const { limit = 20, cursor, status, visibility } = request.query;
      const page = await projects.list(actorOf(request), { limit, cursor, status, visibility });
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
    handler: async (request) => projects.get(actorOf(request), request.params.id),
  });

  app.put('/v1/projects/:id', {
    config: { auth: { resource: 'projects', action: 'update', project: 'project' } },
    schema: { tags, operationId: 'updateProject', summary: 'Update a project', params: IdParams, body: UpdateProjectBody, response: { 200: Project, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => projects.update(actorOf(request), request.params.id, request.body),
  });

  app.delete('/v1/projects/:id', {
    config: { auth: { resource: 'projects', action: 'delete', project: 'project' } },
    schema: { tags, operationId: 'deleteProject', summary: 'Delete a project and everything under it', params: IdParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request, reply) => {
      await projects.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  });

  // Collaborators (CONTRACT 15): changing them is the project manager's (or an admin's or owner's), which the
  // `delete` right of the projects resource stands for in the early check; the service decides it exactly.
  app.get('/v1/projects/:id/collaborators', {
    config: { auth: { resource: 'projects', action: 'read' } },
    schema: {
      tags,
      operationId: 'listCollaborators',
      summary: "List a project's collaborators, newest first (extension)",
      description: 'Anyone who sees the project. A private project is 404 to everyone else.',
      ...extension,
      params: IdParams,
      querystring: ListQuery,
      response: { 200: CollaboratorList, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      return toListEnvelope(await services.collaborators.list(actorOf(request), request.params.id, { limit, cursor }));
    },
  });

  app.put('/v1/projects/:id/collaborators/:user_id', {
    config: { auth: { resource: 'projects', action: 'delete', project: 'project' } },
    schema: {
      tags,
      operationId: 'putCollaborator',
      summary: 'Add a collaborator or change their project role (extension)',
      description: "The project's managers, admins and owners. 201 when the user was added, 200 when their role changed or already was this one. A user who is not a member of the organisation is 404.",
      ...extension,
      params: CollaboratorParams,
      body: PutCollaboratorBody,
      response: { 200: Collaborator, 201: Collaborator, ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse, 415: ErrorResponse, 422: ErrorResponse },
    },
    handler: async (request, reply) => {
      const { collaborator, created } = await services.collaborators.put(actorOf(request), request.params.id, request.params.user_id, request.body.role);
      return reply.code(created ? 201 : 200).send(collaborator);
    },
  });

  app.delete('/v1/projects/:id/collaborators/:user_id', {
    config: { auth: { resource: 'projects', action: 'delete', project: 'project' } },
    schema: {
      tags,
      operationId: 'deleteCollaborator',
      summary: 'Remove a collaborator (extension)',
      description: "The project's managers, admins and owners. In a private project the user's open tasks there become unassigned.",
      ...extension,
      params: CollaboratorParams,
      response: { 204: { type: 'null', description: 'Removed.' }, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request, reply) => {
      await services.collaborators.remove(actorOf(request), request.params.id, request.params.user_id);
      return reply.code(204).send();
    },
  });
};
