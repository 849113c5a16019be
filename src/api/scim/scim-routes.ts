import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { DomainError, errors } from '../../errors.js';
import type { AppDeps } from '../../http/app-deps.js';
import { requestContext } from '../../http/request-context.js';
import { scimActor, type OperatorActor } from '../../services/access/actor.js';
import { bearerToken } from '../../services/identity/auth-service.js';
import type { ListParams } from '../../services/provisioning/scim-directory-service.js';
import { ERROR_SCHEMA, ScimFault } from '../../services/provisioning/scim-resources.js';
import type { ScimCaller } from '../../services/provisioning/scim-settings-service.js';
import { listOf, resourceTypes, schemas, serviceProviderConfig } from './scim-discovery.js';

declare module 'fastify' {
  interface FastifyRequest {
    scimCaller: ScimCaller | null;
  }
}

/** CONTRACT 16: at most this many SCIM requests a second per organisation. */
export const SCIM_RATE_PER_SECOND = 100;
const AUTH_WINDOW_MS = 60_000;
const SCIM_TYPE = 'application/scim+json; charset=utf-8';

const Resource = Type.Object({}, { additionalProperties: true });
const Body = Type.Object({}, { additionalProperties: true, description: 'A SCIM resource or PatchOp (RFC 7643/7644).' });
const IdParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const ListQuery = Type.Object({
  filter: Type.Optional(Type.String({ maxLength: 1000 })),
  startIndex: Type.Optional(Type.Integer()),
  count: Type.Optional(Type.Integer()),
  attributes: Type.Optional(Type.String({ maxLength: 1000 })),
  excludedAttributes: Type.Optional(Type.String({ maxLength: 1000 })),
  sortBy: Type.Optional(Type.String({ maxLength: 200 })),
  sortOrder: Type.Optional(Type.String({ maxLength: 20 })),
});
const GetQuery = Type.Object({
  attributes: Type.Optional(Type.String({ maxLength: 1000 })),
  excludedAttributes: Type.Optional(Type.String({ maxLength: 1000 })),
});

const withoutMembers = (excluded: string | undefined) => (excluded ?? '').split(',').some((a) => a.trim().toLowerCase() === 'members');

/** Any error of a SCIM route, in the SCIM error schema (RFC 7644 3.12): `status` as a string, `scimType` where one applies. */
function toScimError(error: FastifyError | DomainError): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } {
  let status = 500;
  let detail = 'internal error';
  let scimType: string | null = null;
  let headers: Record<string, string> | undefined;
  if (error instanceof ScimFault) {
    status = error.status;
    detail = error.message;
    scimType = error.scimType;
  } else if (error instanceof DomainError) {
    status = error.status;
    detail = error.message;
    headers = error.headers;
    if (error.code === 'invalid_json') scimType = 'invalidSyntax';
    else if (error.code === 'validation_failed') scimType = 'invalidValue';
  } else if ((error as FastifyError).validation) {
    status = 400;
    scimType = 'invalidValue';
    detail = error.message;
  } else if (error.statusCode === 415) {
    status = 415;
    detail = 'send Content-Type: application/scim+json (or application/json)';
  } else if (error.statusCode === 413) {
    status = 413;
    detail = 'request body is larger than 1 MiB';
  } else if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    status = 400;
    scimType = 'invalidSyntax';
    detail = 'the request body is not valid JSON';
  }
  return { status, headers, body: { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail } };
}

/**
 * SCIM 2.0 at /scim/v2 (CONTRACT 16): the organisation's identity provider creates, updates and removes
 * members and groups. A door onto the provisioning services like /v1 is onto the others: authentication by
 * SCIM token (the token names the organisation), 100 requests a second per organisation, errors in the
 * SCIM schema. Bodies are SCIM resources, which carry attributes and extensions this service does not keep,
 * so their schema accepts any object and the services read what they keep (scim-resources.ts).
 */
