import { CreateWebhookBody, UpdateWebhookBody } from '../../../schemas/webhooks.js';
import { ListDeliveriesQuery } from '../../../schemas/deliveries.js';
import { toListEnvelope } from '../../../services/shared/pagination.js';
import { done, Id, input, page, time, tool, type McpTool } from '../mcp-tool.js';

/** Webhook subscriptions and their deliveries (replay included). */
export const WEBHOOK_TOOLS: readonly McpTool[] = [
  tool({
    name: 'list_webhooks',
    title: 'List webhook subscriptions',
    description: 'Webhook subscriptions of the organisation, newest first, with their URL, events and state.',
    input: input({ ...page }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor }, s) => toListEnvelope(await s.webhooks.list(actor, { limit, cursor })),
  }),
  tool({
    name: 'get_webhook',
    title: 'Read a webhook subscription',
    description: 'One subscription with its delivery health.',
    input: input({ webhook_id: Id('subscription') }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: (actor, { webhook_id }, s) => s.webhooks.get(actor, webhook_id),
  }),
  tool({
    name: 'create_webhook',
    title: 'Create a webhook subscription',
    description: 'Subscribes an https URL to events; the answer holds the signing secret, once.',
    input: input(CreateWebhookBody.properties),
    resource: 'webhooks',
    action: 'create',
    idempotent: false,
    run: (actor, body, s) => s.webhooks.create(actor, body),
  }),
  tool({
    name: 'update_webhook',
    title: 'Update a webhook subscription',
    description: "Changes a subscription's URL, events or description, or pauses it.",
    input: input({ webhook_id: Id('subscription'), ...UpdateWebhookBody.properties }),
    resource: 'webhooks',
    action: 'update',
    idempotent: true,
    run: (actor, { webhook_id, ...body }, s) => s.webhooks.update(actor, webhook_id, body),
  }),
  tool({
    name: 'delete_webhook',
    title: 'Delete a webhook subscription',
    description: 'Deletes a subscription and cancels its pending deliveries. Cannot be undone.',
    input: input({ webhook_id: Id('subscription') }),
    resource: 'webhooks',
    action: 'delete',
    deletes: true,
    idempotent: true,
    run: async (actor, { webhook_id }, s) => (await s.webhooks.remove(actor, webhook_id), done),
  }),
  tool({
    name: 'list_deliveries',
    title: "List a subscription's deliveries",
    description: 'Deliveries of a subscription, newest first: status, event, attempts. Filter by status, event type, time or id.',
    input: input({ webhook_id: Id('subscription'), ...ListDeliveriesQuery.properties }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: async (actor, { webhook_id, limit = 20, cursor, status, event, from, to, id }, s) => {
      const result = await s.deliveries.list(actor, webhook_id, { limit, cursor, filter: { status, event, from: time(from), to: time(to), id } });
      return { data: result.items, next_cursor: result.nextCursor };
    },
  }),
  tool({
    name: 'get_delivery',
    title: 'Read a delivery',
    description: 'One delivery with every attempt: status codes, timings and response excerpts.',
    input: input({ webhook_id: Id('subscription'), delivery_id: Id('delivery') }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: (actor, { webhook_id, delivery_id }, s) => s.deliveries.get(actor, webhook_id, delivery_id),
  }),
  tool({
    name: 'replay_delivery',
    title: 'Replay a delivery',
    description: 'Sends a delivery again, as a new delivery of the same event with the same body.',
    input: input({ webhook_id: Id('subscription'), delivery_id: Id('delivery') }),
    resource: 'webhooks',
    action: 'update',
    idempotent: false,
    run: (actor, { webhook_id, delivery_id }, s) => s.deliveries.replay(actor, webhook_id, delivery_id),
  }),
];
