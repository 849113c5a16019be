import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendExport } from '../../http/download.js';
import type { AppDeps } from '../../http/app-deps.js';
import { actorOf } from '../hooks/auth.js';
import { ApiKeyList, AuditLog, AuditLogQuery, CreateApiKeyBody, CreatedApiKey, Export, ExportList } from '../../schemas/admin.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { EmptyBody } from '../../schemas/tasks.js';
import { ListQuery } from '../../schemas/workflows.js';
import { emptyBodyIsObject, extension } from './route-parts.js';
import type { CreatedKey, KeySummary } from '../../services/identity/api-keys-service.js';
import type { AuditEntryView } from '../../services/audit/audit-service.js';
import { toExportResource } from '../../services/lifecycle/exports-service.js';
import { toListEnvelope } from '../../services/shared/pagination.js';

const changeErrors = { ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse, 415: ErrorResponse, 422: ErrorResponse };

const time = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));

/** An audit row as CONTRACT 13 shows it. */
export const toAuditResource = (entry: AuditEntryView) => ({
  id: entry.id,
  created_at: entry.occurred_at,
  actor: { type: entry.actor.type, id: entry.actor.id, label: entry.actor.label },
  action: entry.action,
  target: entry.target,
  source: entry.source,
  ip: entry.ip,
  user_agent: entry.user_agent,
  request_id: entry.request_id,
  outcome: entry.outcome,
  changes: entry.changes,
});

/** A key as CONTRACT 13 shows it: never the secret, except once in the POST answer. */
const toKeyResource = (key: Omit<KeySummary, 'organization_id' | 'revoked_at'>) => ({
  id: key.id,
  name: key.name,
  scope: key.scope,
  user_id: key.user_id,
  prefix: key.prefix,
  created_at: key.created_at,
  last_used_at: key.last_used_at,
  expires_at: key.expires_at,
});

const toCreatedKeyResource = (created: CreatedKey) => ({
  ...toKeyResource({ ...created, prefix: created.key.slice(0, 12), last_used_at: null }),
  key: created.key,
});

