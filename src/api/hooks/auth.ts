import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { bearerToken } from '../../services/identity/auth-service.js';
import type { UserActor } from '../../services/access/actor.js';
import { isAllowed, scopeAllows, type Action, type Principal } from '../../services/access/permissions.js';
import type { ProjectTarget } from '../../services/projects/projects-service.js';
import { type ResourceKind } from '../../schemas/access.js';
import type { RateLimitDecision } from '../../rate-limit/rate-limiter.js';
import type { AppDeps } from '../../http/app-deps.js';
import { requestContext } from '../../http/request-context.js';
import { workspaceReadOnlyError } from '../../services/access/workspace.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Marks a route as authenticated and names what it touches, for the permission check. A change
     * (any action but `read`) is refused while the workspace is read-only, unless `whileReadOnly` says
     * it is one of the changes DASHBOARD 10 still allows. `anyScope`: any valid key of the organisation may
     * read it, whatever its scope (GET /v1/organization).
     */
    auth?: { resource: ResourceKind; action: Action; whileReadOnly?: true; anyScope?: true; project?: ProjectTarget['kind'] };
    /** A route whose body may be left out altogether (it means `{}`): an empty POST is not `invalid_json` there. */
    bodyOptional?: true;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const WINDOW_MS = 60_000;
export const KEY_EXPIRED = 'API key expired';
export const TOKEN_EXPIRED = 'access token expired';
const AUTH_HOOK = Symbol('auth hook');

type RouteAuth = NonNullable<FastifyContextConfig['auth']>;

/**
 * Authentication, rate limiting and permission run in the route's `onRequest`, before the body is even parsed, so
 * the contract's order holds: 401, then 429, then 403, and only then 400 from parsing and validation.
 * The read-only check follows (`workspace_read_only` after `forbidden`, CONTRACT 1).
 * The permission check here is the services' own rule (`isAllowed`, which `authorize` applies inside every
 * service) asked early for the ordering; the services still enforce it for every door.
 */
