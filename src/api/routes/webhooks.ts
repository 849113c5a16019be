import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { emptyBodyIsObject, extension } from './route-parts.js';
import { actorOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { NoQuery } from '../../schemas/deliveries.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  ListWebhooksQuery,
  RotatedSecret,
  RotateSecretBody,
  TestEventAccepted,
  TestEventBody,
  UpdateWebhookBody,
  Webhook,
  WebhookList,
} from '../../schemas/webhooks.js';
import { toListEnvelope } from '../../services/shared/pagination.js';

const tags = ['Webhooks'];


/** The errors every change of one subscription may answer (CONTRACT 1 and 11). */
const changeErrors = { ...authErrorResponses, 404: ErrorResponse, 415: ErrorResponse, 422: ErrorResponse };

export const webhookRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const webhooks = services.webhooks;

  app.get('/v1/webhooks', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: { tags, operationId: 'listWebhooks', summary: 'List webhook subscriptions, newest first', querystring: ListWebhooksQuery, response: { 200: WebhookList, ...authErrorResponses } },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      const page = await webhooks.list(actorOf(request), { limit, cursor });
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

  app.get('/v1/webhooks/:id', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: {
      tags,
      operationId: 'getWebhook',
      summary: 'Read a webhook subscription, never its secret (extension)',
      ...extension,
      params: IdParams,
      querystring: NoQuery,
      response: { 200: Webhook, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request) => webhooks.get(actorOf(request), request.params.id),
  });

  app.patch('/v1/webhooks/:id', {
    config: { auth: { resource: 'webhooks', action: 'update' } },
    schema: {
      tags,
      operationId: 'updateWebhook',
      summary: "Change a subscription's URL or events (extension)",
      description: 'The rules of creation apply (https, public host, at most 2,048 characters; known events). Waiting retries and later attempts go to the new URL; the secret and the history stay.',
      ...extension,
      params: IdParams,
      body: UpdateWebhookBody,
      response: { 200: Webhook, ...changeErrors },
    },
    handler: async (request) => webhooks.update(actorOf(request), request.params.id, request.body),
  });

  app.post('/v1/webhooks/:id/rotate-secret', {
    config: { auth: { resource: 'webhooks', action: 'update' } },
    schema: {
      tags,
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret, the previous one signing beside it for a while (extension)',
      description:
        'The new secret (given, or generated) signs every attempt from now on; the previous one also signs (a second `v1` entry in ' +
        '`webhook-signature`, and `X-Service-Signature-Previous`) until `previous_expires_at`, then is forgotten. A rotation inside ' +
        'that window ends the older secret at once. The new secret is shown only in this response.',
      ...extension,
      params: IdParams,
      body: RotateSecretBody,
      response: { 200: RotatedSecret, ...changeErrors },
    },
    handler: async (request) => webhooks.rotateSecret(actorOf(request), request.params.id, request.body),
  });

  app.post('/v1/webhooks/:id/test', {
    // The body is optional: a POST without one sends the subscription's first event.
    config: { auth: { resource: 'webhooks', action: 'update' }, bodyOptional: true },
    preValidation: emptyBodyIsObject,
    schema: {
      tags,
      operationId: 'sendTestWebhook',
      summary: 'Send a test event to the subscription (extension)',
      description:
        "One delivery of `event` (one of the subscription's events; default its first) whose `data` is the event's example in this " +
        'document, with `X-Service-Test: true`. One attempt, never retried, not counted for health; in the history with trigger ' +
        '`test`. 409 while the subscription is disabled.',
      ...extension,
      params: IdParams,
      body: TestEventBody,
      response: { 202: TestEventAccepted, ...changeErrors, 409: ErrorResponse },
    },
    handler: async (request, reply) => reply.code(202).send(await webhooks.sendTest(actorOf(request), request.params.id, request.body ?? {})),
  });

  app.post('/v1/webhooks/:id/enable', {
    config: { auth: { resource: 'webhooks', action: 'update' } },
    schema: {
      tags,
      operationId: 'enableWebhook',
      summary: 'Enable a disabled subscription (extension; no request body)',
      description:
        'The subscription becomes `active` again and its failure streak is forgotten. The deliveries cancelled while it was disabled ' +
        '(reason `subscription_disabled`) are sent by `POST /v1/webhooks/{id}/replay-failed`. Enabling an active one changes nothing.',
      ...extension,
      params: IdParams,
      querystring: NoQuery,
      response: { 200: Webhook, ...changeErrors },
    },
    handler: async (request) => webhooks.enable(actorOf(request), request.params.id),
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
