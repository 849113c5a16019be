import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/test-env.js';
import { cliJson, createCliWorld, runCli } from '../helpers/cli.js';
import { processTimeout } from '../helpers/timeouts.js';
import { createContainer } from '../../src/container.js';
import { loadConfig } from '../../src/config.js';
import pino from 'pino';

/** `workspace webhook show|update|rotate-secret|test|enable` against a real database, through the same services as the API. */
describe.each(testDialects())('webhook CLI (%s)', (dialect) => {
  let world: Awaited<ReturnType<typeof createCliWorld>>;
  let env: Record<string, string>;
  let orgId = '';
  let hookId = '';

  beforeAll(async () => {
    world = await createCliWorld(dialect);
    env = { ...world.env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' };
    const created = await cliJson(['org', 'create', '--name', 'Cli Hooks', '--owner-email', 'cli-hooks@example.com'], env);
    orgId = created.organization.id;
    // A subscription made through the service, as the API would.
    const container = await createContainer(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
    try {
      const { cliActor } = await import('../../src/services/access/actor.js');
      hookId = (await container.services.webhooks.create(cliActor(orgId), { url: 'https://93.184.215.14/cli', events: ['project.created'], secret: 'a-cli-chosen-secret-01' })).id;
    } finally {
      await container.close();
    }
  });
  afterAll(async () => world?.cleanup());

  it('shows, updates, rotates, queues a test and enables, each as one JSON document', async () => {
    const shown = await cliJson(['webhook', 'show', hookId], env);
    expect(shown).toMatchObject({ id: hookId, url: 'https://93.184.215.14/cli', status: 'active', active: true });
    expect(JSON.stringify(shown)).not.toContain('a-cli-chosen-secret');

    const updated = await cliJson(['webhook', 'update', hookId, '--org', orgId, '--url', 'https://93.184.215.14/cli2', '--events', 'project.created,task.assigned'], env);
    expect(updated).toMatchObject({ url: 'https://93.184.215.14/cli2', events: ['project.created', 'task.assigned'] });
    const paced = await cliJson(['webhook', 'update', hookId, '--rate-limit', '25', '--ordering', 'fifo'], env);
    expect(paced).toMatchObject({ rate_limit: 25, ordering: 'fifo', url: 'https://93.184.215.14/cli2' });
    expect((await runCli(['webhook', 'show', hookId], env)).stdout).toMatch(/Rate limit\s+25 attempts started per second\n.*Ordering\s+fifo/s);
    expect(await cliJson(['webhook', 'update', hookId, '--rate-limit', 'none', '--ordering', 'none'], env)).toMatchObject({ rate_limit: null, ordering: 'none' });

    const rotated = await cliJson(['webhook', 'rotate-secret', hookId, '--previous-expires-in', '60'], env);
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Date.parse(rotated.previous_expires_at) - Date.now()).toBeLessThanOrEqual(60_000);
    expect((await cliJson(['webhook', 'show', hookId], env)).previous_secret_expires_at).toBe(rotated.previous_expires_at);

    const test = await cliJson(['webhook', 'test', hookId, '--event', 'task.assigned'], env);
    expect(test.delivery_id).toMatch(/^dlv_/);
    const delivery = await cliJson(['deliveries', 'show', test.delivery_id], env);
    expect(delivery).toMatchObject({ test: true, status: 'pending', event_type: 'task.assigned' });

    const enabled = await cliJson(['webhook', 'enable', hookId], env);
    expect(enabled.status).toBe('active');
    const text = await runCli(['webhook', 'show', hookId], env);
    expect(text.stdout).toMatch(/Status\s+active/);
  }, processTimeout(11));

  it('refuses what the API refuses, with its code and a non-zero exit; nothing changes', async () => {
    const before = await cliJson(['webhook', 'show', hookId], env);
    const cases: [string[], RegExp][] = [
      [['webhook', 'update', hookId, '--url', 'http://93.184.215.14/x'], /https/],
      [['webhook', 'update', hookId, '--url', 'https://10.1.2.3/x'], /public address/],
      [['webhook', 'update', hookId, '--events', 'project.*'], /comma-separated/],
      [['webhook', 'update', hookId], /--url, --events/],
      [['webhook', 'update', hookId, '--rate-limit', '0'], /1 to 1,000/],
      [['webhook', 'update', hookId, '--rate-limit', '1001'], /1 to 1,000/],
      [['webhook', 'update', hookId, '--rate-limit', 'fast'], /whole number from 1 to 1000, or none/],
      [['webhook', 'update', hookId, '--ordering', 'lifo'], /fifo/],
      [['webhook', 'rotate-secret', hookId, '--secret', 'short'], /16 to 256/],
      [['webhook', 'rotate-secret', hookId, '--previous-expires-in', '604801'], /0 to 604800/],
      [['webhook', 'test', hookId, '--event', 'project.deleted'], /subscription's events/],
      [['webhook', 'show', 'wh_unknown'], /not found/],
      [['webhook', 'show', hookId, '--org', 'org_other'], /not found/],
      [['deliveries', 'show', 'dlv_unknown'], /delivery not found/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, env);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    expect(await cliJson(['webhook', 'show', hookId], env)).toEqual(before);
  }, processTimeout(15));
});
