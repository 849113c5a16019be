import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { MCP_TOOLS } from '../../src/api/mcp/mcp-catalogue.js';
import { connectApp, injectFetch } from '../helpers/oauth-flow.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const DELETE_TOOLS = ['delete_project', 'remove_collaborator', 'remove_member', 'delete_workflow', 'delete_webhook'];

/**
 * The MCP server (CONTRACT 17) through the official TypeScript client: what tools/list offers per scope and role,
 * a refused write, the owner's delete switch, one audit row per call, another organisation's ids, private
 * projects, a read-only workspace, and an API key as credential.
 */
describe.each(testDialects())('MCP server (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  const clients: Client[] = [];

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Acme');
    other = await env.createOrg('Elsewhere');
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await env?.close();
  });

  async function connect(token: string): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${env.config.publicBaseUrl}/mcp`), {
      fetch: injectFetch(env),
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }
  const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const json = (result: CallToolResult): Json => JSON.parse((result.content[0] as { text: string }).text);
  const errorText = (result: CallToolResult) => (result.isError ? (result.content[0] as { text: string }).text : null);
  const toolAudits = async (orgKey = org.ownerKey) =>
    (await env.request('GET', '/v1/audit-log?action=mcp.tool_called&limit=100', { key: orgKey })).body.data as Json[];

  it('an API key is accepted; tools/list follows the role; every tool has an input schema and the three hints', async () => {
    const owner = await connect(org.ownerKey);
    expect(owner.getServerVersion()?.name).toBe('workspace-service');
    const listed = (await owner.listTools()).tools;
    // The owner sees everything except the delete tools, which are off until an owner allows them.
    const expected = MCP_TOOLS.filter((t) => !t.deletes).map((t) => t.name).sort();
    expect(listed.map((t) => t.name).sort()).toEqual(expected);
    for (const tool of listed) {
      expect(tool.inputSchema.type).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
      expect(typeof tool.annotations?.destructiveHint).toBe('boolean');
      expect(typeof tool.annotations?.idempotentHint).toBe('boolean');
    }
    expect(listed.find((t) => t.name === 'list_projects')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });

    const viewer = await org.member('viewer');
    const viewerTools = await names(await connect(viewer.key));
    expect(viewerTools).toContain('list_projects');
    expect(viewerTools).not.toContain('create_project');
    expect(viewerTools).not.toContain('list_audit_log');
    expect(viewerTools).not.toContain('invite_member');
  });

  it('an app token with projects:read lists only the project reads; a write outside the scope is a tool error naming the scope', async () => {
    const member = await org.member('member');
    const { tokens } = await connectApp(env, org.id, member.userId, { scope: 'projects:read', name: 'Cursor' });
    const client = await connect(tokens.access_token);
    expect(await names(client)).toEqual(['get_project', 'list_collaborators', 'list_projects']);

    const before = (await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey })).body.data.length;
    const refused = await call(client, 'create_project', { name: 'Sneaky' });
    expect(refused.isError).toBe(true);
    expect(errorText(refused)).toMatch(/forbidden: .*scope "projects"/);
    expect((await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey })).body.data.length).toBe(before);

    const audits = await toolAudits();
    const refusedRow = audits.find((a) => a.target?.id === 'create_project' && a.target?.label === 'Cursor');
    expect(refusedRow).toMatchObject({ source: 'mcp', outcome: 'failure', actor: { id: member.userId } });
  });

  it('calls go through the services: the answer is the API\'s, one audit row each, source mcp with the app\'s name', async () => {
    const member = await org.member('member');
    const { tokens } = await connectApp(env, org.id, member.userId, { scope: 'projects tasks', name: 'Claude' });
    const client = await connect(tokens.access_token);
    const before = (await toolAudits()).length;

    const created = json(await call(client, 'create_project', { name: 'Agent project', description: 'made over MCP' }));
    expect(created.id).toMatch(/^proj_/);
    const viaApi = await env.request('GET', `/v1/projects/${created.id}`, { key: org.ownerKey });
    expect(json(await call(client, 'get_project', { project_id: created.id }))).toEqual(viaApi.body);

    const task = json(await call(client, 'create_task', { project_id: created.id, title: 'Write the summary', assignee_id: member.userId }));
    expect(task.title).toBe('Write the summary');
    const page = json(await call(client, 'list_tasks', { assignee_id: 'me', limit: 1 }));
    expect(page.data).toHaveLength(1);
    expect(page).toHaveProperty('next_cursor');

    const rows = await toolAudits();
    expect(rows.length - before).toBe(4);
    expect(rows.slice(0, 4).map((r) => r.target.id)).toEqual(['list_tasks', 'create_task', 'get_project', 'create_project']);
    for (const row of rows.slice(0, 4)) expect(row).toMatchObject({ source: 'mcp', outcome: 'success', target: { type: 'mcp_tool', label: 'Claude' } });
    // The service's own row names the door too.
    const made = (await env.request('GET', '/v1/audit-log?action=project.created&limit=5', { key: org.ownerKey })).body.data as Json[];
    expect(made.find((r) => r.target?.id === created.id)).toMatchObject({ source: 'mcp', actor: { id: member.userId } });
  });

  it('bad arguments are a tool error with the fields, and nothing changes', async () => {
    const client = await connect(org.ownerKey);
    const bad = await call(client, 'create_project', { name: 42, colour: 'red' });
    expect(bad.isError).toBe(true);
    expect(errorText(bad)).toMatch(/^validation_failed/);
    expect(errorText(bad)).toContain('name');
    expect(errorText(bad)).toContain('colour');
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/unknown tool/);
  });

  it('delete tools appear only after the owner allows AI agents to delete', async () => {
    const client = await connect(org.ownerKey);
    for (const name of DELETE_TOOLS) expect(await names(client)).not.toContain(name);
    const project = json(await call(client, 'create_project', { name: 'To delete' }));
    const refused = await call(client, 'delete_project', { project_id: project.id });
    expect(errorText(refused)).toMatch(/Allow AI agents to delete/);
    expect((await env.request('GET', `/v1/projects/${project.id}`, { key: org.ownerKey })).status).toBe(200);

    await env.container.services.connectedApps.setSettings(cliActor(org.id), { agentsMayDelete: true });
    try {
      const listed = await names(client);
      for (const name of DELETE_TOOLS) expect(listed).toContain(name);
      expect((await client.listTools()).tools.find((t) => t.name === 'delete_project')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
      expect(json(await call(client, 'delete_project', { project_id: project.id }))).toEqual({ done: true });
      expect((await env.request('GET', `/v1/projects/${project.id}`, { key: org.ownerKey })).status).toBe(404);
      // The switch does not widen a role: a member still cannot remove a member.
      const member = await org.member('member');
      expect(await names(await connect(member.key))).not.toContain('remove_member');
    } finally {
      await env.container.services.connectedApps.setSettings(cliActor(org.id), { agentsMayDelete: false });
    }
  });

  it("another organisation's ids are not found, and a private project stays hidden from a non-collaborator", async () => {
    const theirs = (await env.request('POST', '/v1/projects', { key: other.ownerKey, body: { name: 'Their secret' } })).body;
    const client = await connect(org.ownerKey);
    const result = await call(client, 'get_project', { project_id: theirs.id });
    expect(errorText(result)).toMatch(/^not_found/);
    expect(JSON.stringify(json(await call(client, 'list_projects', { limit: 100 })))).not.toContain('Their secret');

    const hidden = (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Private plans', visibility: 'private' } })).body;
    const member = await org.member('member');
    const memberClient = await connect(member.key);
    expect(errorText(await call(memberClient, 'get_project', { project_id: hidden.id }))).toMatch(/^not_found/);
    expect(JSON.stringify(json(await call(memberClient, 'list_projects', { limit: 100 })))).not.toContain('Private plans');
  });

  it('a read-only workspace refuses writes and still answers reads', async () => {
    const ro = await env.createOrg('Frozen');
    await env.container.services.lifecycle.cancel(cliActor(ro.id));
    const client = await connect(ro.ownerKey);
    expect(json(await call(client, 'list_projects')).data).toEqual(expect.any(Array));
    expect(errorText(await call(client, 'create_project', { name: 'No' }))).toMatch(/^workspace_read_only/);
  });

  it('refuses without a credential (401 with the resource metadata), from another origin (403), and GET (405)', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const accept = { accept: 'application/json, text/event-stream' };
    const anonymous = await env.request('POST', '/mcp', { headers: accept, body: init });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toContain('resource_metadata=');
    const wrong = await env.request('POST', '/mcp', { key: 'wsa_not-a-token', headers: accept, body: init });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toContain('error="invalid_token"');
    const foreign = await env.request('POST', '/mcp', { key: org.ownerKey, headers: { ...accept, origin: 'http://evil.example.com' }, body: init });
    expect(foreign.status).toBe(403);
    const same = await env.request('POST', '/mcp', { key: org.ownerKey, headers: { ...accept, origin: new URL(env.config.publicBaseUrl).origin }, body: init });
    expect(same.status).toBe(200);
    expect((await env.request('GET', '/mcp', { key: org.ownerKey })).status).toBe(405);
  });
});
