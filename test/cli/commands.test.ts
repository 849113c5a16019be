import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { isGroup } from '../../src/cli/command.js';
import { registry } from '../../src/cli/main.js';
import { cliActor } from '../../src/services/access/actor.js';
import type { RunDetail } from '../../src/services/workflows/runs-view.js';
import { cliJson, createCliWorld, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { testDialects } from '../helpers/test-env.js';

// Each case spawns Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

/** Every command path the CLI knows, e.g. `serve`, `key create`. */
const COMMAND_PATHS = registry.flatMap((entry) => (isGroup(entry) ? entry.commands.map((c) => [entry.name, c.name]) : [[entry.name]]));

async function api(server: ServeProcess, method: string, url: string, key: string | null, body?: unknown) {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${server.address}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('cli arguments', () => {
  // Argument errors are found before any configuration or database is touched.
  const env = { DATA_DIR: '/nonexistent/never-created' };

  it('prints help and exits 0 for the top level and every command, with --help and -h', async () => {
    for (const flag of ['--help', '-h']) {
      const top = await runCli([flag], env);
      expect(top.code).toBe(0);
      expect(top.stdout).toMatch(/^Usage: workspace <command>/);
      for (const path of COMMAND_PATHS) expect(top.stdout).toContain(path.join(' '));
    }
    const results = await Promise.all(COMMAND_PATHS.map((path) => runCli([...path, '--help'], env)));
    results.forEach((res, i) => {
      const path = COMMAND_PATHS[i]!.join(' ');
      expect(res.code, path).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`^Usage: workspace ${path}\\b`));
      expect(res.stderr).toBe('');
    });
    const group = await runCli(['key', '-h'], env);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/^Usage: workspace key <command>/);
  });

  it('exits 2 with a message on stderr for an unknown command', async () => {
    const res = await runCli(['frobnicate'], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown command "frobnicate"');
    expect(res.stdout).toBe('');
    const sub = await runCli(['key', 'rotate'], env);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain('unknown command "key rotate"');
  });

  it('exits 2 for no command at all, and for a group without its command', async () => {
    const none = await runCli([], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: workspace <command>');
    const group = await runCli(['org'], env);
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('Usage: workspace org <command>');
  });

  it('exits 2 for an unknown option, naming it', async () => {
    const res = await runCli(['org', 'create', '--name', 'A', '--owner-email', 'a@example.com', '--colour', 'red'], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown option --colour');
    expect(res.stderr).toContain('workspace org create --help');
    expect(res.stdout).toBe('');
  });

  it('exits 2 for a missing required option, naming it; with --json also prints the error document', async () => {
    const res = await runCli(['org', 'create', '--name', 'A'], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('missing required option --owner-email');
    expect(res.stdout).toBe('');
    const json = await runCli(['org', 'create', '--name', 'A', '--json'], env);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'invalid_arguments', message: expect.stringContaining('--owner-email') } });
  });

  it('exits 2 for an option without its value, a bad role, a bad scope, and a missing or extra argument', async () => {
    const cases: Array<[string[], string]> = [
      [['org', 'create', '--name'], '--name'],
      [['user', 'add', '--org', 'org_x', '--email', 'a@example.com', '--role', 'superuser'], '--role must be one of owner, admin, member, viewer'],
      [['key', 'create', '--user', 'user_x', '--scope', 'everything'], '--scope must be read, full'],
      [['key', 'create', '--user', 'user_x', '--scope', 'projects:write'], '--scope must be'],
      [['key', 'revoke'], 'missing argument KEY_ID'],
      [['key', 'revoke', 'key_a', 'key_b'], 'unexpected argument "key_b"'],
      [['serve', '--json'], 'unknown option --json'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, env)));
    results.forEach((res, i) => {
      const [args, message] = cases[i]!;
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toContain(message);
    });
  });
  it('workflow, run and task commands exit 2 for bad --steps JSON, a bad --due, missing options and conflicting flags', async () => {
    const create = ['workflow', 'create', '--org', 'org_x', '--project', 'proj_x', '--name', 'W', '--steps'];
    const cases: Array<[string[], string]> = [
      [[...create, '[{"type":"task"'], '--steps is not valid JSON'],
      [[...create, '{"type":"task"}'], '--steps must be a JSON array of steps'],
      [[...create, '["task"]'], 'steps[0] must be an object'],
      [[...create, '[{"type":"task","title":"A"},{"type":"wait","time":"1h"}]'], 'steps[1] has an unknown field "time"'],
      [[...create, '[{"type":"wait","duration":3600}]'], 'steps[0].duration must be a string'],
      [['workflow', 'create', '--org', 'org_x', '--project', 'proj_x'], 'missing required option --name'],
      [['workflow', 'show', '--org', 'org_x'], 'missing argument WORKFLOW_ID'],
      [['workflow', 'run', 'wf_x'], 'missing required option --org'],
      [['run', 'show', 'run_x'], 'missing required option --org'],
      [['run', 'cancel', '--org', 'org_x'], 'missing argument RUN_ID'],
      [['task', 'create', '--org', 'org_x', '--project', 'proj_x', '--title', 'T', '--due', '2026-02-30'], '--due must be a date'],
      [['task', 'assign', 'task_x', '--org', 'org_x'], 'give --user USER or --unassign'],
      [['task', 'assign', 'task_x', '--org', 'org_x', '--user', 'user_x', '--unassign'], '--user and --unassign cannot be given together'],
      [['task', 'done', 'task_x', '--org', 'org_x', '--reason', 'why'], '--reason goes with --reject'],
      [['task', 'cancel', 'task_x'], 'missing required option --org'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, env)));
    results.forEach((res, i) => {
      const [args, message] = cases[i]!;
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr, args.join(' ')).toContain(message);
      expect(res.stdout).toBe('');
    });
    const json = await runCli([...create, 'not json', '--json'], env);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'invalid_arguments', message: expect.stringContaining('--steps is not valid JSON') } });
  });
});

