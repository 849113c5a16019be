import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, errors } from '../../errors.js';
import type { AppDeps } from '../../http/app-deps.js';
import { toDetails } from '../../http/validation.js';
import { roleAllows, scopeAllows, type Principal } from '../../services/access/permissions.js';
import type { UserActor } from '../../services/access/actor.js';
import { bearerToken } from '../../services/identity/auth-service.js';
import { actorFor, KEY_EXPIRED, TOKEN_EXPIRED } from '../hooks/auth.js';
import { MCP_TOOLS } from './mcp-catalogue.js';
import { compileTool, type CompiledTool } from './mcp-tool.js';

const WINDOW_MS = 60_000;
const SERVER_INFO = { name: 'workspace-service', title: 'Workspace Service', version: '1.0.0' };
const INSTRUCTIONS =
  "Workspace Service: an organisation's projects, members, workflows, runs, tasks and signed webhooks. Every tool acts as the " +
  'person who connected you, within the scopes they allowed. Lists take `limit` (1-100) and `cursor` (a previous `next_cursor`). ' +
  'Ids start with their kind: proj_, user_, wf_, run_, task_, wh_, dlv_, evt_, exp_.';

/**
 * Session ids (Mcp-Session-Id) carry no state: `<random>.<check>`, the check binding the session to the caller's
 * key or grant, so any instance accepts a session another one started and a session of one caller is not
 * another's. A session id is no credential; every request is authenticated on its own.
 */
function newSessionId(keyId: string): string {
  const nonce = randomBytes(16).toString('base64url');
  return `${nonce}.${sessionCheck(nonce, keyId)}`;
}
const sessionCheck = (nonce: string, keyId: string) => createHash('sha256').update(`${nonce}:${keyId}`).digest('base64url').slice(0, 22);
function sessionBelongs(id: string, keyId: string): boolean {
  const [nonce, check, extra] = id.split('.');
  return extra === undefined && nonce !== undefined && check !== undefined && /^[A-Za-z0-9_-]{22}$/.test(nonce) && check === sessionCheck(nonce, keyId);
}

/**
 * The SDK's transport keeps a session in memory; here a session is resumed on a fresh transport (pinned SDK
 * version: `_webStandardTransport`, `sessionId` and `_initialized` are its fields).
 */
function resumeSession(transport: StreamableHTTPServerTransport, sessionId: string): void {
  const inner = (transport as unknown as { _webStandardTransport: { sessionId?: string; _initialized: boolean } })._webStandardTransport;
  inner.sessionId = sessionId;
  inner._initialized = true;
}

/** What a tool needs that the caller lacks, in words; null when it is offered. */
function refusal(tool: CompiledTool, principal: Principal, agentsMayDelete: boolean): string | null {
  const wanted = tool.action === 'read' ? `${tool.resource}:read` : tool.resource;
  if (tool.deletes && !agentsMayDelete) return 'deleting is off for AI agents: an owner can turn on "Allow AI agents to delete" in the dashboard (Settings, Apps)';
  if (!scopeAllows(principal.scope, tool.resource, tool.action)) return `this needs the scope "${wanted}" (or "full"), which this ${principal.app ? 'token' : 'key'} was not given`;
  if (!tool.project && !roleAllows(principal.role, tool.resource, tool.action)) return `your role (${principal.role}) does not allow this`;
  return null;
}

function describe(tool: CompiledTool): Tool {
  return { name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.input as Tool['inputSchema'], annotations: { title: tool.title, ...tool.annotations } };
}

const text = (value: string): CallToolResult['content'] => [{ type: 'text', text: value }];
function toolError(message: string, details?: unknown): CallToolResult {
  return { isError: true, content: text(details === undefined ? message : `${message} ${JSON.stringify(details)}`) };
}

/**
 * The MCP server at /mcp (CONTRACT 17), on the official SDK's Streamable HTTP transport, stateless: each POST is
 * answered by a server made for it, so any instance answers any request and nothing is kept between them. The
 * caller is authenticated as on /v1 (an OAuth access token bound to /mcp, or an API key), counted against the
 * same rate limit, and acts through the same services with the same actor (audit source `mcp`), so read-only
 * workspaces, private projects and every permission hold. Each tools/call writes one audit row.
 */