export function registerAuth(app: FastifyInstance, deps: AppDeps): void {
  const { services, rateLimiter, config } = deps;
  const now = deps.clock ? deps.clock.now.bind(deps.clock) : Date.now;
  app.decorateRequest('principal', null);

  /**
   * Everything after the key is known and counted: the same rules whichever path got here. Synchronous but for
   * one case: a change on a project's resources that the user's organisation role does not allow, which their
   * role on that project may (CONTRACT 15); then the project is read first (a promise is returned).
   */
  function admit(request: FastifyRequest, reply: FastifyReply, auth: RouteAuth, principal: Principal, decision: RateLimitDecision): void | Promise<void> {
    // Checked here, not in the lookup: a cached principal must not outlive its key (CONTRACT 16).
    if (principal.expiresAt !== null && principal.expiresAt <= now()) throw errors.unauthorized(principal.app ? TOKEN_EXPIRED : KEY_EXPIRED);
    if (principal.app) {
      // RFC 8707: a token bound to /mcp is no credential for /v1 (CONTRACT 17).
      if (principal.app.resource !== 'v1') throw errors.unauthorized(`this access token is for ${principal.app.resource === 'mcp' ? '/mcp' : 'another resource'}`);
      // An hour-long app token never mints a key that outlives it (docs/decisions.md, "Issue 45").
      if (auth.resource === 'api_keys') throw errors.forbidden('apps cannot manage API keys');
    }
    reply.header('x-ratelimit-limit', decision.limit);
    reply.header('x-ratelimit-remaining', decision.remaining);
    if (!decision.allowed) throw errors.rateLimited(decision.retryAfterSeconds);
    // A request the key's limit counted is one the organisation made, whatever its answer (403, 400, 404...).
    services.usage.count(principal.orgId);

    if (!auth.anyScope && !isAllowed(principal, auth.resource, auth.action)) {
      if (!auth.project || !scopeAllows(principal.scope, auth.resource, auth.action)) throw errors.forbidden();
      return admitThroughProject(request, auth, principal);
    }
    finishAdmission(request, auth, principal);
  }

  function finishAdmission(request: FastifyRequest, auth: RouteAuth, principal: Principal): void {
    if (auth.action !== 'read' && !auth.whileReadOnly && principal.workspace.state !== 'active') throw workspaceReadOnlyError(principal.workspace);
    request.principal = principal;
    if (principal.app) services.connectedApps.touch(principal.orgId, principal.keyId);
    else services.apiKeys.touch(principal.orgId, principal.keyId);
  }

  /** The project's answer: refused is 403 now; hidden goes on, to be answered 404 after validation (CONTRACT 1's order). */
  async function admitThroughProject(request: FastifyRequest, auth: RouteAuth, principal: Principal): Promise<void> {
    const id = (request.params as { id?: string }).id ?? '';
    const actor = actorFor(request, principal);
    const verdict = await services.projects.precheck(actor, { kind: auth.project!, id }, auth.resource, auth.action);
    if (verdict === 'forbidden') throw errors.forbidden();
    finishAdmission(request, auth, principal);
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply, auth: RouteAuth, token: string | null): Promise<void> {
    const principal = token ? await services.auth.authenticate(token) : null;
    if (!principal) {
      // Only failures count here, per client address, so keys cannot be guessed at speed.
      const failures = await rateLimiter.hit(`authfail:${request.ip}`, config.authFailureLimitPerMinute, WINDOW_MS);
      if (!failures.allowed) throw errors.rateLimited(failures.retryAfterSeconds);
      throw errors.unauthorized();
    }
    await admit(request, reply, auth, principal, await rateLimiter.hit(`key:${principal.keyId}`, config.rateLimitPerMinute, WINDOW_MS));
  }

  /**
   * A key the principal cache holds, under an in-process limiter, is answered without a promise or a turn of
   * the microtask queue (most requests of a busy key); anything else (a first use, a refusal, Redis) awaits.
   */
  const hitNow = rateLimiter.hitNow?.bind(rateLimiter);
  const authenticateNow = hitNow && services.auth.authenticateNow?.bind(services.auth);
  function authenticateHook(request: FastifyRequest, reply: FastifyReply, auth: RouteAuth, done: (err?: Error) => void): void {
    const token = bearerToken(request.headers.authorization);
    const principal = token && authenticateNow ? authenticateNow(token) : undefined;
    if (principal && hitNow) {
      let admitted: void | Promise<void>;
      try {
        admitted = admit(request, reply, auth, principal, hitNow(`key:${principal.keyId}`, config.rateLimitPerMinute, WINDOW_MS));
      } catch (err) {
        return done(err as Error);
      }
      if (admitted) return void admitted.then(() => done(), done);
      return done();
    }
    authenticate(request, reply, auth, token).then(() => done(), done);
  }

  // Attached to each authenticated route with its `auth` bound, rather than as a global hook that reads
  // `request.routeOptions` (an object Fastify builds on every access) on every request of every route.
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) return;
    const hooks = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // The HEAD route Fastify derives from a GET copies its options, hook included.
    if (hooks.some((hook) => AUTH_HOOK in hook)) return;
    const hook = Object.assign((request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => authenticateHook(request, reply, auth, done), {
      [AUTH_HOOK]: true,
    });
    route.onRequest = [...hooks, hook] as typeof route.onRequest;
  });
}

/** The authenticated caller of a route declared with `config.auth`. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw errors.unauthorized();
  return request.principal;
}

/** The API caller as services see it: the key's user, with the key's scope and the request's context. */
export function actorOf(request: FastifyRequest): UserActor {
  return actorFor(request, principalOf(request));
}

/** The services' actor for a principal; `source` says which door (the API, or MCP) the audit log names. */
export function actorFor(request: FastifyRequest, p: Principal, source: 'api' | 'mcp' = 'api'): UserActor {
  return {
    type: 'user',
    orgId: p.orgId,
    userId: p.userId,
    label: p.email,
    role: p.role,
    scope: p.scope,
    keyId: p.app ? null : p.keyId,
    sessionId: null,
    confirmedAt: null,
    workspace: p.workspace,
    context: requestContext(request, source),
  };
}