describe.each(testDialects())('cli against a database (%s)', (dialect) => {
  let world: Awaited<ReturnType<typeof createCliWorld>>;
  let server: ServeProcess | null = null;
  const extraWorlds: Array<{ cleanup(): Promise<void> }> = [];
  const spawned: ServeProcess[] = [];

  /** One `serve` per dialect for the API checks, started on first use. */
  async function served(): Promise<ServeProcess> {
    if (!server) {
      server = await startServe(world.env);
      spawned.push(server);
    }
    return server;
  }

  async function newOrg(name = 'Acme', email = 'owner@example.com') {
    return cliJson(['org', 'create', '--name', name, '--owner-email', email, '--owner-name', 'Olive Owner'], world.env);
  }

  beforeAll(async () => {
    world = await createCliWorld(dialect);
    // Webhook targets on 127.0.0.1 are accepted (nothing listens there; the events are what is checked).
    world.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS = 'true';
  });

  afterEach(() => {
    for (const p of spawned) if (p !== server && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  });

  afterAll(async () => {
    for (const p of spawned) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(spawned.map((p) => p.exited));
    for (const w of extraWorlds) await w.cleanup();
    await world?.cleanup();
  });

  it('migrate applies the schema on a fresh database once, and reports nothing the second time', async () => {
    const fresh = await createCliWorld(dialect);
    extraWorlds.push(fresh);
    const first = await cliJson(['migrate'], fresh.env);
    expect(first.applied).toContain('001_initial');
    expect(first.applied).toEqual([...first.applied].sort());
    const second = await runCli(['migrate', '--json'], fresh.env);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ applied: [] });
    const human = await runCli(['migrate'], fresh.env);
    expect(human.stdout).toContain('up to date');
  });

  it('org create --json prints exactly the organisation, its active owner and a full-access key that works on the API', async () => {
    const res = await runCli(['org', 'create', '--name', 'Acme', '--owner-email', 'founder@example.com', '--json'], world.env);
    expect(res.code).toBe(0);
    const created = JSON.parse(res.stdout);
    expect(Object.keys(created).sort()).toEqual(['api_key', 'organization', 'owner', 'setup_url']);
    expect(created.organization).toEqual({ id: expect.stringMatching(/^org_/), name: 'Acme', created_at: expect.any(String) });
    expect(created.owner).toMatchObject({ id: expect.stringMatching(/^user_/), email: 'founder@example.com', name: null, role: 'owner', status: 'active' });
    expect(created.api_key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^wsk_/),
      scope: 'full',
      user_id: created.owner.id,
      organization_id: created.organization.id,
    });

    const server = await served();
    const list = await api(server, 'GET', '/v1/projects', created.api_key.key);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [], next_cursor: null });
    const made = await api(server, 'POST', '/v1/projects', created.api_key.key, { name: 'From the CLI key' });
    expect(made.status).toBe(201);
  });

  it('org create without --json prints readable text, including the key once', async () => {
    const res = await runCli(['org', 'create', '--name', 'Readable', '--owner-email', 'r@example.com'], world.env);
    expect(res.code).toBe(0);
    expect(() => JSON.parse(res.stdout)).toThrow();
    expect(res.stdout).toMatch(/Organization\s+org_\S+\s+Readable/);
    expect(res.stdout).toMatch(/API key\s+wsk_\S+/);
  });

  it('org create with an invalid e-mail exits 1 with a validation error document', async () => {
    const res = await runCli(['org', 'create', '--name', 'Bad', '--owner-email', 'not-an-email', '--json'], world.env);
    expect(res.code).toBe(1);
    const body = JSON.parse(res.stdout);
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.details).toEqual([{ field: 'email', message: expect.any(String) }]);
    expect(res.stderr).toContain('email');
  });

  it('user add creates an active member; adding the same active e-mail again exits 1 with a conflict', async () => {
    const org = await newOrg('Users Inc', 'owner-u@example.com');
    const user = await cliJson(['user', 'add', '--org', org.organization.id, '--email', 'Ada@Example.com', '--role', 'member', '--name', 'Ada'], world.env);
    expect(user).toEqual({
      id: expect.stringMatching(/^user_/),
      email: 'Ada@Example.com',
      name: 'Ada',
      role: 'member',
      status: 'active',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const again = await runCli(['user', 'add', '--org', org.organization.id, '--email', 'ada@example.com', '--role', 'admin', '--json'], world.env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({ error: { code: 'conflict', message: expect.any(String) } });
    expect(again.stderr).toMatch(/active member/);

    // Nothing changed: the member keeps the role it had.
    const container = await createContainer(loadConfig(world.env), { logger: pino({ level: 'silent' }) });
    try {
      const row = await container.store.repos.users.findById(org.organization.id, user.id);
      expect(row).toMatchObject({ role: 'member', status: 'active', name: 'Ada' });
    } finally {
      await container.close();
    }
  });

  it('user add to an unknown organisation exits 1 with not_found', async () => {
    const res = await runCli(['user', 'add', '--org', 'org_doesnotexist', '--email', 'x@example.com', '--role', 'viewer', '--json'], world.env);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout).error.code).toBe('not_found');
    expect(res.stderr).toContain('organization not found');
  });

  it('key create, list and revoke: scoped key works, list shows no secrets, a revoked key gets 401', async () => {
    const org = await newOrg('Keys Ltd', 'owner-k@example.com');
    const member = await cliJson(['user', 'add', '--org', org.organization.id, '--email', 'm@example.com', '--role', 'member'], world.env);
    const key = await cliJson(['key', 'create', '--user', member.id, '--scope', 'projects:read', '--name', 'ci'], world.env);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^wsk_/),
      scope: 'projects:read',
      name: 'ci',
      user_id: member.id,
      organization_id: org.organization.id,
      created_at: expect.any(String),
      expires_at: null,
    });

    const server = await served();
    expect((await api(server, 'GET', '/v1/projects', key.key)).status).toBe(200);
    const refused = await api(server, 'POST', '/v1/projects', key.key, { name: 'nope' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');

    const listed = await runCli(['key', 'list', '--org', org.organization.id, '--json'], world.env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.key);
    expect(listed.stdout).not.toContain(org.api_key.key);
    const list = JSON.parse(listed.stdout);
    expect(list.data.map((k: { id: string }) => k.id).sort()).toEqual([key.id, org.api_key.id].sort());
    for (const item of list.data) {
      expect(item).not.toHaveProperty('key');
      expect(item.revoked_at).toBeNull();
    }

    const revoked = await cliJson(['key', 'revoke', key.id], world.env);
    expect(revoked).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
    // Revoking again succeeds and keeps the first revocation time.
    expect((await cliJson(['key', 'revoke', key.id], world.env)).revoked_at).toBe(revoked.revoked_at);
    const after = await api(server, 'GET', '/v1/projects', key.key);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
    // The owner's key is untouched.
    expect((await api(server, 'GET', '/v1/projects', org.api_key.key)).status).toBe(200);

    const relisted = await cliJson(['key', 'list', '--org', org.organization.id], world.env);
    expect(relisted.data.find((k: { id: string }) => k.id === key.id).revoked_at).toEqual(expect.any(String));

    const human = await runCli(['key', 'list', '--org', org.organization.id], world.env);
    expect(human.stdout).toMatch(/^ID\s+PREFIX\s+SCOPE/);
    expect(human.stdout).toContain(key.id);
  });

  it('key create for an unknown user and key revoke of an unknown key exit 1 with not_found', async () => {
    const create = await runCli(['key', 'create', '--user', 'user_doesnotexist', '--scope', 'read', '--json'], world.env);
    expect(create.code).toBe(1);
    expect(JSON.parse(create.stdout).error.code).toBe('not_found');
    const revoke = await runCli(['key', 'revoke', 'key_doesnotexist', '--json'], world.env);
    expect(revoke.code).toBe(1);
    expect(JSON.parse(revoke.stdout).error).toEqual({ code: 'not_found', message: expect.any(String) });
    expect(revoke.stderr).toContain('not found');
  });

  /**
   * Moves runs on as a worker would (the CLI only queues them; `serve` and `worker` run the engine) until
   * `done` holds for the run. The suite's `serve`, when up, may advance a run first: either way it settles.
   */
  async function settleRun(orgId: string, runId: string, done: (run: RunDetail) => boolean): Promise<RunDetail> {
    const container = await createContainer(loadConfig(world.env), { logger: pino({ level: 'silent' }) });
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        for (const key of await container.services.runs.claimDue('cli-test', 30_000, 10)) await container.services.runs.advance('cli-test', key);
        const run = await container.services.runs.get(cliActor(orgId), runId);
        if (done(run)) return run;
        if (Date.now() > deadline) throw new Error(`run ${runId} did not settle: ${JSON.stringify(run)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await container.close();
    }
  }

  /** The event data of every delivery of a subscription, read through `deliveries list` and `deliveries show`. */
  async function deliveredData(orgId: string, webhookId: string): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
    const list = await cliJson(['deliveries', 'list', '--org', orgId, '--webhook', webhookId], world.env);
    const shown = await Promise.all(list.data.map((d: { id: string }) => cliJson(['deliveries', 'show', d.id, '--org', orgId], world.env)));
    return shown.map((detail) => {
      const body = JSON.parse(detail.payload);
      return { event: body.event, data: body.data };
    });
  }

  /** An organisation with a member, a project and a subscription to the workflow and task events. */
  async function workflowWorld(name: string) {
    const org = await newOrg(name, `owner@${name.toLowerCase().replace(/\W/g, '')}.example.com`);
    const orgId: string = org.organization.id;
    const member = await cliJson(['user', 'add', '--org', orgId, '--email', 'mia@example.com', '--role', 'member', '--name', 'Mia'], world.env);
    const server = await served();
    const project = await api(server, 'POST', '/v1/projects', org.api_key.key, { name: 'Pipeline' });
    expect(project.status).toBe(201);
    const hook = await api(server, 'POST', '/v1/webhooks', org.api_key.key, {
      url: 'https://127.0.0.1:9/hook',
      events: ['workflow.completed', 'workflow.failed', 'task.assigned'],
    });
    expect(hook.status).toBe(201);
    return { orgId, ownerId: org.owner.id as string, memberId: member.id as string, projectId: project.body.id as string, hookId: hook.body.id as string };
  }

  it('workflow create with steps, workflow run, task done: the run completes and task.assigned / workflow.completed carry their data', async () => {
    const { orgId, ownerId, memberId, projectId, hookId } = await workflowWorld('Flow Co');
    const steps = [
      { type: 'task', title: 'Draft', assignee_id: memberId, due_in: '1d' },
      { type: 'approval', title: 'Sign off', assignee_id: ownerId },
    ];
    const workflow = await cliJson(
      ['workflow', 'create', '--org', orgId, '--project', projectId, '--name', 'Review', '--description', 'Two steps', '--steps', JSON.stringify(steps)],
      world.env,
    );
    expect(workflow).toEqual({
      id: expect.stringMatching(/^wf_/),
      project_id: projectId,
      name: 'Review',
      description: 'Two steps',
      version: 1,
      steps: [
        { id: expect.stringMatching(/^step_/), type: 'task', title: 'Draft', assignee_id: memberId, due_in_ms: 86_400_000, duration_ms: null },
        { id: expect.stringMatching(/^step_/), type: 'approval', title: 'Sign off', assignee_id: ownerId, due_in_ms: null, duration_ms: null },
      ],
      created_at: expect.any(String),
      updated_at: workflow.created_at,
    });

    const run = await cliJson(['workflow', 'run', workflow.id, '--org', orgId], world.env);
    expect(run).toMatchObject({
      id: expect.stringMatching(/^run_/),
      workflow_id: workflow.id,
      project_id: projectId,
      workflow_name: 'Review',
      workflow_version: 1,
      current_step: 1,
      step_count: 2,
      started_by: null,
      started_by_label: 'cli',
      status: 'queued',
      error: null,
      error_code: null,
    });

    await settleRun(orgId, run.id, (r) => r.steps[0]!.task_id !== null);
    const waiting = await cliJson(['run', 'show', run.id, '--org', orgId], world.env);
    expect(waiting).toMatchObject({ id: run.id, status: 'waiting', current_step: 1 });
    expect(waiting.steps[0]).toMatchObject({ number: 1, type: 'task', status: 'waiting', task: { status: 'open', assignee_id: memberId, decision: null } });
    expect(waiting.steps[1]).toMatchObject({ number: 2, type: 'approval', status: 'pending', task_id: null, task: null });
    const draftId: string = waiting.steps[0].task_id;

    const done = await cliJson(['task', 'done', draftId, '--org', orgId], world.env);
    expect(done).toMatchObject({ id: draftId, kind: 'todo', status: 'done', decision: null, run_id: run.id, run_step: 1, completed_by: null });

    const atApproval = await settleRun(orgId, run.id, (r) => r.steps[1]!.task_id !== null);
    const approvalId = atApproval.steps[1]!.task_id!;
    const approved = await cliJson(['task', 'done', approvalId, '--org', orgId], world.env);
    expect(approved).toMatchObject({ id: approvalId, kind: 'approval', status: 'done', decision: 'approved', run_step: 2 });

    await settleRun(orgId, run.id, (r) => r.status === 'completed');
    const finished = await cliJson(['run', 'show', run.id, '--org', orgId], world.env);
    expect(finished).toMatchObject({ status: 'completed', error: null, error_code: null, finished_at: expect.any(String) });
    expect(finished.steps.map((s: { status: string; outcome: string }) => [s.status, s.outcome])).toEqual([['completed', 'done'], ['completed', 'approved']]);

    const shown = await cliJson(['workflow', 'show', workflow.id, '--org', orgId], world.env);
    expect(shown).toEqual({ ...workflow, runs: [expect.objectContaining({ id: run.id, status: 'completed' })] });

    const delivered = await deliveredData(orgId, hookId);
    expect(delivered.map((d) => d.event).sort()).toEqual(['task.assigned', 'task.assigned', 'workflow.completed']);
    const assigned = (taskId: string) => delivered.find((d) => d.event === 'task.assigned' && d.data.task_id === taskId)?.data;
    const draftStart = Date.parse(finished.steps[0].started_at);
    expect(assigned(draftId)).toEqual({
      task_id: draftId,
      project_id: projectId,
      title: 'Draft',
      assignee_id: memberId,
      previous_assignee_id: null,
      assigned_by: null,
      workflow_id: workflow.id,
      run_id: run.id,
      due_at: new Date(draftStart + 86_400_000).toISOString(),
    });
    expect(assigned(approvalId)).toEqual({
      task_id: approvalId,
      project_id: projectId,
      title: 'Sign off',
      assignee_id: ownerId,
      previous_assignee_id: null,
      assigned_by: null,
      workflow_id: workflow.id,
      run_id: run.id,
      due_at: null,
    });
    expect(delivered.find((d) => d.event === 'workflow.completed')!.data).toEqual({
      workflow_id: workflow.id,
      project_id: projectId,
      run_id: run.id,
      status: 'completed',
      started_at: finished.started_at,
      finished_at: finished.finished_at,
    });
  });

  it('task create, assign, unassign and cancel; run cancel fails the run with workflow.failed (error_code cancelled)', async () => {
    const { orgId, ownerId, memberId, projectId, hookId } = await workflowWorld('Cancel Co');
    const task = await cliJson(
      ['task', 'create', '--org', orgId, '--project', projectId, '--title', 'Fuel', '--description', 'By hand', '--assignee', memberId, '--due', '2026-12-31'],
      world.env,
    );
    expect(task).toEqual({
      id: expect.stringMatching(/^task_/),
      project_id: projectId,
      workflow_id: null,
      run_id: null,
      run_step: null,
      title: 'Fuel',
      description: 'By hand',
      kind: 'todo',
      status: 'open',
      decision: null,
      assignee_id: memberId,
      due_at: '2026-12-31T23:59:59.999Z',
      completed_by: null,
      completed_at: null,
      created_at: expect.any(String),
      updated_at: task.created_at,
    });
    const reassigned = await cliJson(['task', 'assign', task.id, '--org', orgId, '--user', ownerId], world.env);
    expect(reassigned).toMatchObject({ id: task.id, assignee_id: ownerId });
    // The same assignee again changes nothing (and, below, fires nothing).
    expect(await cliJson(['task', 'assign', task.id, '--org', orgId, '--user', ownerId], world.env)).toEqual(reassigned);
    expect(await cliJson(['task', 'assign', task.id, '--org', orgId, '--unassign'], world.env)).toMatchObject({ id: task.id, assignee_id: null });
    const cancelledTask = await cliJson(['task', 'cancel', task.id, '--org', orgId, '--reason', 'not needed'], world.env);
    expect(cancelledTask).toMatchObject({ id: task.id, status: 'cancelled', decision: null, completed_at: expect.any(String) });

    const workflow = await cliJson(
      ['workflow', 'create', '--org', orgId, '--project', projectId, '--name', 'Gate', '--steps', '[{"type":"approval","title":"Go?"}]'],
      world.env,
    );
    const run = await cliJson(['workflow', 'run', workflow.id, '--org', orgId], world.env);
    const waiting = await settleRun(orgId, run.id, (r) => r.status === 'waiting' && r.steps[0]!.task_id !== null);
    const approvalId = waiting.steps[0]!.task_id!;

    const cancelled = await cliJson(['run', 'cancel', run.id, '--org', orgId], world.env);
    expect(cancelled).toMatchObject({ id: run.id, status: 'cancelled', error: 'Run cancelled by an operator (command line)', error_code: 'cancelled', finished_at: expect.any(String) });
    const shown = await cliJson(['run', 'show', run.id, '--org', orgId], world.env);
    expect(shown.steps[0].task).toMatchObject({ status: 'cancelled' });

    const [again, lateDecision] = await Promise.all([
      runCli(['run', 'cancel', run.id, '--org', orgId, '--json'], world.env),
      runCli(['task', 'done', approvalId, '--org', orgId, '--json'], world.env),
    ]);
    for (const res of [again, lateDecision]) {
      expect(res.code).toBe(1);
      expect(JSON.parse(res.stdout).error.code).toBe('conflict');
    }
    expect(again.stderr).toContain('this run has already been cancelled');

    const delivered = await deliveredData(orgId, hookId);
    expect(delivered.map((d) => d.event).sort()).toEqual(['task.assigned', 'task.assigned', 'workflow.failed']);

    // task list and events list answer as GET /v1/tasks and GET /v1/events do.
    const cancelledTasks = await cliJson(['task', 'list', '--org', orgId, '--status', 'cancelled', '--project', projectId], world.env);
    expect(cancelledTasks.data.map((t: { id: string }) => t.id)).toEqual([approvalId, task.id]);
    expect(cancelledTasks.next_cursor).toBeNull();
    const firstPage = await cliJson(['task', 'list', '--org', orgId, '--limit', '1'], world.env);
    expect(firstPage.data).toHaveLength(1);
    expect(firstPage.next_cursor).toEqual(expect.any(String));
    const events = await cliJson(['events', 'list', '--org', orgId, '--type', 'task.assigned,workflow.failed'], world.env);
    expect(events.data.map((e: { type: string }) => e.type)).toEqual(['workflow.failed', 'task.assigned', 'task.assigned']);
    expect(events.data.map((e: { data: unknown }) => e.data)).toEqual(delivered.map((d) => d.data));
    const text = await runCli(['events', 'list', '--org', orgId, '--limit', '1'], world.env);
    expect(text.stdout).toContain('More: --cursor ');
    const bad = await runCli(['events', 'list', '--org', orgId, '--type', 'project.nope', '--json'], world.env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).error.code).toBe('validation_failed');
    const assignments = delivered.filter((d) => d.event === 'task.assigned').map((d) => d.data);
    const base = { task_id: task.id, project_id: projectId, title: 'Fuel', assigned_by: null, workflow_id: null, run_id: null, due_at: '2026-12-31T23:59:59.999Z' };
    expect(assignments).toEqual(
      expect.arrayContaining([
        { ...base, assignee_id: memberId, previous_assignee_id: null },
        { ...base, assignee_id: ownerId, previous_assignee_id: memberId },
      ]),
    );
    expect(delivered.find((d) => d.event === 'workflow.failed')!.data).toEqual({
      workflow_id: workflow.id,
      project_id: projectId,
      run_id: run.id,
      status: 'failed',
      started_at: shown.started_at,
      finished_at: cancelled.finished_at,
      error: 'Run cancelled by an operator (command line)',
      error_code: 'cancelled',
    });
  });

  it('workflow, run and task commands exit 1 for unknown ids, refused changes (409) and invalid steps', async () => {
    const org = await newOrg('Missing Co', 'owner-m@example.com');
    const orgId = org.organization.id;
    const server = await served();
    const project = await api(server, 'POST', '/v1/projects', org.api_key.key, { name: 'Empty' });
    const empty = await cliJson(['workflow', 'create', '--org', orgId, '--project', project.body.id, '--name', 'No steps'], world.env);
    expect(empty.steps).toEqual([]);
    const todo = await cliJson(['task', 'create', '--org', orgId, '--project', project.body.id, '--title', 'Plain'], world.env);

    const cases: Array<[string[], string]> = [
      [['workflow', 'show', 'wf_doesnotexist', '--org', orgId], 'not_found'],
      [['workflow', 'run', 'wf_doesnotexist', '--org', orgId], 'not_found'],
      [['workflow', 'create', '--org', orgId, '--project', 'proj_doesnotexist', '--name', 'W'], 'not_found'],
      [['run', 'show', 'run_doesnotexist', '--org', orgId], 'not_found'],
      [['run', 'cancel', 'run_doesnotexist', '--org', orgId], 'not_found'],
      [['task', 'create', '--org', orgId, '--project', 'proj_doesnotexist', '--title', 'T'], 'not_found'],
      [['task', 'assign', 'task_doesnotexist', '--org', orgId, '--user', org.owner.id], 'not_found'],
      [['task', 'done', 'task_doesnotexist', '--org', orgId], 'not_found'],
      [['task', 'cancel', 'task_doesnotexist', '--org', orgId], 'not_found'],
      [['workflow', 'run', empty.id, '--org', orgId], 'conflict'],
      [['task', 'done', todo.id, '--org', orgId, '--reject'], 'conflict'],
      [['task', 'assign', todo.id, '--org', orgId, '--user', 'user_doesnotexist'], 'validation_failed'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli([...args, '--json'], world.env)));
    results.forEach((res, i) => {
      const [args, code] = cases[i]!;
      expect(res.code, args.join(' ')).toBe(1);
      expect(JSON.parse(res.stdout).error.code, args.join(' ')).toBe(code);
      expect(res.stderr).toMatch(/^workspace: /);
    });

    const steps = [{ type: 'task', title: 'Fine' }, { type: 'wait', duration: 'soon' }, { type: 'wait', duration: '1h', assignee_id: org.owner.id }];
    const invalid = await runCli(['workflow', 'create', '--org', orgId, '--project', project.body.id, '--name', 'W', '--steps', JSON.stringify(steps), '--json'], world.env);
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout).error).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'steps[1].duration', message: 'must be a duration such as 30m, 2h, 3d or 1d 12h' }],
    });
    expect(invalid.stderr).toContain('steps[1].duration');
    // Nothing was written by the refused commands.
    const after = await cliJson(['workflow', 'show', empty.id, '--org', orgId], world.env);
    expect(after).toEqual({ ...empty, runs: [] });
    expect(await cliJson(['task', 'assign', todo.id, '--org', orgId, '--unassign'], world.env)).toEqual(todo);
  });

  it('a configuration error in a CLI command exits 1 naming the variable', async () => {
    const res = await runCli(['key', 'list', '--org', 'org_x', '--json'], { ...world.env, RATE_LIMIT_PER_MINUTE: 'lots' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('RATE_LIMIT_PER_MINUTE');
    expect(JSON.parse(res.stdout).error).toEqual({ code: 'invalid_configuration', message: expect.stringContaining('RATE_LIMIT_PER_MINUTE') });
  });

  it('serve answers /healthz, /readyz and /v1/projects, and logs pino JSON on stdout', async () => {
    const org = await newOrg('Served', 'owner-s@example.com');
    const server = await served();
    const health = await api(server, 'GET', '/healthz', null);
    expect(health).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await api(server, 'GET', '/readyz', null);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok', checks: { database: 'ok' } });
    expect((await api(server, 'GET', '/v1/projects', org.api_key.key)).status).toBe(200);
    expect((await api(server, 'GET', '/v1/projects', null)).status).toBe(401);
    for (const line of server.lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(server.lines.some((line) => JSON.parse(line).msg === 'request completed')).toBe(true);
  });

  it('SIGTERM stops serve with exit code 0', async () => {
    const own = await startServe(world.env);
    spawned.push(own);
    expect((await api(own, 'GET', '/healthz', null)).status).toBe(200);
    own.child.kill('SIGTERM');
    expect(await own.exited).toEqual({ code: 0, signal: null });
    const messages = own.lines.map((line) => JSON.parse(line));
    expect(messages.some((m) => m.msg === 'shutting down' && m.signal === 'SIGTERM')).toBe(true);
    expect(messages.some((m) => m.msg === 'stopped')).toBe(true);
    await expect(fetch(`${own.address}/healthz`)).rejects.toThrow();
  });

  it('SIGINT stops the worker with exit code 0', async () => {
    const worker = await startServe(world.env, 'worker');
    spawned.push(worker);
    // It stays up until told to stop, then stops on the signal.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(worker.child.exitCode).toBeNull();
    worker.child.kill('SIGINT');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.lines.some((line) => JSON.parse(line).msg === 'shutting down' && JSON.parse(line).signal === 'SIGINT')).toBe(true);
  });

  it('a write answered with success survives kill -9 of serve', async () => {
    const org = await newOrg('Durable', 'owner-d@example.com');
    const first = await startServe(world.env);
    spawned.push(first);
    const created = await api(first, 'POST', '/v1/projects', org.api_key.key, { name: 'Survivor', description: 'kept' });
    expect(created.status).toBe(201);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startServe(world.env);
    spawned.push(second);
    const read = await api(second, 'GET', `/v1/projects/${created.body.id}`, org.api_key.key);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
