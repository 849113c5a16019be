import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import type { AppDeps } from '../../http/app-deps.js';
import type { AuthorizationServer } from '../../oauth/authorization-server.js';
import { OAUTH_SCOPES } from '../../services/apps/app-scopes.js';

/** Requests to /oauth/* per client address and minute: registration and the token endpoint are anonymous. */
export const OAUTH_RATE_PER_MINUTE = 300;

/** The RFC 9728 document of one protected resource (CONTRACT 17). */
export function protectedResourceMetadata(publicBaseUrl: string, resource: 'mcp' | 'v1') {
  return {
    resource: `${publicBaseUrl}/${resource}`,
    authorization_servers: [publicBaseUrl],
    scopes_supported: OAUTH_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: resource === 'mcp' ? 'Workspace Service MCP server' : 'Workspace Service API',
    resource_documentation: `${publicBaseUrl}/docs`,
  };
}

/**
 * The authorization server's doors (CONTRACT 17): /oauth/* and the discovery documents. The protocol is
 * oidc-provider's; these routes hand it the raw request (no body parsed here: it reads its own), after the
 * service's own headers and a per-address rate limit, and serve the two RFC 9728 documents themselves.
 */
export async function oauthRoutes(app: FastifyInstance, deps: AppDeps & { authorizationServer: AuthorizationServer }): Promise<void> {
  const { authorizationServer: server, config, rateLimiter } = deps;

  // The server reads bodies itself: any type passes through unread.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  async function handOver(request: FastifyRequest, reply: FastifyReply, url?: string): Promise<void> {
    const limit = await rateLimiter.hit(`oauth:${request.ip}`, OAUTH_RATE_PER_MINUTE, 60_000);
    if (!limit.allowed) throw errors.rateLimited(limit.retryAfterSeconds);
    reply.hijack();
    // What onRequest set (request id, nosniff, HSTS) goes out with the server's own answer.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    // The server's own pages (an error page, a form_post answer) are never framed.
    reply.raw.setHeader('x-frame-options', 'DENY');
    reply.raw.setHeader('content-security-policy', "frame-ancestors 'none'");
    if (url !== undefined) request.raw.url = url;
    try {
      await server.handle(request.raw, reply.raw);
    } catch (err) {
      request.log.error({ err }, 'oauth request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.end(JSON.stringify(errors.internal().toBody()));
      }
    }
  }

  const hidden = { schema: { hide: true } } as const;
  app.route({ method: ['GET', 'POST', 'DELETE', 'PUT', 'OPTIONS'], url: '/oauth/*', ...hidden, handler: (request, reply) => handOver(request, reply) });
  app.route({ method: ['GET', 'OPTIONS'], url: '/.well-known/openid-configuration', ...hidden, handler: (request, reply) => handOver(request, reply) });
  // RFC 8414: the same document under its OAuth name (oidc-provider serves it under OpenID's).
  app.route({
    method: ['GET', 'OPTIONS'],
    url: '/.well-known/oauth-authorization-server',
    ...hidden,
    handler: (request, reply) => handOver(request, reply, '/.well-known/openid-configuration'),
  });

  // RFC 9728, path form: the bare document describes /mcp (CONTRACT 17).
  const resourceDocument = (resource: 'mcp' | 'v1') => async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('cache-control', 'public, max-age=3600');
    return protectedResourceMetadata(config.publicBaseUrl, resource);
  };
  app.get('/.well-known/oauth-protected-resource', hidden, resourceDocument('mcp'));
  app.get('/.well-known/oauth-protected-resource/mcp', hidden, resourceDocument('mcp'));
  app.get('/.well-known/oauth-protected-resource/v1', hidden, resourceDocument('v1'));
}
