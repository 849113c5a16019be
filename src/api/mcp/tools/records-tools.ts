import { ListEventsQuery } from '../../../schemas/organization.js';
import { AuditLogQuery } from '../../../schemas/admin.js';
import { toListEnvelope } from '../../../services/shared/pagination.js';
import { toExportResource } from '../../../services/lifecycle/exports-service.js';
import { toAuditResource } from '../../routes/admin.js';
import { Id, input, page, time, tool, type McpTool } from '../mcp-tool.js';

/** Events are stored as the JSON their deliveries sent; the tool answers that text as it is. */
const eventPage = (items: string[], next: string | null) => `{"data":[${items.join(',')}],"next_cursor":${next === null ? 'null' : JSON.stringify(next)}}`;

/** Events, the audit log and exports. */
export const RECORD_TOOLS: readonly McpTool[] = [
  tool({
    name: 'list_events',
    title: 'List events',
    description: 'Events of the organisation, newest first, as webhooks received them. Filter by type: `task.assigned,workflow.completed`.',
    input: input({ ...ListEventsQuery.properties }),
    resource: 'events',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, type }, s) => {
      const result = await s.events.list(actor, { type }, { limit, cursor });
      return eventPage(result.items, result.nextCursor);
    },
  }),
  tool({
    name: 'get_event',
    title: 'Read an event',
    description: 'One event by id, with its data.',
    input: input({ event_id: Id('event') }),
    resource: 'events',
    action: 'read',
    idempotent: true,
    run: (actor, { event_id }, s) => s.events.get(actor, event_id),
  }),
  tool({
    name: 'list_audit_log',
    title: 'Read the audit log',
    description: 'Every change in the organisation, newest first: who, from where, what changed. Admins and owners.',
    input: input({ ...AuditLogQuery.properties }),
    resource: 'audit_log',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, action, actor_id, target_id, from, to }, s) => {
      const result = await s.audit.list(actor, { action, actor: actor_id, target: target_id, from: time(from), to: time(to) }, { limit, cursor });
      return toListEnvelope({ items: result.items.map(toAuditResource), nextCursor: result.nextCursor });
    },
  }),
  tool({
    name: 'request_export',
    title: 'Request an export',
    description: "Starts an export of the organisation's data; read it with get_export until it is ready. Admins and owners.",
    input: input({}),
    resource: 'exports',
    action: 'create',
    idempotent: false,
    run: async (actor, _input, s) => toExportResource(await s.exports.request(actor)),
  }),
  tool({
    name: 'list_exports',
    title: 'List exports',
    description: 'Exports of the organisation, newest first, with their state.',
    input: input({ ...page }),
    resource: 'exports',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor }, s) => {
      const result = await s.exports.listPage(actor, { limit, cursor });
      return toListEnvelope({ items: result.items.map(toExportResource), nextCursor: result.nextCursor });
    },
  }),
  tool({
    name: 'get_export',
    title: 'Read an export',
    description: "An export's state; when ready, its download address (fetch it with your credentials).",
    input: input({ export_id: Id('export') }),
    resource: 'exports',
    action: 'read',
    idempotent: true,
    run: async (actor, { export_id }, s) => toExportResource(await s.exports.get(actor, export_id)),
  }),
];
