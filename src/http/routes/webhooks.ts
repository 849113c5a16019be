import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../app-deps.js';
import { actorOf, principalOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../schemas/common.js';
import { CreatedWebhook, CreateWebhookBody, ListWebhooksQuery, WebhookList } from '../schemas/webhooks.js';
import { toListEnvelope } from '../../services/pagination.js';

const tags = ['Webhooks'];

export const webhookRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const webhooks = services.webhooks;

  app.get('/v1/webhooks', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: { tags, operationId: 'listWebhooks', summary: 'List webhook subscriptions, newest first', querystring: ListWebhooksQuery, response: { 200: WebhookList, ...authErrorResponses } },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      const page = await webhooks.list(principalOf(request).orgId, { limit, cursor });
      return toListEnvelope(page);
    },
  });

  app.post('/v1/webhooks', {
    config: { auth: { resource: 'webhooks', action: 'create' } },
    schema: { tags, operationId: 'createWebhook', summary: 'Create a webhook subscription', body: CreateWebhookBody, response: { 201: CreatedWebhook, ...authErrorResponses, 409: ErrorResponse, 422: ErrorResponse } },
    handler: async (request, reply) => {
      const webhook = await webhooks.create(actorOf(request), request.body);
      return reply.code(201).send(webhook);
    },
  });

  // Allowed while the workspace is read-only (DASHBOARD 10): an organisation may always stop deliveries.
  app.delete('/v1/webhooks/:id', {
    config: { auth: { resource: 'webhooks', action: 'delete', whileReadOnly: true } },
    schema: { tags, operationId: 'deleteWebhook', summary: 'Delete a webhook subscription and cancel its pending deliveries', params: IdParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request, reply) => {
      await webhooks.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  });
};