export async function mcpRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { services, rateLimiter, config } = deps;
  const now = deps.clock ? deps.clock.now.bind(deps.clock) : Date.now;
  const tools = MCP_TOOLS.map(compileTool);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const origin = new URL(config.publicBaseUrl).origin;
  const challenge = `Bearer resource_metadata="${config.publicBaseUrl}/.well-known/oauth-protected-resource/mcp"`;

  const unauthorized = (message: string, error?: string) =>
    new DomainError(401, 'unauthorized', message, undefined, { 'www-authenticate': error ? `${challenge}, error="${error}", error_description="${message}"` : challenge });

  async function authenticate(request: FastifyRequest): Promise<Principal> {
    const token = bearerToken(request.headers.authorization);
    const principal = token ? await services.auth.authenticate(token) : null;
    if (!principal) {
      const failures = await rateLimiter.hit(`authfail:${request.ip}`, config.authFailureLimitPerMinute, WINDOW_MS);
      if (!failures.allowed) throw errors.rateLimited(failures.retryAfterSeconds);
      throw token ? unauthorized('the access token or API key is not valid', 'invalid_token') : unauthorized('an access token or API key is required: Authorization: Bearer <token>');
    }
    if (principal.expiresAt !== null && principal.expiresAt <= now()) throw unauthorized(principal.app ? TOKEN_EXPIRED : KEY_EXPIRED, 'invalid_token');
    // RFC 8707: a token bound to /v1 is no credential here.
    if (principal.app && principal.app.resource !== 'mcp') throw unauthorized('this access token is for /v1', 'invalid_token');
    const limit = await rateLimiter.hit(`key:${principal.keyId}`, config.rateLimitPerMinute, WINDOW_MS);
    if (!limit.allowed) throw errors.rateLimited(limit.retryAfterSeconds);
    services.usage.count(principal.orgId);
    if (principal.app) services.connectedApps.touch(principal.orgId, principal.keyId);
    else services.apiKeys.touch(principal.orgId, principal.keyId);
    return principal;
  }

  async function callTool(actor: UserActor, principal: Principal, name: string, args: unknown): Promise<CallToolResult> {
    const tool = byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`);
    const via = principal.app?.name ?? `API key ${principal.keyId}`;
    const record = (outcome: 'success' | 'failure') => services.connectedApps.recordToolCall(actor, { tool: name, via, outcome });
    const settings = tool.deletes ? await services.connectedApps.settings(actor) : null;
    const refused = refusal(tool, principal, settings?.agentsMayDelete ?? false);
    if (refused) {
      await record('failure');
      return toolError(`forbidden: ${refused}`);
    }
    const input = args ?? {};
    if (!tool.validate(input)) {
      await record('failure');
      return toolError('validation_failed: the arguments do not match the input schema', toDetails(tool.validate.errors ?? [], 'body'));
    }
    try {
      const result = await tool.run(actor, input as never, services);
      await record('success');
      return { content: text(typeof result === 'string' ? result : JSON.stringify(result)) };
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      await record('failure');
      return toolError(`${err.code}: ${err.message}`, err.details);
    }
  }

  async function serve(request: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<void> {
    const actor = actorFor(request, principal, 'mcp');
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const { agentsMayDelete } = await services.connectedApps.settings(actor);
      return { tools: tools.filter((t) => refusal(t, principal, agentsMayDelete) === null).map(describe) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (call) => callTool(actor, principal, call.params.name, call.params.arguments));
    // JSON answers and sessions that need no memory: nothing outlives the request, so any instance serves any call.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => newSessionId(principal.keyId), enableJsonResponse: true });
    const session = request.headers['mcp-session-id'];
    if (typeof session === 'string') {
      if (!sessionBelongs(session, principal.keyId)) {
        return reply.code(404).send({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      }
      resumeSession(transport, session);
    }
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.raw.setHeader('cache-control', 'no-store');
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  }

  /** The protocol's DNS-rebinding rule: a browser page from another origin never reaches the server. */
  function checkOrigin(request: FastifyRequest): void {
    const given = request.headers.origin;
    if (given !== undefined && given !== origin) throw errors.forbidden(`requests from ${given} are refused; the MCP server answers ${origin} and clients without an Origin`);
  }

  app.post('/mcp', {
    schema: { hide: true },
    config: { bodyOptional: true },
    handler: async (request, reply) => {
      checkOrigin(request);
      const principal = await authenticate(request);
      await serve(request, reply, principal);
    },
  });

  // Stateless: no stream to open and no session to end (the transport allows 405 for both).
  const notHere = async (request: FastifyRequest, reply: FastifyReply) => {
    checkOrigin(request);
    await authenticate(request);
    return reply.code(405).header('allow', 'POST').send(errors.methodNotAllowed(['POST']).toBody());
  };
  app.get('/mcp', { schema: { hide: true } }, notHere);
  app.delete('/mcp', { schema: { hide: true } }, notHere);
}
