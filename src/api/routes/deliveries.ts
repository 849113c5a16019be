import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { extension } from './route-parts.js';
import { actorOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { Delivery, DeliveryDetail, DeliveryList, DeliveryParams, ListDeliveriesQuery, NoQuery, ReplayFailedBody, ReplayJob, ReplayJobParams, MAX_BULK_REPLAY } from '../../schemas/deliveries.js';
import { HISTORY_SCAN_LIMIT } from '../../services/webhooks/deliveries-service.js';

const tags = ['Webhook deliveries'];


/** An ISO 8601 time the schema accepted (format date-time), in epoch ms. */
const epochMs = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));

/**
 * Delivery history and replay: an extension beyond the published specification (marked in OpenAPI). The
 * dashboard's subscription page calls the same services with the same filters (DASHBOARD 6).
 */
export const deliveryRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const deliveries = services.deliveries;

  app.get('/v1/webhooks/:id/deliveries', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: {
      tags,
      operationId: 'listDeliveries',
      summary: "List a subscription's deliveries, newest first (extension)",
      description:
        'Filters combine. `status`, `event`, `from`, `to` and `id` are the dashboard\'s filters. A page filtered by a ' +
        `status other than failed, or by an event, examines at most ${HISTORY_SCAN_LIMIT} deliveries, so it may hold ` +
        'fewer than `limit` items while `next_cursor` is set: keep following it.',
      ...extension,
      params: IdParams,
      querystring: ListDeliveriesQuery,
      response: { 200: DeliveryList, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request) => {
      const { limit = 20, cursor, status, event, from, to, id } = request.query;
      const page = await deliveries.list(actorOf(request), request.params.id, {
        limit,
        cursor,
        filter: { status, event, from: epochMs(from), to: epochMs(to), id },
      });
      return { data: page.items, next_cursor: page.nextCursor };
    },
  });

  app.get('/v1/webhooks/:id/deliveries/:delivery_id', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: {
      tags,
      operationId: 'getDelivery',
      summary: 'Read a delivery with its attempt history (extension)',
      ...extension,
      params: DeliveryParams,
      querystring: NoQuery,
      response: { 200: DeliveryDetail, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request) => deliveries.get(actorOf(request), request.params.id, request.params.delivery_id),
  });

  app.post('/v1/webhooks/:id/deliveries/:delivery_id/replay', {
    config: { auth: { resource: 'webhooks', action: 'create' } },
    schema: {
      tags,
      operationId: 'replayDelivery',
      summary: 'Replay a delivered or failed delivery: one new attempt, same event id and body (extension; no request body)',
      description:
        'Queues one attempt outside the automatic schedule, signed with the subscription\'s current secret, and answers ' +
        '202 with the delivery (now pending). Success marks it delivered, also when it had permanently failed; failure ' +
        'leaves it failed with no further retries. 409 while the delivery is pending or retrying, and for a cancelled one.',
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

  app.post('/v1/webhooks/:id/replay-failed', {
    config: { auth: { resource: 'webhooks', action: 'create' } },
    schema: {
      tags,
      operationId: 'replayFailedDeliveries',
      summary: 'Replay every permanently failed delivery since a time, as a job (extension)',
      description:
        `Takes the subscription's failed deliveries whose event occurred at or after \`since\` (the oldest ${MAX_BULK_REPLAY}; ` +
        '`more` says whether others remain) and answers 202 with the job: `count` is exactly what it replays. The ' +
        'delivery worker re-queues them in batches; read the job for its progress.',
      ...extension,
      params: IdParams,
      body: ReplayFailedBody,
      response: { 202: ReplayJob, ...authErrorResponses, 404: ErrorResponse, 415: ErrorResponse, 422: ErrorResponse },
    },
    handler: async (request, reply) => {
      const job = await services.replayJobs.start(actorOf(request), request.params.id, Date.parse(request.body.since));
      return reply.code(202).send(job);
    },
  });

  app.get('/v1/webhooks/:id/replay-jobs/:job_id', {
    config: { auth: { resource: 'webhooks', action: 'read' } },
    schema: {
      tags,
      operationId: 'getReplayJob',
      summary: 'Read a bulk replay job and its progress (extension)',
      ...extension,
      params: ReplayJobParams,
      querystring: NoQuery,
      response: { 200: ReplayJob, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request) => services.replayJobs.get(actorOf(request), request.params.id, request.params.job_id),
  });
};
