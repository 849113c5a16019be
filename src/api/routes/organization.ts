import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { extension } from './route-parts.js';
import { actorOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { Event, EventList, ListEventsQuery, Organization } from '../../schemas/organization.js';
import { NoQuery } from '../../schemas/deliveries.js';

/** Text already serialised as the response schema describes it (Fastify sends a JSON string as it is). */
const serialised = (text: string) => text as never;

/** The organisation itself and its events (CONTRACT 13). */
export const organizationRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  app.get('/v1/organization', {
    // Any key of the organisation reads it, whatever its scope: it is what every other call's answers depend on.
    config: { auth: { resource: 'events', action: 'read', anyScope: true } },
    schema: {
      tags: ['Organization'],
      operationId: 'getOrganization',
      summary: "Read the key's organisation: its state and deletion date (extension)",
      ...extension,
      querystring: NoQuery,
      response: { 200: Organization, ...authErrorResponses },
    },
    handler: async (request) => services.organizations.get(actorOf(request)),
  });

  // Events are answered as serialised text: each `data` is spliced in as the bytes its deliveries sent.
  app.get('/v1/events', {
    config: { auth: { resource: 'events', action: 'read' } },
    schema: {
      tags: ['Events'],
      operationId: 'listEvents',
      summary: "List the organisation's events, newest first (extension)",
      description:
        'Every event for EVENT_RETENTION (default 30 days), whether or not a subscription listened, for reconciling missed deliveries: ' +
        'walk the pages until an event already processed, and de-duplicate by `id` (the `X-Service-Event-Id` of its deliveries).',
      ...extension,
      querystring: ListEventsQuery,
      response: { 200: EventList, ...authErrorResponses },
    },
    handler: async (request, reply) => {
      const { limit = 20, cursor, type } = request.query;
      const page = await services.events.list(actorOf(request), { type }, { limit, cursor });
      const next = page.nextCursor === null ? 'null' : JSON.stringify(page.nextCursor);
      return reply.type('application/json; charset=utf-8').send(serialised(`{"data":[${page.items.join(',')}],"next_cursor":${next}}`));
    },
  });

  app.get('/v1/events/:id', {
    config: { auth: { resource: 'events', action: 'read' } },
    schema: { tags: ['Events'], operationId: 'getEvent', summary: 'Read an event (extension)', ...extension, params: IdParams, response: { 200: Event, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request, reply) => reply.type('application/json; charset=utf-8').send(serialised(await services.events.get(actorOf(request), request.params.id))),
  });
};
