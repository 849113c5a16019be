import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
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
import { createSessionCache, newSessionId, releaseAnsweredStreams, resumeSession, sessionBelongs, type McpSession } from './mcp-sessions.js';

const WINDOW_MS = 60_000;
/** What the transport reads of a request (the rest was read here already: credentials, origin). */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'] as const;
const SERVER_INFO = { name: 'workspace-service', title: 'Workspace Service', version: '1.0.0' };
const INSTRUCTIONS =
  "Workspace Service: an organisation's projects, members, workflows, runs, tasks and signed webhooks. Every tool acts as the " +
  'person who connected you, within the scopes they allowed. Lists take `limit` (1-100) and `cursor` (a previous `next_cursor`). ' +
  'Ids start with their kind: proj_, user_, wf_, run_, task_, wh_, dlv_, evt_, exp_.';

/** What a tool needs that the caller lacks, in words; null when it is offered. */
function refusal(tool: CompiledTool, principal: Principal, agentsMayDelete: boolean): string | null {
  const wanted = tool.action === 'read' ? `${tool.resource}:read` : tool.resource;
  if (tool.deletes && !agentsMayDelete) return 'deleting is off for AI agents: an owner can turn on "Allow AI agents to delete" on the dashboard\'s Connected apps page';
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
 * The MCP server at /mcp (CONTRACT 17), on the official SDK's Streamable HTTP transport with JSON answers. Sessions
 * need no memory (mcp-sessions.ts): any instance answers any request, and the servers a process keeps are only a
 * cache. The caller is authenticated as on /v1 (an OAuth access token bound to /mcp, or an API key), counted against the
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

  /** What a request's handlers act with: passed through the transport as its `authInfo`, since a kept server outlives the request. */
  interface CallContext {
    principal: Principal;
    actor: UserActor;
  }
  const contextOf = (extra: { authInfo?: { extra?: Record<string, unknown> } }): CallContext => extra.authInfo!.extra!.call as CallContext;

  // One validator for every server: the SDK would otherwise build an Ajv instance per server.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const sessions = createSessionCache();
  app.addHook('onClose', async () => sessions.closeAll());

  function newSession(keyId: string): McpSession {
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator });
    server.setRequestHandler(ListToolsRequestSchema, async (_list, extra) => {
      const { principal, actor } = contextOf(extra);
      const { agentsMayDelete } = await services.connectedApps.settings(actor);
      return { tools: tools.filter((t) => refusal(t, principal, agentsMayDelete) === null).map(describe) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const { principal, actor } = contextOf(extra);
      return callTool(actor, principal, call.params.name, call.params.arguments);
    });
    // JSON answers and sessions that need no memory: any instance serves any call of any session.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => newSessionId(keyId), enableJsonResponse: true });
    return { server, transport };
  }

  const endpoint = `${config.publicBaseUrl}/mcp`;

  async function serve(request: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<FastifyReply> {
    const given = request.headers['mcp-session-id'];
    let session: McpSession | undefined;
    let fresh = false;
    if (typeof given === 'string') {
      if (!sessionBelongs(given, principal.keyId)) {
        return reply.code(404).send({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      }
      session = sessions.take(given);
      if (!session) {
        session = newSession(principal.keyId);
        resumeSession(session.transport, given);
        fresh = true;
      }
    } else {
      session = newSession(principal.keyId);
      fresh = true;
    }
    if (fresh) await session.server.connect(session.transport);
    const call: CallContext = { principal, actor: actorFor(request, principal, 'mcp') };
    // The SDK's web-standard transport, handed the body Fastify already parsed: its Node wrapper would convert
    // the request and the answer through another library on every call (docs/benchmarks.md, issue 45).
    const headers: Record<string, string> = {};
    for (const name of TRANSPORT_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const answer = await session.transport.handleRequest(new Request(endpoint, { method: request.method, headers }), {
      parsedBody: request.body,
      authInfo: { token: '', clientId: principal.keyId, scopes: [], extra: { call } },
    });
    reply.code(answer.status).header('cache-control', 'no-store');
    answer.headers.forEach((value, name) => {
      if (name !== 'content-length') reply.header(name, value);
    });
    const text = await answer.text();
    releaseAnsweredStreams(session.transport);
    // Kept once it has an id: an initialize just gave it one, or the client named it.
    const id = session.transport.sessionId;
    if (fresh && id !== undefined) sessions.keep(id, session);
    else if (fresh) {
      void session.transport.close();
      void session.server.close();
    }
    return reply.send(text === '' ? undefined : text);
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
      return serve(request, reply, principal);
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
