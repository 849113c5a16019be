import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../app.js';
import { actorOf, principalOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../schemas/common.js';
import { Delivery, DeliveryDetail, DeliveryList, DeliveryParams, ListDeliveriesQuery, NoQuery } from '../schemas/deliveries.js';
import { toListEnvelope } from '../../services/pagination.js';

const tags = ['Webhook deliveries'];

/** OpenAPI vendor key marking routes beyond the specification; typed as {} since FastifySchema has no x- keys. */
const extension: object = { 'x-extension': true };

/** Delivery history and replay: an extension beyond the published specification (marked in OpenAPI). */
export const deliveryRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const deliveries = services.deliveries;

  app.get('/v1/webhooks/:id/deliveries', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: {
      tags,
      summary: "List a subscription's deliveries, newest first (extension)",
      ...extension,
      params: IdParams,
      querystring: ListDeliveriesQuery,
      response: { 200: DeliveryList, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request) => {
      const { limit = 20, cursor, status } = request.query;
      const page = await deliveries.list(principalOf(request).orgId, request.params.id, { limit, cursor, status });
      return toListEnvelope(page);
    },
  });

  app.get('/v1/webhooks/:id/deliveries/:delivery_id', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: {
      tags,
      summary: 'Read a delivery with its attempt history (extension)',
      ...extension,
      params: DeliveryParams,
      querystring: NoQuery,
      response: { 200: DeliveryDetail, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request) => deliveries.get(principalOf(request).orgId, request.params.id, request.params.delivery_id),
  });

  app.post('/v1/webhooks/:id/deliveries/:delivery_id/replay', {
    config: { auth: { resource: 'webhooks', action: 'create' } },
    schema: {
      tags,
      summary: 'Replay a delivered or failed delivery: one new attempt, same event id and body (extension; no request body)',
      description:
        'Queues one attempt outside the automatic schedule and answers 202 with the delivery (now pending). ' +
        'Success marks it delivered, also when it had permanently failed; failure leaves it failed with no further retries. ' +
        '409 while the delivery is still pending.',
      ...extension,
      params: DeliveryParams,
      querystring: NoQuery,
      response: { 202: Delivery, ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse },
    },
    handler: async (request, reply) => {
      const delivery = await deliveries.replay(actorOf(request), request.params.id, request.params.delivery_id);
      return reply.code(202).send(delivery);
    },
  });
};
