import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { GRACE_PERIOD_MS } from '../../src/services/lifecycle/lifecycle-service.js';
import { cliJson, createCliWorld, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { outboxMessages } from '../helpers/mail-outbox.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.js';
import { testDialects } from '../helpers/test-env.js';

/*
 * DASHBOARD 10 through the built binary: `org show`, `org cancel` and `org resume` (with and without --json)
 * against a real database, while a real `serve` on the same database and Redis answers the API, so the
 * operator's change is what the API enforces from the next request on.
 */

// Each case spawns Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

describe('org show|cancel|resume arguments', () => {
  const env = { DATA_DIR: '/nonexistent/never-created' };

  it('the help lists the three commands; each wants exactly one ORG', async () => {
    const help = await runCli(['org', '--help'], env);
    expect(help.code).toBe(0);
    for (const command of ['org show ORG [--json]', 'org cancel ORG [--json]', 'org resume ORG [--json]']) expect(help.stdout).toContain(command);
    for (const command of ['show', 'cancel', 'resume']) {
      const usage = await runCli(['org', command, '--help'], env);
      expect(usage.code).toBe(0);
      expect(usage.stdout).toMatch(new RegExp(`^Usage: workspace org ${command} ORG \\[--json\\]`));
      expect(usage.stdout).toContain('organisation id (org_...)');
      const missing = await runCli(['org', command], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('missing argument ORG');
      const extra = await runCli(['org', command, 'org_a', 'org_b', '--json'], env);
      expect(extra.code).toBe(2);
      expect(JSON.parse(extra.stdout)).toEqual({ error: { code: 'invalid_arguments', message: expect.stringContaining('unexpected argument "org_b"') } });
    }
  });
});

describe.each(testDialects())('org show|cancel|resume against a database (%s)', (dialect) => {
  const prefix = uniqueRedisPrefix();
  let world: Awaited<ReturnType<typeof createCliWorld>>;
  let server: ServeProcess;

  beforeAll(async () => {
    world = await createCliWorld(dialect);
    // With Redis, `serve` caches principals: the CLI's change must reach it through the invalidation.
    Object.assign(world.env, { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix });
    server = await startServe(world.env);
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await server?.exited;
    await world?.cleanup();
    await deleteRedisPrefix(prefix);
  });

  async function api(method: string, url: string, key: string, body?: unknown) {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.address}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  async function newOrg(name: string, email: string) {
    return cliJson(['org', 'create', '--name', name, '--owner-email', email], world.env);
  }

  /** The organisation's row and its subscription audit rows, read straight from the database. */
  async function stored(orgId: string) {
    const container = await createContainer(loadConfig(world.env), { logger: pino({ level: 'silent' }) });
    try {
      const db = container.database.db;
      const org = await db.selectFrom('organizations').select(['state', 'cancelled_at', 'deletion_at']).where('id', '=', orgId).executeTakeFirstOrThrow();
      const audit = await db
        .selectFrom('audit_log')
        .select(['action', 'actor_type', 'actor_id', 'source', 'target_id', 'occurred_at'])
        .where('org_id', '=', orgId)
        .where('action', 'like', 'subscription.%')
        .orderBy('seq')
        .execute();
      return { org, audit };
    } finally {
      await container.close();
    }
  }

  it('org show prints the lifecycle of an active organisation, as JSON and as text', async () => {
    const created = await newOrg('Show & Tell', 'show@example.com');
    const id: string = created.organization.id;
    const shown = await cliJson(['org', 'show', id], world.env);
    expect(shown).toEqual({
      id,
      name: 'Show & Tell',
      state: 'active',
      created_at: created.organization.created_at,
      cancelled_at: null,
      deletion_at: null,
      billing: 'manual',
    });
    const human = await runCli(['org', 'show', id], world.env);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe('');
    expect(human.stdout).toMatch(new RegExp(`^Organization\\s+${id}\\s+Show & Tell$`, 'm'));
    expect(human.stdout).toMatch(/^State\s+active$/m);
    expect(human.stdout).toMatch(/^Deletion\s+-$/m);
  });

  it('cancel → read-only for 30 days, refused by the API with workspace_read_only; cancel again is a conflict; resume restores writes', async () => {
    const created = await newOrg('Leaving Ltd', 'leaving@example.com');
    const id: string = created.organization.id;
    const key: string = created.api_key.key;
    // Warm serve's principal cache: the change must reach it anyway.
    expect((await api('POST', '/v1/projects', key, { name: 'Before' })).status).toBe(201);
    expect((await api('GET', '/v1/projects', key)).status).toBe(200);

    const before = Date.now();
    const cancelled = await cliJson(['org', 'cancel', id], world.env);
    const after = Date.now();
    expect(cancelled).toEqual({
      id,
      name: 'Leaving Ltd',
      state: 'read_only',
      created_at: created.organization.created_at,
      cancelled_at: expect.any(String),
      deletion_at: expect.any(String),
      billing: 'manual',
    });
    const cancelledAt = Date.parse(cancelled.cancelled_at);
    expect(cancelledAt).toBeGreaterThanOrEqual(before);
    expect(cancelledAt).toBeLessThanOrEqual(after);
    expect(Date.parse(cancelled.deletion_at) - cancelledAt).toBe(GRACE_PERIOD_MS);
    expect(await cliJson(['org', 'show', id], world.env)).toEqual(cancelled);

    // The operator's cancellation is audited as the CLI's, and the owner is e-mailed.
    const audited = await stored(id);
    expect(audited.org).toEqual({ state: 'read_only', cancelled_at: cancelledAt, deletion_at: cancelledAt + GRACE_PERIOD_MS });
    expect(audited.audit).toEqual([{ action: 'subscription.cancelled', actor_type: 'cli', actor_id: null, source: 'cli', target_id: id, occurred_at: cancelledAt }]);
    const mails = outboxMessages(world.dataDir).filter((m) => /^To: leaving@example\.com$/m.test(m.raw));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.raw).toContain('Subject: Leaving Ltd: subscription cancelled, workspace read-only');

    // The API: writes refused, with the deletion date named; reads still answered.
    const refused = await api('POST', '/v1/projects', key, { name: 'During' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('workspace_read_only');
    expect(refused.body.error.message).toContain(cancelled.deletion_at);
    const list = await api('GET', '/v1/projects', key);
    expect(list.status).toBe(200);
    expect(list.body.data.map((p: { name: string }) => p.name)).toEqual(['Before']);

    // Cancelling again: exit 1 with the conflict, nothing changed.
    const again = await runCli(['org', 'cancel', id, '--json'], world.env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({ error: { code: 'conflict', message: 'the subscription is already cancelled' } });
    expect(again.stderr).toBe('workspace: the subscription is already cancelled\n');
    const human = await runCli(['org', 'cancel', id], world.env);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain('the subscription is already cancelled');
    expect(await stored(id)).toEqual(audited);

    const resumed = await runCli(['org', 'resume', id], world.env);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe(`Resumed the subscription of ${id} (Leaving Ltd): active again; nothing will be deleted.\n`);
    expect(await cliJson(['org', 'show', id], world.env)).toMatchObject({ state: 'active', cancelled_at: null, deletion_at: null });
    expect((await stored(id)).audit.map((a) => [a.action, a.source])).toEqual([
      ['subscription.cancelled', 'cli'],
      ['subscription.resumed', 'cli'],
    ]);
    expect((await api('POST', '/v1/projects', key, { name: 'After' })).status).toBe(201);

    // Resuming what is active: exit 1 with the conflict.
    const twice = await runCli(['org', 'resume', id, '--json'], world.env);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stdout)).toEqual({ error: { code: 'conflict', message: 'the subscription is not cancelled' } });
    expect((await stored(id)).audit).toHaveLength(2);
  });

  it('cancel without --json prints one line with the deletion date', async () => {
    const created = await newOrg('Plain Text', 'plain@example.com');
    const id: string = created.organization.id;
    const res = await runCli(['org', 'cancel', id], world.env);
    expect(res.code).toBe(0);
    const { deletion_at } = await cliJson(['org', 'show', id], world.env);
    expect(res.stdout).toBe(`Cancelled the subscription of ${id} (Plain Text): read-only now, deleted on ${deletion_at} unless resumed.\n`);
    const shown = await runCli(['org', 'show', id], world.env);
    expect(shown.stdout).toMatch(/^State\s+read-only \(subscription cancelled\)$/m);
    expect(shown.stdout).toMatch(new RegExp(`^Deletion\\s+${deletion_at.replace(/\./g, '\\.')}$`, 'm'));
  });

  it('an unknown organisation: exit 1 with not_found for show, cancel and resume', async () => {
    for (const command of ['show', 'cancel', 'resume']) {
      const res = await runCli(['org', command, 'org_doesnotexist', '--json'], world.env);
      expect(res.code, command).toBe(1);
      expect(JSON.parse(res.stdout)).toEqual({ error: { code: 'not_found', message: 'organization not found' } });
      expect(res.stderr).toBe('workspace: organization not found\n');
    }
  });
});