/** The audit log, API keys and exports (CONTRACT 13): the services the dashboard's pages call. */
export const adminRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  app.get('/v1/audit-log', {
    config: { auth: { resource: 'audit_log', action: 'read' } },
    schema: {
      tags: ['Audit log'],
      operationId: 'listAuditLog',
      summary: "Read the organisation's audit log, newest first (extension; admins and owners)",
      description: 'Every change, whatever the door (API, dashboard, CLI), with who, from where and what changed. The dashboard\'s filters.',
      ...extension,
      querystring: AuditLogQuery,
      response: { 200: AuditLog, ...authErrorResponses },
    },
    handler: async (request) => {
      const { limit = 20, cursor, action, actor_id, target_id, from, to } = request.query;
      const page = await services.audit.list(actorOf(request), { action, actor: actor_id, target: target_id, from: time(from), to: time(to) }, { limit, cursor });
      return toListEnvelope({ items: page.items.map(toAuditResource), nextCursor: page.nextCursor });
    },
  });

  app.get('/v1/api-keys', {
    config: { auth: { resource: 'api_keys', action: 'read' } },
    schema: {
      tags: ['API keys'],
      operationId: 'listApiKeys',
      summary: 'List API keys, newest first (extension)',
      description: 'The key user\'s own keys; for admins and owners, every key of the organisation. Revoked keys are not listed.',
      ...extension,
      querystring: ListQuery,
      response: { 200: ApiKeyList, ...authErrorResponses },
    },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      const page = await services.apiKeys.listPage(actorOf(request), { limit, cursor });
      return toListEnvelope({ items: page.items.map(toKeyResource), nextCursor: page.nextCursor });
    },
  });

  app.post('/v1/api-keys', {
    config: { auth: { resource: 'api_keys', action: 'create' } },
    schema: {
      tags: ['API keys'],
      operationId: 'createApiKey',
      summary: 'Create an API key for the calling key\'s user (extension)',
      description: 'Never wider than the calling key (403), and only for its own user (403). What the new key may do is also bounded by the user\'s role at each request.',
      ...extension,
      body: CreateApiKeyBody,
      response: { 201: CreatedApiKey, ...changeErrors },
    },
    handler: async (request, reply) => {
      const { scope, name, user_id, expires_at } = request.body;
      const expiresAt = expires_at === undefined || expires_at === null ? null : Date.parse(expires_at);
      const created = await services.apiKeys.create(actorOf(request), { scope, name, userId: user_id, expiresAt });
      return reply.code(201).send(toCreatedKeyResource(created));
    },
  });

  // Allowed while the workspace is read-only (DASHBOARD 10): taking access away is never refused.
  app.delete('/v1/api-keys/:id', {
    config: { auth: { resource: 'api_keys', action: 'delete', whileReadOnly: true } },
    schema: {
      tags: ['API keys'],
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (extension)',
      description: 'Refused from the next request on, on every instance. Admins and owners revoke any key of the organisation; others their own.',
      ...extension,
      params: IdParams,
      response: { 204: { type: 'null', description: 'Revoked.' }, ...authErrorResponses, 404: ErrorResponse },
    },
    handler: async (request, reply) => {
      await services.apiKeys.revoke(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  });

  // Allowed while read-only (DASHBOARD 10): the organisation's data can always be taken out.
  app.post('/v1/exports', {
    config: { auth: { resource: 'exports', action: 'create', whileReadOnly: true }, bodyOptional: true },
    preValidation: emptyBodyIsObject,
    schema: {
      tags: ['Exports'],
      operationId: 'requestExport',
      summary: 'Request an export of the workspace (extension; admins and owners; no request body)',
      description: 'A ZIP of every collection as JSON lines, built by a worker; poll it, then download it for 7 days. 409 while another is being prepared.',
      ...extension,
      body: EmptyBody,
      response: { 202: Export, ...changeErrors },
    },
    handler: async (request, reply) => reply.code(202).send(toExportResource(await services.exports.request(actorOf(request)))),
  });

  app.get('/v1/exports', {
    config: { auth: { resource: 'exports', action: 'read' } },
    schema: { tags: ['Exports'], operationId: 'listExports', summary: 'List exports, newest first (extension; admins and owners)', ...extension, querystring: ListQuery, response: { 200: ExportList, ...authErrorResponses } },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      const page = await services.exports.listPage(actorOf(request), { limit, cursor });
      return toListEnvelope({ items: page.items.map(toExportResource), nextCursor: page.nextCursor });
    },
  });

  app.get('/v1/exports/:id', {
    config: { auth: { resource: 'exports', action: 'read' } },
    schema: { tags: ['Exports'], operationId: 'getExport', summary: 'Read an export (extension; admins and owners)', ...extension, params: IdParams, response: { 200: Export, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => toExportResource(await services.exports.get(actorOf(request), request.params.id)),
  });

  // No HEAD twin: every GET is an audited download.
  app.get('/v1/exports/:id/download', {
    exposeHeadRoute: false,
    config: { auth: { resource: 'exports', action: 'read' } },
    schema: {
      tags: ['Exports'],
      operationId: 'downloadExport',
      summary: 'Download a ready export: the dashboard\'s ZIP (extension; admins and owners)',
      description: '409 while it is being prepared or after it failed; 404 once expired. Each download is audited (`export.downloaded`).',
      ...extension,
      params: IdParams,
      response: {
        200: { description: 'The ZIP.', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } },
        ...authErrorResponses,
        404: ErrorResponse,
        409: ErrorResponse,
      },
    },
    handler: async (request, reply) => {
      const file = await services.exports.openDownload(actorOf(request), request.params.id);
      return sendExport(reply, file);
    },
  });
};

