import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { extension } from './route-parts.js';
import { actorOf, principalOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { InviteUserBody, ListUsersQuery, UpdateUserBody, User, UserList } from '../../schemas/users.js';
import { toListEnvelope } from '../../services/shared/pagination.js';

const tags = ['Users'];

export const userRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const users = services.users;

  app.get('/v1/users', {
    config: { auth: { resource: 'users', action: 'read' } },
    schema: { tags, operationId: 'listUsers', summary: 'List members, invited ones included, newest first', querystring: ListUsersQuery, response: { 200: UserList, ...authErrorResponses } },
    handler: async (request) => {
      const { limit = 20, cursor, status } = request.query;
      const page = await users.list(principalOf(request).orgId, { limit, cursor }, status);
      return toListEnvelope(page);
    },
  });

  app.post('/v1/users', {
    config: { auth: { resource: 'users', action: 'create' } },
    schema: {
      tags,
      operationId: 'inviteUser',
      summary: 'Invite a user by e-mail (re-inviting an invited user sends a fresh link)',
      body: InviteUserBody,
      response: { 201: User, ...authErrorResponses, 409: ErrorResponse, 422: ErrorResponse },
    },
    handler: async (request, reply) => {
      const user = await users.invite(actorOf(request), request.body);
      return reply.code(201).send(user);
    },
  });

  app.get('/v1/users/:id', {
    config: { auth: { resource: 'users', action: 'read' } },
    schema: { tags, operationId: 'getUser', summary: 'Read a user', params: IdParams, response: { 200: User, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => users.get(principalOf(request).orgId, request.params.id),
  });

  app.put('/v1/users/:id', {
    config: { auth: { resource: 'users', action: 'update' } },
    schema: {
      tags,
      operationId: 'updateUser',
      summary: "Change a user's role",
      params: IdParams,
      body: UpdateUserBody,
      response: { 200: User, ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse },
    },
    handler: async (request) => users.changeRole(actorOf(request), request.params.id, request.body.role),
  });

  app.delete('/v1/users/:id', {
    config: { auth: { resource: 'users', action: 'delete' } },
    schema: {
      tags,
      operationId: 'deleteUser',
      summary: 'Remove a member, invited or active, with their invitation, sessions and API keys (extension)',
      description:
        'Admins and owners. Only an owner may remove an owner, and the last active owner cannot be removed (409). ' +
        'The removed e-mail can be invited again.',
      ...extension,
      params: IdParams,
      response: { 204: { type: 'null', description: 'Removed.' }, ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse },
    },
    handler: async (request, reply) => {
      await users.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  });
};
