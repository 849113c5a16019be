import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliJson, runCli } from '../helpers/cli.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// Each case spawns Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** `workspace org scim-token …` and `key create --expires` (CONTRACT 16): the same services and audit rows as the dashboard. */
describe.each(testDialects())('workspace org scim-token and key create --expires (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let cli: Record<string, string>;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Command line');
    cli = { DATA_DIR: env.dataDir, ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : {}) };
  });
  afterAll(async () => env?.close());

  it('creates a token shown once with the base URL, lists tokens without secrets, refuses a third, and revokes one at once', async () => {
    const created = await cliJson(['org', 'scim-token', 'create', org.id, '--name', 'Okta'], cli);
    expect(created).toMatchObject({ name: 'Okta', base_url: `${env.config.publicBaseUrl}/scim/v2` });
    expect(created.token).toMatch(/^wss_/);
    expect((await env.request('GET', '/scim/v2/Users?count=1', { key: created.token })).status).toBe(200);

    const text = await runCli(['org', 'scim-token', 'create', org.id, '--name', 'Rotation'], cli);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/SCIM token\s+wss_\S+ {2}\(shown once: store it now\)/);

    const listed = await cliJson(['org', 'scim-token', 'list', org.id], cli);
    expect(listed.data.map((t: Json) => t.name)).toEqual(['Rotation', 'Okta']);
    expect(JSON.stringify(listed)).not.toContain(created.token);
    const third = await runCli(['org', 'scim-token', 'create', org.id, '--name', 'Third'], cli);
    expect(third.code).toBe(1);
    expect(third.stderr).toMatch(/at most 2 SCIM tokens/);

    const revoked = await cliJson(['org', 'scim-token', 'revoke', org.id, '--id', created.id], cli);
    expect(revoked).toEqual({ id: created.id, name: 'Okta', revoked: true });
    expect((await env.request('GET', '/scim/v2/Users?count=1', { key: created.token })).status).toBe(401);
    const again = await runCli(['org', 'scim-token', 'revoke', org.id, '--id', created.id], cli);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not found/i);

    const audit = (await env.request('GET', '/v1/audit-log?action=scim.token', { key: org.ownerKey })).body.data as Json[];
    expect(audit.map((r) => [r.action, r.source])).toEqual([
      ['scim.token_revoked', 'cli'],
      ['scim.token_created', 'cli'],
      ['scim.token_created', 'cli'],
    ]);
  });

  it('refuses what it cannot do, with the reason: no --name, no --id, an unknown action', async () => {
    const noName = await runCli(['org', 'scim-token', 'create', org.id], cli);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/create needs --name/);
    const noId = await runCli(['org', 'scim-token', 'revoke', org.id], cli);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toMatch(/revoke needs --id/);
    const badAction = await runCli(['org', 'scim-token', 'rotate', org.id], cli);
    expect(badAction.code).toBe(2);
    expect(badAction.stderr).toMatch(/ACTION must be one of create, list, revoke/);
  });

  it('key create --expires takes days or a time, and the organisation\'s maximum lifetime holds', async () => {
    const created = await cliJson(['key', 'create', '--user', org.ownerId, '--scope', 'read', '--expires', '30d'], cli);
    const days = (Date.parse(created.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    const at = new Date(Date.now() + 3 * 86_400_000).toISOString();
    expect((await cliJson(['key', 'create', '--user', org.ownerId, '--scope', 'read', '--expires', at], cli)).expires_at).toBe(at);
    const listed = await cliJson(['key', 'list', '--org', org.id], cli);
    expect(listed.data.find((k: Json) => k.id === created.id).expires_at).toBe(created.expires_at);

    const junk = await runCli(['key', 'create', '--user', org.ownerId, '--scope', 'read', '--expires', 'soon'], cli);
    expect(junk.code).toBe(2);
    expect(junk.stderr).toMatch(/--expires must be a number of days/);

    await env.container.services.accountSecurity.setMaxKeyLifetime({ type: 'cli', orgId: org.id, context: { source: 'cli', ip: null, userAgent: null, requestId: null } }, 30);
    const never = await runCli(['key', 'create', '--user', org.ownerId, '--scope', 'read'], cli);
    expect(never.code).toBe(1);
    expect(never.stderr).toMatch(/expires_at is required/);
    const tooLong = await runCli(['key', 'create', '--user', org.ownerId, '--scope', 'read', '--expires', '90'], cli);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toMatch(/at most 30 days/);
  });
});
