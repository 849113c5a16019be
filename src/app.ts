import { isUtf8 } from 'node:buffer';
import type { Socket } from 'node:net';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { App, AppDeps } from './http/app-deps.js';
import FindMyWay from 'find-my-way';
import { DomainError, errors } from './errors.js';
import { databaseUnavailableError, isDatabaseUnavailable } from './db/availability.js';
import { newId } from './lib/ids.js';
import { hasControlCharacter, isStorableText } from './lib/text.js';
import { dashboardPlugin } from './dashboard/plugin.js';
import { registerDocsUi } from './api/docs-ui.js';
import { registerAuth } from './api/hooks/auth.js';
import { registerIdempotency } from './api/hooks/idempotency.js';
import { lazyChildLogger } from './http/lazy-logger.js';
import { registerMetrics } from './http/metrics.js';
import { finishDocument } from './api/openapi/document.js';
import { routes } from './api/routes/index.js';
import { scimRoutes } from './api/scim/scim-routes.js';
import { oauthRoutes } from './api/oauth/oauth-routes.js';
import { mcpRoutes } from './api/mcp/mcp-routes.js';
import { stripeWebhookRoutes } from './api/routes/stripe-webhook.js';
import { compileValidator, toDetails } from './http/validation.js';

export type { App, AppDeps, HealthChecks } from './http/app-deps.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const MAX_PARAM_LENGTH = 512;

/** Writes the contract's error body `{ error: { code, message, details? } }` with the error's headers. */
function sendError(reply: FastifyReply, domain: DomainError): FastifyReply {
  if (domain.headers) reply.headers(domain.headers);
  return reply.code(domain.status).type('application/json; charset=utf-8').send(domain.toBody());
}

/**
 * What Node's HTTP parser refuses before any request exists (a bad Content-Length, Content-Length with
 * Transfer-Encoding, a request line it cannot read) gets the contract's JSON body rather than Fastify's own
 * shape, and the connection closes: after a framing error nothing else on it can be trusted.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, label, domain] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', new DomainError(408, 'request_timeout', 'the request was not received in time')]
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', new DomainError(431, 'headers_too_large', 'the request headers are too large')]
        : [400, 'Bad Request', errors.badRequest('the HTTP request is malformed and cannot be read')];
  const body = JSON.stringify(domain.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${label}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${newId('req')}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** More than one Host header is refused (RFC 9112 3.2): proxies and the service could disagree on which one counts. */
