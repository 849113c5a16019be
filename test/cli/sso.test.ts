import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { cliJson, createCliWorld, runCli } from '../helpers/cli.js';
import { startDnsResponder, type DnsResponder } from '../helpers/dns-responder.js';
import { testDialects } from '../helpers/test-env.js';

// Each case spawns Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

/**
 * `org sso show|require|unrequire ORG` and `org domain list|verify ORG` (issue 33): the same service rules
 * as the dashboard (a verified domain and a successful test before requiring), DNS through DNS_SERVERS,
 * audited as the CLI, and the usual exit codes (1 refused, 2 misuse).
 */
describe.each(testDialects())('single sign-on from the command line (%s)', (dialect) => {
  let world: Awaited<ReturnType<typeof createCliWorld>>;
  let container: Container;
  let dns: DnsResponder;
  let orgId = '';
  const domain = `cli-${dialect}.test`;

  beforeAll(async () => {
    dns = await startDnsResponder();
    world = await createCliWorld(dialect);
    world.env.DNS_SERVERS = dns.server;
    container = await createContainer(loadConfig({ ...world.env, LOG_LEVEL: 'silent' }), { migrate: true, logger: pino({ level: 'silent' }) });
    const created = await container.services.admin.createOrganization({ name: 'Cli Co', ownerEmail: `owner@${domain}`, ownerName: 'Owner' });
    orgId = created.organization.id;
    const now = Date.now();
    // A connection as "Save connection" leaves it (checked against a provider elsewhere: test/dashboard/sso.test.ts).
    await container.database.db
      .insertInto('sso_connections')
      .values({ id: 'sso_cli', org_id: orgId, issuer: 'https://idp.example', client_id: 'cli-client', client_secret: 'the secret', jit: 0, default_role: 'member', required_at: null, tested_at: null, test_subject: null, test_email: null, test_email_verified: null, created_at: now, updated_at: now })
      .execute();
    await container.services.sso.addDomain({ type: 'cli', orgId, context: { source: 'cli', ip: null, userAgent: null, requestId: null } }, domain);
  });
  afterAll(async () => {
    await container?.close();
    await world?.cleanup();
    await dns?.close();
  });

  const connection = () => container.store.repos.sso.findConnection(orgId);

  it('org domain list shows the record to publish; verify looks it up through DNS_SERVERS', async () => {
    const listed = await cliJson(['org', 'domain', 'list', orgId], world.env);
    const [row] = listed.data;
    expect(row).toMatchObject({ domain, status: 'pending', record_name: `_workspace-verification.${domain}` });
    const text = await runCli(['org', 'domain', 'list', orgId], world.env);
    expect(text.stdout).toContain(row.record_value);

    const missing = await runCli(['org', 'domain', 'verify', orgId, '--domain', domain], world.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No TXT record');
    expect(dns.questions).toContain(`_workspace-verification.${domain}`);

    dns.txt.set(`_workspace-verification.${domain}`, [row.record_value]);
    const verified = await cliJson(['org', 'domain', 'verify', orgId, '--domain', domain], world.env);
    expect(verified).toMatchObject({ domain, status: 'verified' });
    const audit = await container.database.db.selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', '=', 'sso.domain_verified').executeTakeFirstOrThrow();
    expect(audit.source).toBe('cli');

    expect((await runCli(['org', 'domain', 'verify', orgId], world.env)).code).toBe(2);
    expect((await runCli(['org', 'domain', 'check', orgId], world.env)).code).toBe(2);
    expect((await runCli(['org', 'domain', 'verify', orgId, '--domain', 'unknown.test'], world.env)).code).toBe(1);
  });

  it('org sso require waits for a successful test, then requires; unrequire undoes it; show never prints the secret', async () => {
    const early = await runCli(['org', 'sso', 'require', orgId], world.env);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('Run "Test single sign-on" successfully first.');
    expect((await connection())!.required_at).toBeNull();

    await container.database.db.updateTable('sso_connections').set({ tested_at: Date.now(), test_subject: 'sub', test_email: `owner@${domain}`, test_email_verified: 1 }).where('org_id', '=', orgId).execute();
    const required = await cliJson(['org', 'sso', 'require', orgId], world.env);
    expect(required.connection.required_at).toMatch(/^\d{4}-/);
    expect((await connection())!.required_at).not.toBeNull();

    const shown = await runCli(['org', 'sso', 'show', orgId], world.env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('https://idp.example');
    expect(shown.stdout).toContain(domain);
    expect(shown.stdout).not.toContain('the secret');
    expect(JSON.stringify(await cliJson(['org', 'sso', 'show', orgId], world.env))).not.toContain('the secret');

    await cliJson(['org', 'sso', 'unrequire', orgId], world.env);
    expect((await connection())!.required_at).toBeNull();
    const actions = await container.database.db.selectFrom('audit_log').select(['action', 'source']).where('org_id', '=', orgId).where('action', 'in', ['sso.required', 'sso.not_required']).orderBy('seq').execute();
    expect(actions).toEqual([
      { action: 'sso.required', source: 'cli' },
      { action: 'sso.not_required', source: 'cli' },
    ]);

    // --revoke-keys: the live keys of the members the requirement binds end with it; an owner's stay.
    const member = await container.services.admin.addUser({ orgId, email: `member@${domain}`, role: 'member', name: 'Member' });
    const memberKey = await container.services.admin.createKey({ userId: member.id, scope: 'full' });
    const revoked = await cliJson(['org', 'sso', 'require', orgId, '--revoke-keys'], world.env);
    expect(revoked.revoked_keys).toBe(1);
    expect((await container.store.repos.apiKeys.findById(orgId, memberKey.id))!.revoked_at).not.toBeNull();
    const ownerKeys = await container.store.repos.apiKeys.listByOrg(orgId);
    expect(ownerKeys.filter((k) => k.user_id !== member.id).every((k) => k.revoked_at === null)).toBe(true);
    await cliJson(['org', 'sso', 'unrequire', orgId], world.env);

    expect((await runCli(['org', 'sso', 'enforce', orgId], world.env)).code).toBe(2);
    expect((await runCli(['org', 'sso', 'show', 'org_unknown'], world.env)).code).toBe(1);
  });
});