export const scimRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, rateLimiter, config }) => {
  const settings = services.scimSettings;
  const directory = services.scimDirectory;
  const baseUrl = settings.baseUrl;

  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/scim+json', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    if (!isUtf8(body as Buffer)) return done(errors.invalidJson('request body is not valid UTF-8'), undefined);
    return parseJson(request, body.toString('utf8'), done);
  });
  app.decorateRequest('scimCaller', null);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, body, headers } = toScimError(error);
    if (status >= 500) request.log.error({ err: error }, 'SCIM request failed');
    if (headers) reply.headers(headers);
    return reply.code(status).type(SCIM_TYPE).send(body);
  });

  async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.header('cache-control', 'no-store');
    const token = bearerToken(request.headers.authorization);
    const caller = token ? await settings.authenticate(token) : null;
    if (!caller) {
      const failures = await rateLimiter.hit(`authfail:${request.ip}`, config.authFailureLimitPerMinute, AUTH_WINDOW_MS);
      if (!failures.allowed) throw errors.rateLimited(failures.retryAfterSeconds);
      reply.header('www-authenticate', 'Bearer realm="scim"');
      throw new ScimFault(401, null, 'a valid SCIM token is required: Authorization: Bearer wss_…');
    }
    const decision = await rateLimiter.hit(`scim:${caller.orgId}`, SCIM_RATE_PER_SECOND, 1000);
    if (!decision.allowed) throw errors.rateLimited(decision.retryAfterSeconds);
    request.scimCaller = caller;
  }

  const actorOf = (request: FastifyRequest): OperatorActor => {
    const caller = request.scimCaller!;
    const { ip, userAgent, requestId } = requestContext(request, 'scim');
    return scimActor(caller.orgId, caller.name, { ip, userAgent, requestId });
  };
  const orgOf = (request: FastifyRequest) => request.scimCaller!.orgId;
  const send = (reply: FastifyReply, status: number, body: unknown) => reply.code(status).type(SCIM_TYPE).send(body);
  const listParams = (q: { filter?: string; startIndex?: number; count?: number; excludedAttributes?: string }): ListParams => ({
    filter: q.filter,
    startIndex: q.startIndex,
    count: q.count,
    withoutMembers: withoutMembers(q.excludedAttributes),
  });

  // Discovery (RFC 7644 4): nothing of an organisation's, so no token is asked for.
  const discovery = { hide: true, response: { 200: Resource } } as const;
  app.get('/ServiceProviderConfig', { schema: discovery }, async (_request, reply) => send(reply, 200, serviceProviderConfig(baseUrl)));
  app.get('/ResourceTypes', { schema: discovery }, async (_request, reply) => send(reply, 200, listOf(resourceTypes(baseUrl))));
  app.get('/ResourceTypes/:id', { schema: { ...discovery, params: IdParams } }, async (request, reply) => {
    const found = resourceTypes(baseUrl).find((r) => r.id === request.params.id);
    if (!found) throw new ScimFault(404, null, `resource type ${request.params.id} not found`);
    return send(reply, 200, found);
  });
  app.get('/Schemas', { schema: discovery }, async (_request, reply) => send(reply, 200, listOf(schemas(baseUrl))));
  app.get('/Schemas/:id', { schema: { ...discovery, params: IdParams } }, async (request, reply) => {
    const found = schemas(baseUrl).find((s) => s.id === request.params.id);
    if (!found) throw new ScimFault(404, null, `schema ${request.params.id} not found`);
    return send(reply, 200, found);
  });

  const read = { onRequest: authenticate };
  const answer = { 200: Resource, 201: Resource, 204: { type: 'null' } } as const;

  app.get('/Users', { ...read, schema: { hide: true, querystring: ListQuery, response: answer } }, async (request, reply) =>
    send(reply, 200, await directory.listUsers(orgOf(request), listParams(request.query))),
  );
  app.post('/Users', { ...read, schema: { hide: true, body: Body, response: answer } }, async (request, reply) => {
    const created = await directory.createUser(actorOf(request), request.body);
    reply.header('location', (created.meta as { location: string }).location);
    return send(reply, 201, created);
  });
  app.get('/Users/:id', { ...read, schema: { hide: true, params: IdParams, querystring: GetQuery, response: answer } }, async (request, reply) =>
    send(reply, 200, await directory.getUser(orgOf(request), request.params.id)),
  );
  app.put('/Users/:id', { ...read, schema: { hide: true, params: IdParams, body: Body, response: answer } }, async (request, reply) =>
    send(reply, 200, await directory.replaceUser(actorOf(request), request.params.id, request.body)),
  );
  app.patch('/Users/:id', { ...read, schema: { hide: true, params: IdParams, body: Body, response: answer } }, async (request, reply) =>
    send(reply, 200, await directory.patchUser(actorOf(request), request.params.id, request.body)),
  );
  app.delete('/Users/:id', { ...read, schema: { hide: true, params: IdParams, response: answer } }, async (request, reply) => {
    await directory.deleteUser(actorOf(request), request.params.id);
    return reply.code(204).send();
  });

  app.get('/Groups', { ...read, schema: { hide: true, querystring: ListQuery, response: answer } }, async (request, reply) =>
    send(reply, 200, await directory.listGroups(orgOf(request), listParams(request.query))),
  );
  app.post('/Groups', { ...read, schema: { hide: true, body: Body, response: answer } }, async (request, reply) => {
    const created = await directory.createGroup(actorOf(request), request.body);
    reply.header('location', (created.meta as { location: string }).location);
    return send(reply, 201, created);
  });
  app.get('/Groups/:id', { ...read, schema: { hide: true, params: IdParams, querystring: GetQuery, response: answer } }, async (request, reply) =>
    send(reply, 200, await directory.getGroup(orgOf(request), request.params.id, withoutMembers(request.query.excludedAttributes))),
  );
  app.put('/Groups/:id', { ...read, schema: { hide: true, params: IdParams, body: Body, response: answer } }, async (request, reply) =>
    send(reply, 200, await directory.replaceGroup(actorOf(request), request.params.id, request.body)),
  );
  app.patch('/Groups/:id', { ...read, schema: { hide: true, params: IdParams, body: Body, response: answer } }, async (request, reply) => {
    const resource = await directory.patchGroup(actorOf(request), request.params.id, request.body);
    // Entra and Okta read nothing back from a group PATCH; the resource is returned for everyone else.
    return send(reply, 200, resource);
  });
  app.delete('/Groups/:id', { ...read, schema: { hide: true, params: IdParams, response: answer } }, async (request, reply) => {
    await directory.deleteGroup(actorOf(request), request.params.id);
    return reply.code(204).send();
  });
};