function hasDuplicateHost(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

const PARAMS_CHECKED = Symbol('params checked');

/** Whether every path parameter is text an id could be (see the onRoute hook in buildApp). */
function paramsAreText(request: FastifyRequest): boolean {
  const params = request.params as Record<string, unknown> | undefined;
  if (params) {
    for (const key in params) {
      const value = params[key];
      if (typeof value === 'string' && (hasControlCharacter(value) || !isStorableText(value))) return false;
    }
  }
  return true;
}

function checkParamsHook(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  done(paramsAreText(request) ? undefined : errors.notFound());
}

/** The URL as logged: a path parameter that is a credential (an invitation token) and credential query values are masked. */
function loggableUrl(request: FastifyRequest): string {
  const token = (request.params as Record<string, unknown> | undefined)?.token;
  const url = typeof token === 'string' && token.length > 0 ? request.url.split(token).join('[redacted]') : request.url;
  return url.includes('?') ? url.replace(SECRET_QUERY_VALUES, '$1[redacted]') : url;
}

/**
 * Query parameters that carry a credential, however short-lived: an authorization code and its `state` (the
 * single sign-on callback, security review F8), and the tokens OAuth and OpenID Connect put in addresses.
 */
const SECRET_QUERY_VALUES = /([?&](?:code|state|session_state|token|id_token|access_token|refresh_token)=)[^&#]*/gi;

/** Maps anything thrown during a request to the contract's status, code and body. */
function toDomainError(error: FastifyError & { validationContext?: string }): DomainError {
  if (error instanceof DomainError) return error;
  if (error.validation) return errors.validation(toDetails(error.validation, error.validationContext));
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson('request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.invalidJson();
  }
  // The JSON parser's own SyntaxError, and prototype-poisoning refusals (`__proto__`, `constructor.prototype`).
  if (error.statusCode === 400) return errors.invalidJson();
  if (error.statusCode === 404) return errors.notFound('resource');
  if (error.statusCode === 413) return errors.payloadTooLarge();
  if (error.statusCode === 415) return errors.unsupportedMediaType();
  // Any other refusal a plugin raises stays a client error rather than becoming a 500.
  if (error.statusCode && error.statusCode > 400 && error.statusCode < 500) {
    return new DomainError(error.statusCode, 'bad_request', 'the request cannot be processed');
  }
  // PostgreSQL down or restarting, the pool exhausted past its wait: 503 at once, never a hang or a 500.
  if (isDatabaseUnavailable(error)) return databaseUnavailableError();
  return errors.internal();
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config } = deps;
  const hsts = config.hstsMaxAgeSeconds === null ? null : `max-age=${config.hstsMaxAgeSeconds}; includeSubDomains`;
  /** What every answer carries: its request id, no MIME sniffing, HSTS when configured, and no caching of API answers. */
  function setCommonHeaders(request: FastifyRequest, reply: FastifyReply): void {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // API answers are never stored by a cache on the way: some carry a webhook's signing secret or a new key.
    if (request.url.startsWith('/v1')) reply.header('cache-control', 'no-store');
    if (hsts !== null) reply.header('strict-transport-security', hsts);
  }
  const app = Fastify({
    loggerInstance: deps.logger,
    // The per-request child logger is built only when the request writes a line (lazy-logger.ts).
    childLoggerFactory: lazyChildLogger,
    // One line per request, written in onResponse, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    trustProxy: config.trustProxy,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('req');
    },
    // Ids are short, but an id of any shape is answered 404 (CONTRACT 1), not Fastify's 414.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Fastify answers these before routing, in its own body; the contract's body instead. A path that
    // cannot be decoded or a parameter beyond any id's length names nothing that exists: 404.
    clientErrorHandler,
    // No onRequest hook runs for these: the common headers are set here.
    frameworkErrors: (error, request, reply) => {
      const known = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      if (!known) request.log.error({ err: error }, 'request failed');
      setCommonHeaders(request, reply);
      return sendError(reply, known ? errors.notFound('resource') : errors.internal());
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // First, so that it sees every route and hook registered after it.
  if (deps.tracing?.fastifyPlugin) await app.register(deps.tracing.fastifyPlugin);
  // Before any route: each route gets its own counting hook as it is declared.
  if (deps.metrics) registerMetrics(app, deps.metrics);

  // A path id with a control character, or anything the text rule refuses (U+0000, an unpaired
  // surrogate), names nothing: not found (CONTRACT 1), and PostgreSQL would refuse such text outright.
  // After authentication and validation, so the contract's order of answers (401, 429, 403, 400, then
  // 404) holds. (A path that is not UTF-8 at all, the only way to spell a lone surrogate in a URL, never
  // routes: frameworkErrors answers it 404 above.) Only routes with path parameters check: first among
  // their preHandler hooks where they have or will get some (a POST may get the idempotency hook, which is
  // appended after this one), else as they call the handler, since a preHandler stage on every request
  // cost a GET by id about a microsecond.
  app.addHook('onRoute', (route) => {
    if (!/[:*]/.test(route.url) || PARAMS_CHECKED in route.handler) return;
    const hooks = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (hooks.length > 0 || methods.includes('POST')) {
      if (!hooks.includes(checkParamsHook as never)) route.preHandler = [checkParamsHook, ...hooks] as typeof route.preHandler;
      return;
    }
    const handler = route.handler;
    route.handler = Object.assign(
      function (this: unknown, request: FastifyRequest, reply: FastifyReply) {
        if (!paramsAreText(request)) throw errors.notFound();
        return handler.call(this as never, request, reply);
      },
      { [PARAMS_CHECKED]: true },
    ) as typeof route.handler;
  });

  app.setValidatorCompiler(({ schema, httpPart }) => compileValidator(schema, httpPart));
  // Only JSON bodies are accepted: everything else is 415.
  app.removeContentTypeParser('text/plain');
  // Fastify's own JSON parser (with its prototype-poisoning guard), except that an empty body is no body:
  // many clients send `Content-Type: application/json` on a DELETE or a bodiless POST. Routes that take a
  // body still refuse it with invalid_json (the preValidation hook below).
  // Read as bytes: decoding to a string would turn bytes that are not UTF-8 into U+FFFD, and text is never
  // silently changed (CONTRACT 1), so such a body is refused instead (isUtf8 is native and allocates nothing).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    if (!isUtf8(body as Buffer)) return done(errors.invalidJson('request body is not valid UTF-8'), undefined);
    return parseJson(request, body.toString('utf8'), done);
  });

  // A second router that knows every path and its methods, to tell 405 from 404.
  const methodRouter = FindMyWay({ maxParamLength: MAX_PARAM_LENGTH });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!methodRouter.hasRoute(method as 'GET', route.url)) methodRouter.on(method as 'GET', route.url, () => {});
    }
  });

  // One callback-style hook on every request (no promise, and no onSend stage: each hook stage costs a GET by id
  // about a microsecond, docs/benchmarks.md issue 29). The headers every answer carries are set here, before
  // anything can fail; error answers keep them, and a route that sets its own value later replaces it.
  app.addHook('onRequest', (request, reply, done) => {
    setCommonHeaders(request, reply);
    if (hasDuplicateHost(request.raw.rawHeaders)) return done(errors.badRequest('the request has more than one Host header'));
    done();
  });

  // Registered only when info is on: at warn (production under load) requests pay nothing for it, not even a call.
  if (['trace', 'debug', 'info'].includes(app.log.level)) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        { method: request.method, url: loggableUrl(request), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
        'request completed',
      );
      done();
    });
  }

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const domain = toDomainError(error);
    if (domain.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, domain);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    // DASHBOARD 1: a person who types the bare address lands on the dashboard; clients still get the API's 404.
    if (path === '/' && (request.method === 'GET' || request.method === 'HEAD') && /\btext\/html\b/.test(request.headers.accept ?? '')) {
      return reply.code(303).header('location', '/dashboard').send();
    }
    const routed = METHODS.filter((m) => methodRouter.find(m, path) !== null);
    // Every known path answers OPTIONS itself (below), so Allow names it too.
    const allow = routed.length > 0 ? [...routed, 'OPTIONS'] : [];
    if (request.method === 'OPTIONS' && allow.length > 0) {
      // Discovery and CORS-style preflight: no authentication, no body, just what the path accepts.
      return reply.code(204).header('allow', allow.join(', ')).send();
    }
    // A route of this very method that sent its request here (a static file route whose file is missing)
    // found nothing: 404, not 405.
    const methodRouted = (routed as readonly string[]).includes(request.method);
    return sendError(reply, allow.length > 0 && !methodRouted ? errors.methodNotAllowed(allow) : errors.notFound('route'));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Workspace Service API',
        version: '1.0.0',
        description:
          'Projects, members and webhook subscriptions of an organisation, and the signed events it sends to them. ' +
          'Every /v1 call is authenticated with `Authorization: Bearer <API key>` (or an OAuth access token an app was given for /v1). Errors share one body, ' +
          '`{ "error": { "code", "message", "details"? } }`; lists are pages of `{ "data", "next_cursor" }`; a POST is ' +
          'safe to retry with an `Idempotency-Key`. Operations tagged Extensions (and marked `x-extension: true`) go ' +
          'beyond the published specification. A typed TypeScript client ships with the package as ' +
          '`workspace-service/client`.',
        // Our own copy, not SPDX's page: the reference at /docs links to nothing outside the service.
        license: { name: 'MIT', url: `${config.publicBaseUrl}/docs/license` },
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (wsk_...), or an OAuth access token (wsa_...) an app was given for /v1 (docs/agents.md).' },
        },
      },
      security: [{ apiKey: [] }],
    },
    transformObject: (documentObject) => finishDocument((documentObject as { openapiObject: unknown }).openapiObject, { publicBaseUrl: config.publicBaseUrl }),
  });
  await registerDocsUi(app, { publicBaseUrl: config.publicBaseUrl });

  registerAuth(app, deps);
  registerIdempotency(app, deps.services.idempotency);

  // An empty POST/PUT to a route that takes a body is a JSON error, not a schema one. Attached to those
  // routes only, so no other request pays for the check.
  const requireBody = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    if (request.body === undefined && (request.method === 'POST' || request.method === 'PUT')) {
      return done(errors.invalidJson('request body is empty; send a JSON object'));
    }
    done();
  };
  app.addHook('onRoute', (route) => {
    if (!route.schema?.body || route.config?.bodyOptional) return;
    const hooks = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    if (hooks.includes(requireBody as never)) return;
    route.preValidation = [requireBody, ...hooks] as typeof route.preValidation;
  });


  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  for (const plugin of routes) await app.register(plugin, deps);
  // Without Stripe the path does not exist: the normal 404.
  if (deps.stripe) await app.register(stripeWebhookRoutes, { ...deps, stripe: deps.stripe });
  await app.register(scimRoutes, { ...deps, prefix: '/scim/v2' });
  if (deps.authorizationServer) await app.register(oauthRoutes, { ...deps, authorizationServer: deps.authorizationServer });
  await app.register(mcpRoutes, deps);
  await app.register(dashboardPlugin, { ...deps, prefix: '/dashboard' });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    let database: 'ok' | 'unavailable' = 'ok';
    let schema: 'ok' | 'behind' | 'unknown' = 'unknown';
    let pending: readonly string[] = [];
    try {
      await deps.health.database();
      // Behind means this code would query tables or columns that are not there: not ready, whatever else holds.
      pending = await deps.health.pendingMigrations();
      schema = pending.length > 0 ? 'behind' : 'ok';
    } catch {
      database = 'unavailable';
    }
    const redis = await deps.health.redis().catch(() => 'degraded' as const);
    const ready = database === 'ok' && schema === 'ok';
    const status = ready ? (redis === 'degraded' ? 'degraded' : 'ok') : 'unavailable';
    const body = { status, checks: { database, schema, redis }, ...(pending.length > 0 ? { pending_migrations: pending } : {}) };
    return reply.code(ready ? 200 : 503).send(body);
  });

  return app as unknown as App;
}
