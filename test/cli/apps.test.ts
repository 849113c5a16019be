import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliJson, runCli } from '../helpers/cli.js';
import { connectApp, mcpInitialize } from '../helpers/oauth-flow.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// Each case spawns Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

/** `workspace app list|revoke` (CONTRACT 17): the operator sees every connected app and ends one, on every process. */
describe.each(testDialects())('workspace app list and revoke (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let cli: Record<string, string>;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Command line');
    cli = { DATA_DIR: env.dataDir, ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : {}) };
  });
  afterAll(async () => env?.close());

  const initialize = (token: string) => mcpInitialize(env, token);

  it('lists who connected which app with its scopes, and revokes one: the server process refuses its token at once', async () => {
    const member = await org.member('member');
    const { tokens } = await connectApp(env, org.id, member.userId, { scope: 'projects:read', name: 'ChatGPT' });
    expect((await initialize(tokens.access_token)).status).toBe(200);

    const listed = await cliJson(['app', 'list', '--org', org.id], cli);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ app: 'ChatGPT', user_id: member.userId, resource: '/mcp', scope: 'projects:read' });
    expect(listed.data[0].id).toMatch(/^oag_/);
    expect(JSON.stringify(listed)).not.toContain(tokens.access_token);
    const text = await runCli(['app', 'list', '--org', org.id], cli);
    expect(text.stdout).toContain('ChatGPT');

    const revoked = await cliJson(['app', 'revoke', listed.data[0].id], cli);
    expect(revoked).toMatchObject({ app: 'ChatGPT', revoked: true });
    expect((await initialize(tokens.access_token)).status).toBe(401);
    expect((await cliJson(['app', 'list', '--org', org.id], cli)).data).toEqual([]);

    const audit = (await env.request('GET', '/v1/audit-log?action=app.revoked&limit=10', { key: org.ownerKey })).body.data;
    expect(audit[0]).toMatchObject({ source: 'cli', target: { id: listed.data[0].id, label: 'ChatGPT' } });

    const unknown = await runCli(['app', 'revoke', 'oag_doesnotexist0000000000'], cli);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no connected app/);
  });
});
